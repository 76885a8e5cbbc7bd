package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
	"github.com/chromegate/chromegate/helpers/picture"
)

func yes() *bool { t := true; return &t }
func no() *bool  { f := false; return &f }

// Tools returns the tool table: every tool of the surface, grouped as in
// DESIGN.md (tools/list itself is sorted by name). Each call returns fresh
// values, so a caller may change what it gets without touching the
// server's copy.
//
// Hints: ReadOnly is set on every tool. Destructive is set to false where
// a tool cannot lose state the user cares about and left at the MCP default
// (true) where it can: clicking, pressing keys and dragging may submit or
// delete, closing a tab loses it, eval can do anything, cookies_set
// overwrites. Idempotent is true for every read-only tool. OpenWorld is
// left at its default (true): a browser reaches the web; only
// chrome_status, which never touches a browser, says false. Every hint
// sent costs tools/list characters, so none is sent that restates a
// default.
func Tools() []*Tool {
	return withChanges(withTimeouts(slices.Concat(toolTable(), dialogTools(), networkTools(), observeTools(), helperTools(), pageToolTools(), stateTools(), emulateTools())))
}

// withTimeouts offers timeout_ms on every tool that waits: for an element
// to become actionable, or for a page to load (without it a model could not
// keep a click on a missing element from taking the whole default
// deadline), and wait_until on every tool that loads a page.
func withTimeouts(tools []*Tool) []*Tool {
	for _, t := range tools {
		nav := t.Action == ActionNavigate
		if nav {
			addProp(t, waitUntilProp())
		}
		if nav || len(t.Targets) > 0 {
			addProp(t, timeoutProp())
		}
	}
	return tools
}

func addProp(t *Tool, p prop) {
	if _, has := t.InputSchema.Properties[p.name]; has {
		return
	}
	t.InputSchema.Properties[p.name] = p.s
	t.InputSchema.PropertyOrder = append(t.InputSchema.PropertyOrder, p.name)
}

