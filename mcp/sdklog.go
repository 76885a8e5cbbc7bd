package mcp

import (
	"context"
	"log/slog"
)

// sdkLog is the logger the go-sdk server writes to: the server's own, with
// the SDK's notes on sessions connecting and disconnecting demoted to
// debug. At protocol 2026-07-28 every HTTP request is a session of its
// own, and three info lines a call would drown the log a fleet reads.
func sdkLog(l *slog.Logger) *slog.Logger {
	return slog.New(sessionNotes{l.Handler()})
}

type sessionNotes struct{ slog.Handler }

var demoted = map[string]bool{
	"server connecting":           true,
	"server session connected":    true,
	"server session disconnected": true,
}

func (s sessionNotes) Enabled(ctx context.Context, l slog.Level) bool {
	// The level is decided per record in Handle.
	return s.Handler.Enabled(ctx, l) || s.Handler.Enabled(ctx, slog.LevelDebug)
}

func (s sessionNotes) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelInfo && demoted[r.Message] {
		r.Level = slog.LevelDebug
	}
	if !s.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return s.Handler.Handle(ctx, r)
}

func (s sessionNotes) WithAttrs(as []slog.Attr) slog.Handler {
	return sessionNotes{s.Handler.WithAttrs(as)}
}

func (s sessionNotes) WithGroup(name string) slog.Handler {
	return sessionNotes{s.Handler.WithGroup(name)}
}
