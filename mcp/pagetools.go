package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
)

// WebMCP page tools reach the model two ways: page_tools_list and
// page_tool_call, and one live MCP tool per page tool, added and removed
// as pages register, unregister, navigate and close (the SDK then sends
// notifications/tools/list_changed). Live tools follow the executor of the
// default session (stdio): in HTTP mode every session has its own browser,
// and a server-wide tool list would show one session's pages to another,
// so there the explicit pair is the way.
//
// Every call of a page tool, either way, is decided by the Gate as
// page_tool_call with page_tool {origin, name, annotations} and page = the
// tab; every listed page tool is a list decision of the same kind, so a
// page tool of a denied origin is neither listed nor callable. Arguments
// are checked against the page's schema before the page sees them. What a
// page tool returns, and what a page says about its tools, is page content:
// fenced as untrusted.
//
// Nothing a page sends can stop the server. A page's schema reaches the
// validator only after executor.CheckSchema has walked it, without
// recursion, and found it small, shallow and free of reference cycles; a
// tool whose schema is not is listed with the reason (unusable), is no
// live tool, and every call of it is BAD_ARGS. A result is bounded while
// it is read, to --max-result-chars (PageToolCallParams.MaxOutputChars),
// and ends with a truncation note that gives the whole's length.
//
// Every page-written string is fenced or cut, wherever it appears: names
// are checked against [A-Za-z0-9_.-]{1,128}; titles and descriptions in
// tool, resource and prompt definitions are cut and introduced as the
// page's words ("The page describes it (unverified)"); in results they are
// fenced. An error never quotes a page inside its cause or its Next line:
// a page-tool argument that does not match the page's schema is BAD_ARGS
// in the server's words, and the validator's detail, which names the
// page's properties and enum values, follows fenced (executor.Error.Page).

// pageToolCallClass is page_tool_call's class, built once: the class of
// every live page tool's decision.
var pageToolCallClass = sync.OnceValue(func() policy.Class { return pageToolCallTool().Class() })

func pageTooler(c *Call) (executor.PageTooler, error) {
	pt, ok := c.Executor().(executor.PageTooler)
	if !ok {
		return nil, executor.Errorf(executor.CodeBadArgs, "the %s backend cannot reach page tools", c.Executor().Backend()).
			WithHint("use the cdp backend for WebMCP page tools")
	}
	return pt, nil
}

// pageToolFunc memoises which page tool a call is about, read from the
// executor: a live tool's own, or page_tool_call's name in its tab.
func (c *Call) pageToolFunc(ex executor.Executor) func(context.Context) (executor.PageTool, error) {
	var (
		once sync.Once
		tool executor.PageTool
		err  error
	)
	return func(ctx context.Context) (executor.PageTool, error) {
		once.Do(func() {
			tool, err = c.resolvePageTool(ctx)
		})
		return tool, err
	}
}

// pageItemFunc is pageToolFunc for a page's resource or prompt: the item
// stands as its read-only page tool while its tab still shows its origin.
func (c *Call) pageItemFunc() func(context.Context) (executor.PageTool, error) {
	return func(ctx context.Context) (executor.PageTool, error) {
		pt := *c.Tool.PageTool
		tab, err := c.Page(ctx)
		if err != nil {
			return executor.PageTool{}, err
		}
		if executor.OriginOf(tab.URL) != pt.Origin {
			return executor.PageTool{}, executor.Errorf(executor.CodeBadArgs, "tab %s no longer shows %s", tab.ID, pt.Origin).
				WithHint("list the resources and prompts again")
		}
		return pt, nil
	}
}