func toolTable() []*Tool {
	return []*Tool{
		// tabs
		{
			Name: "tabs_list", Title: "List tabs",
			Output:      &Output{Value: tabsOut{}},
			Description: "Open tabs: tab_id, url, title. Call first to see what is open.",
			InputSchema: object(nil),
			ReadOnly:    yes(), Idempotent: true, Action: ActionTabs,
			Handler: tabsList,
		},
		{
			Name: "tab_select", Title: "Select tab",
			Output:      &Output{Value: tabOut{}},
			Description: "Select a tab; calls without tab_id then act on it.",
			InputSchema: object([]string{"tab_id"}, tabIDProp()),
			ReadOnly:    no(), Destructive: no(), Idempotent: true, Action: ActionTabs,
			Handler: tabSelect,
		},
		{
			Name: "tab_new", Title: "New tab",
			Output:      &Output{Value: tabOut{}},
			Description: "Open a tab (at url if given) and select it.",
			InputSchema: object(nil, prop{"url", str("")}),
			ReadOnly:    no(), Destructive: no(), Action: ActionNavigate,
			URLArg: "url", ActionWithoutURL: ActionTabs, // a navigation only with a url
			Handler: tabNew,
		},
		{
			Name: "tab_close", Title: "Close tab",
			Output:      &Output{Value: tabCloseOut{}},
			Description: "Close a tab (default: selected). Returns the tabs left.",
			InputSchema: object(nil, tabIDProp()),
			// Mutating: closing a tab can lose the user's unsaved work in
			// their own Chrome.
			ReadOnly: no(), Action: ActionTabs, Mutating: true,
			Handler: tabClose,
		},

		// navigation
		{
			Name: "navigate", Title: "Navigate",
			Output:      &Output{Value: pageOut{}},
			Description: "Load a URL in a tab. Returns url, title, HTTP status. Start here.",
			InputSchema: object([]string{"url"}, prop{"url", str("")}, tabIDProp(), waitUntilProp(), timeoutProp()),
			ReadOnly:    no(), Destructive: no(), Action: ActionNavigate, URLArg: "url",
			Handler: navigate,
		},
		historyTool("back", "Go back", "Go back in history.", executor.Executor.Back),
		historyTool("forward", "Go forward", "Go forward in history.", executor.Executor.Forward),
		historyTool("reload", "Reload", "Reload the page.", executor.Executor.Reload),

		// interaction
		{
			Name: "click", Title: "Click",
			Output:      &Output{Value: pointOut{}},
			Description: "Click an element or at x,y (CSS px). Returns the page and any dialogs it opened.",
			InputSchema: object(nil, props(pointProps(""), []prop{
				{"button", enum("", "left", "right", "middle")},
				{"count", intRange("", 1, 3)},
				tabIDProp(),
			})...),
			ReadOnly: no(), Action: ActionInteract, Mutating: true,
			Targets: []TargetArg{{Required: true, Point: true}},
			Handler: atPoint(click),
		},
		{
			Name: "type", Title: "Type text",
			Output:      &Output{Value: actionOut{}},
			Description: "Type text into an element key by key (fill sets it at once). secret:NAME in angle brackets types a secret.",
			InputSchema: object([]string{"text"}, props(targetProps(""), []prop{
				{"text", str("")}, {"clear", boolean("")}, {"press_enter", boolean("")},
				tabIDProp(),
			})...),
			ReadOnly: no(), Destructive: no(), Action: ActionInteract, Mutating: true, Secrets: []string{"text"}, SecretRefs: []string{"text"},
			Targets: []TargetArg{{Required: true}},
			Handler: typeText,
		},
		{
			Name: "fill", Title: "Fill input",
			Output:      &Output{Value: actionOut{}},
			Description: "Set an input's value at once, replacing it. secret:NAME in angle brackets: a secret.",
			InputSchema: object([]string{"value"}, props(targetProps(""), []prop{
				{"value", str("")}, tabIDProp(),
			})...),
			ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true, Secrets: []string{"value"}, SecretRefs: []string{"value"},
			Targets: []TargetArg{{Required: true}},
			Handler: fill,
		},
		{
			Name: "press", Title: "Press key",
			Output:      &Output{Value: actionOut{}},
			Description: "Press a key (Enter, Tab, ArrowDown, a) on an element or the focused one.",
			InputSchema: object([]string{"key"}, props([]prop{{"key", str("")}},
				[]prop{{"modifiers", array("", enum("", "Alt", "Control", "Meta", "Shift"), 0)}},
				targetProps(""), []prop{tabIDProp()})...),
			ReadOnly: no(), Action: ActionInteract, Mutating: true,
			Targets: []TargetArg{{}},
			Handler: press,
		},
		{
			Name: "hover", Title: "Hover",
			Output:      &Output{Value: pointOut{}},
			Description: "Hover over an element or at x,y, e.g. to open a menu.",
			InputSchema: object(nil, props(pointProps(""), []prop{tabIDProp()})...),
			// Not Mutating, nor is scroll: they change nothing the user keeps.
			ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract,
			Targets: []TargetArg{{Required: true, Point: true}},
			Handler: atPoint(hover),
		},
		{
			Name: "scroll", Title: "Scroll",
			Output:      &Output{Value: pointOut{}},
			Description: "Scroll an element into view, or the page (the scroller at x,y) by dx/dy pixels.",
			InputSchema: object(nil, props(pointProps(""), []prop{
				{"dx", integer("")}, {"dy", integer("")},
				tabIDProp(),
			})...),
			ReadOnly: no(), Destructive: no(), Action: ActionInteract,
			Targets: []TargetArg{{Point: true}},
			Check:   checkScrollAt,
			Handler: atPoint(scroll),
		},
		{
			Name: "select_option", Title: "Select option",
			Output:      &Output{Value: actionOut{}},
			Description: "Choose a select's options by value or label as shown (a cut one too).",
			InputSchema: object([]string{"values"}, props(targetProps(""), []prop{
				{"values", strList("", 0)}, tabIDProp(),
			})...),
			ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true,
			Targets: []TargetArg{{Required: true}},
			Handler: selectOption,
		},
		{
			Name: "set_files", Title: "Set files",
			Output:      &Output{Value: actionOut{}},
			Description: "Set a file input's files (paths on the server).",
			InputSchema: object([]string{"paths"}, props(targetProps(""), []prop{
				{"paths", strList("", 0)}, tabIDProp(),
			})...),
			ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true,
			Targets: []TargetArg{{Required: true}},
			Handler: setFiles,
		},
		{
			Name: "drag", Title: "Drag and drop",
			Output:      &Output{Value: pointOut{}},
			Description: "Drag one element onto another, or from_x,from_y to to_x,to_y.",
			InputSchema: object(nil, props(pointProps("from_"), pointProps("to_"), []prop{tabIDProp()})...),
			ReadOnly:    no(), Action: ActionInteract, Mutating: true,
			Targets: []TargetArg{{Prefix: "from_", Required: true, Point: true}, {Prefix: "to_", Required: true, Point: true}},
			Check:   checkDrag,
			Handler: atPoint(drag),
		},

		// reading
		{
			Name: "snapshot", Title: "Snapshot",
			Output:      &Output{Value: snapshotOut{}, Text: true},
			Description: "Page outline to act on, a line each: controls as 'ref role name states' (name quoted when states follow; pass the ref to other tools), landmarks, # headings, quoted text (+N more lines). A 'links (ref ab+number):' list has 'N name' lines: the ref is abN. Refs expire on navigation. Scoped by ref or selector: that part uncut, every option listed.",
			InputSchema: object(nil, props(targetProps(""), []prop{
				{"interactive_only", boolean("")},
				{"max_chars", integer("")},
				{"offset", integer("")},
				tabIDProp(),
			})...),
			ReadOnly: yes(), Idempotent: true, Action: ActionRead,
			Targets: []TargetArg{{}},
			Handler: snapshot,
		},
		{
			Name: "query", Title: "Query elements",
			Output:      &Output{Value: queryOut{}},
			Description: "Elements matching a CSS selector: tag, role, name, text, attributes, ref.",
			InputSchema: object([]string{"selector"}, prop{"selector", str("")},
				prop{"limit", intRange("", 1, 500)}, tabIDProp()),
			ReadOnly: yes(), Idempotent: true, Action: ActionRead,
			Handler: query,
		},
		{
			Name: "get_text", Title: "Get text",
			Output:      &Output{Value: textOut{}, Text: true},
			Description: "Visible text of an element, or of the whole page.",
			InputSchema: object(nil, props(targetProps(""), []prop{tabIDProp()})...),
			ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
			Targets: []TargetArg{{}},
			Handler: getText,
		},
		{
			Name: "get_html", Title: "Get HTML",
			Output:      &Output{Value: textOut{}, Text: true},
			Description: "HTML of an element or the document; prefer get_text for reading.",
			InputSchema: object(nil, props(targetProps(""), []prop{{"outer", boolean("")}, tabIDProp()})...),
			ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
			Targets: []TargetArg{{}},
			Handler: getHTML,
		},
		{
			Name: "screenshot", Title: "Screenshot",
			Output:      &Output{Value: markedShotOut{}, Image: true, Text: true},
			Description: "Image of the viewport, full page (cut at max_height) or an element. mark_refs: refs' boxes drawn, listed in text.",
			InputSchema: object(nil, props(targetProps(""), []prop{
				{"full_page", boolean("")},
				{"format", enum("", "png", "jpeg")},
				{"quality", intRange("", 1, 100)},
				{"max_height", integer("")},
				{"mark_refs", boolean("")},
				tabIDProp(), timeoutProp(),
			})...),
			ReadOnly: yes(), Idempotent: true, Action: ActionRead,
			Targets: []TargetArg{{}},
			Check:   checkShot,
			Handler: marked(screenshot),
		},
		{
			Name: "wait_for", Title: "Wait for",
			Output:      &Output{Value: waitOut{}},
			Description: "Wait until an element appears (gone: disappears) or text appears. Use before reading late content.",
			InputSchema: object(nil, props(targetProps(""), []prop{
				{"text", str("")}, {"gone", boolean("")}, {"visible", boolean("")},
				tabIDProp(), timeoutProp(),
			})...),
			ReadOnly: yes(), Idempotent: true, Action: ActionRead,
			Targets: []TargetArg{{}},
			Check:   checkWait,
			Handler: waitFor,
		},

		// scripts
		{
			Name: "eval", Title: "Evaluate JavaScript",
			Output:      &Output{Value: evalOut{}},
			Description: "Run a JavaScript expression in the page. Returns {ok, value} or {ok:false, error}.",
			InputSchema: object([]string{"expression"}, prop{"expression", str("")},
				prop{"await_promise", boolDefault("", true)}, tabIDProp(), timeoutProp()),
			// eval can do anything a page script can: Mutating, though it
			// has its own switch (enable_eval) and does not also need
			// enable_mutations.
			ReadOnly: no(), Action: ActionEval, Mutating: true, Hashed: []string{"expression"}, PeekPage: true,
			Handler: eval,
		},

		// state
		{
			Name: "cookies_get", Title: "Get cookies",
			Output:      &Output{Value: cookiesOut{}},
			Description: "Cookies of the session, or only those sent to urls.",
			InputSchema: object(nil, prop{"urls", strList("", 0)}),
			ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
			Handler: cookiesGet,
		},
		{
			Name: "cookies_set", Title: "Set cookies",
			Output:      &Output{Value: setOut{}},
			Description: "Add cookies; each needs url, or domain and path.",
			InputSchema: object([]string{"cookies"}, prop{"cookies", array("", object([]string{"name", "value"},
				prop{"name", str("")}, prop{"value", str("")},
				prop{"url", str("")}, prop{"domain", str("")}, prop{"path", str("")},
				prop{"expires", number("")},
				prop{"http_only", boolean("")}, prop{"secure", boolean("")},
				prop{"same_site", enum("", "Strict", "Lax", "None")},
			), 0)}),
			ReadOnly: no(), Idempotent: true, Action: ActionInteract, Mutating: true, Secrets: []string{"cookies"},
			Check:   checkCookies,
			Handler: cookiesSet,
		},
		{
			Name: "clipboard_write", Title: "Write clipboard",
			Output:      &Output{Value: writtenOut{}},
			Description: "Put text on the clipboard (paste with press Control+V).",
			InputSchema: object([]string{"text"}, prop{"text", str("")}, tabIDProp()),
			ReadOnly:    no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true, Secrets: []string{"text"},
			Handler: clipboardWrite,
		},
		{
			Name: "download_file", Title: "Download file",
			Output:      &Output{Value: downloadOut{}},
			Description: "Fetch url, or what clicking the target downloads, onto the server. Returns path, sha256.",
			InputSchema: object(nil, props([]prop{{"url", str("")}}, targetProps(""),
				[]prop{{"filename", str("")}, tabIDProp(), timeoutProp()})...),
			ReadOnly: no(), Destructive: no(), Action: ActionDownload, URLArg: "url", // not Mutating: downloads have their own switch
			Targets: []TargetArg{{}},
			Check:   checkDownload,
			Handler: download,
		},

		// status
		{
			Name: "chrome_status", Title: "Status",
			Output:      &Output{Value: map[string]any{}},
			Description: "Server and browser state; never starts a browser. Use when calls fail.",
			InputSchema: object(nil),
			ReadOnly:    yes(), Idempotent: true, OpenWorld: no(), Action: ActionStatus,
			NoBrowser: true,
			Handler:   status,
		},
	}
}

