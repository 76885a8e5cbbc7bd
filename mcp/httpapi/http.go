// Package httpapi serves an MCP server over HTTP: Streamable HTTP MCP at
// /mcp and the REST API at /api/v1/ on one listener, behind a Host and
// Origin allowlist (DNS rebinding, cross-origin pages) and bearer keys, into
// the same dispatch as stdio.
//
// Unauthenticated input is small: the transports read headers within 10 s
// and at most 64 KiB of them, check the key before reading a body, and cut
// off a body (with a key or without) that has not arrived within
// Options.BodyTimeout of its headers. Rights never grow through a key's own
// actions: a key can only create a key whose roles, tool ACL, rate and
// expiry are all within its own (CheckWithin).
//
// It sits beside package mcp, not inside it: mcp knows nothing of HTTP, and
// this package reaches the server only through Core.
package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/fleet"
)

// Defaults of the HTTP transport.
const (
	DefaultAddr         = "127.0.0.1:7890"
	DefaultMaxBodyBytes = 1 << 20
	// DefaultBodyTimeout bounds reading a request's headers' sequel: the
	// key check and the whole body (see Options.BodyTimeout).
	DefaultBodyTimeout      = 30 * time.Second
	DefaultSessionTimeout   = 30 * time.Minute
	DefaultNamedSessionIdle = time.Hour
	DefaultShutdownTimeout  = 30 * time.Second
	// DefaultMaxSessionsPerKey bounds the MCP sessions (browser contexts)
	// one principal may have open at a time.
	DefaultMaxSessionsPerKey = 32
	// MaxNamedSessions bounds the named browser contexts one principal may
	// keep at a time.
	MaxNamedSessions = 16

	// SessionHeader names a persistent browser context a client can come
	// back to (see Options.NamedSessionIdle).
	SessionHeader = "X-Chromegate-Session"
)

// Options configures the HTTP transports of a Server.
type Options struct {
	// Addr is the address the listener is bound to (host:port, after
	// listening, so a :0 port is resolved). Its port names the default
	// allowed Hosts.
	Addr string
	// Hosts are extra names the Host header may carry (--http-host):
	// "name" (with Addr's port) or "name:port".
	Hosts []string
	// Origins are the browser origins allowed to call (--allow-origin),
	// as scheme://host[:port]. Any other Origin header is refused.
	Origins []string
	// Keys is the key store (required). With no key in it, a server bound
	// to loopback serves local callers without a key.
	Keys *KeyStore
	// NoMCP and NoREST switch the MCP endpoint (/mcp) and the REST API
	// (/api/v1/) off.
	NoMCP, NoREST bool
	// MaxBodyBytes bounds a request body (default DefaultMaxBodyBytes);
	// larger bodies get 413 before anything is parsed.
	MaxBodyBytes int64
	// BodyTimeout bounds reading a request's body, from the end of its
	// headers (default DefaultBodyTimeout): a body still arriving then is
	// cut off, 408, and its connection closed. A slow body holds nothing
	// for longer, authenticated or not.
	BodyTimeout time.Duration
	// SessionTimeout closes an MCP session, and its browser context, after
	// this long without a request (default DefaultSessionTimeout).
	SessionTimeout time.Duration
	// NamedSessionIdle closes a named browser context (X-Chromegate-Session,
	// or REST's "session") after this long without a call (default
	// DefaultNamedSessionIdle).
	NamedSessionIdle time.Duration
	// MaxSessionsPerKey bounds the open MCP sessions of one principal
	// (default DefaultMaxSessionsPerKey): each holds a browser context.
	MaxSessionsPerKey int
	// Fleet, if set, is the state this replica shares with the others of
	// its fleet (serve --redis-url): handles and named contexts are
	// entered in its directory and checkpointed (see fleet.go).
	Fleet *fleet.Store
	// OAuth, if set, takes access tokens of an authorization server
	// beside keys (see oauth.go); then no request is served without one.
	OAuth *OAuth
	// NoWarm leaves a new MCP session's browser context and first tab to
	// its first call, instead of opening them as soon as the session has
	// initialised (see warm.go).
	NoWarm bool
	Logger *slog.Logger
}