func (c *Call) resolvePageTool(ctx context.Context) (executor.PageTool, error) {
	pt, err := pageTooler(c)
	if err != nil {
		return executor.PageTool{}, err
	}
	name, surface := argString(c.Args, "name"), executor.PageToolSurface(argString(c.Args, "surface"))
	if lt := c.Tool.PageTool; lt != nil {
		name, surface = lt.Name, lt.Surface
	}
	tab, err := c.Page(ctx)
	if err != nil {
		return executor.PageTool{}, err
	}
	tools, err := pt.PageTools(ctx, tab.ID)
	if err != nil {
		return executor.PageTool{}, err
	}
	for _, t := range tools {
		if t.Name == name {
			// The list has each tool once, on its preferred surface; a call
			// may ask for another, which the executor checks.
			if surface != "" {
				t.Surface = surface
			}
			return t, nil
		}
	}
	return executor.PageTool{}, executor.Errorf(executor.CodeBadArgs, "tab %s has no page tool %s", tab.ID, name).
		WithHint("call page_tools_list: the page may have unregistered it or navigated")
}

// pageToolOut is one page tool as page_tools_list shows it.
type pageToolOut struct {
	TabID       string          `json:"tab_id"`
	Name        string          `json:"name"`
	Live        string          `json:"live_tool,omitempty"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Origin      string          `json:"origin"`
	Surface     string          `json:"surface"`
	Annotations []string        `json:"annotations,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Unusable says why the server will not call the tool.
	Unusable string `json:"unusable,omitempty"`
}

func annotationWords(a executor.PageToolAnnotations) []string {
	var out []string
	for _, w := range []struct {
		on   bool
		word string
	}{{a.ReadOnly, "read_only"}, {a.UntrustedContent, "untrusted_content"}, {a.Consequential, "consequential"}, {a.Destructive, "destructive"}} {
		if w.on {
			out = append(out, w.word)
		}
	}
	return out
}

func pageToolsList(ctx context.Context, c *Call, a tabIn) (*Result, error) {
	pt, err := pageTooler(c)
	if err != nil {
		return nil, err
	}
	tools, err := pt.PageTools(ctx, a.TabID)
	if err != nil {
		return nil, err
	}
	out := []pageToolOut{}
	for _, t := range tools {
		// Each page tool is a list decision, as a live tool is; one the
		// server refuses to call is listed with the reason, so the model
		// learns it rather than wondering where it went.
		if !c.srv.visible(ctx, pageToolStandIn(t, "page_tool"), c.Principal) {
			continue
		}
		o := pageToolOut{
			TabID: t.TabID, Name: t.Name, Live: c.srv.pages.liveNameOf(t), Title: t.Title, Description: t.Description,
			Origin: t.Origin, Surface: string(t.Surface), Annotations: annotationWords(t.Annotations), InputSchema: t.InputSchema,
		}
		if err := usableSchema(t); err != nil {
			o.InputSchema, o.Unusable = nil, err.Error()
		}
		out = append(out, o)
	}
	// Names and descriptions are the pages' words.
	return &Result{Value: pageToolsOut{out}, Untrusted: len(out) > 0}, nil
}

// pageToolsOut is page_tools_list's result.
type pageToolsOut struct {
	Tools []pageToolOut `json:"tools"`
}

// pageToolCallOut heads a page tool's result; what the tool returned
// follows on the next line.
type pageToolCallOut struct {
	TabID   string `json:"tab_id"`
	Tool    string `json:"tool"`
	Origin  string `json:"origin"`
	Surface string `json:"surface"`
	Failed  bool   `json:"failed,omitempty"`
}

func pageToolCall(ctx context.Context, c *Call, a pageToolCallIn) (*Result, error) {
	tool, err := c.PageTool(ctx)
	if err != nil {
		return nil, err
	}
	input := a.Arguments
	if input == nil {
		input = map[string]any{}
	}
	lt, err := liveTool(tool, "page_tool")
	if err != nil {
		return nil, unusableErr(tool, err)
	}
	e, err := prepare(lt)
	if err != nil {
		// The library's words about the page's schema quote it.
		return nil, unusableErr(tool, errors.New("its input schema cannot be resolved")).WithPage(executor.CutPageText(err.Error(), maxErrorPage))
	}
	if err := e.resolved.Validate(input); err != nil {
		return nil, pageArgsErr(tool.Name, schemaMessage(err))
	}
	if err := e.resolved.ApplyDefaults(&input); err != nil {
		return nil, pageArgsErr(tool.Name, err.Error())
	}
	return runPageTool(ctx, c, tool, input)
}

