package mcp

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
)

// The tool table is the source of truth for each tool's class; the policy
// package keeps its own copy for inputs built without the table (policy
// eval, plugins). This test keeps the two in step.
func TestToolClassMatchesPolicy(t *testing.T) {
	for _, tool := range Tools() {
		action, mutating := policy.Action(tool.Name)
		want := string(tool.Action)
		if tool.Name == "tab_new" {
			want = policy.ActionTabs // a navigation only when it has a url; NewInput says so
		}
		if action != want || mutating != tool.Mutating {
			t.Errorf("%s: table says %s mutating=%v, policy says %s mutating=%v", tool.Name, want, tool.Mutating, action, mutating)
		}
	}
}

func newPolicyGate(t *testing.T, data map[string]any) *PolicyGate {
	t.Helper()
	eng, err := policy.New(t.Context(), policy.WithData(data), policy.WithTimeout(10*time.Second)) // a loaded test machine is not a slow policy
	if err != nil {
		t.Fatal(err)
	}
	return &PolicyGate{Engine: eng}
}

func callFor(t *testing.T, name string, args map[string]any, pageURL string) *Call {
	t.Helper()
	for _, tool := range Tools() {
		if tool.Name == name {
			return &Call{Tool: tool, Args: args, Principal: LocalPrincipal,
				Page: func(context.Context) (executor.Tab, error) { return executor.Tab{URL: pageURL}, nil }}
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func TestPolicyGateDefaultDenies(t *testing.T) {
	g := newPolicyGate(t, map[string]any{"allow_domains": []string{"allowed.test"}})
	ctx := t.Context()
	allowed := []*Call{
		callFor(t, "navigate", map[string]any{"url": "https://allowed.test/a"}, "about:blank"),
		callFor(t, "get_text", map[string]any{}, "https://allowed.test/a"),
		callFor(t, "tabs_list", map[string]any{}, ""),
	}
	for _, c := range allowed {
		if err := g.Before(ctx, c); err != nil {
			t.Errorf("%s %v: %v", c.Tool.Name, c.Args, err)
		}
	}
	denied := []struct {
		c    *Call
		want string
	}{
		{callFor(t, "navigate", map[string]any{"url": "https://other.test/"}, "about:blank"), "other.test"},
		{callFor(t, "navigate", map[string]any{"url": "http://2130706433/"}, "about:blank"), "127.0.0.1"},
		{callFor(t, "get_text", map[string]any{}, "https://other.test/"), "other.test"},
		{callFor(t, "click", map[string]any{"selector": "#a"}, "https://allowed.test/"), "--enable-mutations"},
		{callFor(t, "eval", map[string]any{"expression": "1"}, "https://allowed.test/"), "--unsafe-enable-eval"},
	}
	for _, d := range denied {
		err := g.Before(ctx, d.c)
		if executor.CodeOf(err) != executor.CodePolicyDenied || !strings.Contains(err.Error(), d.want) {
			t.Errorf("%s %v: %v, want POLICY_DENIED mentioning %q", d.c.Tool.Name, d.c.Args, err, d.want)
		}
	}
	if err := g.Before(ctx, callFor(t, "navigate", map[string]any{"url": "not a url"}, "about:blank")); executor.CodeOf(err) != executor.CodeBadArgs {
		t.Errorf("a URL that does not parse: %v, want BAD_ARGS", err)
	}
	c := callFor(t, "navigate", map[string]any{"url": "https://allowed.test/redirect"}, "about:blank")
	// Where a redirect led is the page's choice: its host is told fenced
	// (Page), never in the message or the hint.
	if err := executor.AsError(g.Landed(ctx, c, executor.PageState{URL: "https://other.test/landed"})); err == nil || err.Code != executor.CodePolicyDenied ||
		!strings.Contains(err.Page, "other.test") || strings.Contains(err.Message+err.Hint, "other.test") || strings.Contains(err.Page, "/landed") {
		t.Errorf("landing on a denied host: %#v", err)
	}
	if err := g.Landed(ctx, c, executor.PageState{URL: "https://allowed.test/landed"}); err != nil {
		t.Errorf("landing on an allowed host: %v", err)
	}
}

// A read is decided on the document it touches: an about:blank that a
// page of a denied host wrote into is that host's document, an opaque one
// a page opened is never read, and a fresh tab's about:blank stays
// readable.
func TestPolicyGateDecidesOnTheDocument(t *testing.T) {
	g := newPolicyGate(t, map[string]any{"allow_domains": []string{"allowed.test"}, "enable_mutations": true})
	on := func(tool string, args map[string]any, tab executor.Tab) *Call {
		c := callFor(t, tool, args, "")
		c.Page = func(context.Context) (executor.Tab, error) { return tab, nil }
		return c
	}
	for _, c := range []struct {
		tab  executor.Tab
		want string // "" allowed, else a word of the denial
	}{
		{executor.Tab{URL: "about:blank"}, ""},
		{executor.Tab{URL: "about:blank", Origin: "https://allowed.test"}, ""},
		{executor.Tab{URL: "about:blank", Origin: "https://other.test"}, "other.test"},
		{executor.Tab{URL: "about:blank#x", Origin: "http://other.test:8080"}, "other.test"},
		{executor.Tab{URL: "about:blank", Origin: executor.OpaqueOrigin}, "opaque origin"},
		{executor.Tab{URL: "data:text/html,hi", Origin: "https://allowed.test"}, ""},
	} {
		err := g.Before(t.Context(), on("get_text", map[string]any{}, c.tab))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("get_text on %+v: %v", c.tab, err)
		case c.want != "" && (executor.CodeOf(err) != executor.CodePolicyDenied || !strings.Contains(err.Error(), c.want)):
			t.Errorf("get_text on %+v: %v, want POLICY_DENIED mentioning %q", c.tab, err, c.want)
		}
	}
	// Written by an allowed page, it is that page: interactions too.
	if err := g.Before(t.Context(), on("click", map[string]any{"selector": "p"}, executor.Tab{URL: "about:blank", Origin: "https://allowed.test"})); err != nil {
		t.Errorf("click on allowed.test's about:blank: %v", err)
	}
}

// A call whose deadline passed before the decision does not run, and says
// TIMEOUT: a "policy error" would send the model to the policy.
func TestPolicyGateExpiredDeadlineIsTimeout(t *testing.T) {
	g := newPolicyGate(t, map[string]any{"allow_domains": []string{"allowed.test"}})
	ctx, cancel := context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	err := g.Before(ctx, callFor(t, "navigate", map[string]any{"url": "https://allowed.test/a"}, "about:blank"))
	if executor.CodeOf(err) != executor.CodeTimeout {
		t.Fatalf("Before with an expired deadline: %v, want TIMEOUT", err)
	}
}

func TestPolicyGateListFilter(t *testing.T) {
	ctx := t.Context()
	visible := func(g *PolicyGate) map[string]bool {
		out := map[string]bool{}
		for _, tool := range Tools() {
			out[tool.Name] = g.Visible(ctx, tool, LocalPrincipal)
		}
		return out
	}
	off := visible(newPolicyGate(t, nil))
	if off["eval"] || off["click"] || off["download_file"] || !off["get_text"] || !off["chrome_status"] {
		t.Fatalf("default listing: %v", off)
	}
	on := visible(newPolicyGate(t, map[string]any{"enable_eval": true, "enable_mutations": true, "enable_downloads": true}))
	for name, v := range on {
		if !v {
			t.Errorf("%s hidden with everything enabled", name)
		}
	}
}

// The landing check's input is Input.Landed's, the builder the policy
// tests use: a navigation (read_only false) to where the tab landed,
// whatever tool led there — here a read whose page navigated itself.
func TestLandingInputIsInputLanded(t *testing.T) {
	const rego = `package chromegate

decision := {"allow": true, "reasons": []} if {
	input.action == "navigate"
	input.read_only == false
	input.target.host == "landed.test"
}

decision := {"allow": false, "reasons": ["not the landing input"]} if {
	not input.action == "navigate"
} else := {"allow": false, "reasons": ["not the landing input"]} if {
	not input.read_only == false
} else := {"allow": false, "reasons": ["not the landing input"]} if {
	not input.target.host == "landed.test"
}
`
	eng, err := policy.New(t.Context(), policy.WithFS("test", fstest.MapFS{"p.rego": {Data: []byte(rego)}}))
	if err != nil {
		t.Fatal(err)
	}
	g := &PolicyGate{Engine: eng}
	c := callFor(t, "get_text", map[string]any{}, "https://start.test/")
	if err := g.Landed(t.Context(), c, executor.PageState{URL: "https://landed.test/x"}); err != nil {
		t.Fatalf("the landing of a read was not decided as Input.Landed builds it: %v", err)
	}
}
