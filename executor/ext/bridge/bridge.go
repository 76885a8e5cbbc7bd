package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/ext/pairing"
	"github.com/chromegate/chromegate/executor/ext/wire"
)

// Options configures a Bridge.
type Options struct {
	// DataDir holds handshake.json and paired.json (created 0700).
	DataDir string
	// Addr is the loopback address to listen on; "127.0.0.1:0" (the
	// default) picks a free port, which the extension learns from the
	// handshake file through the native host or from the CDP pairing.
	Addr string
	// HelloTimeout bounds the wait for the first frame (default 5 s).
	HelloTimeout time.Duration
	// Heartbeat is the interval the extension pings at (default 20 s); a
	// connection silent for three intervals is closed.
	Heartbeat time.Duration
	// MaxBuffered is the most unsent data a connection may queue before a
	// call fails with BACKPRESSURE (default 8 MiB).
	MaxBuffered int64
	// Scripts are handed to the extension in welcome (the ref registry's
	// element operations), so it runs the server's page scripts unchanged.
	Scripts map[string]string
	// Version is the server's version, sent in welcome.
	Version string
	// MaxDecisions bounds the request decisions in flight per connection
	// (default DefaultMaxDecisions); past it requests are denied.
	MaxDecisions int
	// MaxPending bounds the connections waiting to authenticate at once
	// (default DefaultMaxPending); more are refused with 503 before the
	// WebSocket upgrade.
	MaxPending int
	Logger     *slog.Logger
}

// Displacement records a connection that replaced another: legitimate
// after an extension restart, a warning sign otherwise, so chrome_status
// shows it.
type Displacement struct {
	At       time.Time `json:"at"`
	OldExt   string    `json:"old_extension"`
	NewExt   string    `json:"new_extension"`
	OldSince time.Time `json:"old_since"`
}

// Bridge is the loopback WebSocket server the extension connects to. It
// owns the per-boot token: it writes it to handshake.json (0600) and keeps
// only its hash for comparing. At most one authenticated connection is
// current; a newer one supersedes it.
//
// Bridge is safe for concurrent use.
type Bridge struct {
	opts Options
	log  *slog.Logger
	ln   net.Listener
	srv  *http.Server

	mu        sync.Mutex
	token     string // the current token; written to handshake.json, never logged
	hash      [32]byte
	pinned    string // the paired extension id ("" = the next to authenticate)
	cur       *Conn
	changed   chan struct{} // closed and replaced whenever cur changes
	codes     pairing.Codes
	displaced *Displacement
	lastAuth  string // the last refused handshake, for chrome_status
	closed    bool

	decider atomic.Pointer[Decider] // decides the extension's requests; see SetDecider

	pending chan struct{} // a slot per connection not yet authenticated
}

// DefaultMaxPending is Options.MaxPending's default: the extension opens
// one connection at a time, and a reconnect replaces a dead one.
const DefaultMaxPending = 8

// Start listens on opts.Addr, writes the handshake file and serves.
func Start(opts Options) (*Bridge, error) {
	if opts.DataDir == "" {
		return nil, errors.New("bridge: no data directory")
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.HelloTimeout <= 0 {
		opts.HelloTimeout = 5 * time.Second
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 20 * time.Second
	}
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = 8 << 20
	}
	if opts.MaxDecisions <= 0 {
		opts.MaxDecisions = DefaultMaxDecisions
	}
	if opts.MaxPending <= 0 {
		opts.MaxPending = DefaultMaxPending
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	host, _, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("bridge address %q: %w", opts.Addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("bridge address %q is not loopback: the extension bridge only listens on 127.0.0.1", opts.Addr)
	}
	if err := pairing.EnsurePrivateDir(opts.DataDir); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("bridge listen on %s: %w", opts.Addr, err)
	}
	b := &Bridge{opts: opts, log: log, ln: ln, changed: make(chan struct{}),
		pending: make(chan struct{}, opts.MaxPending)}
	b.pinned = pairing.PairedExtension(opts.DataDir)
	if err := b.rotate(); err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ext", b.serveExt)
	mux.HandleFunc("POST /pair/code", b.serveCode)
	b.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	go func() { _ = b.srv.Serve(ln) }()
	log.Info("extension bridge listening", "addr", ln.Addr().String())
	return b, nil
}

