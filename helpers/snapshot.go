package helpers

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/chromegate/chromegate/executor"
)

//go:embed scripts/snapshot.js
var snapshotJS string

// snapshotSource is snapshot.js composed with the ref registry, once.
var snapshotSource = executor.WithRefs(stripLeadingComments(snapshotJS))

// DefaultSnapshotChars is the snapshot's size when the caller sets no
// max_chars: enough for a large page's every control, well inside the
// result cap.
const DefaultSnapshotChars = 40_000

// SnapshotParams selects what Snapshot outlines.
type SnapshotParams struct {
	TabID string `json:"tabId,omitempty"`
	// Scope, if set, outlines only this element (a selector or a ref).
	Scope executor.Target `json:"scope,omitzero"`
	// InteractiveOnly leaves out landmarks, headings and text.
	InteractiveOnly bool `json:"interactiveOnly,omitempty"`
	// MaxChars caps the outline (DefaultSnapshotChars when 0); the cut is at
	// a line, and Next says where to continue.
	MaxChars int `json:"maxChars,omitempty"`
	// Offset is the first line to show: the Next of an earlier, cut
	// snapshot.
	Offset int `json:"offset,omitempty"`
	// DecideFrame decides each frame of another origin before its
	// document is outlined (see FrameDecider); nil outlines none of
	// them, each a placeholder. The server passes its policy here.
	DecideFrame FrameDecider `json:"-"`
}

// CutNote ends an outline that cut something: said once, not on every
// cut line.
const CutNote = "[…, +N: cut; snapshot with the line's ref shows it whole]"

// SnapshotResult is the outline. Text is page content: untrusted.
type SnapshotResult struct {
	executor.PageState
	Text string `json:"text"`
	// Lines is the outline's length in lines; Offset the first shown;
	// Next the offset to pass to continue, 0 when nothing is left.
	Lines  int `json:"lines"`
	Offset int `json:"offset"`
	Next   int `json:"next"`
	// Loading: the document had not finished loading (its load event,
	// subresources included) when it was read.
	Loading bool `json:"-"`
}

