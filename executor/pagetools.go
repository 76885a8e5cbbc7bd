package executor

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"
)

// PageTooler is the optional capability of an Executor that finds the tools
// web pages register through WebMCP (document.modelContext, polyfills,
// @mcp-b/global) and calls them. It is separate from Executor so that a
// backend without it keeps compiling; callers test for it with a type
// assertion.
//
// Implementations must be safe for concurrent use.
type PageTooler interface {
	// PageTools lists the tools registered in one tab ("" = every tab),
	// in a stable order (tab, then name). A tool offered by more than one
	// surface is listed once, with the surface calls go to.
	PageTools(ctx context.Context, tabID string) ([]PageTool, error)
	// CallPageTool calls a page tool with input that the caller has already
	// validated against the tool's schema. A tool that throws or reports an
	// error is a result with IsError, not a Go error. When ctx ends, the
	// invocation is cancelled in the page (where the surface can) and the
	// call returns TIMEOUT; a page that navigates during the call fails it
	// with ErrInterruptedByNavigation's code and message.
	CallPageTool(ctx context.Context, p PageToolCallParams) (PageToolResult, error)
	// WatchPageTools calls fn, on one goroutine in order, for every change
	// of the page tools of the executor's tabs: registered, unregistered,
	// gone with a navigation or a closed tab. fn must not block for long.
	// stop ends the subscription; it may be called more than once.
	WatchPageTools(fn func(PageToolsEvent)) (stop func())
}

// PageMCP is the optional capability of reaching the MCP server a page runs
// itself (@mcp-b/global's TabServerTransport) with requests other than
// tools: resources/list, resources/read, prompts/list, prompts/get.
type PageMCP interface {
	// PageMCPRequest sends one JSON-RPC request to the MCP server of a tab
	// and returns its result. A tab without one is BAD_ARGS.
	PageMCPRequest(ctx context.Context, tabID, method string, params json.RawMessage) (json.RawMessage, error)
}

// PageToolSurface says how a page tool was found and is called.
type PageToolSurface string

// The surfaces, in the order of preference when a page offers a tool
// through several of them.
const (
	// SurfaceWebMCP is Chromium's own WebMCP, through the CDP WebMCP domain.
	SurfaceWebMCP PageToolSurface = "cdp-webmcp"
	// SurfaceMCPB is the MCP server of @mcp-b/global, over its postMessage
	// TabServerTransport.
	SurfaceMCPB PageToolSurface = "mcpb"
	// SurfaceInPage is a modelContext object in the page's main world (a
	// polyfill, navigator.modelContext, navigator.modelContextTesting).
	SurfaceInPage PageToolSurface = "inpage"
)

// Valid reports whether s is empty (any surface) or known.
func (s PageToolSurface) Valid() bool {
	switch s {
	case "", SurfaceWebMCP, SurfaceMCPB, SurfaceInPage:
		return true
	}
	return false
}

// Rank orders surfaces by preference (lower first).
func (s PageToolSurface) Rank() int {
	switch s {
	case SurfaceWebMCP:
		return 0
	case SurfaceMCPB:
		return 1
	}
	return 2
}

// PageTool is one tool a page registered. Everything but TabID, FrameID,
// URL, Origin and Surface is the page's own claim.
type PageTool struct {
	TabID   string `json:"tabId"`
	FrameID string `json:"frameId,omitempty"`
	// URL is the registering document's URL, Origin its origin, both read
	// from the browser, never from the page's scripts.
	URL         string              `json:"url"`
	Origin      string              `json:"origin"`
	Name        string              `json:"name"`
	Title       string              `json:"title,omitempty"`
	Description string              `json:"description,omitempty"`
	InputSchema json.RawMessage     `json:"inputSchema,omitempty"`
	Annotations PageToolAnnotations `json:"annotations"`
	Surface     PageToolSurface     `json:"surface"`
}

// PageToolAnnotations are the WebMCP hints a page declared (readOnlyHint,
// untrustedContentHint, consequentialHint; the CDP domain calls them
// readOnly, untrustedContent, consequential). They are claims, not facts.
type PageToolAnnotations struct {
	ReadOnly         bool `json:"readOnly,omitempty"`
	UntrustedContent bool `json:"untrustedContent,omitempty"`
	Consequential    bool `json:"consequential,omitempty"`
	Destructive      bool `json:"destructive,omitempty"`
}

// PageToolCallParams calls one page tool.
type PageToolCallParams struct {
	TabID string `json:"tabId,omitempty"`
	Name  string `json:"name"`
	// Surface picks one surface of a tool offered by several; empty =
	// the preferred one.
	Surface PageToolSurface `json:"surface,omitempty"`
	// Input is a JSON object (null or empty = {}).
	Input json.RawMessage `json:"input,omitempty"`
}

