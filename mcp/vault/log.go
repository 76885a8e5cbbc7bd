package vault

import (
	"context"
	"fmt"
	"io"
	"log/slog"
)

// Handler wraps h so that no record it handles carries a secret's value:
// the message and every attribute (in groups too, and those added with
// WithAttrs) pass Redact. An attribute whose value is not a string (an
// error, a struct) is redacted in its printed form, and replaced by that
// redacted text only when it held a value. With no secrets, h is returned.
func (v *Vault) Handler(h slog.Handler) slog.Handler {
	if v.Len() == 0 {
		return h
	}
	return &redactingHandler{v: v, h: h}
}

type redactingHandler struct {
	v *Vault
	h slog.Handler
}

func (r *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return r.h.Enabled(ctx, l)
}

func (r *redactingHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.v.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = r.attr(a)
	}
	return &redactingHandler{v: r.v, h: r.h.WithAttrs(red)}
}

func (r *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{v: r.v, h: r.h.WithGroup(name)}
}

func (r *redactingHandler) attr(a slog.Attr) slog.Attr {
	a.Key = r.v.Redact(a.Key)
	val := a.Value.Resolve()
	switch val.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(r.v.Redact(val.String()))
	case slog.KindGroup:
		g := val.Group()
		red := make([]slog.Attr, len(g))
		for i, ga := range g {
			red[i] = r.attr(ga)
		}
		a.Value = slog.GroupValue(red...)
	case slog.KindAny:
		// Printed as the handler would (%+v): an error's message, a
		// struct's fields. Redact catches the value in its JSON-escaped
		// form too, for a JSON handler.
		s := fmt.Sprintf("%+v", val.Any())
		if red := r.v.Redact(s); red != s {
			a.Value = slog.StringValue(red)
		} else {
			a.Value = val
		}
	default:
		a.Value = val
	}
	return a
}

// Writer wraps w so that what is written passes Redact. It is for line
// writers that write whole lines in one Write (the decision log): a value
// split across two writes would not be caught. With no secrets, w is
// returned.
func (v *Vault) Writer(w io.Writer) io.Writer {
	if v.Len() == 0 {
		return w
	}
	return &redactingWriter{v: v, w: w}
}

type redactingWriter struct {
	v *Vault
	w io.Writer
}

func (r *redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.v.Redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
