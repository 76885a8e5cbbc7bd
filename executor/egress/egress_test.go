package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a Decider that allows what allow says and remembers every
// request it was asked about.
type recorder struct {
	allow func(r *Request) bool
	mu    sync.Mutex
	seen  []Request
}

func (d *recorder) DecideRequest(_ context.Context, r *Request) Verdict {
	d.mu.Lock()
	d.seen = append(d.seen, *r)
	d.mu.Unlock()
	if d.allow(r) {
		return Verdict{Allow: true}
	}
	return Verdict{Reason: "denied: " + r.URL}
}

func (d *recorder) requests() []Request {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Request(nil), d.seen...)
}

// origin is a counting HTTP server on loopback.
func origin(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		fmt.Fprint(w, "hello from ", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// proxied returns an HTTP client that sends everything through a proxy
// for session "s1" deciding with d and resolving with res.
func proxied(t *testing.T, d Decider, res *Resolver) *http.Client {
	p := NewProxy(NewBoundary(d), res, nil)
	t.Cleanup(func() { _ = p.Close() })
	addr, stop, err := p.Listen("s1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
	pu, _ := url.Parse("http://" + addr)
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}, Timeout: 10 * time.Second}
}

func TestProxyDecidesEveryPlainRequest(t *testing.T) {
	srv, hits := origin(t)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	d := &recorder{allow: func(r *Request) bool { return strings.Contains(r.URL, "/ok") }}
	res, _ := NewResolver([]string{"--host-resolver-rules=MAP good.test 127.0.0.1"})
	c := proxied(t, d, res)

	resp, err := c.Get("http://good.test:" + port + "/ok")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello from /ok" {
		t.Fatalf("allowed request: %q", body)
	}
	if _, err := c.Get("http://good.test:" + port + "/no"); err == nil {
		t.Fatal("a denied plain-http request got a response; want a network error")
	}
	if hits.Load() != 1 {
		t.Fatalf("the origin saw %d requests, want only the allowed one", hits.Load())
	}
	got := d.requests()
	if len(got) < 2 {
		t.Fatalf("decided %d requests", len(got))
	}
	r := got[0]
	if r.Session != "s1" || r.Via != ViaProxy || r.Method != "GET" || r.Addr != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("request described as %+v", r)
	}
}

func TestProxyTunnelDeniedBeforeDialling(t *testing.T) {
	// A listener that counts connections: a denied CONNECT must never
	// reach it.
	ln, conns := countingListener(t)
	d := &recorder{allow: func(*Request) bool { return false }}
	p := NewProxy(NewBoundary(d), nil, nil)
	defer p.Close()
	addr, _, err := p.Listen("s1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", ln.Addr(), ln.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("denied CONNECT answered %s", resp.Status)
	}
	if conns.Load() != 0 {
		t.Fatalf("the target got %d connections", conns.Load())
	}
	r := d.requests()[0]
	if r.Method != "CONNECT" || !strings.HasPrefix(r.URL, "https://127.0.0.1:") || r.ResourceType != "unknown" {
		t.Errorf("tunnel described as %+v", r)
	}
}

func TestProxyTunnelAllowed(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "tls ok") }))
	defer srv.Close()
	d := &recorder{allow: func(*Request) bool { return true }}
	p := NewProxy(NewBoundary(d), nil, nil)
	defer p.Close()
	addr, _, _ := p.Listen("s1")
	pu, _ := url.Parse("http://" + addr)
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(pu)
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "tls ok" {
		t.Fatalf("through the tunnel: %q", b)
	}
}

// A name that resolves inward is decided on the inward address, and the
// connection goes to exactly that address: DNS rebinding gets nowhere.
func TestProxyDecidesTheAddressItDials(t *testing.T) {
	srv, hits := origin(t)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var lookups atomic.Int64
	res := &Resolver{Lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
		// A rebinding server: an address the decider allows for the first
		// answer (127.0.0.2 stands in for a public one: tests send nothing
		// off this machine), the service's own after.
		if lookups.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}}
	d := &recorder{allow: func(r *Request) bool { return r.Addr != netip.MustParseAddr("127.0.0.1") }}
	c := proxied(t, d, res)
	// The first request is decided on 127.0.0.2 and dialled there (it
	// fails: nothing listens there, and nothing but that address may be
	// dialled); the second is decided on the service's address and
	// refused.
	c.Timeout = 3 * time.Second
	_, _ = c.Get("http://rebind.example:" + port + "/a")
	if _, err := c.Get("http://rebind.example:" + port + "/b"); err == nil {
		t.Fatal("a name that rebound to loopback got through")
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback service behind a rebinding name saw %d requests", hits.Load())
	}
	got := d.requests()
	if len(got) != 2 || got[0].Addr.String() != "127.0.0.2" || got[1].Addr.String() != "127.0.0.1" {
		t.Fatalf("decided on %+v", got)
	}
}

