package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/executor"
)

// An eval decided on the URL the backend last heard of (no round trip)
// runs only while the page is still there. A page that moved to a denied
// host under the decision runs nothing: the call is decided again on the
// URL read from the browser, and refused there.
func TestEvalOnAPeekedPage(t *testing.T) {
	t.Parallel()
	g := newPolicyGate(t, map[string]any{"allow_domains": []string{"a.test", "b.test"}, "enable_eval": true})
	h := newHarness(t, func(o *Options) { o.Gate = g })
	f := h.fake()
	count := func(method string) int {
		n := 0
		for _, c := range f.Calls() {
			if c.Method == method {
				n++
			}
		}
		return n
	}
	h.call("navigate", map[string]any{"url": "https://a.test/"})
	f.SetPeek(func(string) (executor.Tab, bool) { return executor.Tab{ID: "fake:s1:1", URL: "https://a.test/"}, true })

	// The page is where the backend last heard: one Eval, no TabInfo.
	tabInfos, evals := count("TabInfo"), count("Eval")
	if res := h.call("eval", map[string]any{"expression": "1+1"}); res.IsError {
		t.Fatalf("eval on a.test: %s", textOf(res))
	}
	if count("TabInfo") != tabInfos || count("Eval") != evals+1 {
		t.Errorf("a peeked eval read the tab (%d TabInfo) or evaluated %d times", count("TabInfo")-tabInfos, count("Eval")-evals)
	}
	if c := f.Calls()[len(f.Calls())-1]; c.Method != "Eval" || c.Params.(executor.EvalParams).ExpectURL != "https://a.test/" {
		t.Errorf("the eval did not carry the URL it was decided on: %#v", c)
	}

	// The page went to b.test, which the policy denies eval on (a
	// navigation the backend has not heard of yet): nothing runs there.
	g2 := newPolicyGate(t, map[string]any{"allow_domains": []string{"a.test"}, "enable_eval": true})
	h2 := newHarness(t, func(o *Options) { o.Gate = g2 })
	f2 := h2.fake()
	h2.call("navigate", map[string]any{"url": "https://a.test/"})
	f2.Handle("TabInfo", func(context.Context, any) (any, error) {
		return executor.Tab{ID: "fake:s1:1", URL: "https://b.test/"}, nil
	})
	f2.Handle("Eval", func(_ context.Context, p any) (any, error) {
		if p.(executor.EvalParams).ExpectURL != "https://b.test/" {
			return nil, executor.ErrPageMoved
		}
		t.Error("the eval ran on b.test")
		return executor.EvalResult{OK: true, Value: []byte(`"SECRET of b.test"`)}, nil
	})
	f2.SetPeek(func(string) (executor.Tab, bool) { return executor.Tab{ID: "fake:s1:1", URL: "https://a.test/"}, true })
	res := h2.call("eval", map[string]any{"expression": "document.cookie"})
	if txt := textOf(res); !res.IsError || !strings.Contains(txt, "POLICY_DENIED") || strings.Contains(txt, "SECRET") {
		t.Errorf("an eval whose page moved to a denied host: %s", txt)
	}
	evals, infos := 0, 0
	for _, c := range f2.Calls() {
		switch c.Method {
		case "Eval":
			evals++
		case "TabInfo":
			infos++
		}
	}
	if evals != 1 || infos < 1 {
		t.Errorf("want one refused Eval and the tab read from the browser, got %d Eval, %d TabInfo", evals, infos)
	}
}
