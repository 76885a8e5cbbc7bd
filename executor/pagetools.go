package executor

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
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
	// and returns its result, bounded to about maxChars bytes while it is
	// read (cut says it was cut; list items' strings are cut first, so a
	// long one does not crowd out the rest). A tab without one is
	// BAD_ARGS.
	PageMCPRequest(ctx context.Context, tabID, method string, params json.RawMessage, maxChars int) (result json.RawMessage, cut bool, err error)
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
// URL, Origin, Surface and Unusable is the page's own claim.
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
	// Unusable says, in chromegate's words, why the tool cannot be called
	// (its input schema is too large, too deep, or refers to itself); its
	// InputSchema is then the empty object schema, not the page's. It is
	// listed, so the model learns why, and every call of it is BAD_ARGS.
	Unusable string `json:"unusable,omitempty"`
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
	// MaxOutputChars bounds the result while it is read from the page:
	// an output whose JSON is longer comes back cut (see
	// PageToolResult.OutputChars). 0 = DefaultPageToolOutput.
	MaxOutputChars int `json:"maxOutputChars,omitempty"`
}

// OutputLimit is p's MaxOutputChars, or the default, and never more than
// MaxPageToolOutput.
func (p PageToolCallParams) OutputLimit() int {
	if p.MaxOutputChars <= 0 {
		return DefaultPageToolOutput
	}
	return min(p.MaxOutputChars, MaxPageToolOutput)
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
	// OutputChars is set when Output was cut while it was read: the length
	// of the whole output's JSON, of which Output holds a bounded part.
	OutputChars int `json:"outputChars,omitempty"`
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

// Nothing a page sends can stop the server. What a page controls — its
// tools' names, texts and schemas, the lists of them, what its tools
// return, its MCP server's resources and prompts — is bounded in count,
// size and depth before it is decoded or walked, by the in-page script
// (scripts/webmcp.js) and again here, on the server's side of the wire,
// where the page cannot change the code. Recursion over a page's
// structure is guarded: a schema that refers to itself ($ref cycles,
// allOf:[{$ref:"#"}]), expands past MaxPageToolSchemaNodes through its
// references, or nests deeper than MaxPageToolSchemaDepth is refused
// (PageTool.Unusable; calling the tool is BAD_ARGS) before any validator
// sees it. A bad item is refused or left out; the rest keeps working.
//
// Limits on what a page may declare; anything beyond is cut or dropped.
const (
	MaxPageTools           = 200
	MaxPageToolDescription = 2000
	MaxPageToolSchema      = 32 << 10
	MaxPageToolTitle       = 200
	// MaxPageToolSchemaDepth bounds the JSON nesting of a schema.
	MaxPageToolSchemaDepth = 64
	// MaxPageToolSchemaNodes bounds a schema's subschemas counted as a
	// validator would visit them, following every $ref: a cycle never
	// ends, and a chain of references used twice each doubles.
	MaxPageToolSchemaNodes = 10_000
	// DefaultPageToolOutput is the result bound of a call that sets none.
	DefaultPageToolOutput = 100_000
	// MaxPageToolOutput is the most any call reads of a page tool's result.
	MaxPageToolOutput = 4 << 20
)

var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// ValidPageToolName reports whether name is a WebMCP tool name: 1–128 of
// [A-Za-z0-9_.-].
func ValidPageToolName(name string) bool { return toolNameRE.MatchString(name) }

// NormalizePageTool checks and trims what a page declared: the name must
// be valid, the schema must be a JSON object (a JSON string holding one is
// decoded; anything else becomes {"type":"object"}), texts are cut to
// their limits. A schema that is too large, too deep or refers to itself
// makes the tool Unusable. It reports false for a tool to drop.
func NormalizePageTool(t *PageTool) bool {
	if !ValidPageToolName(t.Name) {
		return false
	}
	t.Title = CutPageText(oneLine(t.Title), MaxPageToolTitle)
	t.Description = CutPageText(t.Description, MaxPageToolDescription)
	if t.Unusable == "" && len(t.InputSchema) > MaxPageToolSchema {
		t.Unusable = fmt.Sprintf("its input schema is larger than %d KiB", MaxPageToolSchema>>10)
	}
	if t.Unusable == "" {
		t.InputSchema = NormalizeSchema(t.InputSchema)
		if err := CheckSchema(t.InputSchema); err != nil {
			t.Unusable = err.Error()
		}
	}
	if t.Unusable != "" {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	return true
}

// NormalizeSchema returns schema as a compact JSON object with "type":
// "object": a JSON string holding a schema is decoded, a schema without a
// type gets one, anything else (or anything too large) is {"type":"object"}.
// It does not judge the schema's structure: CheckSchema does.
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
		if len(s) > MaxPageToolSchema {
			return empty
		}
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

// ErrSchemaUnusable is the error CheckSchema's errors match with
// errors.Is.
var ErrSchemaUnusable = errors.New("the input schema cannot be used")

// schemaError is why CheckSchema refuses a schema, in chromegate's words.
type schemaError string

func (e schemaError) Error() string        { return string(e) }
func (e schemaError) Is(target error) bool { return target == ErrSchemaUnusable }

// CheckSchema reports why a page's input schema cannot be used, or nil.
// It refuses a schema larger than MaxPageToolSchema, nested deeper than
// MaxPageToolSchemaDepth, with a reference other than a local JSON pointer
// ("#", "#/$defs/x"), $dynamicRef, $recursiveRef or a nested $id (which
// would move what a reference means), a reference that leads back to
// itself, or one whose expansion passes MaxPageToolSchemaNodes. Its
// errors say so in chromegate's words: they never quote the schema.
//
// It walks the schema without recursion, so no schema can exhaust the
// stack, and it is what stands between a page and a validator
// (jsonschema-go) that recurses without a bound.
func CheckSchema(schema json.RawMessage) error {
	if len(schema) > MaxPageToolSchema {
		return schemaError(fmt.Sprintf("its input schema is larger than %d KiB", MaxPageToolSchema>>10))
	}
	if d := jsonDepth(schema); d > MaxPageToolSchemaDepth {
		return schemaError(fmt.Sprintf("its input schema nests deeper than %d levels", MaxPageToolSchemaDepth))
	}
	var root any
	if err := json.Unmarshal(schema, &root); err != nil {
		return schemaError("its input schema is not JSON")
	}
	// Expand the schema as a validator applies it, following references,
	// with an explicit stack: a node is (value, the references on its
	// path). A reference already on the path is a cycle.
	type node struct {
		v    any
		refs []string
		top  bool
	}
	stack := []node{{v: root, top: true}}
	visited := 0
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		visited++
		if visited > MaxPageToolSchemaNodes {
			return schemaError(fmt.Sprintf("its input schema expands to more than %d subschemas through its references", MaxPageToolSchemaNodes))
		}
		switch v := n.v.(type) {
		case []any:
			for _, x := range v {
				stack = append(stack, node{v: x, refs: n.refs})
			}
		case map[string]any:
			for k, x := range v {
				switch k {
				case "enum", "const", "default", "examples":
					continue // data, not schemas
				case "$dynamicRef", "$recursiveRef", "$dynamicAnchor", "$recursiveAnchor":
					return schemaError("its input schema uses " + k + ", which chromegate does not follow")
				case "$id":
					if !n.top {
						return schemaError("its input schema has a nested $id, which chromegate does not follow")
					}
					continue
				case "$ref":
					ref, ok := x.(string)
					if !ok {
						break // a property named $ref: a schema below
					}
					if slices.Contains(n.refs, ref) {
						return schemaError("its input schema refers to itself ($ref cycle)")
					}
					target, err := jsonPointer(root, ref)
					if err != nil {
						return err
					}
					stack = append(stack, node{v: target, refs: append(slices.Clip(n.refs), ref)})
					continue
				case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
					// Maps of name → schema: a name such as "$ref" is a
					// name, not a keyword.
					if m, ok := x.(map[string]any); ok {
						for _, sub := range m {
							stack = append(stack, node{v: sub, refs: n.refs})
						}
						continue
					}
				}
				stack = append(stack, node{v: x, refs: n.refs})
			}
		}
	}
	return nil
}

// jsonPointer resolves a local reference ("#" or "#/a/b") in root.
func jsonPointer(root any, ref string) (any, error) {
	if ref == "#" {
		return root, nil
	}
	p, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, schemaError("its input schema has a reference chromegate does not follow (only #/… within the schema)")
	}
	cur := root
	for _, part := range strings.Split(p, "/") {
		if u, err := url.PathUnescape(part); err == nil {
			part = u
		}
		part = strings.NewReplacer("~1", "/", "~0", "~").Replace(part)
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[part]
			if !ok {
				return nil, schemaError("its input schema has a reference to nothing")
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(c) {
				return nil, schemaError("its input schema has a reference to nothing")
			}
			cur = c[i]
		default:
			return nil, schemaError("its input schema has a reference to nothing")
		}
	}
	return cur, nil
}

