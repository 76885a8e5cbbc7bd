package tracing_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/chromegate/chromegate/cmd/chromegate/internal/tracing"
	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/internal/testkit/otlptest"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/policy/gate"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

const (
	traceID      = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpanID = "00f067aa0ba902b7"
	traceparent  = "00-" + traceID + "-" + parentSpanID + "-01"
)

// newServer is a server over a fake browser whose gate denies what
// mentions "denied", traced by a real OTLP exporter to r (untraced when r
// is nil).
func newServer(t testing.TB, r *otlptest.Receiver, ratio float64) (*mcp.Server, *tracing.Tracer) {
	t.Helper()
	if r == nil {
		return serverTraced(t, nil), nil
	}
	return newTraced(t, tracing.Options{Endpoint: r.URL, SampleRatio: ratio, Version: "test"})
}

// newServerExporting is newServer tracing every call to exp.
func newServerExporting(t testing.TB, exp sdktrace.SpanExporter) (*mcp.Server, *tracing.Tracer) {
	return newTraced(t, tracing.Options{Exporter: exp, SampleRatio: 1})
}

func newTraced(t testing.TB, o tracing.Options) (*mcp.Server, *tracing.Tracer) {
	t.Helper()
	tr, err := tracing.New(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	return serverTraced(t, tr), tr
}

// serverTraced is the server, traced by tr unless it is nil.
func serverTraced(t testing.TB, tr *tracing.Tracer) *mcp.Server {
	t.Helper()
	mgr := executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{executortest.NewBackend("fake")}})
	t.Cleanup(func() { _ = mgr.Close() })
	g := gatetest.Calls(func(_ context.Context, q gate.Question) error {
		if strings.Contains(q.URL, "denied") || strings.Contains(argString(q.Args, "url"), "denied") {
			return executor.Errorf(executor.CodePolicyDenied, "denied by policy: %s is not allowed", q.URL)
		}
		return nil
	})
	opts := mcp.Options{Manager: mgr, Gate: g}
	if tr != nil {
		opts.Gate, opts.Tracer = tr.Decider(g), tr
	}
	s, err := mcp.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func argString(args map[string]any, k string) string { s, _ := args[k].(string); return s }

// A call's span is a child of the caller's traceparent, with a child span
// per policy decision and one for the handler's run on the backend, and
// nothing the call typed or navigated to is in any span: not the typed
// value, not the URL's query (nor the URL), not the policy's reasons.
func TestSpanTreeAndNoSecrets(t *testing.T) {
	r := otlptest.Start(t)
	s, tr := newServer(t, r, 1)
	p := mcp.Principal{Name: "ci-key", Roles: []string{"agent"}, Transport: "http"}
	ctx := mcp.WithTraceParent(t.Context(), mcp.TraceParent{Traceparent: traceparent, Tracestate: "vendor=x"})
	const typed, token = "hunter2-typed-value", "tok-9f8e7d6c5b4a"
	calls := []struct{ tool, args string }{
		{"navigate", `{"url":"https://login.test/cb?token=` + token + `"}`},
		{"type", `{"selector":"#pw","text":"` + typed + `"}`},
		{"navigate", `{"url":"https://denied.test/?token=` + token + `"}`},
	}
	primitives := []string{"fake Navigate", "fake Type"}
	for _, c := range calls {
		if _, err := s.Call(ctx, "", p, c.tool, json.RawMessage(c.args)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := r.Wait(t, 30*time.Second, func(s []otlptest.Span) bool { return otlptest.Count(s, "tools/call ") == 3 })

	var roots []otlptest.Span
	byID := map[string]otlptest.Span{}
	for _, sp := range spans {
		byID[sp.SpanID] = sp
		if strings.HasPrefix(sp.Name, "tools/call ") {
			roots = append(roots, sp)
		}
	}
	for i, root := range roots {
		if root.TraceID != traceID || root.ParentSpanID != parentSpanID || root.TraceState != "vendor=x" {
			t.Errorf("call %d: trace %s parent %s state %q, want the caller's", i, root.TraceID, root.ParentSpanID, root.TraceState)
		}
		if root.Kind != "SPAN_KIND_SERVER" || root.Service != "chromegate" {
			t.Errorf("call %d: kind %s service %q", i, root.Kind, root.Service)
		}
		want := map[string]string{"gen_ai.tool.name": calls[i].tool, "chromegate.principal": "ci-key",
			"chromegate.session.kind": "default", "chromegate.backend": "fake", "mcp.method.name": "tools/call"}
		for k, v := range want {
			if root.Attrs[k] != v {
				t.Errorf("call %d: %s = %q, want %q (%v)", i, k, root.Attrs[k], v, root.Attrs)
			}
		}
		var children []string
		for _, sp := range spans {
			if sp.ParentSpanID == root.SpanID {
				children = append(children, sp.Name)
			}
		}
		ran := slices.Contains(children, "run "+calls[i].tool)
		if !slices.Contains(children, "policy call") || ran != (i != 2) { // the denied call runs nothing
			t.Errorf("call %d: children %q", i, children)
		}
		// The backend's primitive, under the run.
		if i != 2 && !otlptest.Under(spans, root, "run "+calls[i].tool, primitives[i]) {
			t.Errorf("call %d: no %q span under its run:\n%s", i, primitives[i], otlptest.Dump(spans))
		}
	}
	if o := roots[0].Attrs["chromegate.outcome"]; o != "ok" {
		t.Errorf("navigate outcome %q", o)
	}
	if o := roots[2].Attrs["chromegate.outcome"]; o != "POLICY_DENIED" || roots[2].Status != "STATUS_CODE_ERROR" {
		t.Errorf("denied navigate: outcome %q status %s", o, roots[2].Status)
	}
	var denied bool
	for _, sp := range spans {
		if sp.Name == "policy call" && sp.ParentSpanID == roots[2].SpanID {
			denied = sp.Attrs["chromegate.policy.result"] == "deny" && sp.Attrs["chromegate.policy.phase"] == "call" &&
				sp.Attrs["chromegate.policy.eval_us"] != ""
		}
	}
	if !denied {
		t.Errorf("no denying decision span under the denied call:\n%s", otlptest.Dump(spans))
	}
	// The attacker's side: nothing typed or visited left in a span.
	for _, leak := range otlptest.Leaks(spans, typed, token, "login.test", "denied.test", "token=", "#pw") {
		t.Error(leak)
	}
}

// A caller's unsampled parent is followed: no span is exported for the
// call, whatever the ratio.
func TestParentBasedSampling(t *testing.T) {
	r := otlptest.Start(t)
	s, tr := newServer(t, r, 1)
	ctx := mcp.WithTraceParent(t.Context(), mcp.TraceParent{Traceparent: "00-" + traceID + "-" + parentSpanID + "-00"})
	if _, err := s.Call(ctx, "", mcp.LocalPrincipal, "tabs_list", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	// A sampled call after it, flushed: the receiver has it and only it.
	if _, err := s.Call(t.Context(), "", mcp.LocalPrincipal, "chrome_status", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := tr.ForceFlush(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := r.Wait(t, 30*time.Second, func(s []otlptest.Span) bool { return otlptest.Count(s, "tools/call ") >= 1 })
	for _, sp := range spans {
		if sp.TraceID == traceID {
			t.Errorf("span %s of an unsampled parent exported", sp.Name)
		}
	}
	if n := otlptest.Count(spans, "tools/call "); n != 1 || otlptest.Count(spans, "tools/call chrome_status") != 1 {
		t.Errorf("calls exported: %d\n%s", n, otlptest.Dump(spans))
	}
}
