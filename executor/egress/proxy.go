package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proxy is the forward proxy the launched browser's contexts use. Each
// session gets a listener of its own on 127.0.0.1 (Listen), so a request's
// session is known from the port it arrived on, without credentials.
//
// For every plain-http request and every CONNECT tunnel (https, wss, and
// ws: Chromium tunnels WebSockets) the proxy resolves the host itself,
// asks the Boundary about the exact address it will dial, and dials that
// address: there is no second resolution an attacker's DNS could answer
// differently. A denied tunnel gets 403, which Chromium reports as
// net::ERR_TUNNEL_CONNECTION_FAILED; a denied plain-http request has its
// connection closed, net::ERR_EMPTY_RESPONSE: both are network errors in
// the page, never a hang.
//
// Proxy is safe for concurrent use; Close stops every listener.
type Proxy struct {
	b       *Boundary
	res     *Resolver
	log     *slog.Logger
	backend string

	mu     sync.Mutex
	closed bool
	lns    map[*listener]struct{}
}

// DialTimeout bounds connecting to a page's server.
const DialTimeout = 15 * time.Second

// NewProxy makes a proxy that decides through b and resolves through res.
func NewProxy(b *Boundary, res *Resolver, log *slog.Logger) *Proxy {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if res == nil {
		res = &Resolver{}
	}
	return &Proxy{b: b, res: res, log: log, backend: "cdp", lns: map[*listener]struct{}{}}
}

type listener struct {
	p       *Proxy
	session string
	// browser: the listener of the browser's own requests, which refuses
	// every one (ListenBrowser).
	browser bool
	ln      net.Listener
	srv     *http.Server
	tr      *http.Transport
	rp      *httputil.ReverseProxy
}

// Listen serves the proxy for session on a fresh loopback port and returns
// its address ("127.0.0.1:PORT") and a function that stops it.
func (p *Proxy) Listen(session string) (addr string, stop func() error, err error) {
	return p.listen(&listener{p: p, session: session})
}

// ListenBrowser serves, on a fresh loopback port, the listener for the
// requests the browser makes of its own accord, outside any context a
// session drives (a browser launched for contexts of its own: the
// component updater, network time, Google sign-in, whatever a new
// Chromium adds). It refuses every one without asking the policy — no
// session asked for them — and logs each at Warn: the launched browser is
// started so that it makes none, and one that gets here is a switch
// chromegate lacks.
func (p *Proxy) ListenBrowser() (addr string, stop func() error, err error) {
	return p.listen(&listener{p: p, browser: true})
}

func (p *Proxy) listen(l *listener) (addr string, stop func() error, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("egress proxy: %w", err)
	}
	l.ln = ln
	l.tr = &http.Transport{
		DialContext:           l.dial,
		ForceAttemptHTTP2:     false,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 0,
		DisableCompression:    true,
	}
	l.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// The URL names the decided address, so the transport pools
			// connections by address, not by name: a kept-alive
			// connection is only reused for a request decided on the
			// address it goes to. The Host header keeps the name.
			u := *pr.In.URL
			if ap, ok := pr.In.Context().Value(dialKey{}).(netip.AddrPort); ok {
				u.Host = ap.String()
			}
			pr.Out.URL = &u
			pr.Out.Host = pr.In.Host
		},
		Transport:     l.tr,
		FlushInterval: flushInterval,
		ErrorHandler:  l.upstreamError,
		BufferPool:    copyBuffers,
	}
	l.srv = &http.Server{Handler: l, ReadHeaderTimeout: 30 * time.Second, ErrorLog: slog.NewLogLogger(p.log.Handler(), slog.LevelDebug)}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		return "", nil, errors.New("egress proxy: closed")
	}
	p.lns[l] = struct{}{}
	p.mu.Unlock()
	go func() { _ = l.srv.Serve(ln) }()
	var once sync.Once
	var cerr error
	stop = func() error {
		once.Do(func() {
			p.mu.Lock()
			delete(p.lns, l)
			p.mu.Unlock()
			cerr = l.srv.Close()
			l.tr.CloseIdleConnections()
		})
		return cerr
	}
	return ln.Addr().String(), stop, nil
}

// Close stops every listener.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	lns := make([]*listener, 0, len(p.lns))
	for l := range p.lns {
		lns = append(lns, l)
	}
	p.lns = map[*listener]struct{}{}
	p.mu.Unlock()
	for _, l := range lns {
		_ = l.srv.Close()
		l.tr.CloseIdleConnections()
	}
	return nil
}

