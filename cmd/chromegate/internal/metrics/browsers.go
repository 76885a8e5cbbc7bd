package metrics

import (
	"github.com/chromegate/chromegate/executor"
	"github.com/prometheus/client_golang/prometheus"
)

// SessionKinds are the kinds a session is counted by (mcp.SessionKind):
// each series exists from the start, at zero.
var SessionKinds = []string{"default", "mcp", "named", "handle"}

// Browsers registers the collectors of browsers and sessions and returns
// the executor.Events that feeds them, for the Manager and the CDP
// backend: browser starts by result, browsers that ended unclosed
// (crashed, killed, disconnected: each one the next call restarts), and
// browser sessions — live, opened and closed — by kind. kind maps a
// Manager session to one of SessionKinds; a value outside them is
// counted as "other", keeping the label set closed. Call it once.
func (m *Metrics) Browsers(kind func(session string) string) executor.Events {
	e := &events{
		kind: kind,
		launches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chromegate_browser_launches_total",
			Help: "Browsers a backend started (launched or attached to), by backend and result (ok or failed).",
		}, []string{"backend", "result"}),
		crashes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chromegate_browser_crashes_total",
			Help: "Browsers that ended without the server closing them (crashed, killed, disconnected), by backend; the next call starts another.",
		}, []string{"backend"}),
		live: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "chromegate_sessions",
			Help: "Live browser sessions (each a browser context) by kind: default (stdio's), mcp (a stateful MCP session's), named, handle.",
		}, []string{"kind"}),
		opened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chromegate_sessions_opened_total",
			Help: "Browser sessions opened, by kind.",
		}, []string{"kind"}),
		closed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chromegate_sessions_closed_total",
			Help: "Browser sessions closed (ended, idle, or gone with their browser), by kind.",
		}, []string{"kind"}),
		lost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chromegate_sessions_lost_total",
			Help: "Browser sessions whose executor died (gone) or stopped answering (unresponsive) under them, by backend and reason; the next call reopens them.",
		}, []string{"backend", "reason"}),
	}
	for _, k := range SessionKinds {
		e.live.WithLabelValues(k)
		e.opened.WithLabelValues(k)
		e.closed.WithLabelValues(k)
	}
	m.Registry.MustRegister(e.launches, e.crashes, e.live, e.opened, e.closed, e.lost)
	return e
}

type events struct {
	kind                 func(string) string
	launches, crashes    *prometheus.CounterVec
	live                 *prometheus.GaugeVec
	opened, closed, lost *prometheus.CounterVec
}

var kinds = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range SessionKinds {
		m[k] = true
	}
	return m
}()

func (e *events) kindOf(session string) string {
	if k := e.kind(session); kinds[k] {
		return k
	}
	return "other"
}

func (e *events) Launched(backend string, err error) {
	result := "ok"
	if err != nil {
		result = "failed"
	}
	e.launches.WithLabelValues(backend, result).Inc()
}

func (e *events) Crashed(backend string) { e.crashes.WithLabelValues(backend).Inc() }

func (e *events) SessionOpened(_, session string) {
	k := e.kindOf(session)
	e.opened.WithLabelValues(k).Inc()
	e.live.WithLabelValues(k).Inc()
}

func (e *events) SessionClosed(_, session string) {
	k := e.kindOf(session)
	e.closed.WithLabelValues(k).Inc()
	e.live.WithLabelValues(k).Dec()
}

// reasons are executor's Lost* values; another is "other".
var reasons = map[string]bool{executor.LostGone: true, executor.LostUnresponsive: true}

func (e *events) SessionLost(backend, _, why string) {
	if !reasons[why] {
		why = "other"
	}
	e.lost.WithLabelValues(backend, why).Inc()
}
