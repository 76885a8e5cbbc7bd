//go:build peers

package bench

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/internal/testkit"
)

// The egress comparison's sizes. Rounds are interleaved: each round
// navigates every server once per page, the order rotating, so a slow
// moment of the machine falls on all of them alike.
const (
	egressRounds  = 11 // p90 of 11 is the second-slowest
	egressSubres  = 300
	egressManyURL = "/many"
)

// egressDocPages are the bench's documentation pages.
var egressDocPages = []string{"docs/pg-app-psql.html", "docs/pg-monitoring-stats.html", "docs/py-datetime.html"}

// egressConfig is one server in the egress comparison.
type egressConfig struct {
	name     string
	argv     []string
	navigate func(url string) (string, map[string]any)
	// chromegate reports its request cache in chrome_status.
	chromegate bool
}

// TestEgressCost measures what deciding every request costs a page load:
// navigate latency over MCP stdio, in one run, for chromegate with the
// egress boundary (the proxy, the default), without it
// (--unsafe-no-egress-boundary), with it through Playwright routing
// (--egress-via=route), and for Playwright MCP plain and with
// --allowed-origins (its own request filter, also Playwright routing), on
// the documentation pages and on a page of 300 subresources. It prints
// medians and p90s, the ratios, and chromegate's request-cache hit rate.
// Every response the harness serves is no-store, so each round makes the
// same requests.
//
//	make bench-egress
func TestEgressCost(t *testing.T) {
	chromium, err := cdp.FindChromium("")
	if err != nil {
		t.Fatalf("no Chromium: %v", err)
	}
	rounds := egressRounds
	if v, err := strconv.Atoi(os.Getenv("CHROMEGATE_EGRESS_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	bin := installPeers(t, filepath.Join(cdp.DefaultCacheDir(), "peers"))
	cg := buildChromegate(t)
	base := serveEgressPages(t)
	cfgs := egressConfigs(t, cg, bin["playwright-mcp"], chromium, base)

	callers := make([]*caller, len(cfgs))
	for i, c := range cfgs {
		callers[i], _ = startStdio(t, &peer{name: c.name, argv: c.argv})
		defer callers[i].cs.Close()
	}
	// cache reads chromegate's request-cache counters.
	cache := func(i int) (hits, misses int) {
		txt, _, err := callers[i].call("chrome_status", map[string]any{})
		if err != nil {
			t.Fatalf("%s: %v", cfgs[i].name, err)
		}
		m := cacheRE.FindStringSubmatch(txt)
		if m == nil {
			t.Fatalf("%s: no request_cache in chrome_status: %s", cfgs[i].name, short(txt))
		}
		hits, _ = strconv.Atoi(m[1])
		misses, _ = strconv.Atoi(m[2])
		return hits, misses
	}
	// run navigates every server to each page rounds times (after one
	// navigation each that is not counted) and returns the latencies by
	// page and server.
	run := func(pages []string) map[string][][]time.Duration {
		lat := map[string][][]time.Duration{}
		for _, p := range pages {
			lat[p] = make([][]time.Duration, len(cfgs))
		}
		for r := -1; r < rounds; r++ {
			for _, p := range pages {
				for k := range cfgs {
					i := (k + r + 1) % len(cfgs)
					name, args := cfgs[i].navigate(fmt.Sprintf("%s%s?r=%d", base, p, r))
					_, d, err := callers[i].call(name, args)
					if err != nil {
						t.Fatalf("%s %s: %v", cfgs[i].name, p, err)
					}
					if r >= 0 {
						lat[p][i] = append(lat[p][i], d)
					}
				}
			}
		}
		return lat
	}

	docPages := make([]string, len(egressDocPages))
	for i, p := range egressDocPages {
		docPages[i] = "/pages/" + p
	}
	type counts struct{ h0, m0, h1, m1, h2, m2 int }
	cc := map[int]*counts{}
	for i, c := range cfgs {
		if c.chromegate {
			h, m := cache(i)
			cc[i] = &counts{h0: h, m0: m}
		}
	}
	t0 := time.Now()
	lat := run(docPages)
	for i, c := range cc {
		c.h1, c.m1 = cache(i)
	}
	for p, l := range run([]string{egressManyURL}) {
		lat[p] = l
	}
	for i, c := range cc {
		c.h2, c.m2 = cache(i)
	}
	elapsed := time.Since(t0)

	var out strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&out, "\n%s, %d CPUs (%s), %s; Chromium %s; %s\n", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), host, chromium, playwrightMCP)
	fmt.Fprintf(&out, "navigate over MCP stdio, ms: median (p90) of %d rounds, servers interleaved; %s of rounds in all\n", rounds, elapsed.Round(time.Second))
	fmt.Fprintf(&out, "on/off = chromegate with the boundary / without; route/off = --egress-via=route / without; vs PW-ao = chromegate (boundary) / Playwright MCP --allowed-origins\n\n")
	w := tabwriter.NewWriter(&out, 0, 0, 1, ' ', tabwriter.Debug)
	hdr := []string{" page"}
	for _, c := range cfgs {
		hdr = append(hdr, " "+c.name)
	}
	hdr = append(hdr, " on/off", " route/off", " vs PW-ao", " PW-ao/PW")
	fmt.Fprintln(w, strings.Join(hdr, "\t")+"\t")
	for _, p := range append(slices.Clone(docPages), egressManyURL) {
		label := strings.TrimPrefix(p, "/pages/")
		if p == egressManyURL {
			label = fmt.Sprintf("%d subresources", egressSubres)
		}
		row := []string{" " + label}
		med := make([]time.Duration, len(cfgs))
		for i := range cfgs {
			med[i] = pct(lat[p][i], 0.5)
			row = append(row, fmt.Sprintf(" %s (%s)", ms(med[i]), ms(pct(lat[p][i], 0.9))))
		}
		row = append(row,
			" "+ratio(float64(med[cgOn]), float64(med[cgOff])),
			" "+ratio(float64(med[cgRoute]), float64(med[cgOff])),
			" "+ratio(float64(med[cgOn]), float64(med[pwAO])),
			" "+ratio(float64(med[pwAO]), float64(med[pwPlain])))
		fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
	}
	w.Flush()
	fmt.Fprintf(&out, "\nrequest cache (chrome_status policy.request_cache), from an empty cache:\n")
	for _, i := range []int{cgOn, cgRoute} {
		c := cc[i]
		fmt.Fprintf(&out, "  %s: documentation pages %s (%d hits, %d misses); %d-subresource page %s (%d hits, %d misses)\n",
			cfgs[i].name, hitRate(c.h1-c.h0, c.m1-c.m0), c.h1-c.h0, c.m1-c.m0,
			egressSubres, hitRate(c.h2-c.h1, c.m2-c.m1), c.h2-c.h1, c.m2-c.m1)
	}
	t.Log(out.String())
	fmt.Println(out.String())
}