func TestBoundaryJournal(t *testing.T) {
	d := &recorder{allow: func(r *Request) bool { return strings.HasSuffix(r.URL, "/ok") }}
	b := NewBoundary(d)
	mark := b.Mark("s")
	ctx := context.Background()
	b.DecideRequest(ctx, &Request{Session: "s", URL: "https://a.test/ok"})
	b.DecideRequest(ctx, &Request{Session: "s", URL: "https://evil.test/x", Navigation: true})
	b.DecideRequest(ctx, &Request{Session: "other", URL: "https://evil.test/y"})
	ds := b.Since("s", mark)
	if len(ds) != 1 || ds[0].Host != "evil.test" || !ds[0].Navigation || ds[0].Reason == "" {
		t.Fatalf("denials %+v", ds)
	}
	if got := b.Since("s", b.Mark("s")); len(got) != 0 {
		t.Fatalf("denials after the latest mark: %+v", got)
	}
	for i := range journalSize + 10 {
		b.DecideRequest(ctx, &Request{Session: "s", URL: fmt.Sprintf("https://h%d.test/", i)})
	}
	if got := b.Since("s", mark); len(got) != journalSize {
		t.Fatalf("the journal kept %d, want its size %d", len(got), journalSize)
	}
	s := Summarize(b.Since("s", mark))
	if s.Count != journalSize || len(s.Hosts) != MaxSummaryHosts || s.More != journalSize-MaxSummaryHosts {
		t.Fatalf("summary %+v", s)
	}
	b.Forget("s")
	if b.Mark("s") != 0 {
		t.Fatal("a forgotten session kept its journal")
	}
}

func TestBoundaryFailsClosed(t *testing.T) {
	ctx := context.Background()
	panics := NewBoundary(DeciderFunc(func(context.Context, *Request) Verdict { panic("boom") }))
	if v := panics.DecideRequest(ctx, &Request{URL: "https://a.test/"}); v.Allow {
		t.Fatal("a panicking decider allowed")
	}
	empty := NewBoundary(DeciderFunc(func(context.Context, *Request) Verdict { return Verdict{} }))
	if v := empty.DecideRequest(ctx, &Request{URL: "https://a.test/"}); v.Allow || v.Reason == "" {
		t.Fatalf("an empty verdict: %+v", v)
	}
	var off *Boundary
	if !off.DecideRequest(ctx, &Request{}).Allow || off.Enabled() {
		t.Fatal("a nil boundary decides")
	}
}

