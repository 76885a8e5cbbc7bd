package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy/gate"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

func TestViewsBounds(t *testing.T) {
	t.Parallel()
	var v views
	seen := func(viewer, session, tab, outline string) {
		v.saw(&seenOutline{viewer: viewer, session: session, tab: tab, outline: outline})
	}
	for i := range maxViewsPerCaller + 5 {
		seen("a", "s1", fmt.Sprint("t", i), "kq1 button A")
	}
	if n := v.len(); n != maxViewsPerCaller {
		t.Errorf("one caller keeps %d outlines, want %d", n, maxViewsPerCaller)
	}
	if v.get("a", "t0") != nil || v.get("a", fmt.Sprint("t", maxViewsPerCaller+4)) == nil {
		t.Error("the oldest tab was not the one evicted")
	}
	seen("b", "s2", "t1", "kq1 button B")
	seen("b", "s2", "t1", "kq1 button B2") // replaces, not adds
	if o := v.get("b", "t1"); o == nil || o.outline != "kq1 button B2" {
		t.Errorf("b/t1 = %+v", o)
	}
	if v.get("a", "t9") == nil {
		t.Fatal("a/t9 missing")
	}
	// A closed tab is forgotten by every caller of its session, and
	// only there.
	seen("c", "s1", "t9", "x")
	v.forget("s1", "t9")
	if v.get("a", "t9") != nil || v.get("c", "t9") != nil {
		t.Error("a closed tab is still kept")
	}
	v.forget("s2", "")
	if v.get("b", "t1") != nil {
		t.Error("an ended session's outlines are still kept")
	}
	if v.get("a", "t10") == nil {
		t.Error("another session's outline was dropped")
	}
	// The total is bounded in characters.
	big := strings.Repeat("x", maxViewChars/3+1)
	for i := range 4 {
		seen(fmt.Sprint("big", i), "s3", "t", big)
	}
	if v.chars > maxViewChars {
		t.Errorf("%d characters kept, over %d", v.chars, maxViewChars)
	}
	if v.get("big3", "t") == nil {
		t.Error("the newest outline was evicted")
	}
}

func TestCutOutline(t *testing.T) {
	t.Parallel()
	if got := cutOutline("a\nb", 10, executor.Target{}); got != "a\nb" {
		t.Errorf("short outline: %q", got)
	}
	got := cutOutline("aaaa\nbbbb\ncccc", 10, executor.Target{})
	want := "aaaa\nbbbb\n[cut at line 2 of 3: call snapshot with offset=2 for the rest]"
	if got != want {
		t.Errorf("cut: %q, want %q", got, want)
	}
	if got := cutOutline(strings.Repeat("z", 20)+"\nb", 10, executor.Target{}); !strings.HasPrefix(got, strings.Repeat("z", 20)+"\n[cut at line 1 of 2") {
		t.Errorf("a first line longer than the cap is shown: %q", got)
	}
	if got := cutOutline("aaaa\nbbbb\ncccc", 10, executor.Target{Ref: "kq3"}); !strings.HasSuffix(got, "call snapshot with the same ref and offset=2 for the rest]") {
		t.Errorf("scoped cut: %q", got)
	}
}

func TestChangesOn(t *testing.T) {
	t.Parallel()
	s := &Server{opts: Options{Changes: true}}
	click := clickTool()
	for _, tt := range []struct {
		tool *Tool
		args map[string]any
		on   bool
		want bool
	}{
		{click, nil, true, true},
		{click, map[string]any{"changes": false}, true, false},
		{click, map[string]any{"changes": true}, false, true},
		{click, nil, false, false},
		{getTextTool(), map[string]any{"changes": true}, true, false},
		{reloadTool(), nil, true, false},
	} {
		s.opts.Changes = tt.on
		if got := s.changesOn(&Call{Tool: tt.tool, Args: tt.args}); got != tt.want {
			t.Errorf("%s %v (server %v): %v", tt.tool.Name, tt.args, tt.on, got)
		}
	}
}

// readGate denies the snapshot tool, and so reading the outline, while
// deny is set: a policy that lets the caller act on a page but not read it.
type readGate struct{ deny atomic.Bool }

func (g *readGate) Decide(ctx context.Context, q gate.Question) gate.Decision {
	if q.Kind == gate.KindCall && q.Name == "snapshot" && g.deny.Load() {
		return gatetest.Deny(executor.Errorf(executor.CodePolicyDenied, "reading is off"))
	}
	return gatetest.AllowAll.Decide(ctx, q)
}

