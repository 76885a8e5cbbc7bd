package policy

import (
	"context"
	"sort"
	"testing"
	"time"
)

// benchInputs are a navigation and a read with the default policy and one
// allowed domain: the two decisions on the path of almost every call.
func benchInputs(b *testing.B) (*Engine, map[string]Input) {
	b.Helper()
	// A long deadline: on a loaded machine a descheduled evaluation would
	// otherwise turn into a denial, which is right for the server and
	// wrong for a measurement.
	e, err := New(context.Background(), WithTimeout(10*time.Second),
		WithData(map[string]any{"allow_domains": []string{"example.com", "*.example.org"}}))
	if err != nil {
		b.Fatal(err)
	}
	nav, err := testInput(PhaseCall, "navigate", map[string]any{"url": "https://www.example.org/a?b=c"})
	if err != nil {
		b.Fatal(err)
	}
	read, err := testInput(PhaseCall, "get_text", map[string]any{"selector": "main"})
	if err != nil {
		b.Fatal(err)
	}
	read.Page = NewPage("https://example.com/docs")
	for _, in := range []*Input{&nav, &read} {
		in.Backend = "cdp"
		in.Principal = Principal{Name: "bench", Roles: []string{"ci"}, Transport: "stdio"}
	}
	return e, map[string]Input{"navigate": nav, "read": read}
}

// BenchmarkDecide measures one decision with the default policy, reporting
// the median and 99th percentile of single decisions and the process CPU
// time per decision (garbage collection included) besides ns/op.
func BenchmarkDecide(b *testing.B) {
	e, inputs := benchInputs(b)
	for _, name := range []string{"navigate", "read"} {
		in := inputs[name]
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			if d := e.Decide(ctx, in); !d.Allow {
				b.Fatalf("decision: %+v", d)
			}
			samples := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				d := e.Decide(ctx, in)
				samples = append(samples, time.Since(start))
				if !d.Allow {
					b.Fatalf("denied: %+v", d)
				}
			}
			b.StopTimer()
			// CPU time per decision depends less on what else the machine
			// runs than wall time does.
			if cpu := processCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
			}
			sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
			pct := func(p float64) float64 {
				return float64(samples[int(p*float64(len(samples)-1))].Nanoseconds()) / 1e3
			}
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
		})
	}
}

// BenchmarkDecideParallel runs decisions from every P at once.
func BenchmarkDecideParallel(b *testing.B) {
	e, inputs := benchInputs(b)
	in := inputs["read"]
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if d := e.Decide(ctx, in); !d.Allow {
				b.Errorf("denied: %+v", d)
				return
			}
		}
	})
}
