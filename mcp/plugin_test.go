package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

// readPlugin is a small valid plugin: it opens a page and reads it. The
// file is shared with mcp/httpapi's tests.
var readPlugin = testkit.ReadFile("testdata/plugins/read_page.json")

func writePlugins(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func loadPlugins(t *testing.T, files map[string]string) *Plugins {
	t.Helper()
	ps, err := LoadPlugins(writePlugins(t, files))
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// Every malformed plugin is refused at load with the reason; nothing of it
// is ever callable.
func TestParsePluginRejects(t *testing.T) {
	t.Parallel()
	valid := func(edit func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(readPlugin), &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		return string(b)
	}
	step := func(i int, m map[string]any) map[string]any { return m["steps"].([]any)[i].(map[string]any) }
	cases := []struct {
		name, file, want string
	}{
		{"not JSON", `{"name": `, "not a plugin"},
		{"two objects", readPlugin + readPlugin, "data after the JSON object"},
		{"unknown field", valid(func(m map[string]any) { m["stpes"] = []any{} }), `unknown field "stpes"`},
		{"bad name", valid(func(m map[string]any) { m["name"] = "Read Page" }), `name "Read Page"`},
		{"built-in name", valid(func(m map[string]any) { m["name"] = "navigate" }), "is a built-in tool"},
		{"no description", valid(func(m map[string]any) { delete(m, "description") }), "description is missing"},
		{"no read_only", valid(func(m map[string]any) { delete(m, "read_only") }), "read_only is missing"},
		{"read_only lie", valid(func(m map[string]any) {
			m["read_only"] = true
			step(1, m)["tool"] = "click"
		}), "read_only is true, but a step calls a tool that is not read-only"},
		{"no steps", valid(func(m map[string]any) { m["steps"] = []any{} }), "steps is empty"},
		{"unknown tool", valid(func(m map[string]any) { step(1, m)["tool"] = "get_txt" }), `step 2: unknown tool "get_txt"`},
		{"plugin as step", valid(func(m map[string]any) { step(1, m)["tool"] = "read_page" }), `unknown tool "read_page"`},
		{"unknown arg", valid(func(m map[string]any) { step(0, m)["args"] = map[string]any{"uri": "x"} }), `step 1 (open): navigate has no argument "uri"`},
		{"undeclared param", valid(func(m map[string]any) { step(0, m)["args"] = map[string]any{"url": "{{params.site}}"} }), `params declares no "site"`},
		{"later step", valid(func(m map[string]any) { step(0, m)["args"] = map[string]any{"url": "{{steps.read.url}}"} }), `no earlier step is named "read"`},
		{"bad ref root", valid(func(m map[string]any) { step(0, m)["args"] = map[string]any{"url": "{{env.HOME}}"} }), "a reference starts with params.NAME or steps.NAME"},
		{"stray braces", valid(func(m map[string]any) { step(0, m)["args"] = map[string]any{"url": "{{params.url"} }), "a {{ or }} that is not a reference"},
		{"unknown filter", valid(func(m map[string]any) { step(0, m)["args"] = map[string]any{"url": "x{{params.url | sh}}"} }), "unknown filter"},
		{"duplicate step", valid(func(m map[string]any) { step(1, m)["name"] = "open" }), "another step has this name"},
		{"params not object", valid(func(m map[string]any) { m["params"] = map[string]any{"type": "string"} }), `"type": "object"`},
		{"bad schema", valid(func(m map[string]any) {
			m["params"].(map[string]any)["properties"].(map[string]any)["count"] = map[string]any{"type": "integer", "default": "two"}
		}), "params:"},
		{"bad output", valid(func(m map[string]any) { m["output"] = "nope" }), `output: no step is named "nope"`},
		{"bad result ref", valid(func(m map[string]any) { m["result"] = "{{steps.nope.text}}" }), "result:"},
		{"timeout", valid(func(m map[string]any) { m["timeout_ms"] = 999999 }), "timeout_ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePlugin([]byte(c.file), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	if _, err := ParsePlugin([]byte(readPlugin), nil); err != nil {
		t.Fatalf("the valid plugin: %v", err)
	}
}

// A malformed file is reported with its path and reason and skipped; the
// others load, and chrome_status shows both.
func TestLoadPluginsSkipsMalformed(t *testing.T) {
	t.Parallel()
	ps := loadPlugins(t, map[string]string{
		"a_read.json":   readPlugin,
		"b_broken.json": `{"name": "broken", "description": "x", "read_only": true, "steps": [{"tool": "navigate", "args": {"url": 1}}]`,
		"c_dup.json":    strings.Replace(readPlugin, "Open a page", "Another", 1),
		"notes.txt":     "not a plugin, not read",
	})
	if len(ps.Loaded) != 1 || ps.Loaded[0].Name() != "read_page" {
		t.Fatalf("loaded %v", ps.Loaded)
	}
	if len(ps.Rejected) != 2 {
		t.Fatalf("rejected %v", ps.Rejected)
	}
	if r := ps.Rejected[0]; filepath.Base(r.File) != "b_broken.json" || !strings.Contains(r.Reason, "not a plugin") {
		t.Errorf("first rejection: %+v", r)
	}
	if r := ps.Rejected[1]; filepath.Base(r.File) != "c_dup.json" || !strings.Contains(r.Reason, `"read_page" is already taken by a_read.json`) {
		t.Errorf("second rejection: %+v", r)
	}

	h := newHarness(t, func(o *Options) { o.Plugins = ps })
	var st struct {
		Plugins struct {
			Loaded   []string      `json:"loaded"`
			Rejected []PluginError `json:"rejected"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(textOf(h.call("chrome_status", nil))), &st); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"read_page"}, st.Plugins.Loaded); diff != "" || len(st.Plugins.Rejected) != 2 {
		t.Errorf("chrome_status plugins: %+v", st.Plugins)
	}
	if _, err := LoadPlugins(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing directory loads")
	}
}

// gateLog records what the gate was asked, in order.
type gateLog struct {
	mu    sync.Mutex
	calls []string
	deny  string // a tool to deny
}

// Decide logs and decides calls; every other question is
// gatetest.AllowAll's.
func (g *gateLog) Decide(ctx context.Context, q gate.Question) gate.Decision {
	if q.Kind != gate.KindCall {
		return gatetest.AllowAll.Decide(ctx, q)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	entry := q.Name
	if q.Plugin != nil {
		entry = q.Plugin.Name + "/" + q.Plugin.Step + ":" + q.Name
	}
	g.calls = append(g.calls, entry)
	if q.Name == g.deny {
		return gatetest.Deny(deny("%s is not allowed here", q.Name))
	}
	return gatetest.AllowAll.Decide(ctx, q)
}

func (g *gateLog) log() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

// A plugin is listed like a tool, its steps run in order, each through the
// gate, and its result is built from typed references.
func TestPluginRuns(t *testing.T) {
	t.Parallel()
	gate := &gateLog{}
	h := newHarness(t, func(o *Options) {
		o.Gate = gate
		o.Plugins = loadPlugins(t, map[string]string{"read.json": readPlugin})
	})
	tools, err := h.client.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var def *sdk.Tool
	for _, tl := range tools.Tools {
		if tl.Name == "read_page" {
			def = tl
		}
	}
	if def == nil || def.Description != "Open a page and return its text." || def.Annotations.ReadOnlyHint {
		t.Fatalf("read_page in tools/list: %+v", def)
	}

	res := h.call("read_page", map[string]any{"url": "https://example.test/a", "selector": "#main"})
	if res.IsError {
		t.Fatal(textOf(res))
	}
	got := jsonOf(t, res)
	want := map[string]any{
		"text": "text of selector #main", "title": "Title of https://example.test/a", "count": 2.0,
		"where": "https://example.test/a#2",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if !fenced(textOf(res)) {
		t.Error("a result built from page text is not fenced as page content")
	}
	wantLog := []string{"read_page", "read_page/open:navigate", "read_page/read:get_text"}
	if diff := cmp.Diff(wantLog, gate.log()); diff != "" {
		t.Errorf("gate calls (-want +got):\n%s", diff)
	}
	f := h.fake()
	if diff := cmp.Diff([]string{"Navigate", "Text"}, f.Methods()); diff != "" {
		t.Errorf("executor calls (-want +got):\n%s", diff)
	}

	// An optional parameter left out drops the argument it fills: get_text
	// then reads the whole page.
	res = h.call("read_page", map[string]any{"url": "https://example.test/b"})
	if got := jsonOf(t, res)["text"]; got != "text of https://example.test/b" {
		t.Errorf("without selector: %v", got)
	}
}

// A step the gate denies stops the plugin with POLICY_DENIED naming the
// step; nothing after it runs.
func TestPluginStepDenied(t *testing.T) {
	t.Parallel()
	gate := &gateLog{deny: "get_text"}
	h := newHarness(t, func(o *Options) {
		o.Gate = gate
		o.Plugins = loadPlugins(t, map[string]string{"read.json": readPlugin})
	})
	res := h.call("read_page", map[string]any{"url": "https://example.test/a"})
	want := "POLICY_DENIED: plugin read_page stopped at step 2 (read, get_text): get_text is not allowed here\nNext: ask the operator to allow it"
	if got := textOf(res); !res.IsError || got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	for _, m := range h.fake().Methods() {
		if m == "Text" {
			t.Error("the denied step reached the executor")
		}
	}

	// The plugin's own call is gated by name before any step.
	gate2 := &gateLog{deny: "read_page"}
	h2 := newHarness(t, func(o *Options) {
		o.Gate = gate2
		o.Plugins = loadPlugins(t, map[string]string{"read.json": readPlugin})
	})
	if res := h2.call("read_page", map[string]any{"url": "https://example.test/a"}); !res.IsError || !strings.HasPrefix(textOf(res), "POLICY_DENIED: read_page is not allowed here") {
		t.Errorf("plugin denied by name: %s", textOf(res))
	}
	if diff := cmp.Diff([]string{"read_page"}, gate2.log()); diff != "" {
		t.Errorf("steps ran after the plugin was denied: %s", diff)
	}
}

// Plugin arguments are validated against the declared schema by the same
// dispatch as every tool.
func TestPluginArgsValidated(t *testing.T) {
	t.Parallel()
	gate := &gateLog{}
	h := newHarness(t, func(o *Options) {
		o.Gate = gate
		o.Plugins = loadPlugins(t, map[string]string{"read.json": readPlugin})
	})
	cases := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, `BAD_ARGS: missing required argument "url"`},
		{map[string]any{"url": 5}, "BAD_ARGS: url: type: 5 has type"},
		{map[string]any{"url": "https://example.test/", "count": 0}, "BAD_ARGS: count: minimum"},
		{map[string]any{"url": "https://example.test/", "selecter": "#a"}, `BAD_ARGS: unknown argument "selecter"`},
	}
	for _, c := range cases {
		res := h.call("read_page", c.args)
		if got := textOf(res); !res.IsError || !strings.HasPrefix(got, c.want) {
			t.Errorf("%v: got %q, want %q…", c.args, got, c.want)
		}
	}
	if n := len(gate.log()); n != 0 {
		t.Errorf("the gate was asked about invalid calls: %v", gate.log())
	}
	// A value that is valid for the plugin but not for the step it fills is
	// the step's BAD_ARGS, named.
	bad := strings.Replace(readPlugin, `"selector": {"type": "string"}`, `"selector": {"type": "integer"}`, 1)
	h2 := newHarness(t, func(o *Options) { o.Plugins = loadPlugins(t, map[string]string{"read.json": bad}) })
	res := h2.call("read_page", map[string]any{"url": "https://example.test/", "selector": 3})
	if got := textOf(res); !res.IsError || !strings.HasPrefix(got, "BAD_ARGS: plugin read_page stopped at step 2 (read, get_text): selector: type") {
		t.Errorf("step argument of the wrong type: %s", got)
	}
}

// Substitution is typed: values keep their JSON type, a parameter cannot
// inject other arguments, and absent optional values drop the argument.
func TestPluginSubstitution(t *testing.T) {
	t.Parallel()
	env := &pluginEnv{
		params: map[string]any{
			"n": 3.0, "b": true, "s": `x", "selector": "#evil`, "q": "a b&c=d",
			"list": []any{"one", "two"},
		},
		steps: map[string]any{"links": map[string]any{"items": []any{map[string]any{"url": "https://e.test/1"}}}},
	}
	in := map[string]any{
		"n": "{{params.n}}", "b": "{{ params.b }}", "s": "{{params.s}}",
		"mixed":   "n={{params.n}} b={{params.b}}",
		"url":     "https://e.test/search?q={{params.q | url}}",
		"list":    "{{params.list}}",
		"first":   "{{steps.links.items.0.url}}",
		"absent":  "{{params.missing}}",
		"nested":  []any{map[string]any{"value": "{{params.s}}"}},
		"literal": 7.0,
	}
	out, present, err := env.expand(in)
	if err != nil || !present {
		t.Fatal(err)
	}
	want := map[string]any{
		"n": 3.0, "b": true, "s": `x", "selector": "#evil`,
		"mixed": "n=3 b=true", "url": "https://e.test/search?q=a+b%26c%3Dd",
		"list": []any{"one", "two"}, "first": "https://e.test/1",
		"nested": []any{map[string]any{"value": `x", "selector": "#evil`}}, "literal": 7.0,
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []any{"x{{params.list}}", "x{{params.missing}}", []any{"{{params.missing}}"}} {
		if _, _, err := env.expand(bad); err == nil {
			t.Errorf("%v expanded without error", bad)
		}
	}
}

// The shipped examples load.
func TestPluginExamplesLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	written, err := WritePluginExamples(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) < 3 {
		t.Errorf("wrote %v", written)
	}
	ps, err := LoadPlugins(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps.Loaded {
		names = append(names, p.Name())
	}
	if diff := cmp.Diff([]string{"acme_signup", "post_status"}, names); diff != "" || len(ps.Rejected) > 0 {
		t.Errorf("examples: loaded %v, rejected %v", names, ps.Rejected)
	}
	if _, err := WritePluginExamples(dir); err == nil {
		t.Error("writing the examples again overwrote them")
	}
	if _, err := fs.Stat(PluginExamples(), "policy/post_status.json"); err != nil {
		t.Error(err)
	}
}

// With the real policy: a mutating plugin is hidden and denied in safe
// mode, and plugin_mutations lets that plugin, and only its steps, act.
func TestPluginPolicy(t *testing.T) {
	t.Parallel()
	click := `{"name": "press_buy", "description": "Press buy.", "read_only": false,
	  "steps": [{"tool": "navigate", "args": {"url": "https://shop.test/"}}, {"tool": "click", "args": {"selector": "#buy"}}]}`
	run := func(data map[string]any) (*harness, *sdk.CallToolResult) {
		g := newPolicyGate(t, data)
		h := newHarness(t, func(o *Options) {
			o.Gate = g
			o.Plugins = loadPlugins(t, map[string]string{"buy.json": click})
		})
		return h, h.call("press_buy", nil)
	}
	_, res := run(map[string]any{"allow_domains": []string{"shop.test"}})
	if got := textOf(res); !res.IsError || !strings.Contains(got, "POLICY_DENIED") {
		t.Errorf("safe mode: %s", got)
	}
	h, res := run(map[string]any{"allow_domains": []string{"shop.test"}, "plugin_mutations": []string{"press_buy"}})
	if res.IsError {
		t.Errorf("with plugin_mutations: %s", textOf(res))
	}
	if m := h.fake().Methods(); len(m) == 0 || m[len(m)-1] != "Click" {
		t.Errorf("executor calls: %v", m)
	}
	if res := h.call("click", map[string]any{"selector": "#buy"}); !res.IsError {
		t.Error("plugin_mutations allowed a direct click")
	}
	_, res = run(map[string]any{"allow_domains": []string{"other.test"}, "plugin_mutations": []string{"press_buy"}})
	if got := textOf(res); !res.IsError || !strings.HasPrefix(got, "POLICY_DENIED: plugin press_buy stopped at step 1 (navigate, navigate): navigation to shop.test is not allowed") {
		t.Errorf("a step off the allowlist: %s", got)
	}
}

func FuzzParsePlugin(f *testing.F) {
	f.Add([]byte(readPlugin))
	_ = fs.WalkDir(PluginExamples(), ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(PluginExamples(), path)
			f.Add(b)
		}
		return nil
	})
	f.Add([]byte(`{"name":"x","description":"d","read_only":true,"steps":[{"tool":"get_text","args":{"selector":"{{steps.x}}"}}]}`))
	tools := builtinTools()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePlugin(data, tools)
		if err != nil {
			return
		}
		if p.Name() == "" || len(p.Tools()) == 0 || p.tool.ReadOnly == nil {
			t.Fatalf("accepted an incomplete plugin: %+v", p.def)
		}
		env := &pluginEnv{params: map[string]any{}, steps: map[string]any{}}
		for _, st := range p.def.Steps {
			_, _, _ = env.expand(st.Args)
		}
	})
}

