package e2e

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkPageToolCall measures a page-tool call through MCP (stdio, the
// policy, the backend, the page) against the same tool called by the
// page's own JavaScript, per backend (CDP, the extension) and surface:
// Chromium's WebMCP through the CDP domain, a polyfill in the page, and
// @mcp-b/global's MCP server.
func BenchmarkPageToolCall(b *testing.B) {
	needBrowser(b)
	needMCPB(b)
	port := webmcpSite(b, func(p string) string { return "http://localhost:" + p + "/wm/plain" })
	base := "http://127.0.0.1:" + port
	host := "127_0_0_1_" + port
	for _, backend := range []string{"cdp", "ext"} {
		b.Run(backend, func(b *testing.B) { benchPageTools(b, backend, base, host) })
	}
}

func benchPageTools(b *testing.B, backend, base, host string) {
	flags := []string{"--allow-domain=127.0.0.1", "--enable-mutations", "--unsafe-enable-eval"}
	if backend == "ext" {
		flags = append(flags, "--with-extension")
	} else {
		flags = append(flags, "--no-extension")
	}
	s := startServer(b, flags...)
	// In-page median of 30 calls, in ms.
	const direct = `(async () => {
  const d = [];
  for (let i = 0; i < 30; i++) { const t0 = performance.now(); await CALL; d.push(performance.now() - t0); }
  d.sort((a, b) => a - b);
  return d[15];
})()`
	surfaces := []struct {
		name, page, tool string
		args             map[string]any
		call             string // the page's own call of the tool
	}{
		{"cdp-webmcp", "/wm/native", "page_" + host + "_add", map[string]any{"a": 2, "b": 3},
			`document.modelContext.executeTool(window.__t || (window.__t = (await document.modelContext.getTools()).find((t) => t.name === "add")), {a: 2, b: 3})`},
		{"inpage", "/wm/poly", "page_" + host + "_echo", map[string]any{"text": "hi"},
			`navigator.modelContext.callTool("echo", {text: "hi"})`},
		{"mcpb", "/wm/mcpb", "page_tool_call", map[string]any{"name": "greet", "surface": "mcpb", "arguments": map[string]any{"who": "bob"}},
			`document.modelContext.executeTool(window.__t || (window.__t = (await document.modelContext.getTools()).find((t) => t.name === "greet")), {who: "bob"})`},
	}
	for _, sf := range surfaces {
		b.Run(sf.name, func(b *testing.B) {
			s.call("navigate", map[string]any{"url": base + sf.page})
			// Wait until the tool is reachable, then warm up.
			if sf.tool != "page_tool_call" {
				s.waitLive("showed "+sf.tool, func(n []string) bool { return slices.Contains(n, sf.tool) })
			}
			deadline := time.Now().Add(20 * time.Second)
			for s.try(sf.tool, sf.args).IsError {
				if time.Now().After(deadline) {
					b.Fatalf("%s never answered: %s", sf.tool, resultText(s.try(sf.tool, sf.args)))
				}
				time.Sleep(100 * time.Millisecond)
			}
			var viaMCP []time.Duration
			for b.Loop() {
				t0 := time.Now()
				s.call(sf.tool, sf.args)
				viaMCP = append(viaMCP, time.Since(t0))
			}
			page, err := strconv.ParseFloat(s.evalString(replaceCall(direct, sf.call)), 64)
			if err != nil {
				b.Fatal(err)
			}
			m := float64(median(viaMCP).Microseconds()) / 1000
			b.ReportMetric(m, "mcp-ms")
			b.ReportMetric(page, "page-js-ms")
			b.ReportMetric(m-page, "overhead-ms")
		})
	}
}

func replaceCall(tmpl, call string) string {
	const mark = "CALL"
	for i := 0; i+len(mark) <= len(tmpl); i++ {
		if tmpl[i:i+len(mark)] == mark {
			return tmpl[:i] + call + tmpl[i+len(mark):]
		}
	}
	return tmpl
}
