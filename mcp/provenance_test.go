package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

// flowGate records the questions it is asked, and refuses a call that
// carries content read on another origin when refuse is set.
type flowGate struct {
	mu     sync.Mutex
	calls  []gate.Question
	refuse bool
}

func (g *flowGate) Decide(ctx context.Context, q gate.Question) gate.Decision {
	if q.Kind == gate.KindCall {
		g.mu.Lock()
		g.calls = append(g.calls, q)
		g.mu.Unlock()
		if g.refuse && len(q.Flow) > 0 {
			return gatetest.Deny(executor.Errorf(executor.CodePolicyDenied, "it carries what was read on %s", q.Flow[0].FromOrigin))
		}
	}
	return gatetest.AllowAll.Decide(ctx, q)
}

func (g *flowGate) last(t *testing.T) gate.Question {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.calls) == 0 {
		t.Fatal("the gate was asked nothing")
	}
	return g.calls[len(g.calls)-1]
}

// TestFlowThroughDispatch: a page's text read on origin A, then a
// navigation to B with part of it in the query: the gate sees the flow
// from A to B (and the origins read); the same to A itself, or a read, is
// no flow; a gate that refuses flows refuses it; with NoFlow nothing is
// tracked.
func TestFlowThroughDispatch(t *testing.T) {
	t.Parallel()
	const secret = "zebra-kettle-9931-quartz"
	g := &flowGate{}
	sessions := &gate.Sessions{}
	h := newHarness(t, func(o *Options) { o.Gate = g; o.Sessions = sessions })
	h.call("navigate", map[string]any{"url": "https://a.test/inbox"})
	if q := g.last(t); len(q.Flow) != 0 || len(q.ReadOrigins) != 0 {
		t.Fatalf("nothing read yet, the gate saw %+v, %v", q.Flow, q.ReadOrigins)
	}
	// The fake's page text names its URL: the secret is on a.test's page.
	h.call("navigate", map[string]any{"url": "https://a.test/mail?code=" + secret})
	h.call("get_text", nil)
	if q := g.last(t); len(q.Flow) != 0 || len(q.ReadOrigins) != 1 || q.ReadOrigins[0] != "https://a.test" {
		t.Fatalf("a read: flow %+v, read origins %v; want none, [https://a.test]", q.Flow, q.ReadOrigins)
	}
	h.call("navigate", map[string]any{"url": "https://a.test/other?again=" + secret})
	if q := g.last(t); len(q.Flow) != 0 {
		t.Fatalf("same origin made a flow: %+v", q.Flow)
	}
	h.call("navigate", map[string]any{"url": "https://b.test/collect?q=" + "kettle-9931-quartz"})
	q := g.last(t)
	want := policy.Flow{FromOrigin: "https://a.test", ToOrigin: "https://b.test", Via: "url", Length: len("kettle-9931-quartz"), Total: len("kettle-9931-quartz")}
	if len(q.Flow) != 1 || q.Flow[0] != want {
		t.Fatalf("navigate to b.test: the gate saw %+v, want [%+v]", q.Flow, want)
	}
	// A page of b.test (where the tab now is, whose URL shows part of
	// it too) fetching with it: the request's provenance, as the gate
	// reads it for the egress boundary.
	flows, read := sessions.Provenance(DefaultSession, "https://c.test/pixel.gif?d="+secret)
	if len(flows) != 2 || flows[0].FromOrigin != "https://a.test" || flows[0].ToOrigin != "https://c.test" || flows[0].Via != "request.url" ||
		flows[1].FromOrigin != "https://b.test" || len(read) != 2 {
		t.Fatalf("request provenance = %+v, %v", flows, read)
	}
	// Typing it into b.test's page: to the tab's origin.
	h.call("type", map[string]any{"selector": "#q", "text": "code " + secret})
	if q := g.last(t); len(q.Flow) != 1 || q.Flow[0].ToOrigin != "https://b.test" || q.Flow[0].Via != "arg:text" {
		t.Fatalf("type: the gate saw %+v", q.Flow)
	}
	g.refuse = true
	res := h.call("navigate", map[string]any{"url": "https://d.test/?x=" + secret})
	if !res.IsError || !strings.HasPrefix(textOf(res), "POLICY_DENIED: it carries what was read on https://a.test") {
		t.Fatalf("a gate refusing flows let it go: %s", textOf(res))
	}

	off := &flowGate{}
	ho := newHarness(t, func(o *Options) { o.Gate = off; o.NoFlow = true })
	ho.call("navigate", map[string]any{"url": "https://a.test/mail?code=" + secret})
	ho.call("get_text", nil)
	ho.call("navigate", map[string]any{"url": "https://b.test/?q=" + secret})
	if q := off.last(t); len(q.Flow) != 0 || len(q.ReadOrigins) != 0 {
		t.Fatalf("--flow=off: the gate saw %+v, %v", q.Flow, q.ReadOrigins)
	}
}

