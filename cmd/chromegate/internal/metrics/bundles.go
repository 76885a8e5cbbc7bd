package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/chromegate/chromegate/policy"
)

// Bundle and decision-log health, read from OPA's plugins at each scrape
// (policy.OPA.Status). Label values: a result (ok, error), a drop reason
// (queue_full, buffer_full, rate_limit), a bundle's name from the OPA configuration,
// and, on the info metric only, the revision in force (one series a
// bundle at a time, as chromegate_build_info's version).

var (
	bundleActivationsDesc = prometheus.NewDesc("chromegate_policy_bundle_activations_total",
		"OPA bundle activations by result: ok, or error (the last good bundle stays in force).", []string{"result"}, nil)
	bundleInfoDesc = prometheus.NewDesc("chromegate_policy_bundle_info",
		"The OPA bundle revision in force, by bundle; always 1.", []string{"bundle", "revision"}, nil)
	bundleActivatedDesc = prometheus.NewDesc("chromegate_policy_bundle_last_activation_timestamp_seconds",
		"When each OPA bundle last activated, Unix seconds.", []string{"bundle"}, nil)
	bundleFailingDesc = prometheus.NewDesc("chromegate_policy_bundle_failing",
		"1 while OPA's last download or activation of a bundle failed (its last good revision decides), else 0.", []string{"bundle"}, nil)
	policyWaitingDesc = prometheus.NewDesc("chromegate_policy_waiting",
		"1 while no policy bundle has activated yet and every decision is denied, else 0.", nil, nil)
	logsEventsDesc = prometheus.NewDesc("chromegate_decision_logs_events_total",
		"Decisions handed to OPA's decision-log plugin.", nil, nil)
	logsDroppedDesc = prometheus.NewDesc("chromegate_decision_logs_dropped_total",
		"Decision-log drops by reason: queue_full (a decision's event, dropped before OPA's plugin: it was that far behind), buffer_full (the plugin's buffer dropped its oldest chunks of events, counted once a drop), rate_limit (one event each).", []string{"reason"}, nil)
	logsBufferDesc = prometheus.NewDesc("chromegate_decision_logs_buffer_bytes",
		"Compressed decision-log events waiting to be uploaded.", nil, nil)
)

// bundleCollector reads the engine's OPA status at each scrape.
type bundleCollector struct {
	engine func() policy.Status
}

// WatchBundles registers the bundle and decision-log metrics of an engine
// whose policy comes from OPA bundles (policy.WithOPA); status is its
// Engine.Status.
func (m *Metrics) WatchBundles(status func() policy.Status) {
	m.Registry.MustRegister(bundleCollector{engine: status})
}

func (bundleCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{bundleActivationsDesc, bundleInfoDesc, bundleActivatedDesc, bundleFailingDesc,
		policyWaitingDesc, logsEventsDesc, logsDroppedDesc, logsBufferDesc} {
		ch <- d
	}
}

func (c bundleCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.engine()
	waiting := 0.0
	if st.Waiting != "" {
		waiting = 1
	}
	ch <- prometheus.MustNewConstMetric(policyWaitingDesc, prometheus.GaugeValue, waiting)
	for name, rev := range st.Bundles {
		ch <- prometheus.MustNewConstMetric(bundleInfoDesc, prometheus.GaugeValue, 1, name, rev)
	}
	o := st.OPA
	if o == nil {
		return
	}
	for _, r := range []string{"ok", "error"} {
		ch <- prometheus.MustNewConstMetric(bundleActivationsDesc, prometheus.CounterValue, float64(o.Activations[r]), r)
	}
	for name, b := range o.Bundles {
		if !b.LastSuccessfulActivation.IsZero() {
			ch <- prometheus.MustNewConstMetric(bundleActivatedDesc, prometheus.GaugeValue,
				float64(b.LastSuccessfulActivation.UnixNano())/1e9, name)
		}
		failing := 0.0
		if b.Code != "" || b.Message != "" {
			failing = 1
		}
		ch <- prometheus.MustNewConstMetric(bundleFailingDesc, prometheus.GaugeValue, failing, name)
	}
	if l := o.DecisionLogs; l != nil {
		ch <- prometheus.MustNewConstMetric(logsEventsDesc, prometheus.CounterValue, float64(l.Logged))
		ch <- prometheus.MustNewConstMetric(logsDroppedDesc, prometheus.CounterValue, float64(l.DroppedBufferFull), "buffer_full")
		ch <- prometheus.MustNewConstMetric(logsDroppedDesc, prometheus.CounterValue, float64(l.DroppedRateLimit), "rate_limit")
		ch <- prometheus.MustNewConstMetric(logsDroppedDesc, prometheus.CounterValue, float64(l.DroppedQueueFull), "queue_full")
		ch <- prometheus.MustNewConstMetric(logsBufferDesc, prometheus.GaugeValue, float64(l.BufferBytes))
	}
}