// unusableErr refuses a call of a page tool whose schema the server will
// not use; err is in the server's words.
func unusableErr(tool executor.PageTool, err error) *executor.Error {
	return executor.Errorf(executor.CodeBadArgs, "page tool %s cannot be called: %v", tool.Name, err).
		WithHint("the page declared an input schema chromegate refuses to check; use another tool").Wrap(err)
}

// pageArgsErr is BAD_ARGS for arguments that do not match a page tool's
// schema: the cause and the hint in the server's words, the validator's
// detail (the page's property names, its enum values) as page text.
func pageArgsErr(name, detail string) *executor.Error {
	return executor.Errorf(executor.CodeBadArgs, "the arguments do not match the input_schema of page tool %s", name).
		WithHint("pass arguments that match the tool's input_schema (page_tools_list shows it)").
		WithPage(executor.CutPageText(detail, maxErrorPage))
}

func callLivePageTool(ctx context.Context, c *Call) (*Result, error) {
	tool, err := c.PageTool(ctx)
	if err != nil {
		return nil, err
	}
	return runPageTool(ctx, c, tool, c.Args)
}

func runPageTool(ctx context.Context, c *Call, tool executor.PageTool, input map[string]any) (*Result, error) {
	pt, err := pageTooler(c)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, executor.Errorf(executor.CodeInternal, "encode arguments: %v", err)
	}
	r, err := pt.CallPageTool(ctx, executor.PageToolCallParams{TabID: tool.TabID, Name: tool.Name, Surface: tool.Surface, Input: raw,
		MaxOutputChars: c.srv.opts.MaxResultChars})
	if err != nil {
		return nil, err
	}
	head := pageToolCallOut{tool.TabID, tool.Name, tool.Origin, string(r.Surface), r.IsError}
	return &Result{Value: head, Text: pageToolText(r), Untrusted: true, IsError: r.IsError, Page: &r.PageState, TotalChars: r.OutputChars}, nil
}

// pageToolText is what a page tool returned, as text: the text parts of
// MCP-shaped content ({content:[...]}), else the JSON value; for a failure,
// the page's message.
func pageToolText(r executor.PageToolResult) string {
	var mcp struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
	}
	if json.Unmarshal(r.Output, &mcp) == nil && mcp.Content != nil {
		var parts []string
		for _, raw := range mcp.Content {
			var item struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(raw, &item) == nil && item.Type == "text" {
				parts = append(parts, item.Text)
			} else {
				parts = append(parts, string(raw))
			}
		}
		if len(parts) == 0 && len(mcp.StructuredContent) > 0 {
			parts = append(parts, string(mcp.StructuredContent))
		}
		if r.IsError && len(parts) == 0 {
			parts = append(parts, r.Error)
		}
		return strings.Join(parts, "\n")
	}
	if r.IsError {
		return r.Error
	}
	if len(r.Output) == 0 {
		return "null"
	}
	return string(r.Output)
}

// pageBridge follows the page tools, resources and prompts of the default
// session's browser and keeps the live tools, resources and prompts that
// stand for them on the SDK server. It is the server's WebMCP bridge, apart
// from the tool table: the table is fixed when NewServer returns, the
// bridge's tools come and go.
//
// Its methods are safe for concurrent use: mu guards live (the executor
// followed and everything bridged from it), and resMu serialises the
// resource syncs of page events. It reaches the server only through
// core; it asks core's list decision while holding mu (an item is decided
// as it is bridged), so the gate must not call back into
// the server's tool lookups.
type pageBridge struct {
	core           bridgeCore
	table          map[string]*entry // the server's tool table: read only
	sdk            *sdk.Server
	manager        *executor.Manager
	log            *slog.Logger
	maxResultChars int

	mu    sync.RWMutex
	live  liveTools
	resMu sync.Mutex // serialises syncPageResources
}

