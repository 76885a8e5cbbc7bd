//go:build peers

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/e2e/realapps"
	"github.com/chromegate/chromegate/executor/cdp"
)

// TestRealApps runs every task of the real-application suite (e2e/realapps)
// with the same scripted agent through chromegate and through Playwright
// MCP, default and lean (--timeout-settle 0 --snapshot-mode none), each on a
// fresh copy of the application, and prints per application the tasks done,
// calls, characters read and wall time (from the first call, and from the
// server's spawn), and chromegate's ratios.
func TestRealApps(t *testing.T) {
	if missing := realapps.Missing(); len(missing) > 0 {
		t.Fatalf("real applications missing: %s (make realapps-deps)", strings.Join(missing, ", "))
	}
	chromium, err := cdp.FindChromium("")
	if err != nil {
		t.Fatalf("no Chromium: %v", err)
	}
	bin := installPeers(t, filepath.Join(cdp.DefaultCacheDir(), "peers"))
	cg := buildChromegate(t)
	pwArgs := []string{bin["playwright-mcp"], "--headless", "--isolated", "--no-sandbox", "--executable-path", chromium}
	type config struct {
		name    string
		argv    []string
		browser func(*sdk.ClientSession) realapps.Browser
	}
	configs := []config{
		{"chromegate", []string{cg, "serve", "--isolated", "--data-dir=" + t.TempDir(), "--log-level=error",
			"--allow-domain=127.0.0.1", "--enable-mutations"},
			func(cs *sdk.ClientSession) realapps.Browser { return realapps.NewChromegate(cs, true) }},
		{"playwright-mcp", pwArgs,
			func(cs *sdk.ClientSession) realapps.Browser { return realapps.NewPlaywright(cs) }},
		{"playwright-mcp lean", append(slices.Clone(pwArgs), "--timeout-settle", "0", "--snapshot-mode", "none"),
			func(cs *sdk.ClientSession) realapps.Browser { return realapps.NewPlaywright(cs) }},
	}
	apps := []struct {
		name  string
		start func(context.Context, string) (*realapps.App, error)
	}{
		{"MediaWiki", realapps.StartMediaWiki},
		{"DokuWiki", realapps.StartDokuWiki},
		{"WordPress", realapps.StartWordPress},
	}
	results := map[string]map[string]realapps.Result{}
	// fromSpawn is each run's wall time from the server's spawn: its
	// start-up and the client's initialisation too, which a user waits
	// for as much as for the tasks (and which a server that starts its
	// browser at once pays before the first call, one that starts it on
	// the first call inside it).
	fromSpawn := map[string]map[string]time.Duration{}
	for _, ap := range apps {
		results[ap.name] = map[string]realapps.Result{}
		fromSpawn[ap.name] = map[string]time.Duration{}
		for _, c := range configs {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			app, err := ap.start(ctx, t.TempDir())
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			spawned := time.Now()
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1")
			cmd.Dir = t.TempDir()
			client := sdk.NewClient(&sdk.Implementation{Name: "chromegate-bench", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
			if err != nil {
				app.Close()
				cancel()
				t.Fatalf("start %s: %v", c.name, err)
			}
			start := time.Now()
			res := realapps.Run(ctx, app, c.browser(cs), false)
			res.Stats.Wall = time.Since(start)
			fromSpawn[ap.name][c.name] = time.Since(spawned)
			results[ap.name][c.name] = res
			for _, err := range res.Failed {
				t.Logf("%s: %v", c.name, err)
			}
			_ = cs.Close()
			app.Close()
			cancel()
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\nreal applications: the same agent through each server; wall = the whole run of the tasks (from the first call; from the server's spawn), calls and characters of every result\n\n")
	w := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "app\tserver\ttasks\tcalls\tchars\twall s\tfrom spawn s\tcg/peer calls\tcg/peer chars\tcg/peer wall\tcg/peer from spawn\t")
	for _, ap := range apps {
		cgr := results[ap.name]["chromegate"]
		for _, c := range configs {
			r := results[ap.name][c.name]
			sp := fromSpawn[ap.name][c.name]
			row := []string{ap.name, c.name, fmt.Sprintf("%d/%d", r.Done, r.Tasks), fmt.Sprint(r.Stats.Calls), fmt.Sprint(r.Stats.Chars),
				fmt.Sprintf("%.1f", r.Stats.Wall.Seconds()), fmt.Sprintf("%.1f", sp.Seconds())}
			if c.name == "chromegate" {
				row = append(row, "", "", "", "")
			} else {
				row = append(row, ratio(float64(cgr.Stats.Calls), float64(r.Stats.Calls)), ratio(float64(cgr.Stats.Chars), float64(r.Stats.Chars)),
					ratio(cgr.Stats.Wall.Seconds(), r.Stats.Wall.Seconds()), ratio(fromSpawn[ap.name]["chromegate"].Seconds(), sp.Seconds()))
			}
			fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
		}
	}
	w.Flush()
	// Where the wall time goes: each tool's calls, the agent's own waits
	// (a control not shown yet, a task's outcome not written yet), and
	// the rest (the agent's parsing, the checks' queries).
	fmt.Fprintf(&out, "\nwhere the wall time goes, per server: each tool's calls (count, median, p95, sum), the agent's waits, the rest\n\n")
	w = tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "app\tserver\ttool\tcalls\tmedian ms\tp95 ms\tsum s\t")
	for _, ap := range apps {
		for _, c := range configs {
			r := results[ap.name][c.name]
			var tools []string
			var inCalls time.Duration
			for tool := range r.Stats.PerTool {
				tools = append(tools, tool)
			}
			slices.Sort(tools)
			for _, tool := range tools {
				ds := slices.Clone(r.Stats.PerTool[tool])
				slices.Sort(ds)
				var sum time.Duration
				for _, d := range ds {
					sum += d
				}
				inCalls += sum
				fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%.2f\t\n", ap.name, c.name, tool, len(ds),
					ds[len(ds)/2].Milliseconds(), ds[(len(ds)*95)/100].Milliseconds(), sum.Seconds())
			}
			fmt.Fprintf(w, "%s\t%s\t(agent waited)\t\t\t\t%.2f\t\n", ap.name, c.name, r.Stats.Waited.Seconds())
			fmt.Fprintf(w, "%s\t%s\t(rest)\t\t\t\t%.2f\t\n", ap.name, c.name, (r.Stats.Wall - inCalls - r.Stats.Waited).Seconds())
		}
	}
	w.Flush()
	fmt.Fprintf(&out, "\nPlaywright MCP %s; lean = --timeout-settle 0 --snapshot-mode none; Chromium: %s\n", playwrightMCP, chromium)
	t.Log(out.String())
	fmt.Println(out.String())
}
