package executor

import (
	"context"
	"strings"
)

// Tracing the primitives a call runs. A call's context may carry a
// PrimitiveTracer (WithPrimitiveTracer: the server's trace stage sets it
// when the operator traces calls); each backend starts a primitive's span
// with StartPrimitive at the one place its primitives pass (the CDP
// backend's await, the extension's wire call, the fake's run), so no
// Executor is wrapped and no optional interface of one is hidden.
// Without a tracer in the context StartPrimitive costs a context lookup.
//
// The rule: a primitive's name is a literal of the backend's code (a wire
// method, "click", "navigate"), never a selector, a URL or text;
// PrimitiveName cuts a backend's description of a call ("click on #pw",
// "wait_for text …") to its first word.

// A PrimitiveTracer starts the span of one primitive a backend runs; end
// is called once, with the primitive's error.
type PrimitiveTracer interface {
	StartPrimitive(ctx context.Context, backend, name string) (_ context.Context, end func(error))
}

type primitiveTracerKey struct{}

// WithPrimitiveTracer returns ctx carrying t to the backends.
func WithPrimitiveTracer(ctx context.Context, t PrimitiveTracer) context.Context {
	return context.WithValue(ctx, primitiveTracerKey{}, t)
}

// StartPrimitive starts the span of primitive name on backend when ctx
// carries a PrimitiveTracer; otherwise it returns ctx and a no-op.
func StartPrimitive(ctx context.Context, backend, name string) (context.Context, func(error)) {
	t, _ := ctx.Value(primitiveTracerKey{}).(PrimitiveTracer)
	if t == nil {
		return ctx, noEnd
	}
	return t.StartPrimitive(ctx, backend, name)
}

func noEnd(error) {}

// PrimitiveName is the first word of what, a backend's description of
// a primitive call whose first word is the primitive's name.
func PrimitiveName(what string) string {
	name, _, _ := strings.Cut(what, " ")
	return name
}