// Output shapes. They use the same snake_case names as the arguments, so
// what a call returns can be passed straight back (tab_id, cookies).

type pageOut struct {
	TabID   string      `json:"tab_id"`
	URL     string      `json:"url"`
	Title   string      `json:"title,omitempty"`
	Status  int         `json:"status,omitempty"`
	Dialogs []dialogOut `json:"dialogs,omitempty"`
}

// written says whether p carries words the page wrote: its title, a
// dialog's message.
func (p pageOut) written() bool {
	return p.Title != "" || wroteDialogs(p.Dialogs)
}

// wroteDialogs says whether any of ds shows a page's words.
func wroteDialogs(ds []dialogOut) bool {
	return slices.ContainsFunc(ds, func(d dialogOut) bool { return d.Message != "" || d.Answer != "" || d.Default != "" })
}

// pageOf reports a tab's state, its dialogs screened (see dialogsOf).
func (c *Call) pageOf(ctx context.Context, ps executor.PageState) pageOut {
	return pageOut{TabID: ps.TabID, URL: ps.URL, Title: ps.Title, Dialogs: c.dialogsOf(ctx, ps)}
}

// dialogOut is a JavaScript dialog as the model sees it. A dialog opened
// by a page outside the policy is told by its note alone.
type dialogOut struct {
	Type    string `json:"type,omitempty"`
	Message string `json:"message,omitempty"`
	Default string `json:"default,omitempty"` // a prompt's
	// Action is open (the page waits for dialog_answer), accepted or
	// dismissed.
	Action string `json:"action,omitempty"`
	Answer string `json:"answer,omitempty"`
	Note   string `json:"note,omitempty"`
	// Next says what to call about a dialog left open.
	Next string `json:"next,omitempty"`
}

