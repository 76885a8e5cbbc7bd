package e2e

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/internal/testkit"
)

// The soak's size: CHROMEGATE_LOAD_SESSIONS concurrent HTTP sessions for
// CHROMEGATE_LOAD_DURATION (the defaults when the variables are unset;
// `make fault` runs minutes). It is a long test: `make test` leaves it to
// `make fault`.
func loadSize(t testing.TB) (int, time.Duration) {
	t.Helper()
	n, d := 16, 30*time.Second
	if v := os.Getenv("CHROMEGATE_LOAD_SESSIONS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("CHROMEGATE_LOAD_SESSIONS=%q: want a positive number", v)
		}
	}
	if v := os.Getenv("CHROMEGATE_LOAD_DURATION"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("CHROMEGATE_LOAD_DURATION=%q: %v", v, err)
		}
	}
	return n, d
}

// echoSite serves /echo?s=TOKEN&i=K: a page that shows the session's token
// and round, and a button that writes them again when clicked, so every
// answer can be checked against the session (and round) that asked.
func echoSite(t testing.TB) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		tok := html.EscapeString(r.URL.Query().Get("s") + "-" + r.URL.Query().Get("i"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>Echo %[1]s</title></head><body>
<h1>Echo</h1><p id="tok">token %[1]s</p>
<button id="b" onclick="document.getElementById('out').textContent='clicked '+document.getElementById('tok').textContent.slice(6)">go</button>
<p id="out">not clicked</p></body></html>`, tok)
	})
	return testkit.Serve(t, mux)
}

// loadClient is one HTTP MCP session of the load loop, on its own HTTP
// transport so closing it leaves no idle connection on the server.
type loadClient struct {
	token string
	cs    *sdk.ClientSession
	tr    *http.Transport
}

func dialLoad(ctx context.Context, url, token string) (*loadClient, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e-load-" + token, Version: "1"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: tr}}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // a session, a browser context
	if err != nil {
		tr.CloseIdleConnections()
		return nil, err
	}
	return &loadClient{token: token, cs: cs, tr: tr}, nil
}

func (c *loadClient) close() {
	_ = c.cs.Close()
	c.tr.CloseIdleConnections()
}

// loadStats is what one run of the load loop saw.
type loadStats struct {
	mu      sync.Mutex
	calls   int
	lost    []string // a call that failed: protocol error or isError
	mixed   []string // an answer that belongs to another session or round
	lat     []time.Duration
	elapsed time.Duration
}

func (st *loadStats) record(d time.Duration, lost, mixed string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.calls++
	st.lat = append(st.lat, d)
	if lost != "" {
		st.lost = append(st.lost, lost)
	}
	if mixed != "" {
		st.mixed = append(st.mixed, mixed)
	}
}

func (st *loadStats) pct(p float64) time.Duration {
	if len(st.lat) == 0 {
		return 0
	}
	s := slices.Clone(st.lat)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// round runs navigate + snapshot + click + get_text on the session's echo
// page for round i and checks every answer names this session and round.
func (c *loadClient) round(base string, i int, st *loadStats) {
	want := fmt.Sprintf("%s-%d", c.token, i)
	steps := []struct {
		tool  string
		args  map[string]any
		check string // the answer must contain it
	}{
		// The URL, not the title: under load the title read (bounded to a
		// second) may be left out of the result.
		{"navigate", map[string]any{"url": fmt.Sprintf("%s/echo?s=%s&i=%d", base, c.token, i)}, fmt.Sprintf("echo?s=%s&i=%d", c.token, i)},
		{"snapshot", nil, "token " + want},
		{"click", map[string]any{"selector": "#b"}, ""},
		{"get_text", nil, "clicked " + want},
	}
	for _, s := range steps {
		args := s.args
		if args == nil {
			args = map[string]any{}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		t0 := time.Now()
		res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: s.tool, Arguments: args})
		d := time.Since(t0)
		cancel()
		switch {
		case err != nil:
			st.record(d, fmt.Sprintf("%s %s: %v", c.token, s.tool, err), "")
			return
		case res.IsError:
			st.record(d, fmt.Sprintf("%s %s: %s", c.token, s.tool, short(resultText(res))), "")
			return
		case s.check != "" && !strings.Contains(resultText(res), s.check):
			st.record(d, "", fmt.Sprintf("%s %s: want %q in %s", c.token, s.tool, s.check, short(resultText(res))))
			return
		}
		st.record(d, "", "")
	}
}

// runLoad opens n sessions and runs rounds on each until more says stop,
// then closes them all.
func runLoad(t testing.TB, url, base string, n int, more func(round int) bool) *loadStats {
	t.Helper()
	clients := make([]*loadClient, n)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range clients {
		c, err := dialLoad(ctx, url, fmt.Sprintf("s%02dx%d", i, time.Now().UnixNano()%100000))
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		clients[i] = c
	}
	st := &loadStats{}
	var wg sync.WaitGroup
	t0 := time.Now()
	for _, c := range clients {
		wg.Go(func() {
			for i := 0; more(i); i++ {
				c.round(base, i, st)
			}
		})
	}
	wg.Wait()
	st.elapsed = time.Since(t0)
	for _, c := range clients {
		c.close()
	}
	return st
}

// footprint is what a server holds: the leak suite's counts.
type footprint struct {
	goroutines int
	fds        int
	tempDirs   int // entries in the server's TMPDIR and its data dir's top level
	procs      int // browser, driver and server processes by the marker
	rssKB      int // PSS of those processes
	serverKB   int // PSS of the server alone
}

func (f footprint) String() string {
	return fmt.Sprintf("goroutines=%d fds=%d temp-entries=%d processes=%d pss=%d MB (server %d MB)", f.goroutines, f.fds, f.tempDirs, f.procs, f.rssKB/1024, f.serverKB/1024)
}

// loadServer is a `serve --http` with a pprof endpoint, a private TMPDIR
// and a marker on every process it (or its browser server) starts.
type loadServer struct {
	*httpServer
	debug string
	tmp   string
}

var debugAddrRE = regexp.MustCompile(`msg="debug endpoint \(pprof\) listening" addr=(127\.0\.0\.1:\d+)`)

func startLoadServer(t testing.TB, mark string, args ...string) *loadServer {
	t.Helper()
	tmp := t.TempDir()
	h := startHTTPEnv(t, t.TempDir(), mark, []string{"TMPDIR=" + tmp},
		// A policy decision that runs out of time denies (tested on its
		// own); on a machine starved enough to stall a goroutine past the
		// default second, that would count as a lost answer here.
		append([]string{"--debug-addr=127.0.0.1:0", "--allow-domain=127.0.0.1", "--enable-mutations", "--session-timeout=2m", "--policy-timeout=15s"}, args...)...)
	m := debugAddrRE.FindStringSubmatch(h.log.String())
	if m == nil {
		t.Fatalf("no debug endpoint in the log:\n%s", h.log.String())
	}
	return &loadServer{httpServer: h, debug: m[1], tmp: tmp}
}

// goroutines reads the server's goroutine count from its pprof endpoint.
func (s *loadServer) goroutines() int {
	s.t.Helper()
	resp, err := http.Get("http://" + s.debug + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		s.t.Fatalf("pprof: %v", err)
	}
	defer resp.Body.Close()
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	var n int
	if _, err := fmt.Sscanf(line, "goroutine profile: total %d", &n); err != nil {
		s.t.Fatalf("pprof goroutine header %q: %v", line, err)
	}
	return n
}

// goroutineDump is the full goroutine listing, for a failure message.
func (s *loadServer) goroutineDump() string {
	resp, err := http.Get("http://" + s.debug + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func (s *loadServer) footprint() footprint {
	s.t.Helper()
	f := footprint{goroutines: s.goroutines()}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", s.cmd.Process.Pid))
	f.fds = len(fds)
	for _, dir := range []string{s.tmp, s.dataDir} {
		entries, _ := os.ReadDir(dir)
		f.tempDirs += len(entries)
	}
	pids := markedProcs(s.mark)
	f.procs = len(pids)
	f.rssKB = rssKB(pids)
	f.serverKB = rssKB([]int{s.cmd.Process.Pid})
	return f
}

// markedProcs lists live processes whose marker starts with mark (a
// browser server started for the test carries mark+"-…").
func markedProcs(mark string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains(string(env), "CHROMEGATE_E2E_MARK="+mark) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if f := strings.Fields(string(st)); len(f) > 2 && f[2] == "Z" {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// rssKB sums the proportional set size over pids: shared pages are split
// among the processes sharing them, so a browser's processes add up to
// what it really holds.
func rssKB(pids []int) int {
	total := 0
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "Pss:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
				total += kb
			}
		}
	}
	return total
}

// startBrowserServer starts a local `playwright run-server` from the pinned
// playwright-core, its processes marked with mark, and returns its ws://
// endpoint and a function that kills it (and the browsers it launched).
func startBrowserServer(t testing.TB, mark string) (string, func()) {
	t.Helper()
	d, err := cdp.FindDriver("")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(d.Node, filepath.Join(d.Dir, "package", "cli.js"), "run-server", "--host", "127.0.0.1", "--port", "0", "--unsafe")
	cmd.Env = append(os.Environ(), "CHROMEGATE_E2E_MARK="+mark)
	ep, stop, err := startAndScan(cmd, regexp.MustCompile(`Listening on (ws://\S+)`), true)
	if err != nil {
		t.Fatalf("playwright run-server: %v", err)
	}
	t.Cleanup(stop)
	return ep, stop
}

// settle waits (up to a minute) for the server to give back what the load
// took: the goroutines, descriptors, temp entries and processes counted
// before, with a small allowance for goroutines and descriptors that come
// and go on their own (the pprof request itself, a timer). It returns the
// counts it ended with.
func (s *loadServer) settle(before footprint) footprint {
	s.t.Helper()
	const slack = 3
	deadline := time.Now().Add(time.Minute)
	for {
		f := s.footprint()
		if f.goroutines <= before.goroutines+slack && f.fds <= before.fds+slack &&
			f.tempDirs <= before.tempDirs && f.procs <= before.procs {
			return f
		}
		if time.Now().After(deadline) {
			s.t.Errorf("the server did not give back what the load took within a minute:\nbefore: %v\nafter:  %v\ngoroutines:\n%s",
				before, f, tail(s.goroutineDump(), 12000))
			return f
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestLoad runs CHROMEGATE_LOAD_SESSIONS (16) concurrent HTTP MCP sessions
// for CHROMEGATE_LOAD_DURATION (30 s), against the built-in launcher and
// against a local `playwright run-server`, each session looping navigate,
// snapshot, click and get_text on a page that echoes its own token: no
// answer may be lost or belong to another session, and once every session
// has closed the server holds no more goroutines, descriptors, temp dirs or
// processes than before.
func TestLoad(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	testkit.Long(t, "fault")
	needBrowser(t)
	n, dur := loadSize(t)
	base := echoSite(t)
	for _, backend := range []string{"launcher", "browser-server"} {
		t.Run(backend, func(t *testing.T) {
			mark := fmt.Sprintf("e2e-load-%s-%d", backend, time.Now().UnixNano())
			var args []string
			if backend == "browser-server" {
				ep, _ := startBrowserServer(t, mark+"-remote")
				args = append(args, "--browser-endpoint="+ep)
			}
			s := startLoadServer(t, mark, args...)
			// One session first: the browser (or the browser server's
			// browser) is up and every lazy pool is filled before counting.
			runLoad(t, s.url, base, 1, func(i int) bool { return i < 2 })
			before := s.settle(s.footprint())

			stop := time.Now().Add(dur)
			st := runLoad(t, s.url, base, n, func(int) bool { return time.Now().Before(stop) })
			peak := s.footprint()
			after := s.settle(before)
			t.Logf("%d sessions for %v: %d calls, %.1f calls/s, p50 %v, p95 %v, lost %d, mixed up %d",
				n, st.elapsed.Round(time.Second), st.calls, float64(st.calls)/st.elapsed.Seconds(),
				st.pct(0.5).Round(time.Millisecond), st.pct(0.95).Round(time.Millisecond), len(st.lost), len(st.mixed))
			t.Logf("before: %v\npeak:   %v\nafter:  %v", before, peak, after)
			fmt.Printf("LOAD %s: sessions=%d calls=%d lost=%d mixed=%d | before %v | after %v\n",
				backend, n, st.calls, len(st.lost), len(st.mixed), before, after)
			if len(st.lost) > 0 {
				t.Errorf("%d of %d calls were lost, e.g.:\n%s", len(st.lost), st.calls, strings.Join(st.lost[:min(5, len(st.lost))], "\n"))
			}
			if len(st.mixed) > 0 {
				t.Errorf("%d answers went to the wrong session or round, e.g.:\n%s", len(st.mixed), strings.Join(st.mixed[:min(5, len(st.mixed))], "\n"))
			}
			if st.calls < n*4 {
				t.Errorf("only %d calls in %v across %d sessions: not every session finished a round", st.calls, dur, n)
			}
		})
	}
}

// BenchmarkSessions is the sweep: N concurrent HTTP sessions, each running
// b.N rounds of navigate + snapshot + click + get_text on its echo page
// against one `serve --http` (built-in launcher). It reports per-call p50
// and p95, calls per second, the RSS of the server and its browser, and
// that RSS per session. Sizes: CHROMEGATE_SWEEP (default 1,2,4,8,16,24,32).
//
//	go test -run '^$' -bench BenchmarkSessions -benchtime 10x ./e2e/
func BenchmarkSessions(b *testing.B) {
	needBrowser(b)
	sizes := []int{1, 2, 4, 8, 16, 24, 32}
	if v := os.Getenv("CHROMEGATE_SWEEP"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("CHROMEGATE_SWEEP=%q: want sizes like 1,2,4", v)
			}
			sizes = append(sizes, n)
		}
	}
	base := echoSite(b)
	mark := fmt.Sprintf("e2e-sweep-%d", time.Now().UnixNano())
	s := startLoadServer(b, mark)
	runLoad(b, s.url, base, 1, func(i int) bool { return i < 2 })
	idle := s.footprint()
	var rows []capacityRow
	defer func() {
		if len(rows) > 0 {
			printCapacity("sweep (BenchmarkSessions)", rows)
		}
	}()
	for _, n := range sizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var peak int
			var mu sync.Mutex
			done := make(chan struct{})
			go func() {
				for {
					select {
					case <-done:
						return
					case <-time.After(500 * time.Millisecond):
						r := rssKB(markedProcs(mark))
						mu.Lock()
						peak = max(peak, r)
						mu.Unlock()
					}
				}
			}()
			b.ResetTimer()
			st := runLoad(b, s.url, base, n, func(i int) bool { return i < b.N })
			b.StopTimer()
			close(done)
			if len(st.lost)+len(st.mixed) > 0 {
				b.Fatalf("lost %d, mixed up %d: %s", len(st.lost), len(st.mixed), strings.Join(append(st.lost, st.mixed...)[:1], ""))
			}
			mu.Lock()
			defer mu.Unlock()
			b.ReportMetric(float64(st.pct(0.5).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(st.pct(0.95).Microseconds())/1000, "p95-ms")
			b.ReportMetric(float64(st.calls)/st.elapsed.Seconds(), "calls/s")
			b.ReportMetric(float64(peak)/1024, "peak-pss-MB")
			b.ReportMetric(float64(peak-idle.rssKB)/1024/float64(n), "MB/session")
			row := capacityRow{n: n, perSec: float64(st.calls) / st.elapsed.Seconds(), p50: st.pct(0.5), p95: st.pct(0.95), pssKB: peak}
			if k := len(rows); k > 0 && rows[k-1].n == n {
				rows[k-1] = row // b.Run ran the size again with a larger b.N
			} else {
				rows = append(rows, row)
			}
		})
	}
}