// Snapshot outlines a page for acting on it: landmarks and headings for
// orientation, every interactive element with a ref, short runs of text.
// Refs stay the same for the same element while the document lives, and
// expire when the tab navigates.
//
// The outline has a line per thing, indented one space per level of
// nesting:
//
//	kq3 link Docs                          a control: ref, role, name to the end of the line
//	kq7 textbox "Email" value="a@b.c" required   the name quoted when states follow
//	nav Main                               a landmark: header, nav, main, aside, footer,
//	                                       search, form, section, dialog; then its name
//	## Pricing                             a heading, one # per level
//	"First words of a paragraph…" (+3)     text: the first line of a run, and how many
//	                                       more lines it had
//	kq9 "A run cut short…" (+40)           a cut run carries the ref of the element
//	                                       holding it, to expand it
//	links (ref kq+number):                 a run of plain sibling links: each line is
//	12 Guide one                           a number and a name, the ref is kq12
//	iframe Checkout                        a frame, its document's outline indented under
//	                                       it: a same-origin one, or one of another
//	                                       origin (in or out of process) that the
//	                                       policy lets the caller read, decided like a
//	                                       page on its own URL and origin; its refs
//	                                       carry its own document's letters
//	iframe "Pay" [other.test: not allowed] a frame the policy does not let the caller
//	                                       read: its host only, never a word of it
//	                                       (the name is the iframe element's own
//	                                       title or name, the page around's words);
//	                                       [not shown] when the backend cannot reach
//	                                       it or it went away while outlined,
//	                                       [not loaded] when its load was refused
//	                                       (the egress boundary) or failed
//
// Roles are ARIA's (link, button, textbox, checkbox, combobox, …), an
// input's type where it says more (date, time, color, …), file for a file
// input and clickable for an element with a click handler and no role.
// States: value="…", options=[…], checked, mixed, pressed, selected,
// expanded, collapsed, disabled, required, readonly. A line that starts
// with a quote is always the page's text; names and text are cut at 80
// characters, options to the first 8 cut at 30; an outline that cut
// something ends with CutNote.
//
// A scoped snapshot (Scope set) is expanded: nothing in it is cut, a
// select's or datalist's options and a closed combobox's popup options
// follow their control as "option label states" lines (selected,
// disabled, value="…" where it differs from the label; "group label"
// over a select's optgroup), and a radio's or an option's ref scopes its
// whole group. It is paged by MaxChars like the outline, so a control of
// 100,000 options is read a page at a time. OutlineRefs reads the refs
// back.
func Snapshot(ctx context.Context, ex executor.Executor, p SnapshotParams) (SnapshotResult, error) {
	if !p.Scope.IsZero() {
		if err := p.Scope.Validate(); err != nil {
			return SnapshotResult{}, err
		}
		if p.Scope.Ref != "" && !executor.ValidRef(p.Scope.Ref) {
			return SnapshotResult{}, executor.RefError(p.Scope.Ref, "malformed", "")
		}
	}
	if p.MaxChars < 0 || p.Offset < 0 {
		return SnapshotResult{}, executor.Errorf(executor.CodeBadArgs, "max_chars and offset must not be negative")
	}
	if p.MaxChars == 0 {
		p.MaxChars = DefaultSnapshotChars
	}
	arg, _ := json.Marshal(map[string]any{
		"op": "snapshot", "scope": p.Scope, "interactiveOnly": p.InteractiveOnly,
		"maxChars": p.MaxChars, "offset": p.Offset,
	})
	fr, _ := ex.(executor.FrameReader)
	sp := executor.ScriptParams{TabID: p.TabID, Source: snapshotSource, Arg: arg}
	if p.Scope.Ref != "" && fr != nil {
		// A scope in a frame's document: outlined there, once decided.
		doc, err := fr.RefDocument(ctx, executor.FrameParams{TabID: p.TabID, Ref: p.Scope.Ref})
		if err != nil {
			return SnapshotResult{}, err
		}
		if !doc.Main {
			if p.DecideFrame == nil {
				return SnapshotResult{}, executor.Errorf(executor.CodePolicyDenied, "snapshot: the frame of ref %s cannot be decided here", p.Scope.Ref)
			}
			if err := p.DecideFrame(ctx, doc.URL, doc.Origin); err != nil {
				return SnapshotResult{}, err
			}
			sp.Doc = doc.Doc
		}
	}
	r, err := ex.RunScript(ctx, sp)
	if err != nil {
		return SnapshotResult{}, err
	}
	var out struct {
		scriptError
		rawOutline
		Text    string `json:"text"`
		Total   int    `json:"total"`
		Offset  int    `json:"offset"`
		Next    int    `json:"next"`
		Cut     bool   `json:"cut"`
		Loading bool   `json:"loading"`
	}
	if err := json.Unmarshal(r.Value, &out); err != nil {
		return SnapshotResult{}, executor.Errorf(executor.CodeInternal, "snapshot: unexpected result: %v", err)
	}
	if err := out.err("snapshot", p.Scope); err != nil {
		return SnapshotResult{}, err
	}
	if out.Lines != nil {
		// Frames of other origins: each outlined in place, if allowed,
		// and the whole paged here.
		o := &frameOutliner{ex: ex, fr: fr, decide: p.DecideFrame, tabID: p.TabID,
			arg: map[string]any{"op": "snapshot", "interactiveOnly": p.InteractiveOnly, "raw": true}}
		if r.TabID != "" {
			o.tabID = r.TabID
		}
		lines, runOf, err := o.splice(ctx, out.rawOutline, 0)
		if err != nil {
			return SnapshotResult{}, err
		}
		out.Total, out.Offset = len(lines), min(p.Offset, len(lines))
		out.Text, out.Next = page(lines, runOf, p.Offset, p.MaxChars)
		out.Cut = out.Cut || o.cut
	}
	text := out.Text
	if out.Cut {
		text += "\n" + CutNote
	}
	if out.Next > 0 {
		with := ""
		if !p.Scope.IsZero() {
			with = "the same " + map[bool]string{true: "ref", false: "selector"}[p.Scope.Ref != ""] + " and "
		}
		text += fmt.Sprintf("\n[cut at line %d of %d: call snapshot with %soffset=%d for the rest]", out.Next, out.Total, with, out.Next)
	}
	if out.Total == 0 {
		text = "(nothing visible)"
	}
	return SnapshotResult{PageState: r.PageState, Text: text, Lines: out.Total, Offset: out.Offset, Next: out.Next, Loading: out.Loading}, nil
}

// OutlineRef is one control of a snapshot outline: its ref, and its line
// as "role name states" (a list item as "link name").
type OutlineRef struct {
	Ref  string
	Line string
}

var (
	outlineLine = regexp.MustCompile(`^ *([a-z]+[0-9]+) (.*)$`)
	outlineList = regexp.MustCompile(`^ *links \(ref ([a-z]+)\+number\):$`)
	outlineItem = regexp.MustCompile(`^( *)([0-9]+)(?: (.*))?$`)
)

