package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// nativeToolsPage registers tools through Chromium's own WebMCP.
const nativeToolsPage = `<!doctype html><title>Native tools</title><script>
const mc = document.modelContext;
mc.registerTool({name: "add", description: "Adds a and b.", annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {a: {type: "number"}, b: {type: "number"}}, required: ["a", "b"]},
  execute: async (x) => x.a + x.b});
mc.registerTool({name: "hello", description: "MCP-shaped.", execute: async () => ({content: [{type: "text", text: "hello there"}]})});
mc.registerTool({name: "boom", description: "Throws.", execute: async () => { throw new Error("kaboom"); }});
mc.registerTool({name: "hang", description: "Never answers.", execute: (x, client) => new Promise(() => {
  if (client && client.signal) client.signal.addEventListener("abort", () => { window.aborted = true; });
})});
mc.registerTool({name: "leave", description: "Navigates away.", execute: () => new Promise(() => { setTimeout(() => { location.href = "/wm/other"; }, 50); })});
const ac = new AbortController();
window.unregister = () => ac.abort();
mc.registerTool({name: "temp", description: "Unregistered on demand.", execute: () => "temp"}, {signal: ac.signal});
window.later = () => mc.registerTool({name: "late", description: "Registered later.", execute: () => "late"});
</script>`

// polyfillToolsPage keeps its tools in page objects of the older shapes:
// navigator.modelContext with listTools/callTool, and
// navigator.modelContextTesting with a JSON-string schema and input.
const polyfillToolsPage = `<!doctype html><title>Polyfill tools</title><script>
const tools = {
  echo: {name: "echo", description: "Echoes text.", inputSchema: {type: "object", properties: {text: {type: "string"}}},
         annotations: {readOnlyHint: true}, run: (x) => "echo:" + x.text},
};
Object.defineProperty(navigator, "modelContext", {value: {
  listTools: () => Object.values(tools).map(({run, ...t}) => t),
  callTool: async (name, input) => ({content: [{type: "text", text: tools[name].run(input)}]}),
}});
Object.defineProperty(navigator, "modelContextTesting", {value: {
  listTools: () => [{name: "shout", description: "Upper-cases.", inputSchema: JSON.stringify({type: "object", properties: {text: {type: "string"}}})}],
  executeTool: async (name, json) => JSON.stringify(JSON.parse(json).text.toUpperCase()),
}});
</script>`

func webmcpSite(t *testing.T) string {
	mux := http.NewServeMux()
	serve := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		})
	}
	serve("/wm/native", nativeToolsPage)
	serve("/wm/poly", polyfillToolsPage)
	serve("/wm/other", `<!doctype html><title>Other</title><p>no tools</p>`)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL
}

func toolNames(ts []executor.PageTool) string {
	var n []string
	for _, t := range ts {
		n = append(n, t.Name+"@"+string(t.Surface))
	}
	return strings.Join(n, " ")
}

func callTool(t *testing.T, s *Session, tab, name, input string, d time.Duration) (executor.PageToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.CallPageTool(ctx, executor.PageToolCallParams{TabID: tab, Name: name, Input: json.RawMessage(input)})
}