type dialKey struct{}

// flushInterval bounds how long a response's bytes may wait in the proxy
// before the browser gets them. Streams (no Content-Length, or
// text/event-stream) are flushed at every write whatever this says; a
// response of known length is written as the server's buffer fills and at
// least this often, rather than with a flush (a syscall) per read as a
// negative interval would: a page's many small subresources then cost one
// write each.
var flushInterval = 10 * time.Millisecond

// copyBuffers lends the reverse proxy its copy buffers: without a pool it
// allocates 32 KiB for every response, most of a request's garbage.
var copyBuffers httputil.BufferPool = &bufferPool{}

type bufferPool struct{ p sync.Pool }

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, 32<<10)
}

func (b *bufferPool) Put(buf []byte) { b.p.Put(&buf) }

// ServeHTTP handles one proxied request: CONNECT, or an absolute-URL
// request for plain http (WebSocket upgrades included).
func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if l.browser {
		l.p.log.Warn("egress: refused a request the browser made of its own accord", "method", r.Method, "host", r.Host)
		if r.Method == http.MethodConnect {
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusForbidden)
			return
		}
		l.refuse(w)
		return
	}
	if r.Method == http.MethodConnect {
		l.connect(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" {
		// Only a browser configured to use this proxy talks to it, and it
		// sends absolute http URLs; anything else is not ours to serve.
		http.Error(w, "chromegate egress proxy: not a proxy request", http.StatusBadRequest)
		return
	}
	port := r.URL.Port()
	if port == "" {
		port = "80"
	}
	req := &Request{Session: l.session, URL: r.URL.String(), Method: r.Method, ResourceType: guessType(r),
		Navigation: isNavigation(r), Via: ViaProxy, Backend: l.p.backend}
	ap, ok := l.decide(r.Context(), req, r.URL.Hostname(), port)
	if !ok {
		l.refuse(w)
		return
	}
	r.Header.Del("Proxy-Connection")
	r.Header.Del("Proxy-Authorization")
	l.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), dialKey{}, ap)))
}

// decide resolves host, decides req on the first address, and returns the
// address to dial.
func (l *listener) decide(ctx context.Context, req *Request, host, port string) (netip.AddrPort, bool) {
	pn, err := strconv.ParseUint(port, 10, 16)
	if err != nil || pn == 0 {
		l.p.b.record(req, Verdict{Reason: "the request names no valid port"})
		return netip.AddrPort{}, false
	}
	addrs, err := l.p.res.Resolve(ctx, host)
	if err != nil {
		// Nothing is dialled; the browser sees the failure a DNS miss
		// would give. Not a policy denial.
		l.p.log.Debug("egress: cannot resolve", "host", host, "err", err)
		return netip.AddrPort{}, false
	}
	req.Addr = addrs[0]
	if v := l.p.b.DecideRequest(ctx, req); !v.Allow {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(req.Addr, uint16(pn)), true
}

func (l *listener) connect(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, "bad CONNECT target", http.StatusBadRequest)
		return
	}
	scheme := "https"
	if port == "80" {
		scheme = "http" // Chromium tunnels ws:// through CONNECT too
	}
	u := scheme + "://" + bracket(host) + portSuffix(scheme, port) + "/"
	req := &Request{Session: l.session, URL: u, Method: http.MethodConnect, ResourceType: "unknown", Via: ViaProxy, Backend: l.p.backend}
	ap, ok := l.decide(r.Context(), req, host, port)
	if !ok {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusForbidden)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), DialTimeout)
	up, err := l.dialAddr(ctx, ap)
	cancel()
	if err != nil {
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		up.Close()
		down.Close()
		return
	}
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			up.Close()
			down.Close()
			return
		}
	}
	pipe(down, up)
}

// pipe copies both ways until either side ends, then closes both.
func pipe(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
	a.Close()
	b.Close()
}

// refuse fails a denied plain-http request as a network error: the
// connection closes without a response.
func (l *listener) refuse(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	c, _, err := hj.Hijack()
	if err == nil {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		c.Close()
	}
}

// dial is the transport's dialer: it connects only to the address decided
// for the request, never to the URL's host by name.
func (l *listener) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	ap, ok := ctx.Value(dialKey{}).(netip.AddrPort)
	if !ok || addr != ap.String() {
		return nil, fmt.Errorf("egress: no decided address for a connection to %s", addr)
	}
	return l.dialAddr(ctx, ap)
}

