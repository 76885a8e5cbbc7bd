package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
)

// mcpbGlobal is the real @mcp-b/global, installed from npm by `make
// webmcp-deps` (pinned in testdata/webmcp/package-lock.json).
var mcpbGlobal = filepath.Join("testdata", "webmcp", "node_modules", "@mcp-b", "global", "dist", "index.iife.js")

// needMCPB fails in CI, and skips elsewhere, when @mcp-b/global is missing.
func needMCPB(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(mcpbGlobal); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing (CI installs it with `make deps`)", mcpbGlobal)
	}
	t.Skipf("%s is missing: run `make webmcp-deps`", mcpbGlobal)
}

// Pages that register WebMCP tools.
const (
	// Chromium's own document.modelContext: a plain value, MCP content, a
	// tool that throws, one that never answers (and records the abort),
	// one that navigates, one registered late, one unregistered through its
	// AbortSignal.
	wmNativePage = `<!doctype html><title>Native tools</title><a id="away" href="%s" target="_blank">away</a><script>
const mc = document.modelContext;
mc.registerTool({name: "add", description: "Adds a and b.", annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {a: {type: "number"}, b: {type: "number"}}, required: ["a", "b"]},
  execute: async (x) => x.a + x.b});
mc.registerTool({name: "hello", description: "Greets.", annotations: {readOnlyHint: true},
  execute: async () => ({content: [{type: "text", text: "hello there"}]})});
mc.registerTool({name: "boom", description: "Throws.", execute: async () => { throw new Error("kaboom"); }});
mc.registerTool({name: "hang", description: "Never answers.", execute: (x, client) => new Promise(() => {
  if (client && client.signal) client.signal.addEventListener("abort", () => { window.aborted = true; });
})});
mc.registerTool({name: "leave", description: "Navigates away.", execute: () => new Promise(() => { setTimeout(() => { location.href = "/wm/plain"; }, 50); })});
const ac = new AbortController();
window.unregister = () => ac.abort();
mc.registerTool({name: "temp", description: "Goes away on demand.", execute: () => "temp"}, {signal: ac.signal});
setTimeout(() => mc.registerTool({name: "late", description: "Registered after a delay.", execute: () => "late"}), 1500);
</script>`

	// The real @mcp-b/global: a tool, a resource and a prompt on the MCP
	// server it runs in the page.
	wmMCPBPage = `<!doctype html><title>MCP-B tools</title><script src="/wm/global.js"></script><script>
const mc = document.modelContext;
mc.registerTool({name: "greet", description: "Greets someone.", annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {who: {type: "string"}}, required: ["who"]},
  execute: async (a) => ({content: [{type: "text", text: "hi " + a.who}]})});
mc.registerResource({name: "notes", uri: "notes://all", description: "The notes.", mimeType: "text/plain",
  read: async (u) => ({contents: [{uri: "notes://all", text: "note one"}]})});
mc.registerPrompt({name: "summarize", description: "Summarize the page.", get: async () => ({messages: [{role: "user", content: {type: "text", text: "Summarize this page."}}]})});
</script>`

	// A polyfill of the older shapes: navigator.modelContext with
	// listTools/callTool, navigator.modelContextTesting with JSON strings.
	wmPolyPage = `<!doctype html><title>Polyfill tools</title><script>
Object.defineProperty(navigator, "modelContext", {value: {
  listTools: () => [{name: "echo", description: "Echoes text.", annotations: {readOnlyHint: true},
    inputSchema: {type: "object", properties: {text: {type: "string"}}, required: ["text"]}}],
  callTool: async (name, input) => ({content: [{type: "text", text: "echo:" + input.text}]}),
}});
Object.defineProperty(navigator, "modelContextTesting", {value: {
  listTools: () => [{name: "shout", description: "Upper-cases text.", annotations: {readOnlyHint: true},
    inputSchema: JSON.stringify({type: "object", properties: {text: {type: "string"}}})}],
  executeTool: async (name, json) => JSON.stringify(JSON.parse(json).text.toUpperCase()),
}});
</script>`
)

