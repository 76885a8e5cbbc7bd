//go:build peers

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/internal/testkit"
)

// coldStartRuns is how many cold starts each server gets in
// TestPeersColdStart (CHROMEGATE_COLD_RUNS overrides it).
const coldStartRuns = 7

// TestPeersColdStart is spawn-to-first-page of chromegate, Playwright MCP
// and Chrome DevTools MCP in one run on the same Chromium and page: each
// run spawns the server over stdio and times it until its first navigate
// returned. Runs are interleaved across the servers (a round starts each
// once, in a rotating order), so a busy moment of the machine falls on all
// of them. chromegate runs twice: as it starts now and as it started
// before (startupAsBefore), for the before figure.
// It prints each server's median and p90, the ratio of chromegate's median
// to the best peer's, and where chromegate's time went (phase shares, from
// its log).
func TestPeersColdStart(t *testing.T) {
	chromium, err := cdp.FindChromium("")
	if err != nil {
		t.Fatalf("no Chromium: %v", err)
	}
	runs := coldStartRuns
	if n, err := strconv.Atoi(os.Getenv("CHROMEGATE_COLD_RUNS")); err == nil && n > 0 {
		runs = n
	}
	bin := installPeers(t, filepath.Join(cdp.DefaultCacheDir(), "peers"))
	cg := buildChromegate(t)
	echo := serveEcho(t)

	type entrant struct {
		p      *peer
		env    []string
		ours   bool
		totals []time.Duration
		phases []testkit.ColdPhases
	}
	var es []*entrant
	for _, p := range peersForCompare(cg, bin, chromium) {
		if p.name != "chromegate" {
			es = append(es, &entrant{p: p})
			continue
		}
		// The phases are in the debug log.
		q := *p
		q.argv = slices.Clone(p.argv)
		for i, a := range q.argv {
			if strings.HasPrefix(a, "--log-level=") {
				q.argv[i] = "--log-level=debug"
			}
		}
		before := q
		before.name = "chromegate (start-up as before)"
		es = append(es, &entrant{p: &q, ours: true}, &entrant{p: &before, ours: true, env: startupAsBefore})
	}
	for r := range runs {
		for k := range es {
			e := es[(k+r)%len(es)]
			spawn, done, log := coldStartOf(t, e.p, e.env, fmt.Sprintf("%s/echo?s=cold&i=%d", echo, r))
			e.totals = append(e.totals, done.Sub(spawn))
			if e.ours {
				p, err := testkit.ParseColdPhases(log, spawn, done)
				if err != nil {
					t.Fatal(err)
				}
				e.phases = append(e.phases, p)
			}
		}
	}

	best := time.Duration(0)
	bestName := ""
	for _, e := range es {
		if m := testkit.Percentile(e.totals, 0.5); !e.ours && (best == 0 || m < best) {
			best, bestName = m, e.p.name
		}
	}
	var out strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&out, "\ncold start, spawn to first page: %s, %d CPUs (%s), %s; Chromium %s; peers %s, %s; %d runs each, interleaved\n\n",
		time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), host, chromium, playwrightMCP, devtoolsMCP, runs)
	w := tabwriter.NewWriter(&out, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintf(w, " server\t median\t p90\t ratio to the best peer (%s)\t\n", bestName)
	for _, e := range es {
		m := testkit.Percentile(e.totals, 0.5)
		fmt.Fprintf(w, " %s\t %s ms\t %s ms\t %.2f×\t\n", e.p.name, ms(m), ms(testkit.Percentile(e.totals, 0.9)), float64(m)/float64(max(best, 1)))
	}
	w.Flush()
	for _, e := range es {
		if e.ours && len(e.phases) > 0 {
			fmt.Fprintf(&out, "\n%s, the median run's phases: %s", e.p.name, phasesOf(e.phases))
		}
	}
	out.WriteString("\n")
	t.Log(out.String())
	fmt.Println(out.String())
}

// startupAsBefore is the environment that makes chromegate start as it did
// before the parallel start-up and the driver's code cache.
var startupAsBefore = []string{"CHROMEGATE_SEQUENTIAL_START=1", "CHROMEGATE_NO_CODE_CACHE=1"}

// phasesOf is the phases of the median run of ps, as shares of its total.
func phasesOf(ps []testkit.ColdPhases) string {
	return testkit.MedianPhases(ps).Shares()
}

// coldStartOf spawns p over stdio with env added, calls its navigate once
// and returns when it spawned it, when that call returned, and the
// server's stderr.
func coldStartOf(t *testing.T, p *peer, env []string, url string) (spawn, done time.Time, log string) {
	t.Helper()
	buf := &testkit.Buffer{}
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "PUPPETEER_SKIP_DOWNLOAD=1", "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS=1")
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = t.TempDir()
	cmd.Stderr = buf
	ctx, cancel := context.WithTimeout(context.Background(), callTimout)
	defer cancel()
	spawn = time.Now()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "chromegate-coldstart", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start %s: %v\n%s", p.name, err, buf.String())
	}
	c := &caller{cs: cs}
	name, args := p.navigate(url)
	if _, _, err := c.call(name, args); err != nil {
		t.Fatalf("%s cold start: %v\n%s", p.name, err, buf.String())
	}
	done = time.Now()
	_ = cs.Close()
	return spawn, done, buf.String()
}