// Handler serves Streamable HTTP MCP at /mcp and the REST API at
// /api/v1/ on one listener, behind the same hardening and authentication,
// into the same dispatch as stdio.
//
// Every MCP session gets a browser context of its own, closed when the
// session ends (DELETE, SessionTimeout, shutdown). A request carrying
// X-Chromegate-Session: NAME uses the caller's named context NAME instead,
// which outlives MCP sessions until it has been idle for NamedSessionIdle.
// Named contexts belong to the principal (the key) that made them: two keys
// using the same name get two contexts.
type Handler struct {
	core  Core
	opts  Options
	log   *slog.Logger
	hosts map[string]bool
	orig  map[string]bool
	local bool // bound to loopback
	mux   *http.ServeMux
	start time.Time

	mu       sync.Mutex
	mcp      map[string]*mcpSession // by MCP session id
	named    map[string]*ctxEntry   // by Manager session: named and minted contexts
	inflight int                    // tool calls running
	requests int                    // requests other than event streams (GET) being served
	idle     chan struct{}          // closed when requests drops to 0 during shutdown
	draining bool
	stop     chan struct{}
	stopOnce sync.Once
}

type mcpSession struct {
	owner    string // the principal that opened it
	inflight int
	ended    bool
}

// Core is what the HTTP front needs of the MCP server: an *mcp.Server.
// Its methods are safe for concurrent use, except Attach, which New calls
// once, before anything is served.
type Core interface {
	// SDK is the SDK server Streamable HTTP serves.
	SDK() *sdk.Server
	// Attach makes the Handler the server's mcp.Front.
	Attach(f mcp.Front)
	// Call runs a REST command through the server's dispatch.
	Call(ctx context.Context, session string, p mcp.Principal, name string, args json.RawMessage) (*sdk.CallToolResult, error)
	// VisibleTools lists the tools p may see, for GET /api/v1/tools.
	VisibleTools(ctx context.Context, p mcp.Principal) []*sdk.Tool
	// Status is the server's part of GET /api/v1/status.
	Status(ctx context.Context) map[string]any
	// CloseSession closes an ended session's browser context.
	CloseSession(session string) error
}

var (
	_ Core      = (*mcp.Server)(nil)
	_ mcp.Front = (*Handler)(nil)
)