// webmcpSite serves the WebMCP pages; other is where the native page's link
// leads (a host outside the policy).
func webmcpSite(t testing.TB, other func(port string) string) (port string) {
	mux := http.NewServeMux()
	var p string
	page := func(path string, body func() string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body())
		})
	}
	page("/wm/native", func() string { return fmt.Sprintf(wmNativePage, other(p)) })
	page("/wm/mcpb", func() string { return wmMCPBPage })
	page("/wm/poly", func() string { return wmPolyPage })
	page("/wm/plain", func() string { return `<!doctype html><title>Plain</title><p>no tools</p>` })
	mux.HandleFunc("/wm/global.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		http.ServeFile(w, r, mcpbGlobal)
	})
	_, p, _ = strings.Cut(strings.TrimPrefix(testkit.Serve(t, mux), "http://"), ":")
	return p
}

// liveTools returns the names of the live page tools in tools/list.
func (s *server) liveTools() []string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.session.ListTools(ctx, nil)
	if err != nil {
		s.t.Fatalf("tools/list: %v", err)
	}
	var out []string
	for _, t := range res.Tools {
		if strings.HasPrefix(t.Name, "page_") && t.Name != "page_tools_list" && t.Name != "page_tool_call" {
			out = append(out, t.Name)
		}
	}
	slices.Sort(out)
	return out
}