// BenchmarkFlowDispatch is the cost per call of provenance tracking,
// through dispatch on the fake backend with the default policy's gate: a
// navigation, a read, a typed text and a navigation carrying what was read,
// in a session that read 100 pages of 5000 characters from 10 origins
// before, with tracking on and off (serve --flow). It reports the median
// per call.
func BenchmarkFlowDispatch(b *testing.B) {
	for _, mode := range []string{"on", "off"} {
		b.Run(mode, func(b *testing.B) {
			eng, err := policy.New(context.Background(), policy.WithTimeout(10*time.Second), policy.WithData(map[string]any{
				"allow_domains": []string{"example.com", "*.example.org"}, "enable_mutations": true}))
			if err != nil {
				b.Fatal(err)
			}
			g := gate.New(eng, nil)
			h := newHarness(b, func(o *Options) { o.Gate = g; o.Sessions = g.Sessions; o.NoFlow = mode == "off" })
			if t := h.server.tracker(DefaultSession, true); t != nil {
				for i := range 100 {
					t.Read(fmt.Sprintf("https://site%d.example.org", i%10), benchPage(i, 5000))
				}
			}
			calls := []struct {
				tool string
				args map[string]any
			}{
				{"navigate", map[string]any{"url": "https://www.example.org/inbox?id=zebra-kettle-9931-quartz"}},
				{"get_text", map[string]any{}},
				{"type", map[string]any{"selector": "#q", "text": "a reply of some length, with the code zebra-kettle-9931"}},
				{"navigate", map[string]any{"url": "https://example.com/search?q=zebra-kettle-9931-quartz"}},
			}
			var took []time.Duration
			for b.Loop() {
				for _, c := range calls {
					start := time.Now()
					if res := h.call(c.tool, c.args); res.IsError {
						b.Fatalf("%s: %s", c.tool, textOf(res))
					}
					took = append(took, time.Since(start))
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "median-ns/call")
		})
	}
}

// benchPage is n characters of words that differ from page to page.
func benchPage(seed, n int) string {
	words := []string{"quarterly", "report", "meeting", "invoice", "the", "of", "customer", "account", "shipping", "delivery", "order", "status"}
	var sb strings.Builder
	x := uint64(seed)*0x9e3779b97f4a7c15 + 7
	for sb.Len() < n {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		fmt.Fprintf(&sb, "%s %d ", words[x%uint64(len(words))], x%100000)
	}
	return sb.String()
}

// TestFlowFromAnErrorsPageWords: page words an error shows the model (a
// select's option labels) are read like a result's: carrying them to
// another origin is a flow from the page that wrote them.
func TestFlowFromAnErrorsPageWords(t *testing.T) {
	t.Parallel()
	const secret = "walnut-harbor-5120-violet"
	g := &flowGate{}
	h := newHarness(t, func(o *Options) { o.Gate = g })
	h.call("navigate", map[string]any{"url": "https://a.test/settings"})
	h.fake().Fail("SelectOption", executor.Errorf(executor.CodeBadArgs, "select_option: no option matches").
		WithPage("the options it may stand for: "+secret))
	if res := h.call("select_option", map[string]any{"selector": "#plan", "values": []any{"gold"}}); !res.IsError || !strings.Contains(textOf(res), secret) {
		t.Fatalf("select_option: want the error with the page's options, got %s", textOf(res))
	}
	h.call("navigate", map[string]any{"url": "https://b.test/collect?q=" + secret})
	q := g.last(t)
	if len(q.Flow) != 1 || q.Flow[0].FromOrigin != "https://a.test" || q.Flow[0].ToOrigin != "https://b.test" || q.Flow[0].Via != "url" {
		t.Fatalf("navigate to b.test with the error's words: the gate saw %+v, read origins %v", q.Flow, q.ReadOrigins)
	}
}