// Port is the port the bridge listens on.
func (b *Bridge) Port() int { return b.ln.Addr().(*net.TCPAddr).Port }

// rotate makes a new token and writes the handshake file. The caller holds
// no lock, or mu (Start); the file write is done under mu so the file and
// the hash never disagree.
func (b *Bridge) rotate() error {
	tok, err := pairing.NewToken()
	if err != nil {
		return err
	}
	h := pairing.Handshake{Port: b.Port(), Token: tok, PID: os.Getpid(), Version: wire.Version}
	if err := pairing.WriteHandshake(b.opts.DataDir, h); err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	b.token, b.hash = tok, pairing.TokenHash(tok)
	return nil
}

// Rotate is the kill switch: a new token, the pinned extension forgotten,
// the current connection closed (4410) and its calls failed. The
// extension must pair again.
func (b *Bridge) Rotate() error {
	b.mu.Lock()
	if err := b.rotate(); err != nil {
		b.mu.Unlock()
		return err
	}
	b.pinned = ""
	b.codes.Reset()
	c := b.cur
	b.setCur(nil)
	b.mu.Unlock()
	if err := pairing.ForgetPairing(b.opts.DataDir); err != nil {
		b.log.Warn("could not remove the pinned extension id", "err", err)
	}
	if c != nil {
		c.close(wire.CloseRotated, "token rotated", executor.Errorf(executor.CodeExtensionDisconnected, "the pairing was reset").
			WithHint("pair the extension again"))
	}
	b.log.Warn("extension pairing reset: token rotated, the extension must pair again")
	return nil
}

// setCur replaces the current connection and wakes waiters; mu held.
func (b *Bridge) setCur(c *Conn) {
	b.cur = c
	close(b.changed)
	b.changed = make(chan struct{})
}

// Conn returns the current authenticated connection, or nil.
func (b *Bridge) Conn() *Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur != nil && b.cur.isClosed() {
		return nil
	}
	return b.cur
}

// WaitConn waits for an authenticated connection.
func (b *Bridge) WaitConn(ctx context.Context) (*Conn, error) {
	for {
		b.mu.Lock()
		c, ch := b.cur, b.changed
		b.mu.Unlock()
		if c != nil && !c.isClosed() {
			return c, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond): // a conn that closed without a change
		}
	}
}

