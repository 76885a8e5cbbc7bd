package tracing_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit/otlptest"
	"github.com/chromegate/chromegate/mcp"
)

// What tracing adds to one call: a click over the fake browser with
// tracing off (no Tracer: nothing on the path) and on (every call
// sampled, exported by the real OTLP exporter to a receiver on
// loopback), interleaved in one run, each iteration a batch of calls of
// each; the medians per call and their difference are reported
// (make bench).
func BenchmarkTracingOverhead(b *testing.B) {
	r := otlptest.Start(b)
	on, tr := newServer(b, r, 1)
	off, _ := newServer(b, nil, 0)
	args := json.RawMessage(`{"selector":"#go","button":"left"}`)
	call := func(s *mcp.Server) {
		res, err := s.Call(b.Context(), "", mcp.LocalPrincipal, "click", args)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	const batch = 50
	for _, s := range []*mcp.Server{off, on} { // both browsers open
		call(s)
	}
	var offs, ons []float64
	batchOf := func(s *mcp.Server) float64 {
		start := time.Now()
		for range batch {
			call(s)
		}
		return float64(time.Since(start).Nanoseconds()) / batch
	}
	for b.Loop() {
		offs = append(offs, batchOf(off))
		ons = append(ons, batchOf(on))
	}
	b.StopTimer()
	_ = tr.ForceFlush(b.Context())
	mOff, mOn := median(offs), median(ons)
	b.ReportMetric(mOff, "off-ns/call")
	b.ReportMetric(mOn, "on-ns/call")
	b.ReportMetric(mOn-mOff, "overhead-ns/call")
	b.Logf("tracing per call, median of %d batches of %d: off %.1f µs, on %.1f µs, overhead %.1f µs (%d spans exported)",
		len(offs), batch, mOff/1e3, mOn/1e3, (mOn-mOff)/1e3, len(r.Spans()))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
