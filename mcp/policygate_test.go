package mcp

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policies"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// A tool's class is declared with the tool and nowhere else; this checks
// that every declaration makes sense: a known action, and arguments named
// for the target, the secrets and the hashed values that the tool takes.
func TestToolClasses(t *testing.T) {
	t.Parallel()
	actions := []Action{ActionNavigate, ActionRead, ActionInteract, ActionEval, ActionDownload, ActionTabs, ActionStatus, ActionPageTool}
	for _, tool := range Tools() {
		c := tool.Class()
		if !slices.Contains(actions, tool.Action) || c.Action != string(tool.Action) {
			t.Errorf("%s: action %q is not one of %v", tool.Name, tool.Action, actions)
		}
		if tool.ActionWithoutURL != "" && (tool.URLArg == "" || !slices.Contains(actions, tool.ActionWithoutURL)) {
			t.Errorf("%s: ActionWithoutURL %q needs a URLArg and a known action", tool.Name, tool.ActionWithoutURL)
		}
		if tool.URLArg != "" && tool.Action != ActionNavigate && tool.Action != ActionDownload {
			t.Errorf("%s: a %s tool goes nowhere, yet has URLArg %q", tool.Name, tool.Action, tool.URLArg)
		}
		if tool.Action == ActionNavigate && tool.URLArg == "" && !slices.Contains([]string{"back", "forward", "reload"}, tool.Name) {
			t.Errorf("%s: a navigation without a URLArg", tool.Name)
		}
		args := slices.Concat(c.Secrets, c.Hashed)
		if c.URLArg != "" {
			args = append(args, c.URLArg)
		}
		for _, a := range args {
			if _, ok := tool.InputSchema.Properties[a]; !ok {
				t.Errorf("%s: class names argument %q, which the tool does not take", tool.Name, a)
			}
		}
		if c.ReadOnly != *tool.ReadOnly {
			t.Errorf("%s: class read-only %v, tool hint %v", tool.Name, c.ReadOnly, *tool.ReadOnly)
		}
	}
}