// New builds the HTTP transports of core. It attaches the Handler to core
// as its mcp.Front (the HTTP principal and session of each request), so
// core must not serve stdio as well.
func New(core Core, opts Options) (*Handler, error) {
	if opts.Keys == nil {
		return nil, errors.New("httpapi: Options.Keys is required")
	}
	host, port, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("httpapi: Options.Addr %q: %w", opts.Addr, err)
	}
	opts.MaxBodyBytes = cmp.Or(opts.MaxBodyBytes, DefaultMaxBodyBytes)
	opts.BodyTimeout = cmp.Or(opts.BodyTimeout, DefaultBodyTimeout)
	opts.SessionTimeout = cmp.Or(opts.SessionTimeout, DefaultSessionTimeout)
	opts.NamedSessionIdle = cmp.Or(opts.NamedSessionIdle, DefaultNamedSessionIdle)
	opts.MaxSessionsPerKey = cmp.Or(opts.MaxSessionsPerKey, DefaultMaxSessionsPerKey)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Handler{
		core:  core,
		opts:  opts,
		log:   log,
		hosts: map[string]bool{},
		orig:  map[string]bool{},
		local: IsLoopback(host),
		start: time.Now(),
		mcp:   map[string]*mcpSession{},
		named: map[string]*ctxEntry{},
		stop:  make(chan struct{}),
	}
	for _, n := range []string{"localhost", "127.0.0.1", "[::1]"} {
		h.hosts[n+":"+port] = true
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		h.hosts[strings.ToLower(net.JoinHostPort(host, port))] = true
	}
	for _, n := range opts.Hosts {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" || strings.ContainsAny(n, "/@ ") {
			return nil, fmt.Errorf("--http-host %q: want a host name or host:port", n)
		}
		if _, _, err := net.SplitHostPort(n); err != nil {
			n = net.JoinHostPort(strings.Trim(n, "[]"), port)
		}
		h.hosts[n] = true
	}
	// The server's own origins: a request from them is not cross-origin
	// (and no page is served there to make one).
	for hp := range h.hosts {
		h.orig["http://"+hp] = true
	}
	for _, o := range opts.Origins {
		n, err := normalOrigin(o)
		if err != nil {
			return nil, fmt.Errorf("--allow-origin %q: %w", o, err)
		}
		h.orig[n] = true
	}

	core.Attach(h)
	srv := core.SDK()
	srv.AddReceivingMiddleware(h.track)

	h.mux = http.NewServeMux()
	if !opts.NoMCP {
		h.mux.Handle("/mcp", h.mcpHandler(srv))
		h.routeSessions("/mcp")
	}
	if !opts.NoREST {
		h.routeREST()
		h.routeSessions("/api/v1")
	}
	go h.reap()
	return h, nil
}

// principalKey holds the principal in an SDK TokenInfo.
const principalKey = "chromegate.principal"

// anonymous is the principal of a loopback server with no keys: one of
// its own, not stdio's (mcp.LocalPrincipal), so that a keyless HTTP caller
// — any local user of the machine — neither lists nor loads the states,
// files and records of the user who runs chromegate over stdio.
const anonymous = "local-http"

type principalCtxKey struct{}

// anonCtxKey marks a request served without a key (loopback, no keys). It
// is a flag of its own, not a principal name, so no key can pass for it.
type anonCtxKey struct{}

func isAnonymous(ctx context.Context) bool {
	anon, _ := ctx.Value(anonCtxKey{}).(bool)
	return anon
}

func principalFrom(ctx context.Context) (mcp.Principal, bool) {
	p, ok := ctx.Value(principalCtxKey{}).(mcp.Principal)
	return p, ok
}

// Identify implements mcp.Front for MCP over HTTP: the principal the
// authentication middleware found, carried by the SDK's TokenInfo.
func (h *Handler) Identify(_ context.Context, extra *sdk.RequestExtra) mcp.Principal {
	if extra != nil && extra.TokenInfo != nil {
		if p, ok := extra.TokenInfo.Extra[principalKey].(mcp.Principal); ok {
			return p
		}
	}
	// Only the anonymous route leaves TokenInfo unset, and it exists only
	// when no key does.
	return mcp.Principal{Name: anonymous, Roles: []string{}, Transport: "http"}
}

var sessionNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// SessionOf implements mcp.Front for MCP over HTTP: the context the
// request's SessionHeader presents, else its stateful MCP session's own,
// else (a stateless request) its principal's default context.
func (h *Handler) SessionOf(ctx context.Context, mcpID string, extra *sdk.RequestExtra, p mcp.Principal) (string, error) {
	if key, ok := ctx.Value(resolvedCtxKey{}).(string); ok {
		return key, nil // track resolved it for this call
	}
	if extra != nil {
		if presented := extra.Header.Get(SessionHeader); presented != "" {
			return h.contextKey(ctx, p, presented)
		}
	}
	if mcpID == "" {
		return h.namedKey(ctx, p, defaultContext)
	}
	h.mu.Lock()
	ms := h.mcp[mcpID]
	h.mu.Unlock()
	if ms == nil || ms.ended {
		return "", executor.Errorf(executor.CodeTargetGone, "the MCP session has ended").WithHint("start a new session")
	}
	return "mcp:" + mcpID, nil
}