// outsideDialog is all the model hears of a dialog of a page outside the
// policy.
const outsideDialog = "a dialog on a page outside the policy was dismissed"

type tabOut struct {
	TabID    string `json:"tab_id"`
	URL      string `json:"url"`
	Title    string `json:"title,omitempty"`
	Selected bool   `json:"selected,omitempty"`
	// Note says why URL and title are left out (a page outside the policy).
	Note string `json:"note,omitempty"`
	// Dialogs is a dialog the page opened as tab_new loaded it.
	Dialogs []dialogOut `json:"dialogs,omitempty"`
}

func tabOf(t executor.Tab) tabOut {
	return tabOut{TabID: t.ID, URL: t.URL, Title: t.Title, Selected: t.Selected}
}

// titled says whether any of tabs shows a title: the page's words.
func titled(tabs ...tabOut) bool {
	return slices.ContainsFunc(tabs, func(t tabOut) bool { return t.Title != "" })
}

// pageResult reports a page after an action. A title and a dialog's
// message are the page's words, so a result that carries any is fenced.
func pageResult(v any, p pageOut, ps executor.PageState) *Result {
	return &Result{Value: v, Untrusted: p.written(), Page: &ps}
}

// Arguments. Field tags are the schema's property names; timeout_ms is
// consumed by dispatch.

type targetArgs struct {
	TabID    string `json:"tab_id"`
	Selector string `json:"selector"`
	Ref      string `json:"ref"`
}

func (a targetArgs) target() executor.Target {
	return executor.Target{Selector: a.Selector, Ref: a.Ref}
}

func (a targetArgs) params() executor.TargetParams {
	return executor.TargetParams{TabID: a.TabID, Target: a.target()}
}

type navArgs struct {
	TabID     string             `json:"tab_id"`
	URL       string             `json:"url"`
	WaitUntil executor.WaitUntil `json:"wait_until"`
}

func bind[T any](c *Call) (T, error) {
	var a T
	err := c.Bind(&a)
	return a, err
}

func tabsList(ctx context.Context, c *Call) (*Result, error) {
	tabs, err := c.Executor().Tabs(ctx)
	if err != nil {
		return nil, err
	}
	out, hidden := c.visibleTabs(ctx, tabs)
	return &Result{Value: tabsOut{Tabs: out, Hidden: hidden, Note: hiddenNote(hidden)}, Untrusted: titled(out...)}, nil
}

func tabSelect(ctx context.Context, c *Call) (*Result, error) {
	t, err := c.Executor().SelectTab(ctx, c.TabID())
	if err != nil {
		return nil, err
	}
	out, _ := c.visibleTabs(ctx, []executor.Tab{t})
	return &Result{Value: out[0], Untrusted: titled(out...)}, nil
}

func tabNew(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[navArgs](c)
	if err != nil {
		return nil, err
	}
	t, err := c.Executor().NewTab(ctx, executor.NewTabParams{URL: a.URL, WaitUntil: a.WaitUntil})
	if err != nil {
		return nil, err
	}
	out := tabOf(t)
	out.Dialogs = c.tabDialog(ctx, t)
	r := &Result{Value: out, Untrusted: titled(out) || wroteDialogs(out.Dialogs)}
	if a.URL != "" {
		r.Landed = &executor.PageState{TabID: t.ID, URL: t.URL, Title: t.Title}
	}
	return r, nil
}

func tabClose(ctx context.Context, c *Call) (*Result, error) {
	// Read the tab first (the Gate may already have), so the reply can say
	// which tab "the selected one" was.
	t, err := c.Page(ctx)
	if err != nil {
		return nil, err
	}
	ex := c.Executor()
	if err := ex.CloseTab(ctx, t.ID); err != nil {
		return nil, err
	}
	tabs, err := ex.Tabs(ctx)
	if err != nil {
		return nil, err
	}
	out, _ := c.visibleTabs(ctx, tabs)
	return &Result{Value: tabCloseOut{t.ID, out}, Untrusted: titled(out...)}, nil
}

