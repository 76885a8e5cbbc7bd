package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallByRevisionBrowser is one get_text call on a real page over
// HTTP, at 2025-11-25 (a stateful session) and at 2026-07-28 (stateless:
// every request a session of its own on the server), against one server;
// it reports the median and p95 of each, and the difference.
//
//	go test -run '^$' -bench CallByRevisionBrowser -benchtime 300x ./e2e/
func BenchmarkCallByRevisionBrowser(b *testing.B) {
	site := cookieSite(b)
	dir := b.TempDir()
	key := createKey(b, dir, "bench")
	h := startHTTP(b, dir, "--allow-domain=127.0.0.1")
	medians := map[string]time.Duration{}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(version, func(b *testing.B) {
			h.t = b
			cs := h.connectAt(version, key, nil, nil)
			mustOK(b, "navigate", mcpCall(b, cs, "navigate", map[string]any{"url": site + "/echo"}))
			args := &sdk.CallToolParams{Name: "get_text", Arguments: map[string]any{}}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				res, err := cs.CallTool(context.Background(), args)
				if err != nil || res.IsError {
					b.Fatalf("get_text: %v %v", err, res)
				}
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(took)
			medians[version] = took[len(took)/2]
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-µs")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds()), "p95-µs")
		})
	}
	if s, n := medians["2025-11-25"], medians["2026-07-28"]; s > 0 && n > 0 {
		b.Logf("stateless − stateful, median: %+d µs (%.2f×)", (n - s).Microseconds(), float64(n)/float64(s))
	}
}