// The default policy keeps its own list of mutating tools (the input does
// not say whether a tool mutates): it must be exactly the tools the table
// declares Mutating. Checked by a Rego test written from the table and run
// against the default policy.
func TestMutatingToolsMatchDefaultPolicy(t *testing.T) {
	t.Parallel()
	var mutating []string
	for _, tool := range Tools() {
		if tool.Mutating {
			mutating = append(mutating, fmt.Sprintf("%q", tool.Name))
		}
	}
	fsys := fstest.MapFS{}
	err := fs.WalkDir(policies.Default, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.rego") {
			return err
		}
		b, err := fs.ReadFile(policies.Default, p)
		fsys[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fsys["mutating_test.rego"] = &fstest.MapFile{Data: []byte(fmt.Sprintf(`package chromegate_test

import data.chromegate

test_mutating_tools_are_the_tables if {
	chromegate.mutating_tools == {%s}
}
`, strings.Join(mutating, ", ")))}
	var out strings.Builder
	passed, failed, err := policy.TestFS(t.Context(), "default+table", fsys, &out, false)
	if err != nil || passed != 1 || failed != 0 {
		t.Errorf("the default policy's mutating_tools are not the table's Mutating tools {%s}: %d passed, %d failed, %v\n%s",
			strings.Join(mutating, ", "), passed, failed, err, out.String())
	}
}

// policies/README.md lists the tools of each action; the list is the
// table's.
func TestPoliciesREADMEListsEachActionsTools(t *testing.T) {
	t.Parallel()
	readme, err := fs.ReadFile(policies.Tree, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Tools\n")
	section, _, _ = strings.Cut(section, "\n## ")
	want := map[string][]string{}
	for _, tool := range Tools() {
		want[string(tool.Action)] = append(want[string(tool.Action)], tool.Name)
		if tool.ActionWithoutURL != "" {
			want[string(tool.ActionWithoutURL)] = append(want[string(tool.ActionWithoutURL)], tool.Name)
		}
	}
	tick := regexp.MustCompile("`([a-z_]+)`")
	note := regexp.MustCompile(`\([^)]*\)`)
	got := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 {
			continue
		}
		action := tick.FindStringSubmatch(cells[1])
		if action == nil {
			continue
		}
		named := note.ReplaceAllString(cells[2], "") // a note in parentheses names other things
		for _, m := range tick.FindAllStringSubmatch(named, -1) {
			got[action[1]] = append(got[action[1]], m[1])
		}
	}
	for action, tools := range want {
		slices.Sort(tools)
		g := got[action]
		slices.Sort(g)
		if diff := cmp.Diff(tools, g); diff != "" {
			t.Errorf("policies/README.md, tools of action %s (-table +README):\n%s", action, diff)
		}
	}
}

func newPolicyGate(t *testing.T, data map[string]any) *gate.Gate {
	t.Helper()
	eng, err := policy.New(t.Context(), policy.WithData(data), policy.WithTimeout(10*time.Second)) // a loaded test machine is not a slow policy
	if err != nil {
		t.Fatal(err)
	}
	return gate.New(eng, nil)
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

func TestGateDefaultDenies(t *testing.T) {
	g := newPolicyGate(t, map[string]any{"allow_domains": []string{"allowed.test"}})
	ctx := t.Context()
	allowed := []*Call{
		callFor(t, "navigate", map[string]any{"url": "https://allowed.test/a"}, "about:blank"),
		callFor(t, "get_text", map[string]any{}, "https://allowed.test/a"),
		callFor(t, "tabs_list", map[string]any{}, ""),
	}
	for _, c := range allowed {
		if err := gateBefore(ctx, g, c); err != nil {
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
		err := gateBefore(ctx, g, d.c)
		if executor.CodeOf(err) != executor.CodePolicyDenied || !strings.Contains(err.Error(), d.want) {
			t.Errorf("%s %v: %v, want POLICY_DENIED mentioning %q", d.c.Tool.Name, d.c.Args, err, d.want)
		}
	}
	if err := gateBefore(ctx, g, callFor(t, "navigate", map[string]any{"url": "not a url"}, "about:blank")); executor.CodeOf(err) != executor.CodeBadArgs {
		t.Errorf("a URL that does not parse: %v, want BAD_ARGS", err)
	}
	c := callFor(t, "navigate", map[string]any{"url": "https://allowed.test/redirect"}, "about:blank")
	// Where a redirect led is the page's choice: its host is told fenced
	// (Page), never in the message or the hint.
	if err := executor.AsError(gateLanded(ctx, g, c, executor.PageState{URL: "https://other.test/landed"})); err == nil || err.Code != executor.CodePolicyDenied ||
		!strings.Contains(err.Page, "other.test") || strings.Contains(err.Message+err.Hint, "other.test") || strings.Contains(err.Page, "/landed") {
		t.Errorf("landing on a denied host: %#v", err)
	}
	if err := gateLanded(ctx, g, c, executor.PageState{URL: "https://allowed.test/landed"}); err != nil {
		t.Errorf("landing on an allowed host: %v", err)
	}
}

// A read is decided on the document it touches: an about:blank that a
// page of a denied host wrote into is that host's document, an opaque one
// a page opened is never read, and a fresh tab's about:blank stays
// readable.
func TestGateDecidesOnTheDocument(t *testing.T) {
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
		err := gateBefore(t.Context(), g, on("get_text", map[string]any{}, c.tab))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("get_text on %+v: %v", c.tab, err)
		case c.want != "" && (executor.CodeOf(err) != executor.CodePolicyDenied || !strings.Contains(err.Error(), c.want)):
			t.Errorf("get_text on %+v: %v, want POLICY_DENIED mentioning %q", c.tab, err, c.want)
		}
	}
	// Written by an allowed page, it is that page: interactions too.
	if err := gateBefore(t.Context(), g, on("click", map[string]any{"selector": "p"}, executor.Tab{URL: "about:blank", Origin: "https://allowed.test"})); err != nil {
		t.Errorf("click on allowed.test's about:blank: %v", err)
	}
}

// A call whose deadline passed before the decision does not run, and says
// TIMEOUT: a "policy error" would send the model to the policy.
func TestGateExpiredDeadlineIsTimeout(t *testing.T) {
	g := newPolicyGate(t, map[string]any{"allow_domains": []string{"allowed.test"}})
	ctx, cancel := context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	err := gateBefore(ctx, g, callFor(t, "navigate", map[string]any{"url": "https://allowed.test/a"}, "about:blank"))
	if executor.CodeOf(err) != executor.CodeTimeout {
		t.Fatalf("Before with an expired deadline: %v, want TIMEOUT", err)
	}
}

func TestGateListFilter(t *testing.T) {
	ctx := t.Context()
	visible := func(g *gate.Gate) map[string]bool {
		out := map[string]bool{}
		for _, tool := range Tools() {
			out[tool.Name] = serverOn(g).visible(ctx, tool, LocalPrincipal)
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
	g := gate.New(eng, nil)
	c := callFor(t, "get_text", map[string]any{}, "https://start.test/")
	if err := gateLanded(t.Context(), g, c, executor.PageState{URL: "https://landed.test/x"}); err != nil {
		t.Fatalf("the landing of a read was not decided as Input.Landed builds it: %v", err)
	}
}

// serverOn is a server whose only part is the gate g: enough to ask it
// the questions dispatch asks.
func serverOn(g gate.Decider) *Server {
	return &Server{opts: Options{Gate: g}, log: slog.New(slog.DiscardHandler)}
}

// gateBefore asks g about c before it runs, as dispatch does.
func gateBefore(ctx context.Context, g gate.Decider, c *Call) error {
	s := serverOn(g)
	c.srv = s
	return s.before(ctx, c)
}

// gateLanded asks g where c's tab landed, as dispatch does.
func gateLanded(ctx context.Context, g gate.Decider, c *Call, page executor.PageState) error {
	s := serverOn(g)
	c.srv = s
	return s.landed(ctx, c, page)
}

// policyInput is the policy input the gate builds for a call (or a
// listing, in phase list) of tool with args by p, before it reads the
// page.
func policyInput(phase string, tool *Tool, args map[string]any, p Principal) (policy.Input, error) {
	kind := gate.KindCall
	if phase == policy.PhaseList {
		kind = gate.KindList
	}
	return gate.Input(toolQuestion(kind, tool, args, p), phase)
}
