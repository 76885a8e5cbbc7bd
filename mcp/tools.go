package mcp

import (
	"context"
	"slices"

	"github.com/chromegate/chromegate/executor"
)

//go:generate go run ./internal/readmegen -readme ../README.md

func yes() *bool { t := true; return &t }
func no() *bool  { f := false; return &f }

// Tools returns the tool table: every tool of the surface, in groups, the
// README's tool table in that order (it is generated from Tools: see
// Group), tools/list sorted by name. Each call returns fresh
// values, so a caller may change what it gets without touching the
// server's copy.
//
// The table states, in one place, which group of tools/list each tool is
// in (Tool.ListGroup; see toolgroups.go): core is the common work —
// navigate, read, act, tabs, wait, dialogs — and every other group is
// turned on by the operator (serve --tools) or the client (tool_groups),
// which is in none, so always listed.
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
	in := func(g ListGroup, ts ...*Tool) []*Tool {
		for _, t := range ts {
			t.ListGroup = g
		}
		return ts
	}
	tools := slices.Concat(
		// tabs
		in(GroupCore, tabsListTool(), tabSelectTool(), tabNewTool(), tabCloseTool()),
		// navigation
		in(GroupCore, navigateTool(), backTool(), forwardTool(), reloadTool()),
		// interaction
		in(GroupCore, clickTool(), typeTool(), fillTool(), pressTool(), hoverTool(), scrollTool(), selectOptionTool()),
		in(GroupFiles, setFilesTool()),
		in(GroupCore, dragTool()),
		// reading
		in(GroupCore, snapshotTool(), queryTool(), getTextTool()),
		in(GroupExtract, getHTMLTool()),
		in(GroupCore, screenshotTool(), waitForTool()),
		// scripts
		in(GroupScripts, evalTool()),
		// state
		in(GroupState, cookiesGetTool(), cookiesSetTool(), clipboardWriteTool()),
		in(GroupFiles, downloadFileTool()),
		// status; tool_groups is in no group: always listed
		in(GroupCore, chromeStatusTool()),
		in("", toolGroupsTool()),
		// dialogs
		in(GroupCore, dialogAnswerTool()),
		// network log
		in(GroupObserve, networkRequestsTool(), networkRequestTool()),
		// console, PDF
		in(GroupObserve, consoleMessagesTool()),
		in(GroupFiles, pdfTool()),
		// helpers
		in(GroupExtract, extractLinksTool(), readAsMarkdownTool(), fillFormTool()),
		// page tools
		in(GroupPages, pageToolsListTool(), pageToolCallTool()),
		// storage state
		in(GroupState, stateSaveTool(), stateLoadTool(), stateListTool()),
		// emulation
		in(GroupEmulate, emulateTool()),
	)
	for _, t := range tools {
		t.declareArgs()
	}
	return tools
}

// declareArgs adds to t's schema the arguments its facts offer, after its
// own: wait_until (WaitUntilArg), timeout_ms (TimeoutArg), changes
// (Changes); a tool that returns changes returns them with its page.
func (t *Tool) declareArgs() {
	if t.WaitUntilArg {
		// An input type that decodes wait_until declares it where it
		// falls in its fields; its schema is this one.
		setProp(t, waitUntilProp())
	}
	if t.TimeoutArg {
		addProp(t, timeoutProp())
	}
	if t.Changes {
		addProp(t, prop{changesArg, boolean("")})
		if _, ok := t.Output.Value.(pageOut); ok {
			t.Output.Value = pageChangesOut{}
		}
	}
}

// setProp sets p's schema on t, in place when t has it, else last.
func setProp(t *Tool, p prop) {
	if _, has := t.InputSchema.Properties[p.name]; has {
		t.InputSchema.Properties[p.name] = p.s
		return
	}
	addProp(t, p)
}

func addProp(t *Tool, p prop) {
	if _, has := t.InputSchema.Properties[p.name]; has {
		return
	}
	t.InputSchema.Properties[p.name] = p.s
	t.InputSchema.PropertyOrder = append(t.InputSchema.PropertyOrder, p.name)
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

// pageResult reports a page after an action. A title and a dialog's
// message are the page's words, so a result that carries any is fenced.
func pageResult(v any, p pageOut, ps executor.PageState) *Result {
	return &Result{Value: v, Untrusted: p.written(), Page: &ps}
}

// Arguments. An input type's fields are its tool's arguments, in schema
// order (see tools_typed.go). timeout_ms, and wait_until's schema, come
// from the tool's facts (declareArgs); dispatch consumes timeout_ms.

// noArgs is the input of a tool without arguments.
type noArgs struct{}

// tabIn is the tab a call acts on: "" is the selected one.
type tabIn struct {
	TabID string `json:"tab_id,omitempty"`
}

// targetIn is an element target: a selector or a ref (Tool.Targets says
// whether one is required).
type targetIn struct {
	Selector string `json:"selector,omitempty"`
	Ref      string `json:"ref,omitempty"`
}

func (a targetIn) target() executor.Target {
	return executor.Target{Selector: a.Selector, Ref: a.Ref}
}

// pointIn is a target that may be a point of the viewport instead
// (coords.go); atPoint acts at the point.
type pointIn struct {
	targetIn
	X float64 `json:"x,omitempty"`
	Y float64 `json:"y,omitempty"`
}

// onTarget is a target of a tab, as the executor takes it.
func onTarget(tab string, t targetIn) executor.TargetParams {
	return executor.TargetParams{TabID: tab, Target: t.target()}
}

// toolFor is the built-in tool the server decides a step of its own as
// (Tool.Use): the outline of an acting call's changes is a snapshot call,
// a recording's shot a screenshot call, the --storage-state a state_load
// call. The table is fixed when NewServer returns, so reading it needs no
// lock.
func (s *Server) toolFor(u Use) (*entry, bool) {
	if u == UseNone {
		return nil, false
	}
	for _, e := range s.tools {
		if e.tool.Use == u {
			return e, true
		}
	}
	return nil, false
}
