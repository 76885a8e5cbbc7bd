package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Two revisions of MCP on one endpoint.
//
// /mcp serves protocol 2026-07-28, where every request is whole in itself
// (no initialize, no Mcp-Session-Id; the version and the client's
// capabilities ride in each request's _meta; subscriptions/listen replaces
// the GET stream), and 2025-11-25 and 2025-06-18, where a session starts
// with initialize and carries Mcp-Session-Id. Both are the go-sdk's own
// Streamable HTTP handlers on the same *sdk.Server: a stateless one and a
// stateful one. A request goes to the one its version asks for: the
// MCP-Protocol-Version header, or for a request with no session id the
// version its _meta carries (the SDK's own test of a new-protocol request).
// Anything else — initialize, a request on a session, a GET stream, DELETE
// — is the stateful handler's, as before.
//
// Browser state does not live in a transport session at 2026-07-28: the
// request's SessionHeader, or its principal's default context, decides
// (see contexts.go).

// newProtocol is the first version that is stateless.
const newProtocol = "2026-07-28"

// eventStoreBytes bounds the events kept for resuming 2025-11-25 streams.
const eventStoreBytes = 16 << 20

// metaVersion is the _meta key of a request's protocol version.
const metaVersion = "io.modelcontextprotocol/protocolVersion"

// peek is what serve read of a POST body before routing it.
type peek struct {
	version string // the _meta protocol version of its first request
	listen  bool   // it opens a subscriptions/listen stream
}

type peekCtxKey struct{}

// peekBody reads the methods and _meta versions of a JSON-RPC message or
// batch. A body that is not JSON-RPC peeks as nothing: the SDK answers it.
func peekBody(body []byte) peek {
	type msg struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	var msgs []msg
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		_ = json.Unmarshal(body, &msgs)
	} else {
		var m msg
		if json.Unmarshal(body, &m) == nil {
			msgs = []msg{m}
		}
	}
	var pk peek
	for _, m := range msgs {
		if v, ok := m.Params.Meta[metaVersion].(string); ok && pk.version == "" {
			pk.version = v
		}
		if m.Method == "subscriptions/listen" {
			pk.listen = true
		}
	}
	return pk
}

// stateless reports whether r asks for a stateless revision.
func stateless(r *http.Request) bool {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v >= newProtocol
	}
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	pk, _ := r.Context().Value(peekCtxKey{}).(peek)
	return pk.version >= newProtocol
}

// mcpHandler is /mcp: the stateful and the stateless SDK handlers, each
// bound to the authenticated principal.
func (h *Handler) mcpHandler(srv *sdk.Server) http.Handler {
	base := sdk.StreamableHTTPOptions{
		MaxRequestBodyBytes: h.opts.MaxBodyBytes,
		Logger:              h.log,
		// The SDK refuses a non-loopback Host on a loopback listener;
		// the Host allowlist of serve is stricter, and must win when it
		// names more hosts (--http-host) for a loopback server.
		DisableLocalhostProtection: len(h.opts.Hosts) > 0,
	}
	stateful := base
	stateful.SessionTimeout = h.opts.SessionTimeout
	// A 2025-11-25 client whose connection drops mid-call resumes its
	// stream (Last-Event-ID) and loses no answer: the SDK keeps the
	// events of live sessions, at most eventStoreBytes of them all (the
	// oldest go first), and primes each stream with an event id.
	events := sdk.NewMemoryEventStore(nil)
	events.SetMaxBytes(eventStoreBytes)
	stateful.EventStore = events
	statelessOpts := base
	statelessOpts.Stateless = true
	// A stateless call lives as long as its POST: a client that goes
	// away cancels it.
	statelessOpts.PropagateRequestCancellation = true
	get := func(*http.Request) *sdk.Server { return srv }
	full, bare := h.bind(sdk.NewStreamableHTTPHandler(get, &stateful)), h.bind(sdk.NewStreamableHTTPHandler(get, &statelessOpts))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stateless(r) {
			bare.ServeHTTP(w, r)
			return
		}
		full.ServeHTTP(w, r)
	})
}

// bind hands the authenticated principal to the SDK as its TokenInfo, so
// the SDK binds a session to the key that opened it (a session id
// presented with another key is refused). The principal was authenticated
// already; this only hands it on.
func (h *Handler) bind(next http.Handler) http.Handler {
	bound := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		p, ok := principalFrom(r.Context())
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.Name, Extra: map[string]any{principalKey: p}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isAnonymous(r.Context()) {
			next.ServeHTTP(w, r)
			return
		}
		bound.ServeHTTP(w, r)
	})
}
