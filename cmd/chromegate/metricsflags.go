package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/chromegate/chromegate/cmd/chromegate/internal/metrics"
	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/httpapi"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// startMetrics serves serve --metrics-addr: Prometheus metrics at /metrics,
// /healthz and /readyz (internal/metrics). Off (nil, nothing served) when
// addr is empty: the default costs nothing. Like --http, a non-loopback
// address needs --allow-remote; a loopback one answers only requests
// that name a loopback host (DNS rebinding). Readiness is a policy in
// force (with --opa-config, a bundle activated: until then every call is
// denied) and the default session's browser backend answering within 5 s.
func startMetrics(ctx context.Context, m *metrics.Metrics, addr string, mgr *executor.Manager, policyStatus func() policy.Status, log *slog.Logger) error {
	if m == nil {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	ready := func(ctx context.Context) error {
		if w := policyStatus().Waiting; w != "" {
			return errors.New(w)
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err := mgr.Ready(ctx, mcp.DefaultSession)
		return err
	}
	h := m.Handler(ready)
	if host, _, _ := net.SplitHostPort(addr); httpapi.IsLoopback(host) {
		// On loopback, as pprof: a page that rebinds a name to 127.0.0.1
		// reads nothing, and starts no browser through /readyz.
		h = loopbackOnly(h)
	}
	serveAside(ctx, ln, h, "metrics endpoint", log)
	return nil
}

// newMetrics checks serve --metrics-addr and makes the collectors; nil
// when the flag is not given.
func newMetrics(addr string, allowRemote bool) (*metrics.Metrics, error) {
	if addr == "" {
		return nil, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %q: %w", addr, err)
	}
	if !httpapi.IsLoopback(host) && !allowRemote {
		return nil, fmt.Errorf("--metrics-addr %s is not a loopback address: pass --allow-remote as well", addr)
	}
	return metrics.New(chromegateVersion()), nil
}

// egressObserved is the egress boundary's decider, with its decisions
// counted when m is set.
func egressObserved(m *metrics.Metrics, d egress.Decider) egress.Decider {
	if m == nil {
		return d
	}
	return m.Requests(d)
}

// observed returns the server's Observer and the gate with its decisions
// counted, when m is set; nothing changes when it is not.
func observed(m *metrics.Metrics, g gate.Decider) (mcp.Observer, gate.Decider) {
	if m == nil {
		return nil, g
	}
	return m, m.Decider(g)
}
