package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/chromegate/chromegate/policy"
)

func TestBundleMetrics(t *testing.T) {
	m := New("test")
	at := time.Unix(1_800_000_000, 0)
	st := policy.Status{Bundles: map[string]string{"authz": "v7"}, OPA: &policy.OPAStatus{
		Activations: map[string]uint64{"ok": 3, "error": 1},
		Bundles: map[string]policy.BundleStatus{"authz": {ActiveRevision: "v7", LastSuccessfulActivation: at,
			Code: "bundle_error", Message: "failed to verify JWT signature"}},
		DecisionLogs: &policy.DecisionLogStatus{Logged: 10, BufferBytes: 512, DroppedBufferFull: 2, DroppedQueueFull: 5},
	}}
	m.WatchBundles(func() policy.Status { return st })
	want := `
# HELP chromegate_decision_logs_dropped_total Decision-log drops by reason: queue_full (a decision's event, dropped before OPA's plugin: it was that far behind), buffer_full (the plugin's buffer dropped its oldest chunks of events, counted once a drop), rate_limit (one event each).
# TYPE chromegate_decision_logs_dropped_total counter
chromegate_decision_logs_dropped_total{reason="buffer_full"} 2
chromegate_decision_logs_dropped_total{reason="queue_full"} 5
chromegate_decision_logs_dropped_total{reason="rate_limit"} 0
# HELP chromegate_policy_bundle_activations_total OPA bundle activations by result: ok, or error (the last good bundle stays in force).
# TYPE chromegate_policy_bundle_activations_total counter
chromegate_policy_bundle_activations_total{result="error"} 1
chromegate_policy_bundle_activations_total{result="ok"} 3
# HELP chromegate_policy_bundle_failing 1 while OPA's last download or activation of a bundle failed (its last good revision decides), else 0.
# TYPE chromegate_policy_bundle_failing gauge
chromegate_policy_bundle_failing{bundle="authz"} 1
# HELP chromegate_policy_bundle_info The OPA bundle revision in force, by bundle; always 1.
# TYPE chromegate_policy_bundle_info gauge
chromegate_policy_bundle_info{bundle="authz",revision="v7"} 1
# HELP chromegate_policy_bundle_last_activation_timestamp_seconds When each OPA bundle last activated, Unix seconds.
# TYPE chromegate_policy_bundle_last_activation_timestamp_seconds gauge
chromegate_policy_bundle_last_activation_timestamp_seconds{bundle="authz"} 1.8e+09
# HELP chromegate_policy_waiting 1 while no policy bundle has activated yet and every decision is denied, else 0.
# TYPE chromegate_policy_waiting gauge
chromegate_policy_waiting 0
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want),
		"chromegate_decision_logs_dropped_total", "chromegate_policy_bundle_activations_total", "chromegate_policy_bundle_failing",
		"chromegate_policy_bundle_info", "chromegate_policy_bundle_last_activation_timestamp_seconds", "chromegate_policy_waiting"); err != nil {
		t.Fatal(err)
	}
}