func TestResolver(t *testing.T) {
	r, err := NewResolver([]string{"--lang=de", "--host-resolver-rules=EXCLUDE keep.test, MAP *.test 127.0.0.1, MAP gone.example ~NOTFOUND, MAP alias.example 10.0.0.7:8080"})
	if err != nil {
		t.Fatal(err)
	}
	r.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
		if host == "keep.test" {
			return []netip.Addr{netip.MustParseAddr("::ffff:8.8.8.8")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	ctx := context.Background()
	for host, want := range map[string]string{
		"a.test": "127.0.0.1", "A.TEST.": "127.0.0.1", "keep.test": "8.8.8.8", "alias.example": "10.0.0.7",
		"localhost": "127.0.0.1", "x.localhost": "127.0.0.1", "[::1]": "::1", "10.1.2.3": "10.1.2.3",
	} {
		got, err := r.Resolve(ctx, host)
		if err != nil || got[0].String() != want {
			t.Errorf("Resolve(%q) = %v, %v; want %s", host, got, err, want)
		}
	}
	for _, host := range []string{"gone.example", "nowhere.example"} {
		if _, err := r.Resolve(ctx, host); !errors.Is(err, ErrNotFound) {
			t.Errorf("Resolve(%q): %v, want not found", host, err)
		}
	}
	if _, err := NewResolver([]string{"--host-resolver-rules=FROB x"}); err == nil {
		t.Error("an unreadable rule was accepted")
	}
}

func TestHostOf(t *testing.T) {
	for raw, want := range map[string]string{
		"https://User:pw@Example.COM:8443/a?b#c": "example.com",
		"http://[::1]:80/":                       "[::1]",
		"wss://a.test/ws":                        "a.test",
		"about:blank":                            "",
		"https://h.test":                         "h.test",
	} {
		if got := HostOf(raw); got != want {
			t.Errorf("HostOf(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestDialerDecidesServerFetches(t *testing.T) {
	srv, hits := origin(t)
	d := &recorder{allow: func(r *Request) bool { return false }}
	b := NewBoundary(d)
	c := &http.Client{Transport: &http.Transport{DialContext: b.Dialer("s1", "cdp", nil)}}
	_, err := c.Get(srv.URL + "/file")
	var de *DeniedError
	if !errors.As(err, &de) || !de.PolicyDenied() {
		t.Fatalf("a denied fetch: %v", err)
	}
	if hits.Load() != 0 {
		t.Fatal("the denied server was reached")
	}
	r := d.requests()[0]
	if r.Via != ViaServer || r.ResourceType != "download" || !r.Addr.IsLoopback() {
		t.Errorf("fetch described as %+v", r)
	}
}

// A response's first bytes reach the page while its server is still
// sending the rest, whether it streams (no length) or announced its length:
// the proxy does not hold a slow response until it ends.
func TestProxyPassesPartialResponsesOn(t *testing.T) {
	t.Parallel()
	for _, known := range []bool{false, true} {
		t.Run(fmt.Sprintf("length known %v", known), func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if known {
					w.Header().Set("Content-Length", "12")
				}
				fmt.Fprint(w, "first\n")
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
				}
				fmt.Fprint(w, "rest.\n")
			}))
			t.Cleanup(srv.Close)
			t.Cleanup(func() { close(release) })
			c := proxied(t, &recorder{allow: func(*Request) bool { return true }}, nil)
			resp, err := c.Get(srv.URL + "/slow")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got := make(chan string, 1)
			go func() {
				line, _ := bufio.NewReader(resp.Body).ReadString('\n')
				got <- line
			}()
			select {
			case line := <-got:
				if line != "first\n" {
					t.Errorf("first line %q", line)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the first bytes did not come through before the response ended")
			}
		})
	}
}

// A kept-alive connection is reused only for a request decided on the
// address it goes to: when a name's address changes, the next request
// dials the new address, never the old connection.
func TestProxyPoolsConnectionsByDecidedAddress(t *testing.T) {
	srv, hits := origin(t)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	var n atomic.Int64
	res := &Resolver{Lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
		if n.Add(1) <= 2 {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil // nothing listens there
	}}
	c := proxied(t, &recorder{allow: func(*Request) bool { return true }}, res)
	for i := range 3 {
		resp, err := c.Get("http://moving.example:" + port + "/")
		if i < 2 {
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		} else if err == nil {
			resp.Body.Close()
		}
	}
	if hits.Load() != 2 {
		t.Fatalf("the old address served %d requests; the one decided on a new address must not reach it", hits.Load())
	}
}

// TestProxyBrowserListenerRefusesAll: the browser's own requests are
// refused without asking the policy, even one that would allow them, and
// nothing is dialled.
func TestProxyBrowserListenerRefusesAll(t *testing.T) {
	ln, conns := countingListener(t)
	d := &recorder{allow: func(*Request) bool { return true }}
	p := NewProxy(NewBoundary(d), nil, nil)
	defer p.Close()
	addr, _, err := p.ListenBrowser()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", ln.Addr(), ln.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the browser's own CONNECT answered %s", resp.Status)
	}
	pu, _ := url.Parse("http://" + addr)
	if _, err := (&http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}).Get("http://" + ln.Addr().String() + "/"); err == nil {
		t.Error("the browser's own plain-http request got an answer")
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("the target got %d connections", n)
	}
	if n := len(d.requests()); n != 0 {
		t.Errorf("the policy was asked %d times about the browser's own requests", n)
	}
}

// countingListener is a loopback listener that counts the connections it
// accepts (and closes them): what a refusal must never reach.
func countingListener(t *testing.T) (net.Listener, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns := new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	return ln, conns
}