// PairOverCDP hands the pairing to the extension's service worker in a
// browser chromegate launched: eval runs fn(arg) there. The token travels
// as the argument, never inside the expression, so an error that quotes
// the script cannot carry it into a log.
func (b *Bridge) PairOverCDP(ctx context.Context, eval func(ctx context.Context, fn string, arg any) error) error {
	b.mu.Lock()
	arg := map[string]any{"port": b.Port(), "token": b.token}
	b.mu.Unlock()
	// A worker that is still loading its modules has no chromegatePair
	// yet: try again until ctx ends.
	for {
		err := eval(ctx, "p => globalThis.chromegatePair(p)", arg)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pair over CDP: %s", firstLine(err.Error()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// NewCode mints a single-use pairing code that expires after ttl.
func (b *Bridge) NewCode(ttl time.Duration) (string, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.codes.Mint(ttl)
}

// Status is the bridge's part of chrome_status.
type Status struct {
	Listening     string        `json:"listening"`
	Paired        bool          `json:"paired"`
	PairedExt     string        `json:"paired_extension,omitempty"`
	Connected     bool          `json:"connected"`
	ExtVersion    string        `json:"extension_version,omitempty"`
	Browser       string        `json:"browser,omitempty"`
	Since         *time.Time    `json:"connected_since,omitempty"`
	AttachedTabs  []string      `json:"attached_tabs,omitempty"`
	LastDisplaced *Displacement `json:"last_displacement,omitempty"`
	LastRefused   string        `json:"last_refused,omitempty"`
}

// Status reports pairing and connection state.
func (b *Bridge) Status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := Status{Listening: b.ln.Addr().String(), Paired: b.pinned != "", PairedExt: b.pinned,
		LastDisplaced: b.displaced, LastRefused: b.lastAuth}
	if c := b.cur; c != nil && !c.isClosed() {
		st.Connected = true
		st.ExtVersion, st.Browser = c.ext.Version, c.ext.Browser
		since := c.since
		st.Since = &since
		st.AttachedTabs = c.AttachedTabs()
	}
	return st
}

// Close stops listening, closes the connection and removes the handshake
// file, so a native host cannot hand out a dead port.
func (b *Bridge) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	c := b.cur
	b.setCur(nil)
	b.mu.Unlock()
	if c != nil {
		c.close(websocket.StatusGoingAway, "server shutting down", executor.Errorf(executor.CodeExtensionDisconnected, "the server is shutting down"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := b.srv.Shutdown(ctx)
	pairing.RemoveHandshake(b.opts.DataDir)
	return err
}

// extOrigin returns the extension id of a chrome-extension:// Origin.
func extOrigin(r *http.Request) (string, bool) {
	id, ok := strings.CutPrefix(r.Header.Get("Origin"), "chrome-extension://")
	id = strings.TrimSuffix(id, "/")
	if !ok || id == "" || len(id) > 64 {
		return "", false
	}
	for _, c := range id {
		if c < 'a' || c > 'z' {
			return "", false
		}
	}
	return id, true
}

// loopbackHost accepts only a Host naming the loopback interface, so a
// DNS-rebound name cannot reach the bridge.
func loopbackHost(r *http.Request) bool {
	h := r.Host
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(h, "[]"))
	return ip != nil && ip.IsLoopback()
}

func (b *Bridge) serveExt(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r) {
		http.Error(w, "forbidden host", http.StatusForbidden)
		return
	}
	originID, ok := extOrigin(r)
	if !ok {
		// Web pages cannot forge a chrome-extension:// Origin.
		b.refused("connection without an extension origin", r.RemoteAddr)
		http.Error(w, "only the chromegate extension may connect", http.StatusForbidden)
		return
	}
	// Any local process (or another extension) can claim an extension
	// Origin: until its hello is verified a connection holds a slot of
	// MaxPending, for HelloTimeout at most, and may send wire.MaxHelloBytes.
	select {
	case b.pending <- struct{}{}:
	default:
		b.refused("too many connections waiting to authenticate", r.RemoteAddr)
		http.Error(w, "too many connections waiting to authenticate", http.StatusServiceUnavailable)
		return
	}
	release := sync.OnceFunc(func() { <-b.pending })
	defer release()
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true}) // Origin checked above
	if err != nil {
		return
	}
	ws.SetReadLimit(wire.MaxHelloBytes)
	b.handshake(ws, originID, r.RemoteAddr, release)
}