func (c *Call) navResult(ctx context.Context, nr executor.NavResult) *Result {
	out := c.pageOf(ctx, nr.PageState)
	out.Status = nr.Status
	r := pageResult(out, out, nr.PageState)
	r.Landed = &nr.PageState
	return r
}

func navigate(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[navArgs](c)
	if err != nil {
		return nil, err
	}
	nr, err := c.Executor().Navigate(ctx, executor.NavigateParams{TabID: a.TabID, URL: a.URL, WaitUntil: a.WaitUntil})
	if err != nil {
		return nil, err
	}
	return c.navResult(ctx, nr), nil
}

func historyTool(name, title, desc string, move func(executor.Executor, context.Context, executor.HistoryParams) (executor.NavResult, error)) *Tool {
	return &Tool{
		Name: name, Title: title,
		Output:      &Output{Value: pageOut{}},
		Description: desc,
		InputSchema: object(nil, tabIDProp()),
		ReadOnly:    no(), Destructive: no(), Action: ActionNavigate,
		Handler: func(ctx context.Context, c *Call) (*Result, error) {
			a, err := bind[navArgs](c)
			if err != nil {
				return nil, err
			}
			nr, err := move(c.Executor(), ctx, executor.HistoryParams{TabID: a.TabID, WaitUntil: a.WaitUntil})
			if err != nil {
				return nil, err
			}
			return c.navResult(ctx, nr), nil
		},
	}
}

type actionOut struct {
	pageOut
	Values []string `json:"values,omitempty"`
	changesOut
}

// actionResult reports an action. The values a select ended up with are
// its options' values, which the page wrote.
func (c *Call) actionResult(ctx context.Context, ar executor.ActionResult, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	p := c.pageOf(ctx, ar.PageState)
	r := pageResult(actionOut{pageOut: p, Values: ar.Selected}, p, ar.PageState)
	r.Untrusted = r.Untrusted || len(ar.Selected) > 0
	return r, nil
}

func click(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Button string `json:"button"`
		Count  int    `json:"count"`
	}](c)
	if err != nil {
		return nil, err
	}
	ar, err := c.Executor().Click(ctx, executor.ClickParams{TargetParams: a.params(), Button: a.Button, Count: a.Count})
	return c.actionResult(ctx, ar, err)
}

func typeText(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Text       string `json:"text"`
		Clear      bool   `json:"clear"`
		PressEnter bool   `json:"press_enter"`
	}](c)
	if err != nil {
		return nil, err
	}
	// A text with a secret goes in whole, guarded: a page that echoes its
	// field as it changes would otherwise hold, and show, every prefix of
	// the value, and could move focus, or navigate, between two of its
	// characters.
	only, err := c.secretOrigin()
	if err != nil {
		return nil, err
	}
	p := executor.TypeParams{TargetParams: a.params(), Text: a.Text, Clear: a.Clear, PressEnter: a.PressEnter, OnlyOrigin: only}
	if only != "" {
		p.Shown = c.fieldShown(a.Text)
	} else {
		p.Unmark = a.Clear && c.unmarks()
	}
	ar, err := c.Executor().Type(ctx, p)
	return c.actionResult(ctx, ar, err)
}

func fill(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Value string `json:"value"`
	}](c)
	if err != nil {
		return nil, err
	}
	only, err := c.secretOrigin()
	if err != nil {
		return nil, err
	}
	p := executor.FillParams{TargetParams: a.params(), Value: a.Value, OnlyOrigin: only}
	if only != "" {
		p.Shown = c.fieldShown(a.Value)
	} else {
		p.Unmark = c.unmarks()
	}
	ar, err := c.Executor().Fill(ctx, p)
	return c.actionResult(ctx, ar, err)
}

func press(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Key       string   `json:"key"`
		Modifiers []string `json:"modifiers"`
	}](c)
	if err != nil {
		return nil, err
	}
	if a.target().IsZero() {
		if err := c.focusAllowed(ctx, a.TabID); err != nil {
			return nil, err
		}
	}
	ar, err := c.Executor().Press(ctx, executor.PressParams{TabID: a.TabID, Target: a.target(), Key: a.Key, Modifiers: a.Modifiers})
	return c.actionResult(ctx, ar, err)
}

func hover(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[targetArgs](c)
	if err != nil {
		return nil, err
	}
	ar, err := c.Executor().Hover(ctx, a.params())
	return c.actionResult(ctx, ar, err)
}

func checkScroll(args map[string]any) error {
	_, dx := args["dx"]
	_, dy := args["dy"]
	if targetOf(args, "").IsZero() && !dx && !dy {
		return badArgs("nothing to scroll").WithHint("pass a selector or ref to scroll into view, or dx/dy in pixels")
	}
	return nil
}

func scroll(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		DX int `json:"dx"`
		DY int `json:"dy"`
	}](c)
	if err != nil {
		return nil, err
	}
	ar, err := c.Executor().Scroll(ctx, executor.ScrollParams{TabID: a.TabID, Target: a.target(), DX: a.DX, DY: a.DY})
	return c.actionResult(ctx, ar, err)
}

func selectOption(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Values []string `json:"values"`
	}](c)
	if err != nil {
		return nil, err
	}
	ar, err := c.Executor().SelectOption(ctx, executor.SelectParams{TargetParams: a.params(), Values: a.Values})
	return c.actionResult(ctx, ar, err)
}