// BenchmarkPluginStep measures, in process on the in-memory browser with
// the default policy, a plugin step against the same call made directly
// through Server.Call: what running as a step (the step's list and call
// decisions, argument building and validation) costs over dispatch alone.
func BenchmarkPluginStep(b *testing.B) {
	const n = 8
	steps := make([]string, n)
	for i := range steps {
		steps[i] = fmt.Sprintf(`{"name": "r%d", "tool": "get_text", "args": {"selector": "#p"}}`, i)
	}
	plugin := fmt.Sprintf(`{"name": "read_n", "description": "d", "read_only": true, "steps": [%s]}`, strings.Join(steps, ","))
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.json"), []byte(plugin), 0o644); err != nil {
		b.Fatal(err)
	}
	ps, err := LoadPlugins(dir)
	if err != nil || len(ps.Loaded) != 1 {
		b.Fatal(err, ps)
	}
	eng, err := policy.New(b.Context(), policy.WithData(map[string]any{"allow_domains": []string{"a.test"}}), policy.WithTimeout(10*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	g := gate.New(eng, nil)
	h := newHarness(b, func(o *Options) { o.Gate, o.Plugins = g, ps })
	ctx := b.Context()
	if res, _ := h.server.Call(ctx, "", LocalPrincipal, "navigate", json.RawMessage(`{"url":"https://a.test/"}`)); res.IsError {
		b.Fatal(textOf(res))
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if res, _ := h.server.Call(ctx, "", LocalPrincipal, "get_text", json.RawMessage(`{"selector":"#p"}`)); res.IsError {
				b.Fatal(textOf(res))
			}
		}
	})
	b.Run("plugin_step", func(b *testing.B) {
		for b.Loop() {
			if res, _ := h.server.Call(ctx, "", LocalPrincipal, "read_n", nil); res.IsError {
				b.Fatal(textOf(res))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n/1000, "µs/step")
	})
}

