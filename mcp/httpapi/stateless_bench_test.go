package httpapi

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallByRevision is the cost of one tool call over HTTP at each
// protocol revision, on the fake backend (so it is the transport's and
// dispatch's cost, not a browser's): a stateful 2025-11-25 session, and
// stateless 2026-07-28 requests (each a session of its own on the server,
// with its version and capabilities in _meta). It reports the median.
//
//	go test -run '^$' -bench CallByRevision -benchtime 2000x ./mcp/httpapi/
func BenchmarkCallByRevision(b *testing.B) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		b.Run(version, func(b *testing.B) {
			e := newHTTPEnv(b, nil)
			k := e.key(NewKey{Name: "k"})
			cs, err := e.connectAt(version, k, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			args := &sdk.CallToolParams{Name: "get_text", Arguments: map[string]any{}}
			if _, err := cs.CallTool(context.Background(), args); err != nil {
				b.Fatal(err)
			}
			timeCalls(b, func() error {
				_, err := cs.CallTool(context.Background(), args)
				return err
			})
		})
	}
}

// timeCalls runs call b.N times and reports the median and p95 of one.
func timeCalls(b *testing.B, call func() error) {
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(took[len(took)*95/100].Microseconds()), "p95-µs")
}