func TestPageToolsNative(t *testing.T) {
	s := shared(t)
	base := webmcpSite(t)
	tb, err := s.NewTab(ctxFor(t, 20*time.Second), executor.NewTabParams{URL: base + "/wm/native"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.CloseTab(context.Background(), tb.ID) })

	tools, err := s.PageTools(ctxFor(t, 10*time.Second), tb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toolNames(tools), "add@cdp-webmcp boom@cdp-webmcp hang@cdp-webmcp hello@cdp-webmcp leave@cdp-webmcp temp@cdp-webmcp"; got != want {
		t.Fatalf("tools: got %s, want %s", got, want)
	}
	add := tools[0]
	if !add.Annotations.ReadOnly || add.Origin != base || add.TabID != tb.ID || !strings.Contains(string(add.InputSchema), `"required":["a","b"]`) {
		t.Errorf("add: %+v", add)
	}

	r, err := callTool(t, s, tb.ID, "add", `{"a":2,"b":3}`, 10*time.Second)
	if err != nil || r.IsError || string(r.Output) != "5" || r.Surface != executor.SurfaceWebMCP {
		t.Errorf("add: %+v %v", r, err)
	}
	r, err = callTool(t, s, tb.ID, "hello", ``, 10*time.Second)
	if err != nil || r.IsError || !strings.Contains(string(r.Output), "hello there") {
		t.Errorf("hello: %+v %v", r, err)
	}
	r, err = callTool(t, s, tb.ID, "boom", `{}`, 10*time.Second)
	if err != nil || !r.IsError || !strings.Contains(r.Error, "kaboom") {
		t.Errorf("boom: %+v %v", r, err)
	}
	_, err = callTool(t, s, tb.ID, "hang", `{}`, 700*time.Millisecond)
	wantCode(t, err, executor.CodeTimeout)
	waitEval(t, s, tb.ID, "window.aborted === true")
	r, err = callTool(t, s, tb.ID, "add", `{"a":1,"b":1}`, 10*time.Second)
	if err != nil || string(r.Output) != "2" {
		t.Errorf("add after the hung call: %+v %v", r, err)
	}
	_, err = callTool(t, s, tb.ID, "nope", `{}`, 10*time.Second)
	wantCode(t, err, executor.CodeBadArgs)

	_, err = callTool(t, s, tb.ID, "leave", `{}`, 10*time.Second)
	if e := wantCode(t, err, executor.CodeDetached); e != nil && !strings.Contains(e.Message, "interrupted by navigation") {
		t.Errorf("leave: %v", e)
	}
	tools, err = s.PageTools(ctxFor(t, 10*time.Second), tb.ID)
	if err != nil || len(tools) != 0 {
		t.Errorf("tools after the navigation: %s %v", toolNames(tools), err)
	}
}

func TestPageToolsWatch(t *testing.T) {
	s := shared(t)
	base := webmcpSite(t)
	events := make(chan executor.PageToolsEvent, 100)
	stop := s.WatchPageTools(func(ev executor.PageToolsEvent) { events <- ev })
	defer stop()
	tb, err := s.NewTab(ctxFor(t, 20*time.Second), executor.NewTabParams{URL: base + "/wm/native"})
	if err != nil {
		t.Fatal(err)
	}
	next := func(what string, ok func(executor.PageToolsEvent) bool) {
		t.Helper()
		deadline := time.After(15 * time.Second)
		for {
			select {
			case ev := <-events:
				if ev.TabID == tb.ID && ok(ev) {
					return
				}
			case <-deadline:
				t.Fatalf("no event: %s", what)
			}
		}
	}
	has := func(list []executor.PageTool, name string) bool {
		for _, x := range list {
			if x.Name == name {
				return true
			}
		}
		return false
	}
	next("add registered", func(ev executor.PageToolsEvent) bool { return has(ev.Added, "add") })
	evalJSON(t, s, tb.ID, "window.later(), 1")
	next("late registered", func(ev executor.PageToolsEvent) bool { return has(ev.Added, "late") })
	evalJSON(t, s, tb.ID, "window.unregister(), 1")
	next("temp unregistered", func(ev executor.PageToolsEvent) bool { return has(ev.Removed, "temp") })
	if _, err := s.Navigate(ctxFor(t, 20*time.Second), executor.NavigateParams{TabID: tb.ID, URL: base + "/wm/other"}); err != nil {
		t.Fatal(err)
	}
	next("tools gone with the navigation", func(ev executor.PageToolsEvent) bool { return has(ev.Removed, "add") })
	if _, err := s.Navigate(ctxFor(t, 20*time.Second), executor.NavigateParams{TabID: tb.ID, URL: base + "/wm/poly"}); err != nil {
		t.Fatal(err)
	}
	next("polyfill tools", func(ev executor.PageToolsEvent) bool { return has(ev.Added, "echo") && has(ev.Added, "shout") })
	if err := s.CloseTab(ctxFor(t, 10*time.Second), tb.ID); err != nil {
		t.Fatal(err)
	}
	next("tab closed", func(ev executor.PageToolsEvent) bool { return ev.Closed && has(ev.Removed, "echo") })
}

func TestPageToolsPolyfill(t *testing.T) {
	s := shared(t)
	base := webmcpSite(t)
	tb, err := s.NewTab(ctxFor(t, 20*time.Second), executor.NewTabParams{URL: base + "/wm/poly"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.CloseTab(context.Background(), tb.ID) })
	tools, err := s.PageTools(ctxFor(t, 10*time.Second), tb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toolNames(tools), "echo@inpage shout@inpage"; got != want {
		t.Fatalf("tools: got %s, want %s", got, want)
	}
	if !strings.Contains(string(tools[1].InputSchema), `"text"`) {
		t.Errorf("shout's schema (a JSON string in the page): %s", tools[1].InputSchema)
	}
	r, err := callTool(t, s, tb.ID, "echo", `{"text":"hi"}`, 10*time.Second)
	if err != nil || r.IsError || !strings.Contains(string(r.Output), "echo:hi") {
		t.Errorf("echo: %+v %v", r, err)
	}
	r, err = callTool(t, s, tb.ID, "shout", `"{\"text\":\"hi\"}"`, 10*time.Second)
	if err != nil || r.IsError || string(r.Output) != `"HI"` {
		t.Errorf("shout: %+v %v", r, err)
	}
}

// waitEval polls expr in a tab until it is true.
func waitEval(t *testing.T, s *Session, tab, expr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for evalJSON(t, s, tab, expr) != "true" {
		if time.Now().After(deadline) {
			t.Fatalf("%s never became true", expr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
