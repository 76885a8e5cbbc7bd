// Package tracing is chromegate's OpenTelemetry traces (the OTel Go SDK,
// exported over OTLP/HTTP), switched on by serve --otlp-endpoint or the
// standard OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// environment: a span per tool call (mcp.Tracer), a child span per policy
// decision the call makes (Decider) and one for the handler's run on the
// browser backend. A call's span is a child of the trace context the
// caller sent (W3C traceparent and tracestate, from the request's _meta
// or its HTTP headers); sampling is parent-based with a ratio for roots.
//
// The rule: a span's name and attributes are closed values the server
// knows — a tool's name, a backend's, a policy phase, allow or deny, an
// error code, the session's kind — and the principal's name (a key's
// name, never the key, a token or a cookie). Never an argument, a URL,
// page text, a typed value, a policy's reasons (they may quote a URL) or
// a secret: nothing a caller typed or a page said leaves in a span.
// Decisions outside a call (tools/list, the egress boundary's requests)
// make no span.
package tracing

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/policy/gate"
)

// Options configures New.
type Options struct {
	// Endpoint is the collector's OTLP/HTTP URL: a base URL
	// (http://127.0.0.1:4318, to which /v1/traces is added) or the traces
	// URL itself (one with a path). Empty: the standard environment
	// variables say where, and tracing is off without them.
	Endpoint string
	// SampleRatio is the share of root traces sampled (0 to 1); a call
	// with a parent follows the parent's choice.
	SampleRatio float64
	// Version is chromegate's, the resource's service.version. The
	// service's name is OTEL_SERVICE_NAME, else "chromegate".
	Version string
	// Exporter, if set, replaces the OTLP exporter (tests).
	Exporter sdktrace.SpanExporter
}

// Enabled reports whether o (or the environment) asks for traces.
func (o Options) Enabled() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	return o.Endpoint != "" || o.Exporter != nil ||
		os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Tracer makes chromegate's spans (mcp.Tracer) and exports them.
type Tracer struct {
	tp   *sdktrace.TracerProvider
	tr   trace.Tracer
	prop propagation.TraceContext
}

var _ mcp.Tracer = (*Tracer)(nil)

// New starts the exporter and the provider. Shutdown flushes what is
// left and stops them.
func New(ctx context.Context, o Options) (*Tracer, error) {
	if o.SampleRatio < 0 || o.SampleRatio > 1 {
		return nil, fmt.Errorf("--trace-sample %v: want a ratio from 0 to 1", o.SampleRatio)
	}
	exp := o.Exporter
	if exp == nil {
		var opts []otlptracehttp.Option
		if o.Endpoint != "" {
			u, err := endpointURL(o.Endpoint)
			if err != nil {
				return nil, err
			}
			opts = append(opts, otlptracehttp.WithEndpointURL(u))
		}
		var err error
		if exp, err = otlptracehttp.New(ctx, opts...); err != nil {
			return nil, fmt.Errorf("OTLP exporter: %w", err)
		}
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "chromegate"), attribute.String("service.version", o.Version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(o.SampleRatio))),
	)
	return &Tracer{tp: tp, tr: tp.Tracer("github.com/chromegate/chromegate")}, nil
}

// endpointURL checks --otlp-endpoint and adds the traces path to a base
// URL, as OTEL_EXPORTER_OTLP_ENDPOINT is read.
func endpointURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--otlp-endpoint %q: want an http:// or https:// URL", s)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	return u.String(), nil
}

// Shutdown exports the spans still queued and stops the exporter; it
// waits until ctx ends at most.
func (t *Tracer) Shutdown(ctx context.Context) error { return t.tp.Shutdown(ctx) }

// ForceFlush exports the spans queued now (tests, the benchmark).
func (t *Tracer) ForceFlush(ctx context.Context) error { return t.tp.ForceFlush(ctx) }

// Attribute keys. The tool's and the call's names follow OpenTelemetry's
// conventions for MCP (mcp.method.name, gen_ai.tool.name, error.type).
const (
	attrMethod      = "mcp.method.name"
	attrTool        = "gen_ai.tool.name"
	attrErrorType   = "error.type"
	attrBackend     = "chromegate.backend"
	attrOutcome     = "chromegate.outcome"
	attrPrincipal   = "chromegate.principal"
	attrSessionKind = "chromegate.session.kind"
	attrPrimitive   = "chromegate.primitive"
	attrPhase       = "chromegate.policy.phase"
	attrResult      = "chromegate.policy.result"
	attrEvalMicros  = "chromegate.policy.eval_us"
)

