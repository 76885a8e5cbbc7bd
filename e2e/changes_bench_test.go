package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// changesFlow is a multi-step task as a model runs it: load a page, read
// its outline once, then act.
type changesFlow struct {
	name  string
	url   string
	steps []changesStep
}

type changesStep struct {
	tool string
	args map[string]any
}

// flowRun is what one way of running a flow cost the model.
type flowRun struct {
	calls, chars int
	wall         time.Duration
}

// runFlow runs f with changes on (each action's result says what changed)
// or off (a snapshot after each action, the way to see it without).
func runFlow(b *testing.B, s *server, f changesFlow, on bool) flowRun {
	b.Helper()
	var r flowRun
	call := func(tool string, args map[string]any) {
		res := s.call(tool, args)
		r.calls++
		r.chars += len([]rune(resultText(res)))
	}
	start := time.Now()
	call("navigate", map[string]any{"url": f.url})
	call("snapshot", nil)
	for _, st := range f.steps {
		args := map[string]any{"changes": on}
		for k, v := range st.args {
			args[k] = v
		}
		call(st.tool, args)
		if !on {
			call("snapshot", nil)
		}
	}
	r.wall = time.Since(start)
	return r
}

// BenchmarkChanges measures acting calls with changes against the same
// flows with a snapshot after each action, and the latency changes add to
// a click by ref. Run it once:
//
//	go test -run XX -bench BenchmarkChanges -benchtime 1x ./e2e/
func BenchmarkChanges(b *testing.B) {
	needBrowser(b)
	mux := http.NewServeMux()
	mux.Handle("/demo/", http.StripPrefix("/demo/", http.FileServer(http.Dir("../cmd/chromegate/internal/demo/site"))))
	demo := "http://127.0.0.1:" + servePort(b, mux)
	base := site(b)
	changes := "http://127.0.0.1:" + changesSite(b)
	flows := []changesFlow{
		{"demo sign-up", demo + "/demo/index.html", []changesStep{
			{"fill", map[string]any{"selector": "#name", "value": "Ada Lovelace"}},
			{"fill", map[string]any{"selector": "#email", "value": "ada@example.com"}},
			{"select_option", map[string]any{"selector": "#plan", "values": []string{"pro"}}},
			{"click", map[string]any{"selector": "#terms"}},
			{"click", map[string]any{"selector": "#submit"}},
			{"click", map[string]any{"selector": "#like"}},
		}},
		{"panel", changes + "/panel", []changesStep{
			{"click", map[string]any{"selector": "#open"}},
			{"click", map[string]any{"selector": "#dark"}},
			{"click", map[string]any{"selector": "#save"}},
			{"fill", map[string]any{"selector": "#name", "value": "Grace"}},
			{"click", map[string]any{"selector": "#push"}},
		}},
		{"e2e form", base + "/form", []changesStep{
			{"fill", map[string]any{"selector": "#name", "value": "Ada"}},
			{"type", map[string]any{"selector": "#typed", "text": " and more", "press_enter": true}},
			{"select_option", map[string]any{"selector": "#plan", "values": []string{"Pro plan"}}},
			{"click", map[string]any{"selector": "#counter"}},
			{"click", map[string]any{"selector": "#counter"}},
			{"hover", map[string]any{"selector": "#hover"}},
		}},
	}
	s := startServer(b, permissive...)
	measured := false
	for b.Loop() {
		if measured {
			continue // one measurement is the report; make bench asks for 30
		}
		measured = true
		var out strings.Builder
		fmt.Fprintf(&out, "\n%-14s %22s %22s %22s\n", "flow", "calls on/off", "characters on/off", "median wall ms on/off")
		for _, f := range flows {
			// Warm the page once, then each way in turn, five times:
			// the median wall time of each (calls and characters do not
			// vary).
			runFlow(b, s, f, true)
			var ons, offs []time.Duration
			var on, off flowRun
			for range 5 {
				on, off = runFlow(b, s, f, true), runFlow(b, s, f, false)
				ons, offs = append(ons, on.wall), append(offs, off.wall)
			}
			on.wall, off.wall = median(ons), median(offs)
			fmt.Fprintf(&out, "%-14s %9d / %-4d %.2f× %9d / %-6d %.2f× %8d / %-6d %.2f×\n", f.name,
				on.calls, off.calls, float64(on.calls)/float64(off.calls),
				on.chars, off.chars, float64(on.chars)/float64(off.chars),
				on.wall.Milliseconds(), off.wall.Milliseconds(), float64(on.wall)/float64(off.wall))
		}

		// The latency changes add to a click by ref: the same button,
		// clicked with changes on and off in turn.
		s.call("navigate", map[string]any{"url": base + "/form"})
		ref := refIn(b, s, "count")
		var withC, without []time.Duration
		for i := range 80 {
			on := i%2 == 0
			start := time.Now()
			s.call("click", map[string]any{"ref": ref, "changes": on})
			d := time.Since(start)
			if on {
				withC = append(withC, d)
			} else {
				without = append(without, d)
			}
		}
		p := func(d []time.Duration, q float64) time.Duration {
			d = slices.Clone(d)
			slices.Sort(d)
			return d[min(len(d)-1, int(q*float64(len(d))))]
		}
		fmt.Fprintf(&out, "click by ref: p50 %v on, %v off (+%v); p95 %v on, %v off (+%v)\n",
			p(withC, 0.5).Round(100*time.Microsecond), p(without, 0.5).Round(100*time.Microsecond), (p(withC, 0.5) - p(without, 0.5)).Round(100*time.Microsecond),
			p(withC, 0.95).Round(100*time.Microsecond), p(without, 0.95).Round(100*time.Microsecond), (p(withC, 0.95) - p(without, 0.95)).Round(100*time.Microsecond))
		b.Log(out.String())
	}
}

// refIn returns the ref of the first outline line holding words.
func refIn(b testing.TB, s *server, words string) string {
	b.Helper()
	text := resultText(s.call("snapshot", nil))
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if ref, rest, ok := strings.Cut(l, " "); ok && strings.Contains(rest, words) && strings.IndexFunc(ref, func(r rune) bool { return r >= '0' && r <= '9' }) > 0 {
			return ref
		}
	}
	b.Fatalf("no ref for %q in:\n%s", words, text)
	return ""
}