func (l *listener) dialAddr(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	d := net.Dialer{
		Timeout: DialTimeout,
		// The connection must go to the address decided: a belt to the
		// braces of dialling an address literal.
		Control: func(_, address string, _ syscall.RawConn) error {
			got, err := netip.ParseAddrPort(address)
			if err != nil || got.Addr().Unmap() != ap.Addr() || got.Port() != ap.Port() {
				return fmt.Errorf("egress: refusing to connect to %s, decided %s", address, ap)
			}
			return nil
		},
	}
	return d.DialContext(ctx, "tcp", ap.String())
}

func (l *listener) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	l.p.log.Debug("egress: upstream failed", "host", r.URL.Hostname(), "err", err)
	l.refuse(w)
}

// guessType names a plain-http request's resource type from what Chromium
// sends: its Fetch Metadata (sent to trustworthy origins) or its Accept
// header. Only a hint for the policy and the log: "unknown" when unsure.
func guessType(r *http.Request) string {
	switch d := r.Header.Get("Sec-Fetch-Dest"); d {
	case "document", "iframe", "frame":
		return "document"
	case "image", "style", "script", "font", "audio", "video", "track", "manifest", "worker", "sharedworker", "serviceworker":
		if d == "style" {
			return "stylesheet"
		}
		return d
	case "empty":
		return "fetch"
	}
	if r.Header.Get("Upgrade") != "" {
		return "websocket"
	}
	a := r.Header.Get("Accept")
	switch {
	case strings.HasPrefix(a, "text/html"):
		return "document"
	case strings.HasPrefix(a, "text/css"):
		return "stylesheet"
	case strings.HasPrefix(a, "image/"):
		return "image"
	case strings.HasPrefix(a, "text/event-stream"):
		return "eventsource"
	}
	return "unknown"
}

// isNavigation: Chromium marks a document load with Sec-Fetch-Mode:
// navigate (trustworthy origins) and always with an Accept that starts
// with text/html and Upgrade-Insecure-Requests.
func isNavigation(r *http.Request) bool {
	if m := r.Header.Get("Sec-Fetch-Mode"); m != "" {
		return m == "navigate"
	}
	return r.Header.Get("Upgrade-Insecure-Requests") == "1" && strings.HasPrefix(r.Header.Get("Accept"), "text/html")
}

func bracket(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

func portSuffix(scheme, port string) string {
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		return ""
	}
	return ":" + port
}

// ViaServer marks a request chromegate's server makes itself on a page's
// behalf (download_file fetches with the session's cookies).
const ViaServer = "server"

// Dialer returns a DialContext for the HTTP client of a fetch the server
// makes for session: it resolves the host, decides the connection as a
// request of the session (its URL is the origin, the scheme guessed from
// the port), and dials exactly the address decided. A nil or disabled
// Boundary decides nothing, but still resolves through res: the server's
// fetch sees names as the browser does (its --host-resolver-rules), with
// or without a boundary. A nil res resolves as the system does.
func (b *Boundary) Dialer(session, backend string, res *Resolver) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if !b.Enabled() && res == nil {
		d := &net.Dialer{Timeout: DialTimeout}
		return d.DialContext
	}
	if res == nil {
		res = &Resolver{}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		pn, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("egress: bad port in %q", addr)
		}
		addrs, err := res.Resolve(ctx, host)
		if err != nil {
			return nil, err
		}
		if !b.Enabled() {
			l := &listener{}
			return l.dialAddr(ctx, netip.AddrPortFrom(addrs[0], uint16(pn)))
		}
		scheme := "https"
		if port == "80" {
			scheme = "http"
		}
		r := &Request{Session: session, URL: scheme + "://" + bracket(host) + portSuffix(scheme, port) + "/", Method: http.MethodGet,
			ResourceType: "download", Addr: addrs[0], Via: ViaServer, Backend: backend}
		if v := b.DecideRequest(ctx, r); !v.Allow {
			return nil, &DeniedError{Host: host, Reason: v.Reason}
		}
		l := &listener{}
		return l.dialAddr(ctx, netip.AddrPortFrom(addrs[0], uint16(pn)))
	}
}

// DeniedError is a connection the policy refused.
type DeniedError struct {
	Host, Reason string
}

func (e *DeniedError) Error() string {
	return "the policy blocked the connection to " + e.Host + ": " + e.Reason
}

// PolicyDenied marks the error as the policy's, for callers that must not
// import this package to tell.
func (e *DeniedError) PolicyDenied() bool { return true }
