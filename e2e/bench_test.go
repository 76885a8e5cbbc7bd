package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/playwright-community/playwright-go"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/policy"
)

// BenchmarkColdStart measures spawning `chromegate serve` until the first
// navigate has completed, as a client sees it, and where the time went
// (the server's phases, from its log). Each round starts the server as it
// starts now, without the driver's code cache (CHROMEGATE_NO_CODE_CACHE=1),
// with the sequential start-up (CHROMEGATE_SEQUENTIAL_START=1), and with
// both as before, rotating which goes first, so all see the same machine;
// it reports now's and before's medians and their ratio and prints one
// line of phase shares for each (of the run with the median total).
func BenchmarkColdStart(b *testing.B) {
	needBrowser(b)
	base := site(b)
	modes := []struct {
		name string
		env  []string
	}{
		{"now", nil},
		{"no code cache", []string{"CHROMEGATE_NO_CODE_CACHE=1"}},
		{"sequential", []string{"CHROMEGATE_SEQUENTIAL_START=1"}},
		{"as before", []string{"CHROMEGATE_SEQUENTIAL_START=1", "CHROMEGATE_NO_CODE_CACHE=1"}},
	}
	phases := map[string][]testkit.ColdPhases{}
	round := 0
	for b.Loop() {
		for k := range modes {
			m := modes[(k+round)%len(modes)]
			phases[m.name] = append(phases[m.name], coldStartOnce(b, base, m.env))
		}
		round++
	}
	med := map[string]testkit.ColdPhases{}
	for _, m := range modes {
		med[m.name] = testkit.MedianPhases(phases[m.name])
		line := fmt.Sprintf("cold start (%s, %d runs): median %s ms, p90 %s ms — %s", m.name, len(phases[m.name]),
			msOf(med[m.name].Total), msOf(percentileOf(phases[m.name], 0.9)), med[m.name].Shares())
		b.Log(line)
		fmt.Println(line)
	}
	b.ReportMetric(float64(med["now"].Total.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(med["as before"].Total.Microseconds())/1000, "before-median-ms")
	if s := med["as before"].Total; s > 0 {
		b.ReportMetric(float64(med["now"].Total)/float64(s), "now/before")
	}
}

// coldStartOnce spawns the server with env added, calls navigate once, and
// returns where the time went.
func coldStartOnce(b *testing.B, base string, env []string) testkit.ColdPhases {
	b.Helper()
	log := &testkit.Buffer{}
	start := time.Now()
	cmd := exec.Command(binary, append([]string{"serve", "--isolated", "--data-dir=" + b.TempDir(), "--log-level=debug"}, permissive...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = log
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	session, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer session.Close()
	res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: "navigate", Arguments: map[string]any{"url": base + "/form"}})
	if err != nil || res.IsError {
		b.Fatalf("navigate: %v %v", err, res)
	}
	p, err := testkit.ParseColdPhases(log.String(), start, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func msOf(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d.Microseconds())/1000) }

func percentileOf(ps []testkit.ColdPhases, p float64) time.Duration {
	ds := make([]time.Duration, len(ps))
	for i, c := range ps {
		ds[i] = c.Total
	}
	return testkit.Percentile(ds, p)
}

// BenchmarkVsPlaywright runs the same operations over MCP stdio through
// chromegate and directly with playwright-go, in the same run, and reports
// each median and the ratio (chromegate's overhead).
func BenchmarkVsPlaywright(b *testing.B) {
	needBrowser(b)
	base := site(b)
	s := startServer(b, permissive...)
	s.call("navigate", map[string]any{"url": base + "/form"})

	d, err := cdp.FindDriver("")
	if err != nil {
		b.Fatal(err)
	}
	chrome, _ := cdp.FindChromium("")
	if os.Getenv("PLAYWRIGHT_NODEJS_PATH") == "" {
		b.Setenv("PLAYWRIGHT_NODEJS_PATH", d.Node)
	}
	pw, err := playwright.Run(&playwright.RunOptions{DriverDirectory: d.Dir, Stdout: os.Stderr, Stderr: os.Stderr, Verbose: false})
	if err != nil {
		b.Fatal(err)
	}
	defer pw.Stop()
	browser, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: &chrome, Headless: playwright.Bool(true),
		Args: []string{"--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer browser.Close()
	page, err := browser.NewPage(playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 1280, Height: 720}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := page.Goto(base + "/form"); err != nil {
		b.Fatal(err)
	}

	ops := []struct {
		name   string
		tool   string
		args   map[string]any
		direct func() error
		setup  func() map[string]any // args computed after the earlier ops ran (a ref)
	}{
		{"navigate", "navigate", map[string]any{"url": base + "/form"}, func() error { _, err := page.Goto(base + "/form"); return err }, nil},
		{"click", "click", map[string]any{"selector": "#counter"}, func() error { return page.Locator("#counter").Click() }, nil},
		{"type", "type", map[string]any{"selector": "#name", "text": "abc", "clear": true}, func() error {
			if err := page.Locator("#name").Clear(); err != nil {
				return err
			}
			return page.Locator("#name").PressSequentially("abc")
		}, nil},
		{"click_ref", "click", nil, func() error { return page.Locator("#counter").Click() }, func() map[string]any {
			_, outline := s.snapshotOf(nil)
			return map[string]any{"ref": refOf(b, outline, `button c`)}
		}},
		{"snapshot", "snapshot", map[string]any{}, func() error { _, err := page.Locator("body").AriaSnapshot(); return err }, nil},
		{"get_text", "get_text", map[string]any{"selector": "#para"}, func() error { _, err := page.Locator("#para").InnerText(); return err }, nil},
		{"screenshot", "screenshot", map[string]any{}, func() error { _, err := page.Screenshot(); return err }, nil},
		{"eval", "eval", map[string]any{"expression": "document.title"}, func() error { _, err := page.Evaluate("document.title"); return err }, nil},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			if op.setup != nil {
				op.args = op.setup()
			}
			var viaMCP, direct []time.Duration
			for b.Loop() {
				t0 := time.Now()
				s.call(op.tool, op.args)
				viaMCP = append(viaMCP, time.Since(t0))
				t1 := time.Now()
				if err := op.direct(); err != nil {
					b.Fatal(err)
				}
				direct = append(direct, time.Since(t1))
			}
			m, dm := median(viaMCP), median(direct)
			b.ReportMetric(float64(m.Microseconds())/1000, "chromegate-ms")
			b.ReportMetric(float64(dm.Microseconds())/1000, "playwright-ms")
			b.ReportMetric(float64(m)/float64(dm), "ratio")
			b.ReportMetric(float64((m-dm).Microseconds())/1000, "overhead-ms")
		})
	}
}

