package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit/otlptest"
)

// BenchmarkTracingOnOff: what tracing costs a call through the binary
// with Chromium: get_text over MCP (2025-11-25) on two servers, one
// exporting every call's spans (--otlp-endpoint, all sampled) to a real
// OTLP receiver on loopback and one without, the calls interleaved in one
// run; the medians, p95s and the median's difference are reported.
func BenchmarkTracingOnOff(b *testing.B) {
	base := site(b)
	recv := otlptest.Start(b)
	servers := map[string]*httpServer{
		"off": startHTTP(b, b.TempDir(), permissive...),
		"on":  startHTTP(b, b.TempDir(), append([]string{"--otlp-endpoint", recv.URL}, permissive...)...),
	}
	sessions := map[string]*sdk.ClientSession{}
	for name, h := range servers {
		cs := h.connect("", nil)
		mustOK(b, "navigate", mcpCall(b, cs, "navigate", map[string]any{"url": base + "/"}))
		sessions[name] = cs
	}
	took := map[string][]time.Duration{}
	args := &sdk.CallToolParams{Name: "get_text", Arguments: map[string]any{}}
	order := []string{"off", "on"}
	for b.Loop() {
		for _, name := range order {
			start := time.Now()
			res, err := sessions[name].CallTool(context.Background(), args)
			if err != nil || res.IsError {
				b.Fatalf("get_text (%s): %v %v", name, err, res)
			}
			took[name] = append(took[name], time.Since(start))
		}
		slices.Reverse(order) // neither always goes first
	}
	b.StopTimer()
	med := map[string]time.Duration{}
	for name, d := range took {
		slices.Sort(d)
		med[name] = d[len(d)/2]
		b.ReportMetric(float64(d[len(d)/2].Microseconds()), name+"-median-µs")
		b.ReportMetric(float64(d[len(d)*95/100].Microseconds()), name+"-p95-µs")
	}
	b.Logf("get_text with Chromium, median of %d calls each: off %d µs, on %d µs, tracing adds %+d µs (%d spans received by then)",
		len(took["on"]), med["off"].Microseconds(), med["on"].Microseconds(), (med["on"] - med["off"]).Microseconds(), len(recv.Spans()))
}
