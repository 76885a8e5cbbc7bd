package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkHTTPSessions runs N concurrent MCP sessions over Streamable HTTP
// against one `chromegate serve --http`, each in its own browser context,
// each running b.N rounds of navigate + snapshot + click on the local test
// site, for N = 1, 4, 16 and 32. It reports calls per second, the median
// and p95 latency of a call, the errors (which must be zero: any error
// fails the benchmark) and the peak memory of the server (VmRSS) and of it
// with the browser and driver processes it started (the sum of their
// VmRSS, which counts shared pages once per process, and their PSS, which
// splits them); then how many sessions it held before p95 doubled (against
// one session) and the PSS each added session cost (capacity_test.go).
//
// CHROMEGATE_LOAD_AB=1 measures the code before issue 17's load work too,
// interleaved: a second server with --warm-sessions=off
// --spare-renderer=on runs each size right before the server with the
// defaults, and both sweeps are printed. CHROMEGATE_LOAD_ARGS adds flags
// to every server (e.g. --changes=off, to tell the outline changes after
// acting calls from the rest).
//
//	go test -run '^$' -bench BenchmarkHTTPSessions -benchtime 20x ./e2e/
func BenchmarkHTTPSessions(b *testing.B) {
	needBrowser(b)
	base := site(b)
	type variant struct {
		name string
		args []string
		h    *httpServer
		key  string
		rows []capacityRow
	}
	variants := []*variant{{name: "now"}}
	if os.Getenv("CHROMEGATE_LOAD_AB") == "1" {
		variants = []*variant{{name: "before", args: []string{"--warm-sessions=off", "--spare-renderer=on"}}, variants[0]}
	}
	for _, v := range variants {
		dir := b.TempDir()
		v.key = createKey(b, dir, "bench")
		// 32 sessions, the warm-up session and those of the size before
		// still closing: more than one key's default.
		args := append(append([]string{"--log-level=info", "--max-sessions-per-key=128"}, permissive...), v.args...)
		args = append(args, strings.Fields(os.Getenv("CHROMEGATE_LOAD_ARGS"))...)
		v.h = startHTTP(b, dir, args...)
		warm := v.h.connect(v.key, nil)
		if res := mcpCall(b, warm, "navigate", map[string]any{"url": base + "/form"}); res.IsError {
			b.Fatal(resultText(res))
		}
	}
	for _, n := range []int{1, 4, 16, 32} {
		for _, v := range variants {
			name := fmt.Sprintf("sessions=%d", n)
			if len(variants) > 1 {
				name = v.name + "/" + name
			}
			b.Run(name, func(b *testing.B) {
				r := runSessions(b, v.h, v.key, base, n, b.N)
				b.ReportMetric(r.perSec, "calls/s")
				b.ReportMetric(ms(r.p50), "p50-ms")
				b.ReportMetric(ms(r.p95), "p95-ms")
				b.ReportMetric(float64(r.errors), "errors")
				b.ReportMetric(float64(r.serverKB)/1024, "server-MB")
				b.ReportMetric(float64(r.totalKB)/1024, "total-rss-MB")
				b.ReportMetric(float64(r.pssKB)/1024, "total-pss-MB")
				fmt.Fprintf(os.Stderr, "HTTP %s sessions=%-2d rounds=%-3d calls=%-5d %.1f calls/s  p50 %.1f ms  p95 %.1f ms  errors %d  server RSS %.0f MB; server+browser+driver (%d processes): RSS sum %.0f MB, PSS %.0f MB\n",
					v.name, n, b.N, r.calls, r.perSec, ms(r.p50), ms(r.p95), r.errors, float64(r.serverKB)/1024, r.procs, float64(r.totalKB)/1024, float64(r.pssKB)/1024)
				fmt.Fprintf(os.Stderr, "  medians: %s; CPU over %.1f s: server %.1f s, driver %.1f s, browser %.1f s\n",
					strings.Join(r.perTool, ", "), r.wall.Seconds(), r.cpu.server, r.cpu.driver, r.cpu.browser)
				b.ReportMetric(r.cpu.server/r.wall.Seconds()*100, "server-cpu-%")
				if r.errors > 0 {
					b.Fatalf("%d calls failed; first: %s", r.errors, r.firstErr)
				}
				// b.Run runs the function again with a larger b.N: the
				// last run of a size is the one kept.
				row := capacityRow{n: n, perSec: r.perSec, p50: r.p50, p95: r.p95, pssKB: r.pssKB}
				if k := len(v.rows); k > 0 && v.rows[k-1].n == n {
					v.rows[k-1] = row
				} else {
					v.rows = append(v.rows, row)
				}
			})
		}
	}
	for _, v := range variants {
		if len(v.rows) > 0 {
			printCapacity("HTTP sessions, "+v.name, v.rows)
		}
	}
}