// PageToolResult is what a page tool returned. Output is its JSON value as
// the page gave it (a plain value, or MCP content {content:[...]}); IsError
// is set when the tool threw or said it failed, and Error then holds the
// page's message.
type PageToolResult struct {
	PageState
	Surface PageToolSurface `json:"surface"`
	Output  json.RawMessage `json:"output,omitempty"`
	IsError bool            `json:"isError,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// PageToolsEvent reports a change of one tab's page tools. Closed is set
// when the tab went away (every tool of it is then in Removed).
type PageToolsEvent struct {
	TabID   string     `json:"tabId"`
	Added   []PageTool `json:"added,omitempty"`
	Removed []PageTool `json:"removed,omitempty"`
	Closed  bool       `json:"closed,omitempty"`
	// Resources is set when the tab's page MCP server said its resources
	// or prompts changed.
	Resources bool `json:"resources,omitempty"`
}

// ErrInterruptedByNavigation fails a page-tool call whose page navigated
// away while the tool ran.
var ErrInterruptedByNavigation = Errorf(CodeDetached, "interrupted by navigation: the page left the document that registered the tool").
	WithHint("call page_tools_list to see the tools of the new page, then retry if the tool is still there")

// PageToolsScript is the in-page half of page-tool discovery, shared by the
// backends (see scripts/webmcp.js for its operations). It runs in the
// page's main world, where polyfills live; it is an expression whose value
// is a function of one argument.
//
//go:embed scripts/webmcp.js
var pageToolsScript string

// PageToolsScript returns the in-page discovery script.
func PageToolsScript() string { return stripComments(pageToolsScript) }

// Limits on what a page may declare; anything beyond is cut or dropped.
const (
	MaxPageTools           = 200
	MaxPageToolDescription = 2000
	MaxPageToolSchema      = 32 << 10
	MaxPageToolTitle       = 200
)

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// ValidPageToolName reports whether name is a WebMCP tool name: 1–128 of
// [A-Za-z0-9_.-].
func ValidPageToolName(name string) bool { return toolNameRE.MatchString(name) }

// NormalizePageTool checks and trims what a page declared: the name must
// be valid, the schema must be a JSON object (a JSON string holding one is
// decoded; anything else becomes {"type":"object"}), texts are cut to
// their limits. It reports false for a tool to drop.
func NormalizePageTool(t *PageTool) bool {
	if !ValidPageToolName(t.Name) {
		return false
	}
	t.Title = cutText(oneLine(t.Title), MaxPageToolTitle)
	t.Description = cutText(t.Description, MaxPageToolDescription)
	t.InputSchema = NormalizeSchema(t.InputSchema)
	return true
}

// NormalizeSchema returns schema as a compact JSON object with "type":
// "object": a JSON string holding a schema is decoded, a schema without a
// type gets one, anything else (or anything too large) is {"type":"object"}.
func NormalizeSchema(schema json.RawMessage) json.RawMessage {
	empty := json.RawMessage(`{"type":"object"}`)
	if len(schema) == 0 || len(schema) > MaxPageToolSchema {
		return empty
	}
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return empty
	}
	if s, ok := v.(string); ok {
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return empty
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return empty
	}
	if _, has := m["type"]; !has {
		m["type"] = "object"
	}
	if m["type"] != "object" {
		return empty
	}
	b, err := json.Marshal(m)
	if err != nil || len(b) > MaxPageToolSchema {
		return empty
	}
	return b
}

// NormalizeInput returns a call's input as a JSON object: empty or null is
// {}, a JSON string holding an object is decoded. Anything else is BAD_ARGS.
func NormalizeInput(in json.RawMessage) (json.RawMessage, error) {
	s := strings.TrimSpace(string(in))
	if s == "" || s == "null" {
		return json.RawMessage(`{}`), nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, Errorf(CodeBadArgs, "the page tool's input is not JSON: %v", err)
	}
	if str, ok := v.(string); ok {
		if err := json.Unmarshal([]byte(str), &v); err != nil {
			return nil, Errorf(CodeBadArgs, "the page tool's input is a string that is not JSON")
		}
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, Errorf(CodeBadArgs, "the page tool's input must be a JSON object")
	}
	return json.Marshal(v)
}

// OriginOf serialises the origin of a document URL ("https://a.example",
// "http://127.0.0.1:8080"), or "null" for an opaque one.
func OriginOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "null"
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		return u.Scheme + "://" + host + ":" + port
	}
	return u.Scheme + "://" + host
}

// DiffPageTools compares two lists of one tab's tools by surface-less
// identity (frame and name) and content.
func DiffPageTools(before, after []PageTool) (added, removed []PageTool) {
	key := func(t PageTool) string { return t.FrameID + "\x00" + t.Name }
	old := make(map[string]PageTool, len(before))
	for _, t := range before {
		old[key(t)] = t
	}
	seen := make(map[string]bool, len(after))
	for _, t := range after {
		k := key(t)
		seen[k] = true
		if o, ok := old[k]; !ok || !samePageTool(o, t) {
			if ok {
				removed = append(removed, o)
			}
			added = append(added, t)
		}
	}
	for _, t := range before {
		if !seen[key(t)] {
			removed = append(removed, t)
		}
	}
	return added, removed
}

func samePageTool(a, b PageTool) bool {
	return a.Name == b.Name && a.Title == b.Title && a.Description == b.Description &&
		string(a.InputSchema) == string(b.InputSchema) && a.Annotations == b.Annotations &&
		a.Surface == b.Surface && a.Origin == b.Origin && a.FrameID == b.FrameID
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
