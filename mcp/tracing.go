package mcp

import (
	"context"
	"net/http"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
)

// A Tracer makes the spans of the operator's traces (Options.Tracer;
// OpenTelemetry in cmd/chromegate/internal/tracing, so nothing here
// imports it): a span per call, inside it a span of the handler's run on
// the backend, and inside that a span per primitive the backend runs
// (executor.PrimitiveTracer). The context StartCall returns carries the
// call's span to everything the call does, the gate's decisions
// included, so a Decider wrapped by the same Tracer makes their spans
// children of it. Methods are called on the call's goroutine and must
// not block.
//
// The rule: a Tracer is given what the metrics are (callobserver.go) —
// a registered tool's name, a backend's name, an outcome that is "ok" or
// an error code — and the principal's name (a key's name, never the key
// or a token) and the session's Manager key, which it reports by kind
// only (SessionKind). Never arguments, page text, URLs or a secret's
// value: nothing a call typed or read reaches a span.
type Tracer interface {
	// StartCall begins the span of c, a child of c.Parent when the
	// caller sent a trace context.
	StartCall(ctx context.Context, c TraceCall) (context.Context, TraceSpan)
	// StartRun begins the span of the tool's handler running on backend,
	// the primitives it calls on the browser (a child of the call's).
	StartRun(ctx context.Context, tool, backend string) (context.Context, TraceSpan)
	// StartPrimitive begins the span of one primitive the backend runs
	// for the call (executor.StartPrimitive), a child of the run's.
	executor.PrimitiveTracer
}

// A TraceSpan is a span a Tracer started. End is called once.
type TraceSpan interface {
	// End ends the span with the backend that served the call ("" when
	// none did) and its outcome: "ok", "error" (a result marked isError),
	// or an error code.
	End(backend, outcome string)
}

// TraceCall is what a call's span is told when it starts.
type TraceCall struct {
	Tool      string
	Principal string // the principal's name: for a key, the key's name
	Session   string // the Manager session the call runs in
	Parent    TraceParent
}

// TraceParent is the W3C trace context (https://www.w3.org/TR/trace-context/)
// a caller sent with a call: from the request's _meta (protocol
// 2026-07-28 clients put it there) or else its HTTP headers.
type TraceParent struct {
	Traceparent string
	Tracestate  string
}

type traceParentKey struct{}

// WithTraceParent returns ctx carrying tp, the trace context of the
// request a call came in on (REST sets it from the request's headers).
func WithTraceParent(ctx context.Context, tp TraceParent) context.Context {
	if tp.Traceparent == "" {
		return ctx
	}
	return context.WithValue(ctx, traceParentKey{}, tp)
}

// TraceParentOf reads the W3C trace context headers of h.
func TraceParentOf(h http.Header) TraceParent {
	if h == nil {
		return TraceParent{}
	}
	return TraceParent{Traceparent: h.Get("Traceparent"), Tracestate: h.Get("Tracestate")}
}

// traceParentOfMeta reads traceparent and tracestate from a request's
// _meta, where a 2026-07-28 client may put them.
func traceParentOfMeta(meta map[string]any) TraceParent {
	tp, _ := meta["traceparent"].(string)
	ts, _ := meta["tracestate"].(string)
	return TraceParent{Traceparent: tp, Tracestate: ts}
}

// traceStage starts each call's span (Options.Tracer) with the trace
// context the caller sent as its parent, and ends it with the backend and
// outcome the caller saw. It sits where observe does, inside recover and
// outside the envelope; off (no Tracer) it is not on the path.
func (s *Server) traceStage(next step) step {
	t := s.opts.Tracer
	if t == nil {
		return next
	}
	return func(ctx context.Context, c *Call) (*Result, error) {
		parent, _ := ctx.Value(traceParentKey{}).(TraceParent)
		ctx, span := t.StartCall(ctx, TraceCall{Tool: c.Tool.Name, Principal: c.Principal.Name, Session: c.Session, Parent: parent})
		ctx = executor.WithPrimitiveTracer(ctx, t)
		ended := false
		defer func() {
			if !ended { // a panic, which recover turns into INTERNAL
				span.End(c.backend(), string(executor.CodeInternal))
			}
		}()
		r, err := next(ctx, c)
		ended = true
		span.End(c.backend(), c.outcome(err))
		return r, err
	}
}

// traceRunStage wraps the tool's handler in a span of its run on the
// backend, a child of the call's; off (no Tracer) it is not on the path.
func (s *Server) traceRunStage(next step) step {
	t := s.opts.Tracer
	if t == nil {
		return next
	}
	return func(ctx context.Context, c *Call) (*Result, error) {
		ctx, span := t.StartRun(ctx, c.Tool.Name, c.backend())
		r, err := next(ctx, c)
		outcome := "ok"
		if err != nil {
			outcome = string(executor.AsError(err).Code)
		}
		span.End(c.backend(), outcome)
		return r, err
	}
}

// backend is the name of the backend c runs on, "" when none.
func (c *Call) backend() string {
	if c.ex == nil {
		return ""
	}
	return c.ex.Backend()
}

// outcome is how c ended as its caller saw it: "ok", an error code, or
// "error" for a result marked isError.
func (c *Call) outcome(err error) string {
	switch {
	case err != nil:
		return string(executor.AsError(err).Code)
	case c.reply != nil && c.reply.IsError:
		return "error"
	}
	return "ok"
}

// sessionKinds are the prefixes of the Manager sessions httpapi makes
// (its contexts.go and http.go; TestSessionKindOfKeys there holds them).
var sessionKinds = []struct{ prefix, kind string }{{"handle:", "handle"}, {"named:", "named"}, {"mcp:", "mcp"}}

// SessionKind names the kind of a Manager session, a closed set for
// metrics and spans: "default" (stdio's, the whole server's), "handle"
// (a minted handle's), "named" (a named context's, the principal's
// default among them) or "mcp" (a stateful MCP session's own, also the
// bare MCP session id a server without Options.SessionOf uses).
func SessionKind(session string) string {
	if session == DefaultSession {
		return "default"
	}
	for _, k := range sessionKinds {
		if strings.HasPrefix(session, k.prefix) {
			return k.kind
		}
	}
	return "mcp"
}

// requestTraceParent is the trace context of an MCP tools/call: its
// _meta's, else its HTTP request's headers.
func requestTraceParent(req *sdk.CallToolRequest) TraceParent {
	if req.Params != nil {
		if tp := traceParentOfMeta(req.Params.Meta); tp.Traceparent != "" {
			return tp
		}
	}
	if req.Extra != nil {
		return TraceParentOf(req.Extra.Header)
	}
	return TraceParent{}
}
