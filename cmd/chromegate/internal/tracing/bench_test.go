package tracing_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/chromegate/chromegate/internal/testkit/otlptest"
	"github.com/chromegate/chromegate/mcp"
)

// What tracing adds to one call: a click over the fake browser with
// tracing off (no Tracer: nothing on the path), on with its spans
// dropped by the exporter (what making the spans costs), and on with
// every call sampled and exported by the real OTLP exporter to a
// receiver in this process (which decodes them on the same two cores);
// interleaved in one run, each iteration a batch of calls of each. The
// medians per call and the differences are reported (make bench).
func BenchmarkTracingOverhead(b *testing.B) {
	r := otlptest.Start(b)
	off, _ := newServer(b, nil, 0)
	made, _ := newServerExporting(b, tracetest.NewNoopExporter())
	on, tr := newServer(b, r, 1)
	args := json.RawMessage(`{"selector":"#go","button":"left"}`)
	call := func(s *mcp.Server) {
		res, err := s.Call(b.Context(), "", mcp.LocalPrincipal, "click", args)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	const batch = 50
	servers := []*mcp.Server{off, made, on}
	for _, s := range servers { // every browser open
		call(s)
	}
	took := make([][]float64, len(servers))
	for b.Loop() {
		for i, s := range servers {
			start := time.Now()
			for range batch {
				call(s)
			}
			took[i] = append(took[i], float64(time.Since(start).Nanoseconds())/batch)
		}
	}
	b.StopTimer()
	_ = tr.ForceFlush(b.Context())
	mOff, mMade, mOn := median(took[0]), median(took[1]), median(took[2])
	b.ReportMetric(mOff, "off-ns/call")
	b.ReportMetric(mMade-mOff, "spans-ns/call")
	b.ReportMetric(mOn-mOff, "exported-ns/call")
	b.Logf("tracing per call, median of %d batches of %d: off %.1f µs; spans made and dropped +%.1f µs; exported over OTLP/HTTP +%.1f µs (%d spans received, %.1f a call)",
		len(took[0]), batch, mOff/1e3, (mMade-mOff)/1e3, (mOn-mOff)/1e3, len(r.Spans()), float64(len(r.Spans()))/float64(len(took[2])*batch+1))
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
