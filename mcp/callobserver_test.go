package mcp

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"
)

type countingObserver struct {
	calls    atomic.Int64
	tool     atomic.Value
	outcome  atomic.Value
	backends atomic.Value
}

func (o *countingObserver) ObserveCall(tool, backend, outcome string, _ time.Duration) {
	o.calls.Add(1)
	o.tool.Store(tool)
	o.backends.Store(backend)
	o.outcome.Store(outcome)
}

// The Observer hears every call once, with the tool's name, the backend
// and how it ended (ok, or the error code the caller saw).
func TestObserverHearsEveryCall(t *testing.T) {
	t.Parallel()
	obs := &countingObserver{}
	h := newHarness(t, func(o *Options) { o.Observer = obs })
	h.fake()
	if res := h.call("navigate", map[string]any{"url": "https://a.test/"}); res.IsError {
		t.Fatal(textOf(res))
	}
	if obs.calls.Load() != 1 || obs.tool.Load() != "navigate" || obs.outcome.Load() != "ok" || obs.backends.Load() == "" {
		t.Fatalf("observed %d calls, last %v on %q: %v", obs.calls.Load(), obs.tool.Load(), obs.backends.Load(), obs.outcome.Load())
	}
	if res := h.call("navigate", map[string]any{"url": 7}); !res.IsError {
		t.Fatal("bad args accepted")
	}
	if obs.calls.Load() != 2 || obs.outcome.Load() != "BAD_ARGS" {
		t.Fatalf("observed %d calls, last outcome %v", obs.calls.Load(), obs.outcome.Load())
	}
}

// The observe stage's cost per call, off (no Observer: the stage is not
// on the path) and on (an Observer that counts).
func BenchmarkObserver(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			h := newHarness(b, func(o *Options) {
				if on {
					o.Observer = &countingObserver{}
				}
			})
			h.fake()
			args := json.RawMessage(`{"selector":"#go","button":"left"}`)
			b.ReportAllocs()
			for b.Loop() {
				res, err := h.server.Call(context.Background(), "", LocalPrincipal, "click", args)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
