package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/mcp"
)

// The REST API (seed 002's interface) runs the same tool table through the
// same dispatch, gate and policy as MCP; only the framing differs:
//
//	POST /api/v1/command  {"command": "click", "params": {...}, "session": "name"}
//	  → 200 {"ok": true, "data": {...}, "text": "...", "untrusted": true, "truncated": "...", "blocked": "...", "image": {...}}
//	        (the MCP result's structured content, mcp.Data, with the image's bytes)
//	  → 4xx/5xx {"ok": false, "error": {"code": "POLICY_DENIED", "message": "...", "hint": "...", "page": "..."}}
//	            (the error is executor.Error's JSON: retry_after_ms too when set, and Retry-After)
//	GET  /api/v1/status   → {"ok": true, "data": {...}}
//	GET  /api/v1/tools    → {"ok": true, "data": {"tools": [MCP tool definitions]}}
//	GET|POST /api/v1/keys, DELETE /api/v1/keys/{name}   (role "admin")
//	POST|GET /api/v1/sessions, DELETE /api/v1/sessions/{session}
//	      (the caller's browser contexts: see contexts.go; "session" above
//	       is a minted handle or a name, else the caller's default context)

// RESTError is the error object of a REST answer: for a tool call, the
// very executor.Error dispatch rendered the MCP result from, in its JSON
// form (code, message, hint, retry_after_ms, page; page is what a page
// wrote that explains the error, untrusted).
type RESTError = executor.Error

// restAnswer is every REST answer: ok, then data (and for a command the
// rest of its Data), or error.
type restAnswer struct {
	OK        bool           `json:"ok"`
	Data      any            `json:"data,omitempty"`
	Text      string         `json:"text,omitempty"`
	Untrusted bool           `json:"untrusted,omitempty"`
	Truncated string         `json:"truncated,omitempty"`
	Image     *mcp.ImageData `json:"image,omitempty"`
	Blocked   string         `json:"blocked,omitempty"`
	Error     *RESTError     `json:"error,omitempty"`
}

func restError(code, msg, hint string) restAnswer {
	return restAnswer{Error: &RESTError{Code: executor.Code(code), Message: msg, Hint: hint}}
}

func writeJSON[T any](w http.ResponseWriter, status int, v T) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // plain values always encode
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// toolError is the REST error of an isError result: the error dispatch
// rendered it from. A page tool's own failure carries none; it is
// answered, as ever, as INTERNAL with the result's text.
func toolError(res *sdk.CallToolResult) *RESTError {
	if e := mcp.ResultError(res); e != nil {
		return e
	}
	var text string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			text = t.Text
			break
		}
	}
	return &RESTError{Code: executor.CodeInternal, Message: text}
}

// StatusOf is the HTTP status REST answers an error code with.
func StatusOf(code string) int {
	switch executor.Code(code) {
	case executor.CodeBadArgs:
		return http.StatusBadRequest
	case executor.CodePolicyDenied:
		return http.StatusForbidden
	case mcp.CodeRateLimited:
		return http.StatusTooManyRequests
	case executor.CodeTimeout:
		return http.StatusGatewayTimeout
	case executor.CodeTabNotFound, executor.CodeStaleTab, executor.CodeSelectorNotFound,
		executor.CodeRefExpired, executor.CodeDevtoolsOpen, executor.CodeDialogOpen:
		return http.StatusConflict
	case executor.CodeEvalFailed:
		return http.StatusUnprocessableEntity
	case executor.CodeTargetGone, executor.CodeDetached, executor.CodeDownloadFailed:
		return http.StatusBadGateway
	case executor.CodeNoBackend, executor.CodeLaunchFailed, executor.CodeExtensionDisconnected, executor.CodeBackpressure:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func (h *Handler) routeREST() {
	h.mux.HandleFunc("POST /api/v1/command", h.restCommand)
	h.mux.HandleFunc("GET /api/v1/status", h.restStatus)
	h.mux.HandleFunc("GET /api/v1/tools", h.restTools)
	h.mux.HandleFunc("GET /api/v1/keys", h.admin(h.restKeysList))
	h.mux.HandleFunc("POST /api/v1/keys", h.admin(h.restKeysCreate))
	h.mux.HandleFunc("DELETE /api/v1/keys/{name}", h.admin(h.restKeysRevoke))
	h.mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, restError("NOT_FOUND", "no such endpoint: "+r.Method+" "+r.URL.Path,
			"the endpoints: POST /api/v1/command, GET /api/v1/status, GET /api/v1/tools, GET|POST /api/v1/keys, DELETE /api/v1/keys/{name}"))
	})
}