// waitLive polls tools/list until cond holds for the live page tools.
func (s *server) waitLive(what string, cond func(names []string) bool) []string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		names := s.liveTools()
		if cond(names) {
			return names
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("live tools never %s: %v", what, names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func hasAll(names []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(names, w) {
			return false
		}
	}
	return true
}

type pageToolList struct {
	Tools []struct {
		TabID       string          `json:"tab_id"`
		Name        string          `json:"name"`
		Live        string          `json:"live_tool"`
		Origin      string          `json:"origin"`
		Surface     string          `json:"surface"`
		Annotations []string        `json:"annotations"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

func (s *server) pageTools(args map[string]any) pageToolList {
	s.t.Helper()
	var l pageToolList
	if err := json.Unmarshal([]byte(jsonPart(resultText(s.call("page_tools_list", args)))), &l); err != nil {
		s.t.Fatalf("page_tools_list: %v", err)
	}
	return l
}

// pageText is the page's part of a page-tool result: the fenced block
// holds a JSON header line, then what the tool returned.
func pageText(t testing.TB, res *sdk.CallToolResult) string {
	t.Helper()
	_, body := pageContent(t, resultText(res))
	return body
}

// TestPageTools drives page tools on the backend the suite runs on
// (CHROMEGATE_E2E_BACKEND, cdp by default).
func TestPageTools(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	testPageTools(t, e2eBackend)
}

// TestPageToolsThroughExtension drives the same suite through chromegate's
// extension loaded into the launched Chromium (chrome.debugger).
func TestPageToolsThroughExtension(t *testing.T) {
	testkit.Backends(t, testkit.Ext)
	testPageTools(t, "ext", "--with-extension")
}

func testPageTools(t *testing.T, backend string, flags ...string) {
	needMCPB(t)
	// WebMCP exists only in secure contexts: the allowed pages are on
	// 127.0.0.1, the denied ones on localhost (loopback, not allowlisted).
	port := webmcpSite(t, func(p string) string { return "http://localhost:" + p + "/wm/native" })
	base := "http://127.0.0.1:" + port
	host := "127_0_0_1_" + port
	changed := make(chan struct{}, 1000)
	s := startServerWith(t, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
		// The denied page must load for its tools to be found, so the egress
		// boundary (which would keep it from loading at all) is off here: the
		// page-tool gate is tested on its own, as the last line of defence.
	}, append([]string{"--allow-domain=127.0.0.1", "--enable-mutations", "--unsafe-enable-eval", "--unsafe-no-egress-boundary"}, flags...)...)

	// The go-sdk client speaks 2026-07-28 over stdio too: list_changed
	// reaches it on its subscriptions/listen stream.
	if v := s.session.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated %s over stdio, want 2026-07-28", v)
	}
	s.call("navigate", map[string]any{"url": base + "/wm/native"})
	native := []string{"page_" + host + "_add", "page_" + host + "_boom", "page_" + host + "_hang", "page_" + host + "_hello", "page_" + host + "_leave", "page_" + host + "_temp"}
	s.waitLive("showed the native tools", func(n []string) bool { return hasAll(n, native...) })
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed arrived")
	}

	t.Run("calls", func(t *testing.T) {
		// On the backend asked for.
		for _, tl := range s.pageTools(nil).Tools {
			if !strings.HasPrefix(tl.TabID, backend+":") || tl.Surface != "cdp-webmcp" {
				t.Errorf("%s: tab %s, surface %s; want the %s backend and cdp-webmcp", tl.Name, tl.TabID, tl.Surface, backend)
			}
		}
		res := s.call("page_"+host+"_add", map[string]any{"a": 2, "b": 3})
		if got := pageText(t, res); got != "5" {
			t.Errorf("add: %q", got)
		}
		if got := pageText(t, s.call("page_"+host+"_hello", nil)); got != "hello there" {
			t.Errorf("hello: %q", got)
		}
		res = s.try("page_"+host+"_boom", nil)
		if !res.IsError || !strings.Contains(resultText(res), "kaboom") {
			t.Errorf("boom: isError=%v %s", res.IsError, resultText(res))
		}
		// Arguments are checked against the page's schema first.
		s.fail("BAD_ARGS", "page_"+host+"_add", map[string]any{"a": "two", "b": 3})
		s.fail("BAD_ARGS", "page_tool_call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1}})
		res = s.call("page_tool_call", map[string]any{"name": "add", "arguments": map[string]any{"a": 40, "b": 2}})
		if got := pageText(t, res); got != "42" {
			t.Errorf("page_tool_call add: %q", got)
		}
	})

	t.Run("hung tool is cancelled", func(t *testing.T) {
		txt := s.fail("TIMEOUT", "page_tool_call", map[string]any{"name": "hang", "timeout_ms": 1000})
		if !strings.Contains(txt, "cancelled in the page") {
			t.Errorf("hang: %s", txt)
		}
		// The server stays responsive, and the page saw the cancellation.
		deadline := time.Now().Add(10 * time.Second)
		for s.evalString("window.aborted === true") != "true" {
			if time.Now().After(deadline) {
				t.Fatal("the page tool's AbortSignal never fired")
			}
			time.Sleep(50 * time.Millisecond)
		}
		s.call("tabs_list", nil)
	})

	t.Run("registered later, unregistered by its signal", func(t *testing.T) {
		s.waitLive("showed the late tool", func(n []string) bool { return slices.Contains(n, "page_"+host+"_late") })
		if got := pageText(t, s.call("page_"+host+"_late", nil)); got != `"late"` {
			t.Errorf("late: %q", got)
		}
		s.eval("window.unregister()")
		s.waitLive("dropped temp", func(n []string) bool { return !slices.Contains(n, "page_"+host+"_temp") })
		s.fail("BAD_ARGS", "page_tool_call", map[string]any{"name": "temp"})
	})

	t.Run("names are stable", func(t *testing.T) {
		before := s.liveTools()
		s.call("reload", nil)
		s.waitLive("came back after a reload", func(n []string) bool { return hasAll(n, native...) })
		after := s.waitLive("came back after a reload", func(n []string) bool { return hasAll(n, append(native, "page_"+host+"_late")...) })
		if !hasAll(after, before...) {
			t.Errorf("names before a reload %v, after %v", before, after)
		}
	})

	t.Run("a denied origin's tools", func(t *testing.T) {
		// A link opens localhost (outside the policy) in a new tab; its
		// page registers the same tools.
		s.call("click", map[string]any{"selector": "#away"})
		// The tab is listed by id only: its page is outside the policy.
		otherTab := s.waitTabHidden()
		// Its tools are found (the live tool exists) but hidden and
		// refused: calling it by name is a denial, not an unknown tool.
		hidden := "page_localhost_" + port + "_add"
		deadline := time.Now().Add(20 * time.Second)
		for {
			// Listing every tab also makes the extension backend follow the
			// new tab (it follows the tabs it drives).
			s.pageTools(nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			res, err := s.session.CallTool(ctx, &sdk.CallToolParams{Name: hidden, Arguments: map[string]any{"a": 1, "b": 2}})
			cancel()
			if err == nil {
				if !res.IsError || !strings.Contains(resultText(res), "POLICY_DENIED") {
					t.Fatalf("%s: %s", hidden, resultText(res))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the denied page's tools were never found: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		for _, n := range s.liveTools() {
			if strings.Contains(n, "localhost") {
				t.Errorf("a tool of a denied origin is listed: %s", n)
			}
		}
		for _, tl := range s.pageTools(nil).Tools {
			if strings.Contains(tl.Origin, "localhost") {
				t.Errorf("page_tools_list shows a denied origin's tool: %+v", tl)
			}
		}
		s.fail("POLICY_DENIED", "page_tool_call", map[string]any{"name": "add", "tab_id": otherTab, "arguments": map[string]any{"a": 1, "b": 2}})
		s.fail("POLICY_DENIED", "page_tools_list", map[string]any{"tab_id": otherTab})
		s.call("tab_close", map[string]any{"tab_id": otherTab})
	})

	t.Run("navigation mid-call", func(t *testing.T) {
		txt := s.fail("DETACHED", "page_tool_call", map[string]any{"name": "leave"})
		if !strings.Contains(txt, "interrupted by navigation") {
			t.Errorf("leave: %s", txt)
		}
		s.waitLive("dropped the old page's tools", func(n []string) bool { return !slices.Contains(n, "page_"+host+"_add") })
	})

	t.Run("polyfill", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": base + "/wm/poly"})
		s.waitLive("showed the polyfill's tools", func(n []string) bool { return hasAll(n, "page_"+host+"_echo", "page_"+host+"_shout") })
		l := s.pageTools(nil)
		for _, tl := range l.Tools {
			if tl.Surface != "inpage" {
				t.Errorf("%s: surface %s", tl.Name, tl.Surface)
			}
		}
		if got := pageText(t, s.call("page_"+host+"_echo", map[string]any{"text": "hi"})); got != "echo:hi" {
			t.Errorf("echo: %q", got)
		}
		if got := pageText(t, s.call("page_"+host+"_shout", map[string]any{"text": "hi"})); got != `"HI"` {
			t.Errorf("shout: %q", got)
		}
	})

	t.Run("mcp-b", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": base + "/wm/mcpb"})
		s.waitLive("showed the MCP-B tool", func(n []string) bool { return slices.Contains(n, "page_"+host+"_greet") })
		if got := pageText(t, s.call("page_"+host+"_greet", map[string]any{"who": "bob"})); got != "hi bob" {
			t.Errorf("greet: %q", got)
		}
		// The same tool over @mcp-b/global's own MCP server.
		deadline := time.Now().Add(10 * time.Second)
		for {
			res := s.try("page_tool_call", map[string]any{"name": "greet", "surface": "mcpb", "arguments": map[string]any{"who": "ann"}})
			if !res.IsError {
				if got := pageText(t, res); got != "hi ann" {
					t.Errorf("greet over mcpb: %q", got)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("greet over mcpb: %s", resultText(res))
			}
			time.Sleep(100 * time.Millisecond)
		}

		// Its resource and prompt, bridged, read through the policy, fenced.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var uri string
		for uri == "" {
			res, err := s.session.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Resources {
				if strings.HasSuffix(r.URI, "/notes:%2F%2Fall") {
					uri = r.URI
				}
			}
			if uri == "" && ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond)
			}
		}
		rr, err := s.session.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil || len(rr.Contents) != 1 {
			t.Fatalf("resources/read %s: %v %+v", uri, err, rr)
		}
		if content, _, ok := mcp.Unfence(rr.Contents[0].Text); !ok || content != "note one" {
			t.Errorf("resource text: %q", rr.Contents[0].Text)
		}
		prompts, err := s.session.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var prompt string
		for _, p := range prompts.Prompts {
			if strings.HasSuffix(p.Name, "_summarize") {
				prompt = p.Name
			}
		}
		if prompt != "prompt_"+host+"_summarize" {
			t.Fatalf("prompts: %+v", prompts.Prompts)
		}
		gp, err := s.session.GetPrompt(ctx, &sdk.GetPromptParams{Name: prompt})
		if err != nil || len(gp.Messages) != 1 {
			t.Fatalf("prompts/get: %v %+v", err, gp)
		}
		if text, _, ok := mcp.Unfence(gp.Messages[0].Content.(*sdk.TextContent).Text); !ok || text != "Summarize this page." {
			t.Errorf("prompt text: %v", gp.Messages[0].Content)
		}
	})

	t.Run("closed tab", func(t *testing.T) {
		s.call("tab_close", nil)
		s.waitLive("dropped the closed tab's tools", func(n []string) bool { return len(n) == 0 })
		deadline := time.Now().Add(20 * time.Second)
		for {
			res, err := s.session.ListResources(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Resources) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the closed tab's resources are still listed: %+v", res.Resources)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}
