package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/chromegate/chromegate/cmd/chromegate/internal/tracing"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/policy/gate"
)

// traceFlags are serve's OpenTelemetry flags (internal/tracing). Off by
// default: with neither --otlp-endpoint nor the standard OTEL_EXPORTER_OTLP_*
// environment, nothing is on the call path.
type traceFlags struct {
	endpoint string
	sample   float64
}

func (f *traceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.endpoint, "otlp-endpoint", "", "export OpenTelemetry traces over OTLP/HTTP to this collector URL, e.g. http://127.0.0.1:4318 (/v1/traces is added to a URL without a path); off by default, or set by OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; OTEL_SERVICE_NAME names the service")
	fs.Float64Var(&f.sample, "trace-sample", 1, "share of calls traced when the caller sent no trace context, 0 to 1; a call whose caller sent one follows the caller's sampling decision")
}

// startTracing starts the exporter when traces are asked for; nil (and
// stop a no-op) when they are not. stop flushes what is queued, waiting
// 5 s at most.
func startTracing(ctx context.Context, f traceFlags, log *slog.Logger) (t *tracing.Tracer, stop func(), err error) {
	if f.sample < 0 || f.sample > 1 {
		return nil, nil, fmt.Errorf("--trace-sample %v: want a ratio from 0 to 1", f.sample)
	}
	o := tracing.Options{Endpoint: f.endpoint, SampleRatio: f.sample, Version: chromegateVersion()}
	if !o.Enabled() {
		return nil, func() {}, nil
	}
	// The SDK's own errors (a collector that is down) go to our log, not
	// to the standard logger.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("traces", "err", err) }))
	if t, err = tracing.New(ctx, o); err != nil {
		return nil, nil, err
	}
	log.Info("exporting traces over OTLP/HTTP", "sample", f.sample)
	return t, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(sctx); err != nil {
			log.Warn("flushing traces", "err", err)
		}
	}, nil
}

// traced returns the server's Tracer and the gate with a span per
// decision, when t is set; nothing changes when it is not.
func traced(t *tracing.Tracer, g gate.Decider) (mcp.Tracer, gate.Decider) {
	if t == nil {
		return nil, g
	}
	return t, t.Decider(g)
}