// OutlineRefs returns the refs of a snapshot outline's controls, in
// order, with their lines: what a client needs to act on an outline. A
// cut text run's ref is not a control's, and is left out.
func OutlineRefs(outline string) []OutlineRef {
	var out []OutlineRef
	list, listPad := "", ""
	for _, line := range strings.Split(outline, "\n") {
		if m := outlineList.FindStringSubmatch(line); m != nil {
			list, listPad = m[1], line[:len(line)-len(strings.TrimLeft(line, " "))]
			continue
		}
		if m := outlineItem.FindStringSubmatch(line); m != nil && list != "" && m[1] == listPad {
			out = append(out, OutlineRef{Ref: list + m[2], Line: strings.TrimSpace("link " + m[3])})
			continue
		}
		list = ""
		if m := outlineLine.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[2], `"`) {
			out = append(out, OutlineRef{Ref: m[1], Line: m[2]})
		}
	}
	return out
}

// DefaultQueryLimit is how many elements Query describes when the caller
// sets no limit.
const DefaultQueryLimit = 50

// QueryParams selects elements by CSS selector.
type QueryParams struct {
	TabID    string `json:"tabId,omitempty"`
	Selector string `json:"selector"`
	Limit    int    `json:"limit,omitempty"`
}

// QueryItem describes one element. Name, Text and Attrs are page content.
type QueryItem struct {
	Tag    string            `json:"tag"`
	Role   string            `json:"role,omitempty"`
	Name   string            `json:"name,omitempty"`
	Text   string            `json:"text,omitempty"`
	Attrs  map[string]string `json:"attrs,omitempty"`
	Hidden bool              `json:"hidden,omitempty"`
	Ref    string            `json:"ref"`
}

// QueryResult lists the first Limit matches of Total, in document order.
type QueryResult struct {
	executor.PageState
	Total int         `json:"total"`
	Items []QueryItem `json:"items"`
}

// Query describes the elements matching a CSS selector, each with a ref in
// the same registry as the snapshot's.
func Query(ctx context.Context, ex executor.Executor, p QueryParams) (QueryResult, error) {
	if strings.TrimSpace(p.Selector) == "" {
		return QueryResult{}, executor.Errorf(executor.CodeBadArgs, "selector is empty")
	}
	if err := executor.CheckSelector(p.Selector); err != nil {
		return QueryResult{}, err
	}
	if p.Limit < 0 {
		return QueryResult{}, executor.Errorf(executor.CodeBadArgs, "limit must not be negative")
	}
	if p.Limit == 0 {
		p.Limit = DefaultQueryLimit
	}
	arg, _ := json.Marshal(map[string]any{"op": "query", "selector": p.Selector, "limit": p.Limit})
	r, err := ex.RunScript(ctx, executor.ScriptParams{TabID: p.TabID, Source: snapshotSource, Arg: arg})
	if err != nil {
		return QueryResult{}, err
	}
	var out struct {
		scriptError
		Total int         `json:"total"`
		Items []QueryItem `json:"items"`
	}
	if err := json.Unmarshal(r.Value, &out); err != nil {
		return QueryResult{}, executor.Errorf(executor.CodeInternal, "query: unexpected result: %v", err)
	}
	if err := out.err("query", executor.Target{Selector: p.Selector}); err != nil {
		return QueryResult{}, err
	}
	if out.Items == nil {
		out.Items = []QueryItem{}
	}
	return QueryResult{PageState: r.PageState, Total: out.Total, Items: out.Items}, nil
}

// scriptError is how snapshot.js reports a failure.
type scriptError struct {
	Error string `json:"error"`
	Why   string `json:"why"`
}

func (e scriptError) err(what string, t executor.Target) error {
	switch {
	case e.Error == "":
		return nil
	case e.Error == "notfound":
		return executor.Errorf(executor.CodeSelectorNotFound, "%s: nothing matches %s", what, t).
			WithHint("check the selector, or take a snapshot without a scope")
	case strings.HasPrefix(e.Error, "invalid selector"):
		return executor.Errorf(executor.CodeBadArgs, "%s: %s", what, e.Error).WithHint("pass a CSS selector")
	}
	return executor.RefError(t.Ref, e.Error, e.Why)
}

func stripLeadingComments(src string) string {
	lines := strings.Split(src, "\n")
	for len(lines) > 0 && strings.HasPrefix(strings.TrimSpace(lines[0]), "//") {
		lines = lines[1:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