// resolvedCtxKey holds the context track resolved for a tool call.
type resolvedCtxKey struct{}

// track is an SDK middleware: it notices MCP sessions as they start (to
// close their browser context when they end) and counts calls in flight
// on MCP sessions and other contexts (for shutdown, and for closing a
// context only when no call uses it).
func (h *Handler) track(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		var id string
		if ss, _ := req.GetSession().(*sdk.ServerSession); ss != nil {
			id = ss.ID()
		}
		switch method {
		case "initialize":
			if id == "" {
				break
			}
			owner := h.Identify(ctx, req.GetExtra()).Name
			h.mu.Lock()
			if h.mcp[id] == nil {
				if n := h.openContexts(owner); n >= h.opts.MaxSessionsPerKey {
					h.mu.Unlock()
					// The SDK closes a session whose initialize failed.
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
						Message: fmt.Sprintf("%s already has %d MCP sessions open (each is a browser context); close one (DELETE) or wait for an idle one to time out", owner, n)}
				}
				h.mcp[id] = &mcpSession{owner: owner}
				ss := req.GetSession().(*sdk.ServerSession)
				go func() {
					_ = ss.Wait()
					h.endMCP(id)
				}()
			}
			h.mu.Unlock()
			res, err := next(ctx, method, req)
			if err == nil {
				if extra := req.GetExtra(); extra == nil || extra.Header.Get(SessionHeader) == "" {
					// A request naming a context warms nothing: its
					// calls go to that context.
					h.warm("mcp:" + id)
				}
			}
			return res, err
		case "tools/call":
			var other string
			extra := req.GetExtra()
			if extra != nil && (extra.Header.Get(SessionHeader) != "" || id == "") {
				// The context this call goes to, resolved once: SessionOf
				// finds it in ctx when dispatch asks (a refusal is left to
				// dispatch, which renders it).
				if key, err := h.SessionOf(ctx, id, extra, h.Identify(ctx, extra)); err == nil {
					other = key
					ctx = context.WithValue(ctx, resolvedCtxKey{}, key)
				}
			}
			c, ok := h.begin(id, other)
			if !ok {
				return nil, errShuttingDown
			}
			defer h.end(c)
		}
		return next(ctx, method, req)
	}
}

var errShuttingDown = errors.New("the server is shutting down")

// begin counts a call in flight on an MCP session (id) and/or a named or
// minted context (named); it refuses new calls while the server drains.
// The call's end hands the returned call to end.
func (h *Handler) begin(id, named string) (*inflight, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining {
		return nil, false
	}
	h.inflight++
	if ms := h.mcp[id]; ms != nil {
		ms.inflight++
	}
	ce := h.named[named]
	if ce != nil {
		ce.inflight++
		ce.last = time.Now()
	}
	return &inflight{id: id, key: named, ce: ce}, true
}

// inflight is a call begin counted: on what.
type inflight struct {
	id, key string
	ce      *ctxEntry
}

func (h *Handler) end(c *inflight) {
	h.mu.Lock()
	h.inflight--
	closeMCP := false
	if ms := h.mcp[c.id]; ms != nil {
		ms.inflight--
		if ms.ended && ms.inflight == 0 {
			delete(h.mcp, c.id)
			closeMCP = true
		}
	}
	closeRetired := false
	if ce := c.ce; ce != nil {
		ce.inflight--
		ce.last = time.Now()
		// A context retired (DELETE) while this call ran on it closes
		// when its last call ends.
		closeRetired = ce.retired && ce.inflight == 0
	}
	h.mu.Unlock()
	if closeMCP {
		h.closeContext("mcp:" + c.id)
	}
	if closeRetired {
		h.closeContext(c.key)
	}
}