// StartCall begins the span "tools/call TOOL", a child of the trace
// context the caller sent, if any.
func (t *Tracer) StartCall(ctx context.Context, c mcp.TraceCall) (context.Context, mcp.TraceSpan) {
	if c.Parent.Traceparent != "" {
		ctx = t.prop.Extract(ctx, carrier(c.Parent))
	}
	ctx, span := t.tr.Start(ctx, "tools/call "+c.Tool, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String(attrMethod, "tools/call"),
			attribute.String(attrTool, c.Tool),
			attribute.String(attrPrincipal, c.Principal),
			attribute.String(attrSessionKind, mcp.SessionKind(c.Session)),
		))
	return ctx, ended{span}
}

// StartRun begins the span "run TOOL" of the handler on the backend.
func (t *Tracer) StartRun(ctx context.Context, tool, backend string) (context.Context, mcp.TraceSpan) {
	ctx, span := t.tr.Start(ctx, "run "+tool, trace.WithAttributes(
		attribute.String(attrTool, tool),
		attribute.String(attrBackend, backend),
	))
	return ctx, ended{span}
}

// StartPrimitive begins the span "BACKEND PRIMITIVE" of one primitive
// the backend runs (executor.PrimitiveTracer). A name that is not a
// plain word is "other": the name is the backend's literal, and this
// holds the rule should one ever not be.
func (t *Tracer) StartPrimitive(ctx context.Context, backend, name string) (context.Context, func(error)) {
	if !plainWord(name) {
		name = "other"
	}
	ctx, span := t.tr.Start(ctx, backend+" "+name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String(attrBackend, backend),
		attribute.String(attrPrimitive, name),
	))
	return ctx, func(err error) {
		if err != nil {
			code := string(executor.CodeOf(err))
			span.SetAttributes(attribute.String(attrErrorType, code))
			span.SetStatus(codes.Error, code)
		}
		span.End()
	}
}

// plainWord: 1 to 40 of A-Z a-z 0-9 _ . -
func plainWord(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// ended ends a span with the backend and outcome mcp reports.
type ended struct{ span trace.Span }

func (e ended) End(backend, outcome string) {
	if backend != "" {
		e.span.SetAttributes(attribute.String(attrBackend, backend))
	}
	e.span.SetAttributes(attribute.String(attrOutcome, outcome))
	if outcome != "ok" {
		e.span.SetAttributes(attribute.String(attrErrorType, outcome))
		e.span.SetStatus(codes.Error, outcome)
	}
	e.span.End()
}

// carrier is a TraceParent as the propagator reads it.
type carrier mcp.TraceParent

func (c carrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.Traceparent
	case "tracestate":
		return c.Tracestate
	}
	return ""
}
func (c carrier) Set(string, string) {}
func (c carrier) Keys() []string     { return []string{"traceparent", "tracestate"} }

// Decider makes a span of each decision d makes inside a call ("policy
// PHASE": its phase, allow or deny, the evaluation's time); a decision
// outside a call (no span in ctx) is not traced.
func (t *Tracer) Decider(d gate.Decider) gate.Decider { return decider{t, d} }

type decider struct {
	t *Tracer
	d gate.Decider
}

func (d decider) Decide(ctx context.Context, q gate.Question) gate.Decision {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return d.d.Decide(ctx, q)
	}
	phase := phaseOf(q.Kind)
	ctx, span := d.t.tr.Start(ctx, "policy "+phase, trace.WithAttributes(attribute.String(attrPhase, phase)))
	start := time.Now()
	dec := d.d.Decide(ctx, q)
	took := time.Since(start)
	result := "deny"
	if dec.Allow {
		result = "allow"
	}
	span.SetAttributes(attribute.String(attrResult, result), attribute.Int64(attrEvalMicros, took.Microseconds()))
	if !dec.Allow && dec.Err != nil {
		// The code only: a denial's message quotes the policy's reasons.
		span.SetAttributes(attribute.String(attrErrorType, string(executor.CodeOf(dec.Err))))
	}
	span.End()
	return dec
}

// phases are the gate's question kinds; a kind outside them is "other",
// keeping span names a closed set.
var phases = map[gate.Kind]bool{
	gate.KindCall: true, gate.KindLanded: true, gate.KindHop: true, gate.KindFrame: true,
	gate.KindOrigin: true, gate.KindTab: true, gate.KindDialog: true, gate.KindDocument: true,
	gate.KindList: true, gate.KindRequest: true,
}

func phaseOf(k gate.Kind) string {
	if phases[k] {
		return string(k)
	}
	return "other"
}
