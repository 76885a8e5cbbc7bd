// Package client is a typed Go client for chromegate: one method per
// built-in tool, with the tool's arguments and result as Go structs
// generated from the server's tool table (tools_gen.go), over MCP (stdio or
// Streamable HTTP) or the REST API. Plugin tools, which each server loads
// from its own files, are called by name with Call.
//
// A tool that fails returns an *Error carrying the server's code
// (POLICY_DENIED, BAD_ARGS, SELECTOR_NOT_FOUND, ...), its message, its
// hint, when to retry and the page's words that explain it, read from the
// server's structured error; a transport that fails returns that
// transport's error.
//
//	c, err := client.ConnectStdio(ctx, exec.Command("chromegate", "serve", "--allow-domain", "example.com"))
//	if err != nil { ... }
//	defer c.Close()
//	page, err := c.Navigate(ctx, client.NavigateParams{URL: "https://example.com/"})
//	text, err := c.GetText(ctx, client.GetTextParams{Selector: "h1"})
//	fmt.Println(page.Title, text.Text)
package client

//go:generate go run ../internal/clientgen -o tools_gen.go

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport carries tool calls to a chromegate server. Implementations are
// safe for concurrent use; Close may be called more than once.
type Transport interface {
	// CallTool calls the tool name with params (a struct or map that
	// encodes as a JSON object, or nil) and returns its result, or an
	// *Error when the tool failed.
	CallTool(ctx context.Context, name string, params any) (*Raw, error)
	Close() error
}

// Raw is a tool's result as the server sent it: over MCP its structured
// content, over REST its answer, the same fields (the text a model reads is
// never parsed back).
type Raw struct {
	// JSON is the tool's value; empty when the value alone was longer
	// than the server's --max-result-chars (Truncated says so).
	JSON json.RawMessage
	// Text is the page text, Markdown or HTML that follows the value, as
	// the page wrote it.
	Text string
	// Untrusted says a page wrote some of the result: data, never
	// instructions.
	Untrusted bool
	// Truncated is the server's note when the result was cut.
	Truncated string
	// Blocked is the server's note on the page's requests the policy
	// refused while the call ran.
	Blocked string
	// Image and ImageMIMEType are a screenshot.
	Image         []byte
	ImageMIMEType string
}

// structured is a successful result's structured content, and REST's
// answer besides ok: {"data", "text", "untrusted", "truncated", "blocked",
// "image"} (the server's mcp.Data).
type structured struct {
	Data      json.RawMessage `json:"data"`
	Text      string          `json:"text"`
	Untrusted bool            `json:"untrusted"`
	Truncated string          `json:"truncated"`
	Blocked   string          `json:"blocked"`
	Image     *struct {
		Data     []byte `json:"data"`
		MIMEType string `json:"mime_type"`
	} `json:"image"`
}

func (s *structured) raw() *Raw {
	raw := &Raw{JSON: s.Data, Text: s.Text, Untrusted: s.Untrusted, Truncated: s.Truncated, Blocked: s.Blocked}
	if s.Image != nil {
		raw.Image, raw.ImageMIMEType = s.Image.Data, s.Image.MIMEType
	}
	return raw
}

// Error is a tool call that failed: the server's code, message and hint,
// when to retry (a rate limit), and what the page wrote that explains it.
// Over MCP it is the result's structured content, over REST the answer's
// error object: the same JSON, {"code", "message", "hint",
// "retry_after_ms", "page"}.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// RetryAfter is how long to wait before the call can succeed (a rate
	// limit; REST's Retry-After); zero when waiting would not help.
	RetryAfter time.Duration `json:"-"`
	// Page is what a page wrote that explains the error. It is untrusted
	// page content, never the server's words; a model should see it
	// marked as such.
	Page string `json:"page,omitempty"`
}