// endMCP closes an MCP session's browser context once its last call is
// done.
func (h *Handler) endMCP(id string) {
	h.mu.Lock()
	ms := h.mcp[id]
	closeNow := ms != nil && ms.inflight == 0
	if ms != nil {
		ms.ended = true
		if closeNow {
			delete(h.mcp, id)
		}
	}
	h.mu.Unlock()
	if closeNow {
		h.closeContext("mcp:" + id)
	}
}

func (h *Handler) closeContext(key string) {
	if err := h.core.CloseSession(key); err != nil {
		h.log.Warn("closing a session's browser context", "session", key, "err", err)
	} else {
		h.log.Debug("closed a session's browser context", "session", key)
	}
}

// ServeHTTP applies the hardening and authentication to every request, then
// routes it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusWriter{ResponseWriter: w}
	p, who := h.serve(rec, r)
	// The access log names the principal, never the key or any header.
	h.log.Debug("http", "method", r.Method, "path", r.URL.Path, "status", rec.status(), "principal", cmp.Or(p.Name, who), "ms", time.Since(start).Milliseconds())
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) (mcp.Principal, string) {
	api := strings.HasPrefix(r.URL.Path, "/api/")
	// The body must arrive by the deadline, whoever sends it; a refused
	// request keeps it, so the server's discarding of an unread body is
	// bounded too. It is lifted once the body is in (see readBody), so an
	// event stream (GET) or a long call is not cut.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.opts.BodyTimeout))
	// DNS rebinding: a page on evil.example that resolves to 127.0.0.1
	// reaches this listener with Host: evil.example.
	if !h.hosts[strings.ToLower(r.Host)] {
		h.refuse(w, api, http.StatusForbidden, "FORBIDDEN", "the Host header is not one this server answers to",
			"use http://"+h.opts.Addr+", or start the server with --http-host NAME")
		return mcp.Principal{}, "bad-host"
	}
	origin, hasOrigin := r.Header["Origin"]
	if hasOrigin {
		o := ""
		if len(origin) == 1 {
			o, _ = normalOrigin(origin[0])
		}
		if o == "" || !h.orig[o] {
			h.refuse(w, api, http.StatusForbidden, "FORBIDDEN", "cross-origin requests are refused",
				"call from a program, not a web page, or start the server with --allow-origin ORIGIN")
			return mcp.Principal{}, "bad-origin"
		}
		w.Header().Set("Access-Control-Allow-Origin", o)
		w.Header().Add("Vary", "Origin")
		w.Header().Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Retry-After, WWW-Authenticate, "+SessionHeader)
	} else if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		h.refuse(w, api, http.StatusForbidden, "FORBIDDEN", "cross-site requests are refused", "call from a program, not a web page")
		return mcp.Principal{}, "cross-site"
	}
	if r.Method == http.MethodOptions && hasOrigin {
		// A preflight from an allowed origin; it carries no credentials.
		w.Header().Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
		w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID, "+SessionHeader)
		w.Header().Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return mcp.Principal{}, "preflight"
	}
	if r.ContentLength > h.opts.MaxBodyBytes {
		h.refuse(w, api, http.StatusRequestEntityTooLarge, "BAD_ARGS", fmt.Sprintf("the request body is larger than %d bytes", h.opts.MaxBodyBytes), "send a smaller request")
		return mcp.Principal{}, "too-large"
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
	}
	if name := r.Header.Get(SessionHeader); name != "" && !sessionNameRE.MatchString(name) {
		h.refuse(w, api, http.StatusBadRequest, "BAD_ARGS", SessionHeader+" must be 1-64 of A-Z a-z 0-9 _ . -", "fix the session name")
		return mcp.Principal{}, "bad-session"
	}
	transport := "http"
	if api {
		transport = "rest"
	}
	if h.opts.OAuth != nil && r.Method == http.MethodGet && (r.URL.Path == protectedResourcePath || r.URL.Path == protectedResourcePath+"/mcp") {
		// RFC 9728: public, so a client learns where to get a token.
		writeJSON(w, http.StatusOK, h.opts.OAuth.protectedResource())
		return mcp.Principal{}, "metadata"
	}
	p, anon, err := h.authenticate(r, transport)
	if err != nil {
		status, hint := http.StatusUnauthorized, "send Authorization: Bearer <key>; keys come from `chromegate keys create`"
		if h.opts.OAuth == nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="chromegate"`)
		} else {
			w.Header().Set("WWW-Authenticate", h.opts.OAuth.challenge(h.metadataURL(r), err))
			hint = "send Authorization: Bearer <key or access token>; the authorization server is named at " + h.metadataURL(r)
			if errors.Is(err, errInsufficientScope) {
				status, hint = http.StatusForbidden, "get a token with the scopes the WWW-Authenticate header names"
			}
		}
		if errors.Is(err, errSharedState) {
			w.Header().Del("WWW-Authenticate")
			w.Header().Set("Retry-After", "2")
			h.refuse(w, api, http.StatusServiceUnavailable, string(mcp.CodeSharedState), err.Error(), "retry in a few seconds; if it persists, tell the operator")
			return mcp.Principal{}, "shared-state"
		}
		h.refuse(w, api, status, "UNAUTHORIZED", err.Error(), hint)
		return mcp.Principal{}, "unauthenticated"
	}
	body, ok := h.readBody(w, r, rc, api)
	if !ok {
		return p, "slow-body"
	}
	ctx := context.WithValue(r.Context(), principalCtxKey{}, p)
	var pk peek
	if r.Method == http.MethodPost && r.URL.Path == "/mcp" {
		// Only an MCP message is routed by what it carries.
		pk = peekBody(body)
		ctx = context.WithValue(ctx, peekCtxKey{}, pk)
	}
	if r.Method != http.MethodGet && !pk.listen {
		// A POST carries calls and their answers: shutdown waits for it.
		// A GET, or a POST of subscriptions/listen, is an event stream
		// that lasts as long as its client or session.
		h.mu.Lock()
		h.requests++
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.requests--
			if h.requests == 0 && h.idle != nil {
				close(h.idle)
				h.idle = nil
			}
			h.mu.Unlock()
		}()
	}
	if anon {
		ctx = context.WithValue(ctx, anonCtxKey{}, true)
	}
	h.mux.ServeHTTP(w, r.WithContext(ctx))
	return p, ""
}

// readBody reads an authenticated request's body (at most MaxBodyBytes,
// within the deadline serve set) and lifts the deadline. It answers 413
// or 408 itself and returns false when the body is too large or too slow.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, api bool) ([]byte, bool) {
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(r.Body)
		_ = r.Body.Close()
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			h.refuse(w, api, http.StatusRequestEntityTooLarge, "BAD_ARGS", fmt.Sprintf("the request body is larger than %d bytes", h.opts.MaxBodyBytes), "send a smaller request")
			return nil, false
		case err != nil:
			w.Header().Set("Connection", "close")
			h.refuse(w, api, http.StatusRequestTimeout, "TIMEOUT", fmt.Sprintf("the request body did not arrive within %s", h.opts.BodyTimeout), "send the whole request at once")
			return nil, false
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	_ = rc.SetReadDeadline(time.Time{})
	return body, true
}

var (
	errNoKey  = errors.New("this server needs a key")
	errBadKey = errors.New("the key is not valid (unknown or revoked)")
)

// authenticate finds the principal of a request: its bearer key's, or the
// anonymous local one when the server is on loopback and has no keys.
func (h *Handler) authenticate(r *http.Request, transport string) (p mcp.Principal, anon bool, err error) {
	authz := r.Header.Get("Authorization")
	if authz == "" {
		if h.local && h.opts.Keys.Empty() && h.opts.OAuth == nil {
			return mcp.Principal{Name: anonymous, Roles: []string{}, Transport: transport}, true, nil
		}
		return mcp.Principal{}, false, errNoKey
	}
	scheme, key, ok := strings.Cut(authz, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return mcp.Principal{}, false, errNoKey
	}
	key = strings.TrimSpace(key)
	if h.opts.OAuth != nil && !strings.HasPrefix(key, KeyPrefix) {
		p, err = h.opts.OAuth.Authenticate(r.Context(), key, transport)
		if errors.Is(err, errIssuerDown) {
			// The cause names the issuer's URLs, never the token.
			h.log.Error("an access token cannot be checked; refusing it", "err", err)
		}
		return p, false, err
	}
	p, err = h.opts.Keys.Authenticate(key, transport)
	if err != nil {
		if errors.Is(err, fleet.ErrUnavailable) {
			h.log.Error("the fleet's keys cannot be confirmed; refusing every key until Redis answers", "err", err)
			return mcp.Principal{}, false, errSharedState
		}
		if !errors.Is(err, ErrNoKey) {
			// The store could not be read: fail closed, and say why in the
			// log (the error names the file, never a key).
			h.log.Error("the key store cannot be read; refusing every key", "err", err)
		}
		return mcp.Principal{}, false, errBadKey
	}
	return p, false, nil
}

// refuse answers a request the hardening or authentication stopped: JSON
// for the REST API, plain text elsewhere. Nothing of the request is echoed.
func (h *Handler) refuse(w http.ResponseWriter, api bool, status int, code, msg, hint string) {
	if api {
		writeJSON(w, status, restError(code, msg, hint))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintf(w, "%s: %s\nNext: %s\n", code, msg, hint)
}

// normalOrigin is an Origin as scheme://host[:port], lower case; "null"
// and anything with a path or credentials is an error.
func normalOrigin(o string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("want scheme://host[:port] with scheme http or https")
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// IsLoopback reports whether host (a name or an IP, without port) is a
// loopback address: localhost, 127.0.0.0/8, ::1.
func IsLoopback(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve serves on ln until ctx is done, then shuts down gracefully: the
// listener closes, calls in flight finish (new ones are refused), MCP
// sessions are closed, and whatever is still running after timeout is cut.
func (h *Handler) Serve(ctx context.Context, ln net.Listener, timeout time.Duration) error {
	timeout = cmp.Or(timeout, DefaultShutdownTimeout)
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		h.Close()
		return err
	case <-ctx.Done():
	}
	h.log.Info("shutting down the HTTP server", "calls_in_flight", h.inFlight(), "deadline", timeout)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(sctx) }()
	h.drain(sctx)
	err := <-shut
	if err != nil {
		h.log.Warn("calls were still running at the shutdown deadline; closing their connections", "err", err)
		_ = srv.Close()
	}
	h.Close()
	if errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	return err
}

func (h *Handler) inFlight() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inflight
}

// drain refuses new calls, waits until the requests carrying calls in
// flight have been answered (or ctx ends), then closes every MCP session,
// which ends their event streams.
func (h *Handler) drain(ctx context.Context) {
	h.mu.Lock()
	h.draining = true
	var idle chan struct{}
	if h.requests > 0 {
		idle = make(chan struct{})
		h.idle = idle
	}
	h.mu.Unlock()
	if idle != nil {
		select {
		case <-idle:
		case <-ctx.Done():
		}
	}
	for ss := range h.core.SDK().Sessions() {
		_ = ss.Close()
	}
}

// Close stops the reaper. Browser contexts are closed with the Manager.
// Close may be called more than once.
func (h *Handler) Close() {
	h.stopOnce.Do(func() { close(h.stop) })
}

// statusWriter records the status of a response for the access log.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush keeps event streams (SSE) flowing through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) status() string {
	if w.code == 0 {
		return "-"
	}
	return strconv.Itoa(w.code)
}