type sessionsResult struct {
	calls, errors     int
	firstErr          string
	perSec            float64
	p50, p95          time.Duration
	serverKB, totalKB int
	pssKB             int
	perTool           []string // median latency of each tool
	cpu               cpuUse
	wall              time.Duration
	procs             int
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func runSessions(b *testing.B, h *httpServer, key, base string, n, rounds int) sessionsResult {
	b.StopTimer()
	sessions := make([]*sdk.ClientSession, n)
	for i := range sessions {
		sessions[i] = h.connect(key, nil)
	}
	b.StartTimer()
	var (
		mu   sync.Mutex
		lat  []time.Duration
		per  = map[string][]time.Duration{}
		errs []string
		wg   sync.WaitGroup
		peak struct{ server, total, pss, procs int }
	)
	cpu0 := h.cpu()
	start := time.Now()
	for _, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			steps := []struct {
				tool string
				args map[string]any
			}{
				// A call that waits longer than the default deadline on
				// a starved machine (32 sessions on 2 shared cores) is
				// slow, not lost.
				{"navigate", map[string]any{"url": base + "/form", "timeout_ms": 110000}},
				{"snapshot", map[string]any{}},
				{"click", map[string]any{"selector": "#counter", "timeout_ms": 110000}},
			}
			for range rounds {
				for _, st := range steps {
					ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
					t0 := time.Now()
					res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: st.tool, Arguments: st.args})
					el := time.Since(t0)
					cancel()
					mu.Lock()
					lat = append(lat, el)
					per[st.tool] = append(per[st.tool], el)
					if err != nil {
						errs = append(errs, st.tool+": "+err.Error())
					} else if res.IsError {
						errs = append(errs, st.tool+": "+resultText(res))
					}
					mu.Unlock()
				}
			}
		}()
	}
	// Sample memory while the sessions run: the peak is what a host must have.
	sample := func() {
		s, tot, pss, np := h.rss()
		mu.Lock()
		peak.server, peak.total, peak.pss, peak.procs = max(peak.server, s), max(peak.total, tot), max(peak.pss, pss), max(peak.procs, np)
		mu.Unlock()
	}
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				sample()
			}
		}
	}()
	wg.Wait()
	elapsed := time.Since(start)
	cpu := h.cpuSince(cpu0, h.cpu())
	b.StopTimer()
	close(done)
	<-sampled
	sample() // every context is still open: a short run is measured too
	for _, cs := range sessions {
		_ = cs.Close()
	}
	slices.Sort(lat)
	r := sessionsResult{calls: len(lat), errors: len(errs), serverKB: peak.server, totalKB: peak.total, pssKB: peak.pss, procs: peak.procs,
		cpu: cpu, wall: elapsed}
	if len(errs) > 0 {
		r.firstErr = errs[0]
	}
	for _, tool := range []string{"navigate", "snapshot", "click"} {
		r.perTool = append(r.perTool, fmt.Sprintf("%s %.0f ms", tool, ms(median(per[tool]))))
	}
	if len(lat) > 0 {
		r.perSec = float64(len(lat)) / elapsed.Seconds()
		r.p50 = lat[len(lat)/2]
		r.p95 = lat[min(len(lat)-1, len(lat)*95/100)]
	}
	return r
}

// rss is the resident memory (kB) of the server process and of it with
// every process it started (driver, browser, zygotes, renderers, GPU and
// utility processes), from /proc.
func (h *httpServer) rss() (server, total, pss, procs int) {
	server = vmRSS(h.cmd.Process.Pid)
	for pid := range h.tree() {
		total += vmRSS(pid)
		pss += statusKB(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:")
		procs++
	}
	return server, total, pss, procs
}

// tree is the server's process tree, plus any process carrying its marker
// that was re-parented.
func (h *httpServer) tree() map[int]bool {
	root := h.cmd.Process.Pid
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(pid); len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], pid)
			}
		}
	}
	seen := map[int]bool{}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		queue = append(queue, children[pid]...)
	}
	for _, pid := range h.procs() {
		seen[pid] = true
	}
	return seen
}

// statFields are the fields of /proc/PID/stat after the command name
// (which may hold spaces): state is [0], ppid [1], utime [11], stime [12].
func statFields(pid int) []string {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(st), ')')
	return strings.Fields(string(st)[i+1:])
}

// cpuUse is CPU time by kind of process: the server itself, the
// Playwright driver (node), the browser (every Chromium process).
type cpuUse struct{ server, driver, browser float64 }

// clockTicks is USER_HZ, 100 on Linux.
const clockTicks = 100

// cpu reads the CPU seconds used so far by each process of the tree.
func (h *httpServer) cpu() map[int]float64 {
	out := map[int]float64{}
	for pid := range h.tree() {
		f := statFields(pid)
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		s, _ := strconv.ParseFloat(f[12], 64)
		out[pid] = (u + s) / clockTicks
	}
	return out
}

// cpuSince is the CPU time the tree used between two cpu readings (a
// process that exited in between is lost; one that started counts whole).
func (h *httpServer) cpuSince(before, after map[int]float64) cpuUse {
	var u cpuUse
	for pid, sec := range after {
		d := sec - before[pid]
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		exe := filepath.Base(strings.SplitN(string(cmdline), "\x00", 2)[0])
		switch {
		case pid == h.cmd.Process.Pid:
			u.server += d
		case exe == "node":
			u.driver += d
		default:
			u.browser += d
		}
	}
	return u
}

func vmRSS(pid int) int { return statusKB(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:") }

// statusKB reads a "Name:   123 kB" line of a /proc file.
func statusKB(path, name string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb
		}
	}
	return 0
}