// BenchmarkToolsList reports the size of the tools/list reply.
func BenchmarkToolsList(b *testing.B) {
	needBrowser(b)
	s := startServer(b, permissive...)
	var size int
	for b.Loop() {
		res, err := s.session.ListTools(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := json.Marshal(res)
		size = len(raw)
	}
	b.ReportMetric(float64(size), "chars")
	fmt.Fprintf(os.Stderr, "tools/list reply: %d characters\n", size)
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkPolicyShare measures, in one run, a get_text through chromegate
// and one decision of the default policy for the same call, and reports the
// decision's share of the call.
func BenchmarkPolicyShare(b *testing.B) {
	needBrowser(b)
	base := site(b)
	s := startServer(b, permissive...)
	s.call("navigate", map[string]any{"url": base + "/form"})
	eng, err := policy.New(context.Background(), policy.WithData(map[string]any{"allow_domains": []string{"127.0.0.1"}}))
	if err != nil {
		b.Fatal(err)
	}
	var class policy.Class
	for _, t := range mcp.Tools() {
		if t.Name == "get_text" {
			class = t.Class()
		}
	}
	in, err := policy.NewInput(policy.PhaseCall, "get_text", class, map[string]any{"selector": "#para"})
	if err != nil {
		b.Fatal(err)
	}
	in.Page = policy.NewPage(base + "/form")
	in.Principal = policy.Principal{Name: "local", Roles: []string{}, Transport: "stdio"}
	var calls, decisions []time.Duration
	for b.Loop() {
		t0 := time.Now()
		s.call("get_text", map[string]any{"selector": "#para"})
		calls = append(calls, time.Since(t0))
		for range 10 {
			t1 := time.Now()
			if d := eng.Decide(context.Background(), in); !d.Allow {
				b.Fatalf("denied: %v", d.Reasons)
			}
			decisions = append(decisions, time.Since(t1))
		}
	}
	slices.Sort(decisions)
	call, dec := median(calls), median(decisions)
	b.ReportMetric(float64(call.Microseconds()), "call-µs")
	b.ReportMetric(float64(dec.Microseconds()), "decision-p50-µs")
	b.ReportMetric(float64(decisions[len(decisions)*99/100].Microseconds()), "decision-p99-µs")
	b.ReportMetric(100*float64(dec)/float64(call), "share-%")
}

// BenchmarkExtensionVsCDP runs get_text, click and screenshot through the
// extension (loaded into the browser chromegate launches, paired over CDP)
// and through the CDP backend, in the same run, and reports each median.
// The first sub-benchmark measures the time from spawning the server to a
// paired extension.
func BenchmarkExtensionVsCDP(b *testing.B) {
	needBrowser(b)
	base := site(b)
	b.Run("pairing", func(b *testing.B) {
		var samples []time.Duration
		for b.Loop() {
			t0 := time.Now()
			s := startServer(b, append([]string{"--with-extension"}, permissive...)...)
			s.waitPaired()
			samples = append(samples, time.Since(t0))
			b.StopTimer()
			s.stop()
			b.StartTimer()
		}
		b.ReportMetric(float64(median(samples).Microseconds())/1000, "start-to-paired-ms")
	})
	viaExt := startServer(b, append([]string{"--with-extension"}, permissive...)...)
	viaExt.waitPaired()
	viaCDP := startServer(b, append([]string{"--no-extension"}, permissive...)...)
	for _, s := range []*server{viaExt, viaCDP} {
		s.call("navigate", map[string]any{"url": base + "/form"})
	}
	ops := []struct {
		name, tool string
		args       map[string]any
	}{
		{"get_text", "get_text", map[string]any{"selector": "#para"}},
		{"click", "click", map[string]any{"selector": "#counter"}},
		{"screenshot", "screenshot", map[string]any{}},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			var e, c []time.Duration
			for b.Loop() {
				t0 := time.Now()
				viaExt.call(op.tool, op.args)
				e = append(e, time.Since(t0))
				t1 := time.Now()
				viaCDP.call(op.tool, op.args)
				c = append(c, time.Since(t1))
			}
			b.ReportMetric(float64(median(e).Microseconds())/1000, "extension-ms")
			b.ReportMetric(float64(median(c).Microseconds())/1000, "cdp-ms")
			b.ReportMetric(float64(median(e))/float64(median(c)), "ratio")
		})
	}
}