// decodeObject reads a JSON object body into exact-case fields: names are
// matched exactly (encoding/json would match struct fields in any case, so
// "Command" could shadow "command"), and unknown names are refused.
func decodeObject(r *http.Request, known ...string) (map[string]json.RawMessage, *RESTError, int) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		return nil, &RESTError{Code: "BAD_ARGS", Message: "the body must be JSON", Hint: "send Content-Type: application/json"}, http.StatusUnsupportedMediaType
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&m); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &RESTError{Code: "BAD_ARGS", Message: fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit), Hint: "send a smaller request"}, http.StatusRequestEntityTooLarge
		}
		return nil, &RESTError{Code: "BAD_ARGS", Message: "the body is not a JSON object", Hint: `send {"command": "...", "params": {...}}`}, http.StatusBadRequest
	}
	// Only white space may follow the object: not a second value, and not
	// a stray "}" (which dec.More, looking for a next element, lets by).
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &RESTError{Code: "BAD_ARGS", Message: "the body holds more than one JSON value, or text after it",
			Hint: `send exactly one object: {"command": "...", "params": {...}}`}, http.StatusBadRequest
	}
	for k := range m {
		if !slices.Contains(known, k) {
			return nil, &RESTError{Code: "BAD_ARGS", Message: fmt.Sprintf("unknown field %q", k), Hint: "accepted fields: " + strings.Join(known, ", ")}, http.StatusBadRequest
		}
	}
	return m, nil, 0
}

func stringField(m map[string]json.RawMessage, name string) (string, bool) {
	raw, ok := m[name]
	if !ok || bytes.Equal(raw, []byte("null")) {
		return "", true
	}
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}

func (h *Handler) restCommand(w http.ResponseWriter, r *http.Request) {
	p, _ := principalFrom(r.Context())
	m, rerr, status := decodeObject(r, "command", "params", "session")
	if rerr != nil {
		writeJSON(w, status, restAnswer{Error: rerr})
		return
	}
	command, ok := stringField(m, "command")
	if !ok || command == "" {
		writeJSON(w, http.StatusBadRequest, restError("BAD_ARGS", `"command" must be a tool name`, "GET /api/v1/tools lists them"))
		return
	}
	name, ok := stringField(m, "session")
	if !ok {
		writeJSON(w, http.StatusBadRequest, restError("BAD_ARGS", `"session" must be a string`, "omit it, or name a session"))
		return
	}
	name = cmpOr(name, r.Header.Get(SessionHeader))
	if name == "" {
		// Without a name, REST calls of one key share that key's default
		// context (as stateless MCP calls do), never another key's (nor
		// stdio's default profile).
		name = defaultContext
	}
	session, err := h.contextKey(r.Context(), p, name)
	if err != nil {
		e := executor.AsError(err)
		writeJSON(w, StatusOf(string(e.Code)), restAnswer{Error: e})
		return
	}
	c, ok := h.begin("", session)
	if !ok {
		writeJSON(w, http.StatusServiceUnavailable, restError("NO_BACKEND", "the server is shutting down", "retry against a running server"))
		return
	}
	defer h.end(c)
	res, err := h.core.Call(mcp.WithTraceParent(r.Context(), mcp.TraceParentOf(r.Header)), session, p, command, m["params"])
	var rpc *jsonrpc.Error
	switch {
	case errors.Is(err, mcp.ErrUnknownTool):
		writeJSON(w, http.StatusNotFound, restError("UNKNOWN_COMMAND", fmt.Sprintf("there is no command %q", command), "GET /api/v1/tools lists the commands"))
	case errors.As(err, &rpc):
		writeJSON(w, http.StatusBadRequest, restError("BAD_ARGS", `"params" must be a JSON object`, "send the tool's arguments as an object"))
	case err != nil:
		h.log.Error("REST call failed", "command", command, "err", err)
		writeJSON(w, http.StatusInternalServerError, restError(string(executor.CodeInternal), "the call failed", "see the server log"))
	case res.IsError:
		e := toolError(res)
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		}
		writeJSON(w, StatusOf(string(e.Code)), restAnswer{Error: e})
	default:
		// The result's structured content: the value its text was
		// rendered from, never the text parsed back.
		d, _ := mcp.ResultData(res)
		writeJSON(w, http.StatusOK, restAnswer{OK: true, Data: d.Value, Text: d.Text, Untrusted: d.Untrusted, Truncated: d.Truncated, Image: d.Image, Blocked: d.Blocked})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (h *Handler) restStatus(w http.ResponseWriter, r *http.Request) {
	p, _ := principalFrom(r.Context())
	// The server's own entries (Options.Status's among them) win, as ever.
	st := h.core.Status(r.Context())
	for k, v := range map[string]any{
		"principal": p,
		"mcp":       !h.opts.NoMCP,
		"rest":      !h.opts.NoREST,
		"sessions":  h.sessionCounts(),
		"uptime_s":  int(time.Since(h.start).Seconds()),
	} {
		if _, taken := st[k]; !taken {
			st[k] = v
		}
	}
	writeJSON(w, http.StatusOK, restAnswer{OK: true, Data: st})
}

func (h *Handler) restTools(w http.ResponseWriter, r *http.Request) {
	p, _ := principalFrom(r.Context())
	writeJSON(w, http.StatusOK, restAnswer{OK: true, Data: map[string]any{"tools": h.core.VisibleTools(r.Context(), p)}})
}

// admin lets only principals with the admin role through.
func (h *Handler) admin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, _ := principalFrom(r.Context())
		if isAnonymous(r.Context()) || !slices.Contains(p.Roles, "admin") {
			writeJSON(w, http.StatusForbidden, restError("FORBIDDEN", "managing keys needs a key with the admin role",
				"create one with `chromegate keys create NAME --role admin`"))
			return
		}
		next(w, r)
	}
}

