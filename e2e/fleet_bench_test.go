package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/mcp/client"
)

// BenchmarkFleet is what a fleet serves on this machine: 12 agents over
// HTTP at 2026-07-28, each in a context of its own (a minted handle),
// through HAProxy, each round a navigate (an acting call: checkpointed)
// and a get_text, on one server alone (nothing shared), then on 1, 2 and
// 3 replicas sharing Redis. It reports calls a second and the p95 of a
// call. Every replica is a browser of its own on the same two cores, so
// more replicas add contention here, not capacity: the figures say what
// the shared state costs and that the fleet keeps working, not how it
// scales on machines of their own.
//
//	go test -run '^$' -bench '^BenchmarkFleet$' -benchtime 20x ./e2e/
func BenchmarkFleet(b *testing.B) {
	for _, tc := range []struct {
		name   string
		n      int
		shared bool
	}{{"alone", 1, false}, {"replicas=1", 1, true}, {"replicas=2", 2, true}, {"replicas=3", 3, true}} {
		b.Run(tc.name, func(b *testing.B) {
			f := startFleetWith(b, tc.n, tc.shared)
			site := cookieSite(b)
			key := ""
			if tc.shared {
				key = f.fleetKey("bench")
			} else {
				key = createKey(b, f.replicas[0].dataDir, "bench")
			}
			ctx := context.Background()
			agents := make([]*client.Client, 12)
			for i := range agents {
				c, err := client.ConnectHTTPWith(ctx, f.lb+"/mcp", key, client.HTTPOptions{Handle: true, Protocol: "2026-07-28"})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				agents[i] = c
				if _, err := c.Call(ctx, "navigate", map[string]any{"url": site + "/set?v=a" + fmt.Sprint(i)}); err != nil {
					b.Fatal(err)
				}
			}
			var mu sync.Mutex
			var took []time.Duration
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for _, c := range agents {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range b.N {
						for _, call := range []struct {
							tool string
							args map[string]any
						}{{"navigate", map[string]any{"url": site + "/echo"}}, {"get_text", map[string]any{}}} {
							t0 := time.Now()
							if _, err := c.Call(ctx, call.tool, call.args); err != nil {
								b.Error(err)
								return
							}
							mu.Lock()
							took = append(took, time.Since(t0))
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(len(took))/elapsed.Seconds(), "calls/s")
			b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "median-ms")
			b.ReportMetric(float64(took[len(took)*95/100].Milliseconds()), "p95-ms")
		})
	}
}
