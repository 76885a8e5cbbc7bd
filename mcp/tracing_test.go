package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// recTracer records what a Tracer is told, in order.
type recTracer struct {
	mu     sync.Mutex
	events []string
	parent TraceParent
	call   TraceCall
}

func (r *recTracer) add(e string) { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() }

func (r *recTracer) StartCall(ctx context.Context, c TraceCall) (context.Context, TraceSpan) {
	r.mu.Lock()
	r.call = c
	r.mu.Unlock()
	r.add("call " + c.Tool)
	return ctx, recSpan{r, "call"}
}

func (r *recTracer) StartRun(ctx context.Context, tool, backend string) (context.Context, TraceSpan) {
	r.add("run " + tool + " on " + backend)
	return ctx, recSpan{r, "run"}
}

func (r *recTracer) StartPrimitive(ctx context.Context, backend, name string) (context.Context, func(error)) {
	r.add(backend + " " + name)
	return ctx, func(error) { r.add("end " + name) }
}

type recSpan struct {
	r    *recTracer
	what string
}

func (s recSpan) End(backend, outcome string) {
	s.r.add("end " + s.what + " " + backend + " " + outcome)
}

// The Tracer hears each call: its span begins before the tool runs, its
// run and the backend's primitives nest inside, and it ends with the
// backend and the outcome; the trace context in the request's _meta is
// the call's parent.
func TestTracerSpansACall(t *testing.T) {
	t.Parallel()
	tr := &recTracer{}
	h := newHarness(t, func(o *Options) { o.Tracer = tr })
	h.fake()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	res, err := h.client.CallTool(t.Context(), &sdk.CallToolParams{Name: "navigate", Arguments: map[string]any{"url": "https://a.test/"},
		Meta: sdk.Meta{"traceparent": tp, "tracestate": "v=1"}})
	if err != nil || res.IsError {
		t.Fatal(err, textOf(res))
	}
	tr.mu.Lock()
	events, call := slices.Clone(tr.events), tr.call
	tr.mu.Unlock()
	if call.Parent != (TraceParent{tp, "v=1"}) || call.Principal != LocalPrincipal.Name || call.Session != DefaultSession {
		t.Errorf("call = %+v", call)
	}
	i := slices.Index(events, "run navigate on fake")
	nav := slices.Index(events, "fake Navigate")
	if events[0] != "call navigate" || i < 0 || nav < i || events[len(events)-1] != "end call fake ok" ||
		slices.Index(events, "end run fake ok") < nav {
		t.Errorf("events = %q", events)
	}

	// A call refused before any browser: its code, no run.
	tr.mu.Lock()
	tr.events = nil
	tr.mu.Unlock()
	if res, _ := h.server.Call(t.Context(), "", LocalPrincipal, "navigate", json.RawMessage(`{"url":7}`)); !res.IsError {
		t.Fatal("bad args accepted")
	}
	if want := []string{"call navigate", "end call  BAD_ARGS"}; !slices.Equal(tr.events, want) {
		t.Errorf("events = %q, want %q", tr.events, want)
	}
}

// SessionKind names every Manager session by a closed set of kinds.
func TestSessionKind(t *testing.T) {
	t.Parallel()
	for session, want := range map[string]string{"": "default", "handle:cgs_x": "handle", "named:k:default": "named", "mcp:a1b2": "mcp", "a1b2": "mcp"} {
		if got := SessionKind(session); got != want {
			t.Errorf("SessionKind(%q) = %q, want %q", session, got, want)
		}
	}
}
