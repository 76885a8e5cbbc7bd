package metrics

import (
	"github.com/chromegate/chromegate/mcp/fleet"
	"github.com/prometheus/client_golang/prometheus"
)

// Fleet registers the health of a fleet's shared state (serve
// --redis-url), read from s at each scrape: whether Redis answers, the
// sessions this replica took over, checkpoints saved, restored and
// failed, and the operations Redis did not answer.
func (m *Metrics) Fleet(s *fleet.Store) {
	labels := prometheus.Labels{"replica": s.Replica()}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels}, f)
	}
	counter := func(name, help string, f func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels},
			func() float64 { return float64(f()) })
	}
	m.Registry.MustRegister(
		gauge("chromegate_fleet_redis_up", "1 when the fleet's Redis answered the last check (every 250 ms), else 0.", func() float64 {
			if s.Up() {
				return 1
			}
			return 0
		}),
		counter("chromegate_fleet_takeovers_total", "Sessions this replica took over from another (its replica died, or the balancer moved it).",
			func() uint64 { return s.Stats().Takeovers }),
		counter("chromegate_fleet_checkpoints_saved_total", "Session checkpoints saved after an acting call.",
			func() uint64 { return s.Stats().CheckpointsSaved }),
		counter("chromegate_fleet_checkpoints_restored_total", "Session checkpoints restored into a new context.",
			func() uint64 { return s.Stats().CheckpointsRestored }),
		counter("chromegate_fleet_checkpoint_errors_total", "Checkpoints that could not be stored, loaded or opened.",
			func() uint64 { return s.Stats().CheckpointErrors }),
		counter("chromegate_fleet_redis_errors_total", "Operations on the fleet's Redis that it did not answer.",
			func() uint64 { return s.Stats().Unavailable }),
	)
}