func setFiles(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Paths []string `json:"paths"`
	}](c)
	if err != nil {
		return nil, err
	}
	ar, err := c.Executor().SetFiles(ctx, executor.SetFilesParams{TargetParams: a.params(), Paths: a.Paths, Tenant: c.Principal.Tenant()})
	return c.actionResult(ctx, ar, err)
}

func drag(ctx context.Context, c *Call) (*Result, error) {
	p := executor.DragParams{TabID: c.TabID(), From: c.Target("from_"), To: c.Target("to_")}
	ar, err := c.Executor().Drag(ctx, p)
	return c.actionResult(ctx, ar, err)
}

// textOut heads a get_text or get_html reply; the text follows on the next
// line.
type textOut struct {
	pageOut
	Chars int `json:"chars"`
}

func (c *Call) textResult(ctx context.Context, tr executor.TextResult, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	return &Result{
		Value:     textOut{c.pageOf(ctx, tr.PageState), utf8.RuneCountInString(tr.Text)},
		Text:      tr.Text,
		Untrusted: true,
		Page:      &tr.PageState,
	}, nil
}

func getText(ctx context.Context, c *Call) (*Result, error) {
	tr, err := c.Executor().Text(ctx, executor.TextParams{TabID: c.TabID(), Target: c.Target("")})
	return c.textResult(ctx, tr, err)
}

func getHTML(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Outer bool `json:"outer"`
	}](c)
	if err != nil {
		return nil, err
	}
	tr, err := c.Executor().HTML(ctx, executor.HTMLParams{TabID: a.TabID, Target: a.target(), Outer: a.Outer})
	return c.textResult(ctx, tr, err)
}

func snapshot(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		InteractiveOnly bool `json:"interactive_only"`
		MaxChars        int  `json:"max_chars"`
		Offset          int  `json:"offset"`
	}](c)
	if err != nil {
		return nil, err
	}
	sp := helpers.SnapshotParams{
		TabID: a.TabID, Scope: a.target(), InteractiveOnly: a.InteractiveOnly, MaxChars: a.MaxChars, Offset: a.Offset,
		DecideFrame: c.FrameDecider(),
	}
	sr, err := helpers.Snapshot(ctx, c.Executor(), sp)
	if err != nil {
		return nil, err
	}
	// The header is what the outline does not say: where it is, and how
	// to continue a cut one. The tab is the one asked for.
	out := snapshotOut{URL: sr.URL, Title: sr.Title, Dialogs: c.dialogsOf(ctx, sr.PageState)}
	if sr.Next > 0 || sr.Offset > 0 {
		out.Lines, out.Next = sr.Lines, sr.Next
	}
	r := &Result{Value: out, Text: sr.Text, Untrusted: true, Page: &sr.PageState}
	c.srv.sawSnapshot(ctx, c, r, sr, sp)
	return r, nil
}

func query(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		TabID    string `json:"tab_id"`
		Selector string `json:"selector"`
		Limit    int    `json:"limit"`
	}](c)
	if err != nil {
		return nil, err
	}
	qr, err := helpers.Query(ctx, c.Executor(), helpers.QueryParams{TabID: a.TabID, Selector: a.Selector, Limit: a.Limit})
	if err != nil {
		return nil, err
	}
	out := queryOut{c.pageOf(ctx, qr.PageState), fmt.Sprintf("%d of %d", len(qr.Items), qr.Total), qr.Items}
	return &Result{Value: out, Untrusted: true, Page: &qr.PageState}, nil
}

func checkScreenshot(args map[string]any) error {
	if full, _ := args["full_page"].(bool); full && !targetOf(args, "").IsZero() {
		return badArgs("full_page and a target are exclusive").WithHint("drop full_page to capture the element, or the target to capture the page")
	}
	if _, q := args["quality"]; q && args["format"] != "jpeg" {
		return badArgs("quality applies to jpeg only").WithHint(`set format to "jpeg" or drop quality`)
	}
	return nil
}

type shotOut struct {
	TabID      string      `json:"tab_id"`
	URL        string      `json:"url"`
	Width      int         `json:"width"`
	Height     int         `json:"height"`
	Truncated  bool        `json:"truncated,omitempty"`
	FullHeight int         `json:"full_height,omitempty"`
	Dialogs    []dialogOut `json:"dialogs,omitempty"`
}

func screenshot(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		FullPage  bool                 `json:"full_page"`
		Format    executor.ImageFormat `json:"format"`
		Quality   int                  `json:"quality"`
		MaxHeight int                  `json:"max_height"`
	}](c)
	if err != nil {
		return nil, err
	}
	s, err := c.guardedShot(ctx, c.Executor(), a.TabID, a.FullPage, !a.target().IsZero(), a.Quality, func() (executor.Screenshot, error) {
		return c.Executor().Screenshot(ctx, executor.ScreenshotParams{
			TabID: a.TabID, Target: a.target(), FullPage: a.FullPage,
			Format: a.Format, Quality: a.Quality, MaxHeight: a.MaxHeight,
		})
	})
	if err != nil {
		return nil, err
	}
	if _, err := picture.CheckPixels(s.Data); err != nil {
		return nil, err
	}
	p := pageOut{Dialogs: c.dialogsOf(ctx, s.PageState)}
	r := pageResult(shotOut{
		TabID: s.TabID, URL: s.URL, Width: s.Width, Height: s.Height,
		Truncated: s.Truncated, FullHeight: s.FullHeight, Dialogs: p.Dialogs,
	}, p, s.PageState)
	r.Image = &Image{Data: s.Data, MIMEType: s.MIMEType}
	return r, nil
}