// With result, the JSON is the template's; the output step's text follows
// only when output names it.
func TestPluginOutputAndResult(t *testing.T) {
	t.Parallel()
	withOutput := strings.Replace(readPlugin, `"result":`, `"output": "read", "result":`, 1)
	for name, c := range map[string]struct {
		file     string
		wantText bool
	}{"result only": {readPlugin, false}, "result and output": {withOutput, true}} {
		h := newHarness(t, func(o *Options) { o.Plugins = loadPlugins(t, map[string]string{"p.json": c.file}) })
		res := h.call("read_page", map[string]any{"url": "https://example.test/a", "selector": "#main"})
		head, text, _ := strings.Cut(unfenced(textOf(res)), "\n")
		if !strings.HasPrefix(head, `{"count":2,`) || (text == "text of selector #main") != c.wantText {
			t.Errorf("%s: head %s, text %q", name, head, text)
		}
	}
}

// The policy sees a plugin's parameter names, never their values.
func TestPluginArgsRedactedForThePolicy(t *testing.T) {
	t.Parallel()
	ps := loadPlugins(t, map[string]string{"read.json": readPlugin})
	h := newHarness(t, func(o *Options) { o.Plugins = ps })
	tool, _ := h.server.Tool("read_page")
	in, err := policyInput(policy.PhaseCall, tool, map[string]any{"url": "https://example.test/secret?token=abc", "selector": "#pw"}, LocalPrincipal)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"url": policy.Redacted, "selector": policy.Redacted}
	if diff := cmp.Diff(want, in.Args); diff != "" || in.Action != policy.ActionPlugin || in.Plugin.Name != "read_page" ||
		!slices.Equal(in.Plugin.Tools, []string{"navigate", "get_text"}) {
		t.Errorf("plugin input: %+v %s", in, diff)
	}
}
