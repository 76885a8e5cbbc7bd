package main

import (
	"github.com/chromegate/chromegate/cmd/chromegate/internal/metrics"
	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/mcp"
)

// browserEvents is what the Manager and the CDP backend tell the metrics
// of browsers and sessions (metrics.Browsers), each session counted by
// its kind (mcp.SessionKind); nil, hearing nothing, when m is.
func browserEvents(m *metrics.Metrics) executor.Events {
	if m == nil {
		return nil
	}
	return m.Browsers(mcp.SessionKind)
}