// The configurations' places in egressConfigs.
const (
	cgOn = iota
	cgOff
	cgRoute
	pwPlain
	pwAO
)

var cacheRE = regexp.MustCompile(`"request_cache":\s*\{\s*"hits":\s*(\d+),\s*"misses":\s*(\d+)`)

func egressConfigs(t *testing.T, cg, pwBin, chromium, base string) []egressConfig {
	cgNav := func(u string) (string, map[string]any) { return "navigate", map[string]any{"url": u} }
	pwNav := func(u string) (string, map[string]any) { return "browser_navigate", map[string]any{"url": u} }
	cgArgs := func(extra ...string) []string {
		return append([]string{cg, "serve", "--isolated", "--data-dir=" + t.TempDir(), "--log-level=error", "--allow-domain=127.0.0.1"}, extra...)
	}
	pwArgs := []string{pwBin, "--headless", "--isolated", "--no-sandbox", "--executable-path", chromium}
	return []egressConfig{
		cgOn:    {name: "chromegate", argv: cgArgs(), navigate: cgNav, chromegate: true},
		cgOff:   {name: "cg no boundary", argv: cgArgs("--unsafe-no-egress-boundary"), navigate: cgNav, chromegate: true},
		cgRoute: {name: "cg route", argv: cgArgs("--egress-via=route"), navigate: cgNav, chromegate: true},
		pwPlain: {name: "PW", argv: pwArgs, navigate: pwNav},
		pwAO:    {name: "PW allowed-origins", argv: append(slices.Clone(pwArgs), "--allowed-origins", base), navigate: pwNav},
	}
}

func hitRate(h, m int) string {
	if h+m == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(h)/float64(h+m))
}

// serveEgressPages serves the fixture pages under /pages/ and, at /many, a
// page of egressSubres subresources of distinct URLs on the same origin (a
// third each stylesheets, images and scripts). Every response is no-store.
func serveEgressPages(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/pages/", http.StripPrefix("/pages/", http.FileServer(http.Dir(filepath.Join("..", "testdata", "pages")))))
	n := egressSubres / 3
	var page strings.Builder
	page.WriteString(`<!doctype html><html><head><meta charset="utf-8"><title>Many</title>`)
	for i := range n {
		fmt.Fprintf(&page, "<link rel=\"stylesheet\" href=\"/sub/s%d.css\">\n", i)
	}
	page.WriteString("</head><body><h1>Many subresources</h1>\n")
	for i := range n {
		fmt.Fprintf(&page, "<img src=\"/sub/i%d.svg\" width=\"8\" height=\"8\" alt=\"\">\n", i)
	}
	for i := range egressSubres - 2*n {
		fmt.Fprintf(&page, "<script src=\"/sub/j%d.js\"></script>\n", i)
	}
	page.WriteString("</body></html>")
	mux.HandleFunc(egressManyURL, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page.String())
	})
	mux.HandleFunc("/sub/", func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/sub/")
		id := strings.TrimLeft(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, ".css"), ".svg"), ".js"), "sij")
		switch {
		case strings.HasSuffix(name, ".css"):
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprintf(w, ".c%s{color:#%03x}\n", id, len(id))
		case strings.HasSuffix(name, ".svg"):
			w.Header().Set("Content-Type", "image/svg+xml")
			fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="#4a8"/></svg>`)
		case strings.HasSuffix(name, ".js"):
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprintf(w, "window.n%s=1;\n", id)
		default:
			http.NotFound(w, r)
		}
	})
	noStore := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	})
	return testkit.Serve(t, noStore)
}
