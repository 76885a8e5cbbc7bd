// Package metrics is chromegate's Prometheus metrics (client_golang), on
// the listener of serve --metrics-addr, with the health endpoints a
// container probe uses: /metrics, /healthz (the process answers) and
// /readyz (the browser backend can serve).
//
// The rule: every label value comes from a closed set the server knows
// before any call — a registered tool's name (a live page tool is the one
// tool that calls it), a backend's name, an error code, a policy question's
// kind, allow or deny. Never a URL, page text, a principal-supplied string
// or a session id: a label value per caller would grow the series without
// bound.
package metrics

import (
	"context"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policy/gate"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the collectors, on a registry of their own.
type Metrics struct {
	Registry  *prometheus.Registry
	calls     *prometheus.CounterVec
	callTime  *prometheus.HistogramVec
	decisions *prometheus.CounterVec
	decTime   *prometheus.HistogramVec

	egressDenials prometheus.Counter
}

// New registers chromegate's collectors, the Go runtime's and the
// process's, and chromegate_build_info for version.
func New(version string) *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chromegate_tool_calls_total",
			Help: "Tool calls by tool, backend and outcome (ok or an error code).",
		}, []string{"tool", "backend", "outcome"}),
		callTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chromegate_tool_call_duration_seconds",
			Help:    "Tool call latency by tool and backend.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"tool", "backend"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chromegate_policy_decisions_total",
			Help: "Policy decisions by phase (the gate's question kind) and result (allow or deny).",
		}, []string{"phase", "result"}),
		decTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chromegate_policy_evaluation_seconds",
			Help:    "Policy evaluation time by phase.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1},
		}, []string{"phase"}),
		egressDenials: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "chromegate_egress_denials_total",
			Help: "Requests of the browser's pages the egress boundary refused (request phase).",
		}),
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "chromegate_build_info",
		Help:        "chromegate's version and Go version; always 1.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": goVersion()},
	})
	build.Set(1)
	r.MustRegister(m.calls, m.callTime, m.decisions, m.decTime, m.egressDenials, build,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func goVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.GoVersion
	}
	return ""
}

// ObserveCall counts a tool call (mcp.Observer).
func (m *Metrics) ObserveCall(tool, backend, outcome string, took time.Duration) {
	if backend == "" {
		backend = "none"
	}
	m.calls.WithLabelValues(tool, backend, outcome).Inc()
	m.callTime.WithLabelValues(tool, backend).Observe(took.Seconds())
}

// phases are the gate's question kinds: a kind outside them (a newer one
// this list missed) is counted as "other", keeping the set closed.
var phases = map[gate.Kind]bool{
	gate.KindCall: true, gate.KindLanded: true, gate.KindHop: true, gate.KindFrame: true,
	gate.KindOrigin: true, gate.KindTab: true, gate.KindDialog: true, gate.KindDocument: true,
	gate.KindList: true, gate.KindRequest: true,
}

// Decider counts and times every decision d makes.
func (m *Metrics) Decider(d gate.Decider) gate.Decider { return decider{m, d} }

type decider struct {
	m *Metrics
	d gate.Decider
}

func (d decider) Decide(ctx context.Context, q gate.Question) gate.Decision {
	start := time.Now()
	dec := d.d.Decide(ctx, q)
	d.m.ObserveDecision(q.Kind, dec.Allow, time.Since(start))
	return dec
}

// ObserveDecision counts one policy decision of kind k.
func (m *Metrics) ObserveDecision(k gate.Kind, allow bool, took time.Duration) {
	phase := string(k)
	if !phases[k] {
		phase = "other"
	}
	result := "deny"
	if allow {
		result = "allow"
	}
	m.decisions.WithLabelValues(phase, result).Inc()
	m.decTime.WithLabelValues(phase).Observe(took.Seconds())
}

// Handler serves /metrics, /healthz (200 while the process answers) and
// /readyz (200 when ready returns nil, 503 with its error otherwise).
func (m *Metrics) Handler(ready func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if ready != nil {
			if err := ready(r.Context()); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	return mux
}

// Requests counts and times every decision of the egress boundary (the
// page's own requests: phase "request", and each denial in
// chromegate_egress_denials_total).
func (m *Metrics) Requests(d egress.Decider) egress.Decider { return requests{m, d} }

type requests struct {
	m *Metrics
	d egress.Decider
}

func (r requests) DecideRequest(ctx context.Context, req *egress.Request) egress.Verdict {
	start := time.Now()
	v := r.d.DecideRequest(ctx, req)
	r.m.ObserveDecision(gate.KindRequest, v.Allow, time.Since(start))
	if !v.Allow {
		r.m.egressDenials.Inc()
	}
	return v
}