func (h *Handler) restKeysList(w http.ResponseWriter, _ *http.Request) {
	keys, err := h.opts.Keys.List()
	if err != nil {
		h.log.Error("listing keys", "err", err)
		writeJSON(w, http.StatusInternalServerError, restError(string(executor.CodeInternal), "the key store cannot be read", "see the server log"))
		return
	}
	writeJSON(w, http.StatusOK, restAnswer{OK: true, Data: map[string]any{"keys": keys}})
}

func (h *Handler) restKeysCreate(w http.ResponseWriter, r *http.Request) {
	m, rerr, status := decodeObject(r, "name", "roles", "allow_tools", "rate", "expires")
	if rerr != nil {
		writeJSON(w, status, restAnswer{Error: rerr})
		return
	}
	var nk NewKey
	for field, dst := range map[string]any{"name": &nk.Name, "roles": &nk.Roles, "allow_tools": &nk.AllowTools, "rate": &nk.Rate, "expires": &nk.Expires} {
		if raw, ok := m[field]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				writeJSON(w, http.StatusBadRequest, restError("BAD_ARGS", fmt.Sprintf("%q has the wrong type", field), `name: string, roles: [string], allow_tools: [string], rate: "N/min", expires: RFC 3339 time`))
				return
			}
		}
	}
	// The admin creates within its own rights: the operator's CLI is the
	// only way to a key wider than the one asking.
	p, _ := principalFrom(r.Context())
	if err := CheckWithin(p, nk); err != nil {
		writeJSON(w, http.StatusForbidden, restError("FORBIDDEN", err.Error(),
			"ask for a key within your own key's roles, tools, rate and expiry; the operator can create wider ones with `chromegate keys create`"))
		return
	}
	key, info, err := h.opts.Keys.Create(nk, time.Now())
	if err != nil {
		writeJSON(w, http.StatusBadRequest, restError("BAD_ARGS", err.Error(), "fix the field and retry"))
		return
	}
	h.log.Info("key created over REST", "name", info.Name, "roles", info.Roles)
	writeJSON(w, http.StatusCreated, restAnswer{OK: true, Data: struct {
		KeyInfo
		Key string `json:"key"`
	}{info, key}})
}

func (h *Handler) restKeysRevoke(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if err := h.opts.Keys.Revoke(name); err != nil {
		if errors.Is(err, ErrNoKey) {
			writeJSON(w, http.StatusNotFound, restError("NOT_FOUND", fmt.Sprintf("there is no key %q", name), "GET /api/v1/keys lists them"))
			return
		}
		h.log.Error("revoking a key", "name", name, "err", err)
		writeJSON(w, http.StatusInternalServerError, restError(string(executor.CodeInternal), "the key store cannot be written", "see the server log"))
		return
	}
	h.log.Info("key revoked over REST", "name", name)
	writeJSON(w, http.StatusOK, restAnswer{OK: true, Data: map[string]string{"revoked": name}})
}