func checkWait(args map[string]any) error {
	_, text := args["text"]
	switch hasTarget := !targetOf(args, "").IsZero(); {
	case hasTarget && text:
		return badArgs("both a target and text are set").WithHint("wait for a selector or ref, or for text, not both")
	case !hasTarget && !text:
		return badArgs("nothing to wait for").WithHint("pass a selector or ref, or text")
	}
	return nil
}

// waitSlice is how long one step of wait_for runs before the server
// looks where the tab is. A wait is a run of steps, so that a wait on a tab
// that is or becomes outside the policy ends, within one step, as
// POLICY_DENIED whether its condition held or not: neither the answer nor
// its timing tells what the denied page shows.
const waitSlice = 500 * time.Millisecond

// tabCheckTimeout bounds reading where a tab is after a wait step; it runs
// even when the call's own deadline has passed, so that a wait that runs
// out on a denied page is still told apart from one on an allowed page.
const tabCheckTimeout = 2 * time.Second

func waitFor(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Text    string `json:"text"`
		Gone    bool   `json:"gone"`
		Visible bool   `json:"visible"`
	}](c)
	if err != nil {
		return nil, err
	}
	p := executor.WaitParams{TabID: a.TabID, Target: a.target(), Text: a.Text, Gone: a.Gone, Visible: a.Visible}
	ex := c.Executor()
	start := time.Now()
	for {
		step, cancel := context.WithTimeout(ctx, waitSlice)
		stepEnd, _ := step.Deadline()
		wr, err := ex.WaitFor(step, p)
		cancel()
		if tab, denied := c.outsideNow(ctx); denied {
			if err == nil {
				// Found: answer when not finding would have.
				sleepUntil(ctx, stepEnd)
			}
			return nil, outsideErr(c, nil, c.srv.blankOutside(ctx, c, ex, tab.ID))
		}
		if err == nil {
			wr.ElapsedMs = time.Since(start).Milliseconds()
			pg := c.pageOf(ctx, wr.PageState)
			return pageResult(waitOut{pg, wr.ElapsedMs}, pg, wr.PageState), nil
		}
		if executor.CodeOf(err) != executor.CodeTimeout {
			return nil, err
		}
		if ctx.Err() != nil || !time.Now().Before(deadlineOf(ctx)) {
			return nil, executor.Errorf(executor.CodeTimeout, "waited %s for %s", time.Since(start).Round(time.Millisecond), p.Describe()).
				WithHint("retry with a larger timeout_ms, or check the condition with get_text or screenshot").Wrap(err)
		}
	}
}

// outsideNow reads where the call's tab is and says whether that is a page
// outside the policy.
func (c *Call) outsideNow(ctx context.Context) (executor.Tab, bool) {
	if _, ok := c.srv.opts.Gate.(TabFilter); !ok {
		return executor.Tab{}, false // no page is outside a Gate that filters none
	}
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tabCheckTimeout)
	defer cancel()
	tab, err := c.Executor().TabInfo(tctx, c.TabID())
	if err != nil {
		return tab, false
	}
	return tab, c.srv.outside(tctx, c, documentURL(tab))
}

func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Hour)
}

// sleepUntil waits until t, or until ctx is done.
func sleepUntil(ctx context.Context, t time.Time) {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}

func eval(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		TabID        string `json:"tab_id"`
		Expression   string `json:"expression"`
		AwaitPromise bool   `json:"await_promise"`
	}](c)
	if err != nil {
		return nil, err
	}
	er, err := c.Executor().Eval(ctx, executor.EvalParams{TabID: a.TabID, Expression: a.Expression, AwaitPromise: a.AwaitPromise, ExpectURL: c.expectURL()})
	if err != nil {
		return nil, err
	}
	var value json.RawMessage
	if len(er.Value) > 0 && json.Valid(er.Value) {
		value = er.Value
	}
	return &Result{Value: evalOut{c.pageOf(ctx, er.PageState), er.OK, value, er.Error}, Untrusted: true, Page: &er.PageState}, nil
}

// cookie is a cookie as tools see it, in and out.
type cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	URL      string  `json:"url,omitempty"`
	Domain   string  `json:"domain,omitempty"`
	Path     string  `json:"path,omitempty"`
	Expires  float64 `json:"expires,omitempty"`
	HTTPOnly bool    `json:"http_only,omitempty"`
	Secure   bool    `json:"secure,omitempty"`
	SameSite string  `json:"same_site,omitempty"`
}

func cookiesGet(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		URLs []string `json:"urls"`
	}](c)
	if err != nil {
		return nil, err
	}
	cs, err := c.Executor().Cookies(ctx, executor.CookiesParams{URLs: a.URLs})
	if err != nil {
		return nil, err
	}
	out := make([]cookie, len(cs))
	for i, k := range cs {
		out[i] = cookie{k.Name, k.Value, k.URL, k.Domain, k.Path, k.Expires, k.HTTPOnly, k.Secure, k.SameSite}
	}
	// Pages set cookies: their names and values are the page's words.
	return &Result{Value: cookiesOut{out}, Untrusted: len(out) > 0}, nil
}