// bridgeCore is what the bridge needs of the server: a live tool's SDK
// handler, the dispatch a page resource or prompt goes through, and the
// list decision. The methods are safe for concurrent use.
type bridgeCore interface {
	sdkHandler(e *entry) sdk.ToolHandler
	dispatch(ctx context.Context, e *entry, session string, p Principal, raw json.RawMessage) (*sdk.CallToolResult, error)
	visible(ctx context.Context, t *Tool, p Principal) bool
	definition(t *Tool) *sdk.Tool
}

var _ bridgeCore = (*Server)(nil)

// entry is the live tool called name, if there is one.
func (b *pageBridge) entry(name string) (*entry, bool) {
	if b == nil {
		return nil, false
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	e, ok := b.live.entries[name]
	return e, ok
}

// tools are the live tools.
func (b *pageBridge) tools() []*Tool {
	if b == nil {
		return nil
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	out := make([]*Tool, 0, len(b.live.entries))
	for _, e := range b.live.entries {
		out = append(out, e.tool)
	}
	return out
}

// takenLocked reports whether a tool of the table or a live tool is
// called name.
func (b *pageBridge) takenLocked(name string) bool {
	_, table := b.table[name]
	_, live := b.live.entries[name]
	return table || live
}

// liveTools are the MCP tools that stand for page tools, keyed both ways.
type liveTools struct {
	ex      executor.Executor
	stop    func()
	byKey   map[string]string // tab + "\x00" + page tool name → MCP tool name
	entries map[string]*entry // MCP tool name → the live tool
	bridged map[string]*pageBridged
}

func pageToolKey(t executor.PageTool) string { return t.TabID + "\x00" + t.Name }

// watchPageTools follows the page tools of the default session's executor.
func (b *pageBridge) watchPageTools() {
	b.manager.OnOpen(func(session string, ex executor.Executor) {
		if session != DefaultSession {
			return
		}
		pt, ok := ex.(executor.PageTooler)
		if !ok {
			return
		}
		b.mu.Lock()
		if b.live.ex == ex {
			b.mu.Unlock()
			return
		}
		old := b.live.stop
		removed := b.dropLiveLocked()
		res, prompts := b.dropBridgedLocked()
		b.live.ex = ex
		b.mu.Unlock()
		if old != nil {
			old()
		}
		b.sdk.RemoveTools(removed...)
		b.sdk.RemoveResources(res...)
		b.sdk.RemovePrompts(prompts...)
		b.log.Debug("following the page tools of the browser", "backend", ex.Backend())
		stop := pt.WatchPageTools(func(ev executor.PageToolsEvent) { b.applyPageTools(ex, ev) })
		b.mu.Lock()
		if b.live.ex == ex {
			b.live.stop = stop
			b.mu.Unlock()
		} else {
			b.mu.Unlock()
			stop()
		}
		go func() {
			<-ex.Done()
			b.mu.Lock()
			if b.live.ex != ex {
				b.mu.Unlock()
				return
			}
			stop := b.live.stop
			removed := b.dropLiveLocked()
			res, prompts := b.dropBridgedLocked()
			b.live = liveTools{}
			b.mu.Unlock()
			if stop != nil {
				stop()
			}
			b.sdk.RemoveTools(removed...)
			b.sdk.RemoveResources(res...)
			b.sdk.RemovePrompts(prompts...)
		}()
	})
}

// dropLiveLocked forgets every live tool and returns their names.
func (b *pageBridge) dropLiveLocked() []string {
	var names []string
	for _, name := range b.live.byKey {
		delete(b.live.entries, name)
		names = append(names, name)
	}
	b.live.byKey = nil
	return names
}

// applyPageTools adds and removes live tools for one event.
func (b *pageBridge) applyPageTools(ex executor.Executor, ev executor.PageToolsEvent) {
	type add struct {
		def *sdk.Tool
		e   *entry
	}
	var adds []add
	var removes []string
	b.mu.Lock()
	if b.live.ex != ex {
		b.mu.Unlock()
		return
	}
	if b.live.byKey == nil {
		b.live.byKey = map[string]string{}
	}
	for _, t := range ev.Removed {
		if name, ok := b.live.byKey[pageToolKey(t)]; ok {
			delete(b.live.byKey, pageToolKey(t))
			delete(b.live.entries, name)
			removes = append(removes, name)
		}
	}
	for _, t := range ev.Added {
		if old, ok := b.live.byKey[pageToolKey(t)]; ok {
			delete(b.live.entries, old)
			removes = append(removes, old)
		}
		name := b.freeNameLocked(t)
		lt, err := liveTool(t, name)
		var e *entry
		if err == nil {
			e, err = prepare(lt)
		}
		if err != nil {
			b.log.Debug("page tool not exposed as a live tool", "tool", t.Name, "origin", t.Origin, "err", err)
			delete(b.live.byKey, pageToolKey(t))
			continue
		}
		b.live.byKey[pageToolKey(t)] = name
		if b.live.entries == nil {
			b.live.entries = map[string]*entry{}
		}
		b.live.entries[name] = e
		adds = append(adds, add{b.core.definition(lt), e})
	}
	bridged := b.live.bridged[ev.TabID] != nil
	b.mu.Unlock()
	if ev.Resources || (ev.Closed && bridged) {
		go b.syncPageResources(ex, ev.TabID, ev.Closed)
	}
	b.log.Debug("page tools changed", "tab", ev.TabID, "added", len(adds), "removed", len(removes), "closed", ev.Closed)
	// A name removed and added again in one event stays.
	keep := map[string]bool{}
	for _, a := range adds {
		keep[a.def.Name] = true
	}
	var gone []string
	for _, n := range removes {
		if !keep[n] {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		b.sdk.RemoveTools(gone...)
	}
	for _, a := range adds {
		b.sdk.AddTool(a.def, b.core.sdkHandler(a.e))
	}
}

// liveNameOf is the live tool of a page tool, if it has one.
func (b *pageBridge) liveNameOf(t executor.PageTool) string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.live.byKey[pageToolKey(t)]
}

// maxToolName is MCP's limit on a tool name.
const maxToolName = 128

// freeNameLocked names a live tool page_<host>_<name>: stable while the
// tool lives (and again when its page registers it after a reload), at
// most 128 of [A-Za-z0-9_.-], and never a name already taken: on a
// collision (another tab of the same site, a tool of the table) or when too
// long, it ends in a short hash of the tab, origin and name.
func (b *pageBridge) freeNameLocked(t executor.PageTool) string {
	if name, ok := b.live.byKey[pageToolKey(t)]; ok {
		return name
	}
	host := t.Origin
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	var sb strings.Builder
	for _, r := range host {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	base := "page_" + sb.String() + "_" + t.Name
	if len(base) <= maxToolName {
		if !b.takenLocked(base) {
			return base
		}
	}
	sum := sha256.Sum256([]byte(pageToolKey(t) + "\x00" + t.Origin))
	suffix := "_" + hex.EncodeToString(sum[:3])
	for i := 0; ; i++ {
		name := base
		if len(name)+len(suffix) > maxToolName {
			name = name[:maxToolName-len(suffix)]
		}
		name += suffix
		if !b.takenLocked(name) {
			return name
		}
		suffix = fmt.Sprintf("_%s%d", hex.EncodeToString(sum[:3]), i)
	}
}

// liveTool is the MCP tool that stands for t. Its hints are the page's
// annotations: read-only as declared; a consequential or destructive tool
// keeps the destructive default, any other is not destructive. Its
// description says whose it is and quotes the page.
func liveTool(t executor.PageTool, name string) (*Tool, error) {
	if err := usableSchema(t); err != nil {
		return nil, err
	}
	schema := &jsonschema.Schema{}
	if err := json.Unmarshal(executor.NormalizeSchema(t.InputSchema), schema); err != nil {
		return nil, errors.New("its input schema is not a JSON schema")
	}
	if schema.Properties == nil {
		schema.Properties = map[string]*jsonschema.Schema{}
	}
	tool := pageToolStandIn(t, name)
	tool.InputSchema = schema
	return tool, nil
}

// usableSchema reports, in the server's words, why t's input schema is
// not to be used (the executor's verdict, or executor.CheckSchema's, run
// again here so that no PageTool reaches a validator unchecked).
func usableSchema(t executor.PageTool) error {
	if t.Unusable != "" {
		return errors.New(t.Unusable)
	}
	return executor.CheckSchema(executor.NormalizeSchema(t.InputSchema))
}

// pageToolStandIn is the MCP tool that stands for t, without its schema:
// what the policy's list decision looks at.
func pageToolStandIn(t executor.PageTool, name string) *Tool {
	ro := t.Annotations.ReadOnly && !t.Annotations.Consequential
	var destructive *bool
	if !t.Annotations.Consequential && !t.Annotations.Destructive {
		destructive = no()
	}
	desc := t.Description
	if utf8.RuneCountInString(desc) > 400 {
		desc = string([]rune(desc)[:400]) + "…"
	}
	host := strings.TrimPrefix(strings.TrimPrefix(t.Origin, "https://"), "http://")
	tool := t
	return &Tool{
		Name:        name,
		Title:       executor.CutPageText(strings.Join(strings.Fields(t.Title), " "), executor.MaxPageToolTitle),
		Description: fmt.Sprintf("Page tool %s of %s (tab %s). The page describes it (unverified): %s", t.Name, host, t.TabID, desc),
		InputSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
		ReadOnly:    &ro, Destructive: destructive, Idempotent: false,
		Action: ActionPageTool, Mutating: !ro,
		PageTool:      &tool,
		CallsPageTool: true, CutHint: pageToolCutHint,
		Handler: callLivePageTool,
	}
}

// Page tools: the tools web pages register (WebMCP), listed and called.
// Each tool is one constructor: its declaration, its class, the facts the
// call path needs; the handlers
// live with the feature (pagetools.go).

// groupPageTools is the README row of these tools.
var groupPageTools = &ToolGroup{Name: "page tools (WebMCP)", Note: "and one live tool per page tool"}

func pageToolsListTool() *Tool {
	return newTool(Tool{
		Name: "page_tools_list", Title: "List page tools",
		Group:       groupPageTools,
		Output:      &Output{Value: pageToolsOut{}},
		Description: "Tools pages registered (WebMCP), with input_schema." + pageTextDoc,
		ReadOnly:    yes(), Idempotent: true, Action: ActionPageTool,
	}, pageToolsList)
}

// pageToolCallTool is page_tool_call, the generic caller of page tools.
// Every live page tool, and every page resource or prompt, is this tool
// to the policy (see PolicyGate.input), so its class is theirs.
func pageToolCallTool() *Tool {
	return newTool(Tool{
		Name: "page_tool_call", Title: "Call page tool",
		Group:       groupPageTools,
		Output:      &Output{Value: pageToolCallOut{}, Text: true},
		Description: "Call a page's tool (page_tools_list) with its arguments. Also: surface." + pageTextDoc,
		Rare:        []string{"surface"},
		// A page tool may do anything; the policy may relax this for
		// tools that declare readOnlyHint.
		ReadOnly: no(), Action: ActionPageTool, Mutating: true, Secrets: []string{"arguments"},
		CallsPageTool: true, CutHint: pageToolCutHint, TimeoutArg: true,
	}, pageToolCall)
}

// pageToolCallIn is page_tool_call's input. Arguments is the page tool's
// input, checked against the page's schema.
type pageToolCallIn struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	TabID     string         `json:"tab_id,omitempty"`
	Surface   string         `json:"surface,omitempty"`
}

func (pageToolCallIn) shape(s *jsonschema.Schema) {
	s.Properties["arguments"] = &jsonschema.Schema{Type: "object"}
	setEnum(s, "surface", string(executor.SurfaceWebMCP), string(executor.SurfaceMCPB), string(executor.SurfaceInPage))
}

// pageToolCutHint is what a cut result of a page tool asks for.
const pageToolCutHint = "ask the page tool for less, if its input_schema allows"