// jsonDepth is the deepest nesting of objects and arrays in b, read
// without decoding (b need not be valid JSON).
func jsonDepth(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
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

// CutPageText cuts page-written text to at most max bytes, on a rune
// boundary, ending in "…" when it cut.
func CutPageText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// BoundOutput encodes v, a page's value decoded from JSON (a tool's
// output, a page MCP server's answer), as JSON of about max bytes at most:
// the whole of it when it fits, else a copy with strings cut and items
// left out once the budget is spent, nested at most 32 deep, so that it
// stays JSON a reader can use. size is the whole value's JSON length
// (estimated), and cut says whether it was cut. No walk here recurses
// more than 33 deep, whatever v's nesting.
func BoundOutput(v any, max int) (out json.RawMessage, size int, cut bool) {
	size = jsonSize(v)
	if size <= max {
		if b, err := json.Marshal(v); err == nil {
			return b, len(b), false
		}
	}
	budget := max
	var shrink func(x any, depth int) any
	shrink = func(x any, depth int) any {
		if budget <= 0 {
			return nil
		}
		switch x := x.(type) {
		case string:
			x, n := cutEncoded(x, budget)
			budget -= n + 2
			return x
		case []any:
			if depth >= 32 {
				budget -= 4
				return nil
			}
			out := []any{}
			for _, e := range x {
				if budget <= 0 {
					break
				}
				out = append(out, shrink(e, depth+1))
			}
			return out
		case map[string]any:
			if depth >= 32 {
				budget -= 4
				return nil
			}
			// Small members first, so a long text does not crowd out
			// the "type" beside it.
			keys := slices.Sorted(maps.Keys(x))
			sizes := make(map[string]int, len(keys))
			for _, k := range keys {
				sizes[k] = jsonSizeUpTo(x[k], budget+1)
			}
			slices.SortStableFunc(keys, func(a, b string) int { return sizes[a] - sizes[b] })
			out := map[string]any{}
			for _, k := range keys {
				if budget <= 0 {
					break
				}
				k2 := CutPageText(k, 256)
				budget -= len(k2) + 3
				out[k2] = shrink(x[k], depth+1)
			}
			return out
		}
		budget -= 8
		return x
	}
	b, err := json.Marshal(shrink(v, 0))
	if err != nil {
		b = []byte("null")
	}
	return b, size, true
}

// cutEncoded cuts s so that its JSON encoding (json.Marshal's: an invalid
// byte becomes \ufffd, a control character or <, >, & a \u escape) is at
// most max bytes, marking a cut with "…"; it returns the string and its
// encoded length, quotes left out.
func cutEncoded(s string, max int) (string, int) {
	n := 0
	for i, r := range s {
		w := encodedLen(r, s[i:])
		if n+w > max {
			for n+len("…") > max && i > 0 {
				// make room for the mark: step back a rune
				r2, size := utf8.DecodeLastRuneInString(s[:i])
				n -= encodedLen(r2, s[i-size:])
				i -= size
			}
			return s[:i] + "…", n + len("…")
		}
		n += w
	}
	return s, n
}

// encodedLen is the length of r, the rune at the start of rest, in
// json.Marshal's encoding of a string.
func encodedLen(r rune, rest string) int {
	switch {
	case r == utf8.RuneError:
		if _, size := utf8.DecodeRuneInString(rest); size == 1 {
			return len(`\ufffd`)
		}
		return 3
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return len(`\u0000`)
	}
	return utf8.RuneLen(r)
}

// BoundSize reports whether v's JSON is at most about max bytes long,
// walking v without recursion and stopping once it is over.
func BoundSize(v any, max int) bool { return jsonSizeUpTo(v, max) <= max }

// jsonSize estimates the length of v's JSON, walking it without recursion.
func jsonSize(v any) int { return jsonSizeUpTo(v, math.MaxInt) }

// jsonSizeUpTo is jsonSize, stopping once it passes limit.
func jsonSizeUpTo(v any, limit int) int {
	n := 0
	stack := []any{v}
	for len(stack) > 0 && n <= limit {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := x.(type) {
		case string:
			n += len(x) + 2
		case []any:
			n += 2 + len(x)
			stack = append(stack, x...)
		case map[string]any:
			n += 2
			for k, e := range x {
				n += len(k) + 4
				stack = append(stack, e)
			}
		case nil:
			n += 4
		default:
			n += 8
		}
	}
	return n
}
