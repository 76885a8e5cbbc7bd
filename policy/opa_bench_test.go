package policy

import (
	"bytes"
	"io/fs"

	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/chromegate/chromegate/policies"
)

// BenchmarkDecideOPA measures a decision of the default policy, activated
// from a signed bundle, with OPA's decision-log plugin off and on (its
// events uploaded to a loopback collector every second), and with the
// file decision log for comparison. "same" decides one input again (the
// decision cache answers; what is left is the logging), "fresh" a new
// URL each time (evaluated).
func BenchmarkDecideOPA(b *testing.B) {
	priv, pub := testKeys(b)
	var tgz bytesBuffer
	if err := BuildBundle(context.Background(), DefaultSource, defaultFS(), &tgz, BundleOptions{Revision: "bench", SigningKey: priv}); err != nil {
		b.Fatal(err)
	}
	srv := newBundleServer(b, tgz.Bytes())
	col := newCollector(b)
	flags := WithData(map[string]any{"allow_domains": []string{"example.com"}})
	engines := map[string]*Engine{}
	for _, c := range []struct {
		name string
		cfg  opaTestConfig
		file bool
	}{
		{"logs-off", opaTestConfig{bundleURL: srv.URL, publicKey: pub}, false},
		{"logs-plugin", opaTestConfig{bundleURL: srv.URL, collectorURL: col.URL, publicKey: pub}, false},
		{"logs-file", opaTestConfig{bundleURL: srv.URL, publicKey: pub}, true},
	} {
		o, err := NewOPA(OPAConfig{Config: c.cfg.json(), Replica: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		opts := []Option{WithOPA(o), flags, WithTimeout(10 * time.Second)}
		if w := o.DecisionWriter(); w != nil {
			opts = append(opts, WithDecisionLog(w))
		}
		if c.file {
			opts = append(opts, WithDecisionLog(io.Discard))
		}
		e, err := New(context.Background(), opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(e.Close)
		waitFor(b, "the bundle", func() bool { return e.Status().Bundles["authz"] == "bench" })
		engines[c.name] = e
	}
	ctx := context.Background()
	for _, mode := range []string{"same", "fresh"} {
		for _, name := range []string{"logs-off", "logs-file", "logs-plugin"} {
			e := engines[name]
			b.Run(mode+"/"+name, func(b *testing.B) {
				in := navigateInput(b, "https://example.com/a")
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if mode == "fresh" {
						in = navigateInput(b, fmt.Sprintf("https://example.com/%d", i))
					}
					if d := e.Decide(ctx, in); !d.Allow {
						b.Fatalf("denied: %+v", d)
					}
				}
			})
		}
	}
}

// BenchmarkDecisionLogThroughput decides as fast as it can for b.N
// decisions with the collector up, a 1 MiB buffer and an upload a
// second, and reports the decisions a second it made, the events a second
// OPA's decision-log plugin took (the decision-log throughput: past it,
// the queue fills and drops), and the drops of the queue and of the
// plugin's buffer.
func BenchmarkDecisionLogThroughput(b *testing.B) {
	priv, pub := testKeys(b)
	var tgz bytesBuffer
	if err := BuildBundle(context.Background(), DefaultSource, defaultFS(), &tgz, BundleOptions{Revision: "bench", SigningKey: priv}); err != nil {
		b.Fatal(err)
	}
	srv := newBundleServer(b, tgz.Bytes())
	col := newCollector(b)
	e, o := newOPAEngine(b, opaTestConfig{bundleURL: srv.URL, collectorURL: col.URL, publicKey: pub, bufferBytes: 1 << 20}, "bench")
	waitFor(b, "the bundle", func() bool { return e.Status().Bundles["authz"] == "bench" })
	ctx := context.Background()
	in := navigateInput(b, "https://example.com/a")
	logged0 := o.Status().DecisionLogs.Logged
	start := time.Now()
	for b.Loop() {
		e.Decide(ctx, in)
	}
	took := time.Since(start)
	s := o.Status().DecisionLogs
	b.ReportMetric(float64(b.N)/took.Seconds(), "decisions/s")
	b.ReportMetric(float64(s.Logged-logged0)/took.Seconds(), "logged/s")
	b.ReportMetric(float64(s.DroppedQueueFull), "queue-drops")
	b.ReportMetric(float64(s.DroppedBufferFull), "buffer-drops")
}

type bytesBuffer = bytes.Buffer

func defaultFS() fs.FS { return policies.Default }
