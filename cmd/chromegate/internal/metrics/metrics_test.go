package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policy/gate"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

type allowAll struct{}

func (allowAll) Decide(context.Context, gate.Question) gate.Decision {
	return gate.Decision{Allow: true}
}

// TestLabelsBounded: calls of many page tools through page_tool_call, and
// decisions of an unknown kind, add no label value per name.
func TestLabelsBounded(t *testing.T) {
	m := New("test")
	for range 50 {
		m.ObserveCall("page_tool_call", "cdp", "ok", time.Millisecond)
	}
	m.ObserveCall("navigate", "", "POLICY_DENIED", time.Millisecond)
	if n := testutil.CollectAndCount(m.calls); n != 2 {
		t.Fatalf("call series = %d, want 2", n)
	}
	if v := testutil.ToFloat64(m.calls.WithLabelValues("page_tool_call", "cdp", "ok")); v != 50 {
		t.Fatalf("page_tool_call count = %v", v)
	}
	d := m.Decider(allowAll{})
	for _, k := range []gate.Kind{"teleport-1", "teleport-2", gate.KindCall} {
		d.Decide(t.Context(), gate.Question{Kind: k})
	}
	if n := testutil.CollectAndCount(m.decisions); n != 2 {
		t.Fatalf("decision series = %d, want 2 (call, other)", n)
	}
	if v := testutil.ToFloat64(m.decisions.WithLabelValues("other", "allow")); v != 2 {
		t.Fatalf("other = %v", v)
	}
}

func TestHandler(t *testing.T) {
	m := New("v1")
	m.ObserveCall("navigate", "cdp", "ok", time.Millisecond)
	notReady := errors.New("no browser")
	var readyErr error = notReady
	srv := httptest.NewServer(m.Handler(func(context.Context) error { return readyErr }))
	defer srv.Close()
	get := func(path string) (int, string) {
		r, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	if c, _ := get("/healthz"); c != 200 {
		t.Fatalf("healthz %d", c)
	}
	if c, _ := get("/readyz"); c != 503 {
		t.Fatalf("readyz not ready %d", c)
	}
	readyErr = nil
	if c, _ := get("/readyz"); c != 200 {
		t.Fatalf("readyz ready %d", c)
	}
	_, body := get("/metrics")
	for _, want := range []string{`chromegate_tool_calls_total{backend="cdp",outcome="ok",tool="navigate"} 1`, `chromegate_build_info{goversion=`} {
		if !strings.Contains(body, want) {
			t.Fatalf("metrics lack %s:\n%s", want, body)
		}
	}
}

// What the metrics add to one call: a counted call and two decisions
// through the wrapped gate (the Prometheus side of the observe stage).
func BenchmarkObserve(b *testing.B) {
	m := New("bench")
	d := m.Decider(allowAll{})
	q := gate.Question{Kind: gate.KindCall}
	b.ReportAllocs()
	for b.Loop() {
		d.Decide(context.Background(), q)
		d.Decide(context.Background(), gate.Question{Kind: gate.KindLanded})
		m.ObserveCall("click", "cdp", "ok", time.Millisecond)
	}
}

// Each request the boundary refuses is a request-phase denial.
func TestRequestsCounted(t *testing.T) {
	m := New("test")
	d := m.Requests(egress.DeciderFunc(func(_ context.Context, r *egress.Request) egress.Verdict {
		return egress.Verdict{Allow: r.URL == "https://ok.test/"}
	}))
	for _, u := range []string{"https://ok.test/", "http://10.0.0.1/?secret=1", "http://10.0.0.2/"} {
		d.DecideRequest(t.Context(), &egress.Request{URL: u})
	}
	if v := testutil.ToFloat64(m.egressDenials); v != 2 {
		t.Fatalf("denials = %v", v)
	}
	if v := testutil.ToFloat64(m.decisions.WithLabelValues("request", "allow")); v != 1 {
		t.Fatalf("allowed = %v", v)
	}
}