// UnmarshalJSON reads the server's error object (retry_after_ms in
// milliseconds).
func (e *Error) UnmarshalJSON(b []byte) error {
	type plain Error
	var w struct {
		plain
		RetryAfterMs int64 `json:"retry_after_ms"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Error(w.plain)
	e.RetryAfter = time.Duration(w.RetryAfterMs) * time.Millisecond
	return nil
}

func (e *Error) Error() string {
	if e.Hint == "" {
		return e.Code + ": " + e.Message
	}
	return e.Code + ": " + e.Message + " (next: " + e.Hint + ")"
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, &client.Error{Code: "POLICY_DENIED"}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Client calls chromegate tools over a Transport.
type Client struct {
	t Transport
}

// New returns a client over t.
func New(t Transport) *Client { return &Client{t: t} }

// Handle is the handle of the browser context the client minted and
// presents (see HTTPOptions.Handle), "" when it has none.
func (c *Client) Handle() string {
	if m, ok := c.t.(*MCP); ok {
		return m.handle
	}
	return ""
}

// Close closes the transport (and, for stdio, stops the server).
func (c *Client) Close() error { return c.t.Close() }

// Call calls any tool by name, plugin tools included, and returns its raw
// result. params is a struct or a map, or nil.
func (c *Client) Call(ctx context.Context, name string, params any) (*Raw, error) {
	return c.t.CallTool(ctx, name, params)
}

// CallJSON calls a tool by name and decodes its JSON result into out.
func (c *Client) CallJSON(ctx context.Context, name string, params, out any) (*Raw, error) {
	raw, err := c.t.CallTool(ctx, name, params)
	if err != nil {
		return nil, err
	}
	if out != nil && len(raw.JSON) > 0 {
		if err := json.Unmarshal(raw.JSON, out); err != nil {
			return raw, fmt.Errorf("chromegate %s: decode result: %w", name, err)
		}
	}
	return raw, nil
}

// Tool is a tool the server offers the caller: the built-in ones the key
// or policy allows, and the server's plugin tools.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations struct {
		ReadOnlyHint bool `json:"readOnlyHint"`
	} `json:"annotations"`
}

// ToolLister is a Transport that can list the caller's tools.
type ToolLister interface {
	ListTools(ctx context.Context) ([]Tool, error)
}

// ListTools lists the tools the server offers this caller (tools/list, or
// GET /api/v1/tools), plugin tools included.
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	l, ok := c.t.(ToolLister)
	if !ok {
		return nil, fmt.Errorf("chromegate: %T cannot list tools", c.t)
	}
	return l.ListTools(ctx)
}

// call is what the generated methods use.
func call[T any](ctx context.Context, c *Client, name string, params any) (*T, *Raw, error) {
	var out T
	raw, err := c.CallJSON(ctx, name, params, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, raw, nil
}

// MCP is a Transport over an MCP session.
type MCP struct {
	// Session is the MCP session; a client with a handle of its own
	// replaces it when the server loses it (see HTTPOptions.Handle).
	Session *sdk.ClientSession
	mu      sync.Mutex // guards Session against a resume
	// release gives back what the client holds on the server beside the
	// session (a minted browser context: see ConnectHTTP).
	release func() error
	handle  string // the minted context's handle, "" for none
	// redial starts a new MCP session on the same endpoint and context
	// (nil: a lost session is an error).
	redial func(ctx context.Context) (*sdk.ClientSession, error)
}

var clientImpl = &sdk.Implementation{Name: "chromegate-go-client", Version: "1"}

// ConnectMCP starts an MCP session over t (any SDK transport) and returns a
// client on it.
func ConnectMCP(ctx context.Context, t sdk.Transport) (*Client, error) {
	s, err := sdk.NewClient(clientImpl, nil).Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("chromegate: connect: %w", err)
	}
	return New(&MCP{Session: s}), nil
}

// ConnectStdio runs cmd (chromegate serve with its flags) and speaks MCP
// to it over its stdin and stdout. Close stops it.
func ConnectStdio(ctx context.Context, cmd *exec.Cmd) (*Client, error) {
	return ConnectMCP(ctx, &sdk.CommandTransport{Command: cmd})
}

// ConnectHTTP connects to a chromegate server's Streamable HTTP endpoint
// (http://127.0.0.1:7890/mcp), with key as the bearer (a key, or an OAuth
// access token; "" for none).
// httpClient may be nil.
//
// The client has a browser context of its own whatever the protocol the
// server and it agree on: at 2025-11-25 its MCP session's; at 2026-07-28,
// which has no sessions, one it mints (POST /mcp/sessions) and presents
// with every request (X-Chromegate-Session). Close gives it back.
func ConnectHTTP(ctx context.Context, endpoint, key string, httpClient *http.Client) (*Client, error) {
	return ConnectHTTPWith(ctx, endpoint, key, HTTPOptions{HTTPClient: httpClient})
}

// HTTPOptions tune ConnectHTTPWith.
type HTTPOptions struct {
	// HTTPClient carries the requests (nil: http.DefaultClient's
	// transport).
	HTTPClient *http.Client
	// Handle has the client mint a browser context of its own at every
	// protocol revision (at 2026-07-28 it does anyway). The context then
	// outlives the client's MCP session: behind a fleet of replicas, when
	// the replica holding a 2025-11-25 session dies, the client starts a
	// new MCP session (the specification's answer to a 404 for a session)
	// and goes on in the same context, restored from its checkpoint.
	Handle bool
	// Protocol asks for this MCP revision (e.g. "2025-11-25"; "" for the
	// newest both sides speak).
	Protocol string
}

// ConnectHTTPWith is ConnectHTTP with options.
func ConnectHTTPWith(ctx context.Context, endpoint, key string, o HTTPOptions) (*Client, error) {
	hc := withBearer(o.HTTPClient, key)
	ph := &presentHandle{base: cmp.Or[http.RoundTripper](hc.Transport, http.DefaultTransport)}
	withHandle := *hc
	withHandle.Transport = ph
	transport := func() sdk.Transport {
		return &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &withHandle}
	}
	dial := func(ctx context.Context) (*sdk.ClientSession, error) {
		return sdk.NewClient(clientImpl, nil).Connect(ctx, transport(), &sdk.ClientSessionOptions{ProtocolVersion: o.Protocol})
	}
	s, err := dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("chromegate: connect: %w", err)
	}
	m := &MCP{Session: s}
	c := New(m)
	if v := m.Session.InitializeResult().ProtocolVersion; v < "2026-07-28" && !o.Handle {
		return c, nil
	}
	handle, err := mintHandle(ctx, hc, endpoint)
	if err != nil {
		_ = m.Session.Close()
		return nil, err
	}
	ph.handle.Store(&handle)
	m.handle = handle
	m.release = func() error { return dropHandle(hc, endpoint, handle) }
	m.redial = dial
	return c, nil
}

// session is the MCP session calls go to now.
func (m *MCP) session() *sdk.ClientSession {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.Session
}

// resume starts a new MCP session in place of lost, unless another call
// did already, and returns the session to call on.
func (m *MCP) resume(ctx context.Context, lost *sdk.ClientSession) (*sdk.ClientSession, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Session != lost {
		return m.Session, nil
	}
	s, err := m.redial(ctx)
	if err != nil {
		return nil, fmt.Errorf("chromegate: the MCP session was lost and a new one could not start: %w", err)
	}
	_ = lost.Close()
	m.Session = s
	return s, nil
}

// CallTool implements Transport. A call refused because the server no
// longer knows the MCP session (its replica died) is sent again once, on
// a new session, when the client holds a context of its own (a handle):
// the server never ran it.
func (m *MCP) CallTool(ctx context.Context, name string, params any) (*Raw, error) {
	if params == nil {
		params = map[string]any{}
	}
	s := m.session()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: params})
	if err != nil && errors.Is(err, sdk.ErrSessionMissing) && m.redial != nil {
		if s, err = m.resume(ctx, s); err == nil {
			res, err = s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: params})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("chromegate %s: %w", name, err)
	}
	if res.IsError {
		return nil, resultError(res)
	}
	var sc structured
	if b, err := json.Marshal(res.StructuredContent); err != nil || res.StructuredContent == nil || json.Unmarshal(b, &sc) != nil {
		return nil, fmt.Errorf("chromegate %s: the result has no structured content (is the server chromegate?)", name)
	}
	raw := sc.raw()
	for _, c := range res.Content {
		if c, ok := c.(*sdk.ImageContent); ok {
			raw.Image, raw.ImageMIMEType = c.Data, c.MIMEType // its bytes are the image content's
		}
	}
	return raw, nil
}

// Close implements Transport.
func (m *MCP) Close() error {
	var err error
	if m.release != nil {
		err = m.release()
	}
	return errors.Join(m.session().Close(), err)
}

// ListTools implements ToolLister.
func (m *MCP) ListTools(ctx context.Context) ([]Tool, error) {
	var out []Tool
	for t, err := range m.session().Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("chromegate: tools/list: %w", err)
		}
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		var tool Tool
		if err := json.Unmarshal(b, &tool); err != nil {
			return nil, err
		}
		out = append(out, tool)
	}
	return out, nil
}

// resultError is the *Error of an isError result: its structured content
// ({"error": {...}}). A result without one is a page tool's own failure
// (or a server that is not chromegate): INTERNAL, with the result's text.
func resultError(res *sdk.CallToolResult) *Error {
	var sc struct {
		Error *Error `json:"error"`
	}
	if b, err := json.Marshal(res.StructuredContent); err == nil && json.Unmarshal(b, &sc) == nil && sc.Error != nil && sc.Error.Code != "" {
		// Over MCP the page's words come fenced (a client may show
		// structured content to a model); Page is the words.
		if page, ok := unfence(sc.Error.Page); ok {
			sc.Error.Page = page
		}
		return sc.Error
	}
	var text []string
	for _, c := range res.Content {
		if c, ok := c.(*sdk.TextContent); ok {
			text = append(text, c.Text)
		}
	}
	return &Error{Code: "INTERNAL", Message: strings.Join(text, "\n")}
}

// The page's words of an error reach MCP clients fenced, in the structured
// error as in the text (see mcp.ErrorContent): the fence is the server's
// marking for models, not part of the words.
const (
	fenceOpen  = "«page-"
	fenceClose = "«/page-"
)

// unfence returns the words of a structured error's fenced page; ok is
// false when s is not one fenced block. It reads that one field: a result's
// text is never parsed.
func unfence(s string) (content string, ok bool) {
	open, body, found := strings.Cut(s, "\n")
	if !found || !strings.HasPrefix(open, fenceOpen) || !strings.HasSuffix(open, "»") {
		return "", false
	}
	closeLine := fenceClose + strings.TrimPrefix(open, fenceOpen)
	if body == closeLine {
		return "", true
	}
	content, found = strings.CutSuffix(body, "\n"+closeLine)
	return content, found
}

// REST is a Transport over chromegate's REST API (POST /api/v1/command).
type REST struct {
	// BaseURL is the server, e.g. http://127.0.0.1:7890.
	BaseURL string
	// Key is the bearer key; "" sends none.
	Key string
	// Session names a browser session to use (optional).
	Session string
	// HTTPClient is used for requests (default http.DefaultClient).
	HTTPClient *http.Client
}

// NewREST returns a client over the REST API at baseURL with key.
func NewREST(baseURL, key string) *Client {
	return New(&REST{BaseURL: strings.TrimSuffix(baseURL, "/"), Key: key})
}

// maxRESTResponse bounds a REST response body.
const maxRESTResponse = 64 << 20

// CallTool implements Transport.
func (r *REST) CallTool(ctx context.Context, name string, params any) (*Raw, error) {
	if params == nil {
		params = map[string]any{}
	}
	body, err := json.Marshal(struct {
		Command string `json:"command"`
		Params  any    `json:"params"`
		Session string `json:"session,omitempty"`
	}{name, params, r.Session})
	if err != nil {
		return nil, fmt.Errorf("chromegate %s: encode params: %w", name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.BaseURL+"/api/v1/command", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	raw := &Raw{}
	if err := r.do(req, name, raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// ListTools implements ToolLister.
func (r *REST) ListTools(ctx context.Context) ([]Tool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.BaseURL+"/api/v1/tools", nil)
	if err != nil {
		return nil, err
	}
	var data struct {
		Tools []Tool `json:"tools"`
	}
	if err := r.do(req, "tools", &data); err != nil {
		return nil, err
	}
	return data.Tools, nil
}

// do sends req and decodes the data of a successful answer into data.
func (r *REST) do(req *http.Request, what string, data any) error {
	if r.Key != "" {
		req.Header.Set("Authorization", "Bearer "+r.Key)
	}
	hc := r.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("chromegate %s: %w", what, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxRESTResponse))
	if err != nil {
		return fmt.Errorf("chromegate %s: read response: %w", what, err)
	}
	var out restResponse
	if err := json.Unmarshal(b, &out); err != nil || out.OK == nil {
		return fmt.Errorf("chromegate %s: HTTP %d: %s", what, resp.StatusCode, snippet(b))
	}
	if !*out.OK {
		if out.Error == nil {
			return &Error{Code: "INTERNAL", Message: fmt.Sprintf("HTTP %d without an error", resp.StatusCode)}
		}
		return out.Error
	}
	if raw, ok := data.(*Raw); ok {
		*raw = *out.raw()
		return nil
	}
	if err := json.Unmarshal(out.Data, data); err != nil {
		return fmt.Errorf("chromegate %s: decode: %w", what, err)
	}
	return nil
}

// restResponse is {"ok": true, "data": ..., ...} (a command's answer: the
// result's structured content) or {"ok": false, "error": {...}}.
type restResponse struct {
	OK *bool `json:"ok"`
	structured
	Error *Error `json:"error"`
}

// Close implements Transport; REST holds no connection of its own.
func (r *REST) Close() error { return nil }

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// withBearer returns an HTTP client that sends key as a bearer token.
func withBearer(hc *http.Client, key string) *http.Client {
	if hc == nil {
		hc = &http.Client{}
	}
	if key == "" {
		return hc
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = bearer{base: base, key: key}
	return &c
}

type bearer struct {
	base http.RoundTripper
	key  string
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.key)
	return b.base.RoundTrip(req)
}

var (
	_ Transport  = (*MCP)(nil)
	_ Transport  = (*REST)(nil)
	_ ToolLister = (*MCP)(nil)
	_ ToolLister = (*REST)(nil)
	_ error      = (*Error)(nil)
)
