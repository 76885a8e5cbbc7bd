//go:build peers

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/chromegate/chromegate/executor/cdp"
)

// TestPeersPerCall measures what one call costs where the browser does
// little: an evaluate of 1+1 and a click on a button, by CSS selector and
// by the ref (uid) of a snapshot, on every server in one run. Calls are
// interleaved — each round calls every operation of every server once —
// so the machine's load falls on all alike; medians and p90 over
// CHROMEGATE_PERCALL_ROUNDS rounds (default 60) after 5 of warm-up.
//
// chromegate runs twice: as built, and with CHROMEGATE_SELECTOR_CLICK=
// locator, which sends every selector click through Playwright's Locator
// (the path before selector clicks took a ref's): the before figure,
// measured beside the after.
func TestPeersPerCall(t *testing.T) {
	chromium, err := cdp.FindChromium("")
	if err != nil {
		t.Fatalf("no Chromium: %v", err)
	}
	rounds := 60
	if v, err := strconv.Atoi(os.Getenv("CHROMEGATE_PERCALL_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	const warm = 5
	bin := installPeers(t, filepath.Join(cdp.DefaultCacheDir(), "peers"))
	cg := buildChromegate(t)
	page := servePages(t) + "/bench"

	byName := map[string]*server{}
	for _, sv := range configs(cg, bin, chromium) {
		byName[sv.name] = sv
	}
	type op struct {
		name string
		call func(s *session) (string, map[string]any)
	}
	fixed := func(tool string, args map[string]any) func(*session) (string, map[string]any) {
		return func(*session) (string, map[string]any) { return tool, args }
	}
	cgClick := func(by string, changes bool) func(*session) (string, map[string]any) {
		return func(s *session) (string, map[string]any) {
			if by == "ref" {
				return "click", map[string]any{"ref": s.vars["ref"], "changes": changes}
			}
			return "click", map[string]any{"selector": "#b", "changes": changes}
		}
	}
	cgEval := fixed("eval", map[string]any{"expression": "1+1"})
	pwOps := []op{
		{"evaluate", fixed("browser_evaluate", map[string]any{"function": "() => 1+1"})},
		{"click selector", fixed("browser_click", map[string]any{"target": "#b"})},
		{"click ref", func(s *session) (string, map[string]any) {
			return "browser_click", map[string]any{"target": s.vars["pwref"]}
		}},
	}
	pwPrepare := func(s *session) {
		res, _ := s.call("browser_snapshot", map[string]any{})
		m := pwRef.FindStringSubmatch(text(res))
		if m == nil {
			s.t.Fatalf("no ref for the button in:\n%s", short(text(res)))
		}
		s.vars["pwref"] = m[1]
	}
	locator := *byName["chromegate"]
	locator.name = "chromegate (locator clicks)"
	locator.argv = append([]string{"env", "CHROMEGATE_SELECTOR_CLICK=locator"}, locator.argv...)
	type entry struct {
		sv      *server
		ops     []op
		prepare func(*session)
	}
	entries := []entry{
		{sv: byName["chromegate"], ops: []op{
			{"evaluate", cgEval},
			{"click selector", cgClick("selector", false)},
			{"click ref", cgClick("ref", false)},
			{"click selector, changes on", cgClick("selector", true)},
			{"click ref, changes on", cgClick("ref", true)},
		}},
		{sv: &locator, ops: []op{
			{"click selector", cgClick("selector", false)},
		}},
		{sv: byName["playwright-mcp"], ops: pwOps, prepare: pwPrepare},
		{sv: byName["playwright-mcp fast"], ops: pwOps, prepare: pwPrepare},
		{sv: byName["devtools-mcp"], ops: []op{
			{"evaluate", fixed("evaluate_script", map[string]any{"pageId": 1, "function": "() => 1+1", "waitForStableDom": false})},
			{"click ref", func(s *session) (string, map[string]any) {
				return "click", map[string]any{"pageId": 1, "uid": s.vars["button"]}
			}},
		}},
		{sv: byName["devtools-mcp slim"], ops: []op{
			{"evaluate", fixed("evaluate", map[string]any{"script": "1+1"})},
		}},
	}

	sessions := make([]*session, len(entries))
	for i, e := range entries {
		s := start(t, e.sv)
		defer s.close()
		name, args := e.sv.navigate(page)
		s.call(name, args)
		if e.sv.prepare != nil {
			e.sv.prepare(s)
		}
		if e.prepare != nil {
			e.prepare(s)
		}
		sessions[i] = s
	}

	lat := map[string]map[string][]time.Duration{} // server -> op -> calls
	for r := range warm + rounds {
		for i, e := range entries {
			for _, o := range e.ops {
				name, args := o.call(sessions[i])
				_, d := sessions[i].call(name, args)
				if r < warm {
					continue
				}
				if lat[e.sv.name] == nil {
					lat[e.sv.name] = map[string][]time.Duration{}
				}
				lat[e.sv.name][o.name] = append(lat[e.sv.name][o.name], d)
			}
		}
	}

	ops := []string{"evaluate", "click selector", "click ref", "click selector, changes on", "click ref, changes on"}
	var out strings.Builder
	fmt.Fprintf(&out, "\nper-call overhead over MCP stdio: median / p90 ms, %d interleaved rounds after %d of warm-up\n\n", rounds, warm)
	w := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := []string{"op"}
	for _, e := range entries {
		hdr = append(hdr, e.sv.name)
	}
	fmt.Fprintln(w, strings.Join(hdr, "\t")+"\t")
	for _, o := range ops {
		row := []string{o}
		for _, e := range entries {
			ds := lat[e.sv.name][o]
			if len(ds) == 0 {
				row = append(row, "—")
				continue
			}
			row = append(row, ms(median(ds))+" / "+ms(pct(ds, 0.9)))
		}
		fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
	}
	w.Flush()

	med := func(server, op string) float64 { return float64(median(lat[server][op])) }
	bestPeer := func(op string) (float64, string) {
		best, who := 0.0, ""
		for _, e := range entries[2:] {
			if d := med(e.sv.name, op); d > 0 && (best == 0 || d < best) {
				best, who = d, e.sv.name
			}
		}
		return best, who
	}
	cgEvalMed := med("chromegate", "evaluate")
	bestEval, bestEvalWho := bestPeer("evaluate")
	fmt.Fprintf(&out, "\nPERCALL evaluate: chromegate %s ms, best peer %s %s ms: chromegate/peer %s (aim ≤ 1.00×)\n",
		ms(time.Duration(cgEvalMed)), bestEvalWho, ms(time.Duration(bestEval)), ratio(cgEvalMed, bestEval))
	sel, ref := med("chromegate", "click selector"), med("chromegate", "click ref")
	fmt.Fprintf(&out, "PERCALL click by selector / by ref (changes off): %s / %s ms = %s (aim ≤ 2.00×)\n",
		ms(time.Duration(sel)), ms(time.Duration(ref)), ratio(sel, ref))
	selOn, refOn := med("chromegate", "click selector, changes on"), med("chromegate", "click ref, changes on")
	fmt.Fprintf(&out, "PERCALL click by selector / by ref (changes on): %s / %s ms = %s\n",
		ms(time.Duration(selOn)), ms(time.Duration(refOn)), ratio(selOn, refOn))
	before := med(locator.name, "click selector")
	fmt.Fprintf(&out, "PERCALL click by selector, before (Locator) / after: %s / %s ms = %s\n",
		ms(time.Duration(before)), ms(time.Duration(sel)), ratio(before, sel))
	bestSel, bestSelWho := bestPeer("click selector")
	fmt.Fprintf(&out, "PERCALL click by selector: best peer %s %s ms / chromegate: %s\n",
		bestSelWho, ms(time.Duration(bestSel)), ratio(bestSel, sel))
	bestRef, bestRefWho := bestPeer("click ref")
	fmt.Fprintf(&out, "PERCALL click by ref: best peer %s %s ms / chromegate: %s\n",
		bestRefWho, ms(time.Duration(bestRef)), ratio(bestRef, ref))
	fmt.Fprintf(&out, "Chromium: %s; peers: %s, %s; machine: %s\n", chromium, playwrightMCP, devtoolsMCP, cpuModel())
	t.Log(out.String())
	fmt.Println(out.String())
}

// pwRef is the ref of the bench page's button in Playwright MCP's snapshot.
var pwRef = regexp.MustCompile(`button "count" \[ref=(e[0-9]+)\]`)