// Through dispatch, on a fake page whose outline the test sets: what the
// caller saw is its last snapshot or change; a denied read, a page that
// moved while it was read and an open dialog give no outline.
func TestChangesThroughDispatch(t *testing.T) {
	gate := &readGate{}
	h := newHarness(t, func(o *Options) { o.Gate = gate; o.Changes = true })
	f := h.fake()
	tab := f.TabID(0)
	var mu sync.Mutex
	outline, url := "## Shop\nab1 button \"Cart\" collapsed\nab2 link Help", "about:blank"
	f.Handle("RunScript", func(_ context.Context, p any) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		v, _ := json.Marshal(map[string]any{"text": outline, "total": strings.Count(outline, "\n") + 1})
		return executor.ScriptResult{PageState: executor.PageState{TabID: tab, URL: url}, Value: v}, nil
	})
	set := func(o, u string) { mu.Lock(); outline, url = o, u; mu.Unlock() }
	got := func(res *sdk.CallToolResult) (changes, whole, note string) {
		t.Helper()
		m := jsonOf(t, res)
		c, _ := m["changes"].(string)
		o, _ := m["outline"].(string)
		n, _ := m["changes_note"].(string)
		return c, o, n
	}

	// Never seen: the outline is read before the click acts, so the
	// click answers with what it changed, here nothing.
	if c, o, _ := got(h.call("click", map[string]any{"selector": "#x"})); c != "" || o != "" {
		t.Errorf("first click: changes %q outline %q, want neither", c, o)
	}
	set("## Shop\nab1 button \"Cart\" expanded\n dialog Cart\n  ab3 button Checkout\nab2 link Help", "about:blank")
	c, o, _ := got(h.call("click", map[string]any{"selector": "#x"}))
	if want := "~ ab1 button \"Cart\" expanded\n+  dialog Cart\n+   ab3 button Checkout"; c != want || o != "" {
		t.Errorf("click: changes %q outline %q, want %q", c, o, want)
	}
	if res := h.call("click", map[string]any{"selector": "#x"}); textOf(res) != "{}" {
		t.Errorf("nothing changed: %s", textOf(res))
	}

	// Denied: a note, and nothing of the page.
	gate.deny.Store(true)
	set("## Shop\nab9 button Secret", "about:blank")
	c, o, n := got(h.call("click", map[string]any{"selector": "#x"}))
	if c != "" || o != "" || !strings.Contains(n, "policy does not allow reading") {
		t.Errorf("denied read: %q %q %q", c, o, n)
	}
	gate.deny.Store(false)

	// The page moved on between the decision and the read.
	set("## Elsewhere\ncd1 button Pay", "https://elsewhere.test/")
	c, o, n = got(h.call("click", map[string]any{"selector": "#x"}))
	if c != "" || o != "" || !strings.Contains(n, "changed while it was read") {
		t.Errorf("moved page: %q %q %q", c, o, n)
	}

	// Another document: the outline.
	set("## Next\nzz1 button Done", "about:blank")
	if c, o, _ := got(h.call("click", map[string]any{"selector": "#x"})); c != "" || !strings.Contains(o, "zz1 button Done") {
		t.Errorf("navigated: %q %q", c, o)
	}
	// A snapshot is seen too: the next click says only what changed.
	h.call("snapshot", nil)
	set("## Next\nzz1 button Done pressed", "about:blank")
	if c, _, _ := got(h.call("click", map[string]any{"selector": "#x"})); c != "~ zz1 button Done pressed" {
		t.Errorf("after a snapshot: %q", c)
	}
	// Closing the tab forgets it.
	if h.server.views.len() != 1 {
		t.Errorf("%d outlines kept, want 1", h.server.views.len())
	}
	h.call("tab_close", map[string]any{"tab_id": tab})
	if h.server.views.len() != 0 {
		t.Errorf("%d outlines kept after the tab closed", h.server.views.len())
	}
}

// A plugin's steps show the caller nothing by themselves: the plugin's
// result is its last step's, changed against what the caller saw before
// the plugin ran, and only that is seen.
func TestChangesOfAPlugin(t *testing.T) {
	ps := loadPlugins(t, map[string]string{"twice.json": `{"name": "press_twice", "description": "Press twice.", "read_only": false,
	  "steps": [{"name": "a", "tool": "click", "args": {"selector": "#a"}}, {"name": "b", "tool": "click", "args": {"selector": "#b"}}]}`})
	h := newHarness(t, func(o *Options) { o.Plugins = ps; o.Changes = true })
	f := h.fake()
	tab := f.TabID(0)
	var mu sync.Mutex
	outlines := []string{"ab1 button A\nab2 button B\n\"x\"", "ab1 button A pressed\nab2 button B\n\"x\"", "ab1 button A pressed\nab2 button B pressed\n\"x\"", "ab1 button A pressed\nab2 button B pressed\n\"y\""}
	n := 0
	f.Handle("RunScript", func(_ context.Context, p any) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		if sp, _ := p.(executor.ScriptParams); strings.Contains(sp.Source, "chromegateLanding") {
			// The watch for a navigation (landing.go): armed, and none.
			v := json.RawMessage(`{"token":"t","seq":1,"api":true,"doc":"ab"}`)
			if strings.Contains(string(sp.Arg), `"read"`) {
				v = json.RawMessage(`{"cross":false}`)
			}
			return executor.ScriptResult{PageState: executor.PageState{TabID: tab, URL: "about:blank"}, Value: v}, nil
		}
		o := outlines[min(n, len(outlines)-1)]
		n++
		v, _ := json.Marshal(map[string]any{"text": o, "total": 3})
		return executor.ScriptResult{PageState: executor.PageState{TabID: tab, URL: "about:blank"}, Value: v}, nil
	})
	h.call("snapshot", nil) // outline 0
	res := h.call("press_twice", nil)
	if c, _ := jsonOf(t, res)["changes"].(string); c != "~ ab1 button A pressed\n~ ab2 button B pressed" {
		t.Errorf("the plugin's changes: %q (%s)", c, textOf(res))
	}
	res = h.call("click", map[string]any{"selector": "#c"})
	if c, _ := jsonOf(t, res)["changes"].(string); c != "- \"x\"\n+ \"y\"" {
		t.Errorf("after the plugin: %q", c)
	}
}