func checkCookies(args map[string]any) error {
	list, _ := args["cookies"].([]any)
	for i, v := range list {
		m, _ := v.(map[string]any)
		if argString(m, "url") == "" && (argString(m, "domain") == "" || argString(m, "path") == "") {
			return badArgs("cookies[%d] has neither url nor domain and path", i).WithHint("give each cookie a url, or a domain and a path")
		}
	}
	return nil
}

func cookiesSet(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		Cookies []cookie `json:"cookies"`
	}](c)
	if err != nil {
		return nil, err
	}
	p := executor.SetCookiesParams{Cookies: make([]executor.Cookie, len(a.Cookies))}
	for i, k := range a.Cookies {
		p.Cookies[i] = executor.Cookie{Name: k.Name, Value: k.Value, URL: k.URL, Domain: k.Domain, Path: k.Path,
			Expires: k.Expires, HTTPOnly: k.HTTPOnly, Secure: k.Secure, SameSite: k.SameSite}
	}
	if err := c.Executor().SetCookies(ctx, p); err != nil {
		return nil, err
	}
	return &Result{Value: setOut{len(p.Cookies)}}, nil
}

func clipboardWrite(ctx context.Context, c *Call) (*Result, error) {
	text := argString(c.Args, "text")
	if err := c.Executor().ClipboardWrite(ctx, executor.ClipboardParams{TabID: c.TabID(), Text: text}); err != nil {
		return nil, err
	}
	return &Result{Value: writtenOut{utf8.RuneCountInString(text)}}, nil
}

func checkDownload(args map[string]any) error {
	url := argString(args, "url") != ""
	switch target := !targetOf(args, "").IsZero(); {
	case url && target:
		return badArgs("both url and a target are set").WithHint("pass url to fetch it, or a selector or ref to click, not both")
	case !url && !target:
		return badArgs("nothing to download").WithHint("pass url, or a selector or ref of a download link")
	}
	return nil
}

func download(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		URL      string `json:"url"`
		Filename string `json:"filename"`
	}](c)
	if err != nil {
		return nil, err
	}
	d, err := c.Executor().Download(ctx, executor.DownloadParams{TabID: a.TabID, URL: a.URL, Target: a.target(), Filename: a.Filename, Tenant: c.Principal.Tenant(),
		DecideHop: c.decideHop()})
	if err != nil {
		if executor.CodeOf(err) == executor.CodeDownloadFailed && a.URL == "" {
			if denied := c.srv.opts.Egress.Since(c.Session, c.mark); len(denied) > 0 {
				// The click's download went through the browser, whose
				// request (or a redirect hop of it) the boundary refused:
				// the browser saw only a failed load. The hosts are in the
				// call's blocked-requests note. A link's refused load may
				// have left the tab on the browser's error page.
				if tab, outside := c.outsideNow(ctx); outside {
					c.srv.blankOutside(ctx, c, c.Executor(), tab.ID)
				}
				return nil, executor.Errorf(executor.CodePolicyDenied, "download_file: the download the click started was blocked; a request it made was outside the policy and nothing was stored").
					WithHint("download only from allowed hosts; the note after this result lists what was blocked").Wrap(err)
			}
		}
		return nil, err
	}
	// The file's name (and so its path) is the server's cleaned form of
	// the name the page or its server chose.
	return &Result{Value: downloadOut{d.Path, d.Filename, d.Size, d.MIMEType, d.SHA256, d.URL}, Untrusted: true}, nil
}

// statusTimeout bounds the live executor's Status call: chrome_status is
// what a user runs when things hang, so it must not hang itself.
const statusTimeout = 2 * time.Second

func status(ctx context.Context, c *Call) (*Result, error) {
	s := c.srv
	out := map[string]any{
		"version":  s.opts.Version,
		"backends": s.opts.Manager.Backends(),
		"session":  c.Session,
	}
	if ex := c.Executor(); ex != nil {
		sctx, cancel := context.WithTimeout(ctx, statusTimeout)
		st, err := ex.Status(sctx)
		cancel()
		if err != nil {
			e := executor.AsError(err)
			out["browser"] = map[string]any{"live": true, "backend": ex.Backend(), "error": fmt.Sprintf("%s: %s", e.Code, e.Message)}
		} else {
			out["browser"] = map[string]any{
				"live": true, "backend": st.Backend, "browser": st.Browser, "version": st.Version,
				"headless": st.Headless, "attached": st.Attached, "profile": st.Profile,
				"tabs": st.Tabs, "selected_tab": st.SelectedTab, "download_dir": tenantDownloads(st.DownloadDir, c.Principal),
			}
		}
	} else {
		out["browser"] = map[string]any{"live": false, "note": "no browser yet; the next browser call starts one"}
	}
	if v := s.opts.Secrets; v.Len() > 0 {
		// The names are what the model writes (<secret:NAME>); the
		// origins say where each may go. Never a value.
		out["secrets"] = v.Origins()
	}
	if s.opts.Status != nil {
		extra := s.opts.Status(ctx)
		// Extras cannot overwrite what the server itself reports.
		for k, v := range maps.All(extra) {
			if _, taken := out[k]; !taken {
				out[k] = v
			}
		}
	}
	return &Result{Value: out}, nil
}

// tenantDownloads is where p's downloads land under the backend's
// downloads directory (executor.TenantRoot).
func tenantDownloads(dir string, p Principal) string {
	if dir == "" {
		return ""
	}
	return executor.TenantRoot(dir, p.Tenant())
}