// handshake reads the hello within HelloTimeout and either welcomes the
// connection (making it current) or refuses it with 4401. heard is called
// once the wait for the hello is over (a frame, an error or the timeout):
// it frees the connection's slot of MaxPending.
func (b *Bridge) handshake(ws *websocket.Conn, originID, remote string, heard func()) {
	ctx, cancel := context.WithTimeout(context.Background(), b.opts.HelloTimeout)
	defer cancel()
	refuse := func(reason string) {
		b.refused(reason, remote)
		data, _ := json.Marshal(wire.Frame{V: wire.Version, Type: wire.TypeUnauthorized, Reason: reason})
		wctx, wcancel := context.WithTimeout(context.Background(), time.Second)
		_ = ws.Write(wctx, websocket.MessageText, data)
		wcancel()
		_ = ws.Close(wire.CloseUnauthorized, reason)
	}
	// Reading with a deadline context would tear the socket down when it
	// passes, before the refusal could be sent; a timer refuses instead.
	type first struct {
		data []byte
		err  error
	}
	got := make(chan first, 1)
	go func() {
		_, data, err := ws.Read(context.Background())
		got <- first{data, err}
	}()
	var data []byte
	select {
	case r := <-got:
		heard()
		if r.err != nil {
			_ = ws.CloseNow()
			return
		}
		data = r.data
	case <-ctx.Done():
		heard()
		refuse("hello timeout")
		return
	}
	var probe struct {
		V int `json:"v"`
	}
	if json.Unmarshal(data, &probe) == nil && probe.V != wire.Version {
		refuse("bad version")
		return
	}
	f, err := wire.Decode(data)
	if err != nil || f.Type != wire.TypeHello || f.Ext == nil {
		refuse("expected hello")
		return
	}
	if f.Ext.ID != originID {
		refuse("extension id does not match its origin")
		return
	}
	b.mu.Lock()
	var newToken string
	switch {
	case f.Code != "":
		if !b.codes.Use(f.Code) {
			b.mu.Unlock()
			refuse("bad code")
			return
		}
		newToken = b.token
	case !pairing.TokenMatches(b.hash, f.Token):
		b.mu.Unlock()
		refuse("bad token")
		return
	}
	if b.pinned != "" && b.pinned != originID {
		b.mu.Unlock()
		refuse("extension not paired")
		return
	}
	if b.closed {
		b.mu.Unlock()
		_ = ws.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	// Authenticated: frames may now be as large as the protocol's.
	ws.SetReadLimit(wire.MaxFrameBytes)
	firstPairing := b.pinned == ""
	b.pinned = originID
	sid := executor.NewSessionID() + executor.NewSessionID()
	c := newConn(b, ws, *f.Ext, sid)
	old := b.cur
	if old != nil && !old.isClosed() {
		b.displaced = &Displacement{At: time.Now().UTC(), OldExt: old.ext.ID, NewExt: originID, OldSince: old.since}
	} else {
		old = nil
	}
	// The welcome is queued before the connection is published: a call
	// made the moment it becomes current must reach the extension after
	// the welcome, or the extension (which ignores everything before it)
	// would never answer.
	welcome := wire.Frame{V: wire.Version, Type: wire.TypeWelcome, SessionID: sid, HeartbeatMs: int(b.opts.Heartbeat / time.Millisecond),
		Server: &wire.ServerInfo{Name: "chromegate", Version: b.opts.Version}, Scripts: b.opts.Scripts, NewToken: newToken}
	if err := c.send(welcome); err != nil {
		b.mu.Unlock()
		c.close(websocket.StatusInternalError, "welcome failed", executor.Errorf(executor.CodeExtensionDisconnected, "the extension connection failed during the handshake"))
		return
	}
	b.setCur(c)
	b.mu.Unlock()
	if firstPairing {
		if err := pairing.Pin(b.opts.DataDir, originID); err != nil {
			b.log.Warn("could not persist the paired extension id", "err", err)
		}
	}
	if old != nil {
		b.log.Warn("security: a new extension connection superseded the current one",
			"old_extension", old.ext.ID, "new_extension", originID, "remote", remote)
		old.close(wire.CloseSuperseded, "superseded", executor.Errorf(executor.CodeExtensionDisconnected, "a newer extension connection took over").
			WithHint("retry the call; chrome_status shows the displacement"))
	}
	b.log.Info("extension connected", "extension", originID, "version", f.Ext.Version, "paired_by_code", newToken != "")
	c.run()
}

func (b *Bridge) refused(reason, remote string) {
	b.mu.Lock()
	b.lastAuth = time.Now().UTC().Format(time.RFC3339) + " " + reason
	b.mu.Unlock()
	b.log.Warn("extension connection refused", "reason", reason, "remote", remote)
}

// serveCode mints a pairing code for `chromegate pair code`, which proves
// it may by presenting the token from handshake.json.
func (b *Bridge) serveCode(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r) || r.Header.Get("Origin") != "" {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	b.mu.Lock()
	ok := pairing.TokenMatches(b.hash, tok)
	b.mu.Unlock()
	if !ok {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	code, exp := b.NewCode(2 * time.Minute)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "port": strconv.Itoa(b.Port()), "expires": exp.UTC().Format(time.RFC3339)})
}
