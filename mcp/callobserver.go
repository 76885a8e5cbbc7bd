package mcp

import (
	"context"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// An Observer learns of every tool call once it ended: which tool, on
// which backend, how it ended and how long it took, for the operator's
// metrics (cmd/chromegate/internal/metrics). It is called on the call's
// goroutine and must not block.
//
// The rule: what an Observer is given is a closed set of values, never
// something a caller or a page chose. tool is a registered tool's name
// (a live page tool is the one tool that calls it, never its own name),
// backend is "" or a backend's name, outcome is "ok" or an error code.
type Observer interface {
	ObserveCall(tool, backend, outcome string, took time.Duration)
}

// observeStage tells Options.Observer how each call ended. It sits inside
// recover, so a panic is not counted (recover logs it), and outside the
// envelope, so it sees the outcome as the caller does.
func (s *Server) observeStage(next step) step {
	if s.opts.Observer == nil {
		return next
	}
	return func(ctx context.Context, c *Call) (*Result, error) {
		start := time.Now()
		r, err := next(ctx, c)
		outcome := "ok"
		if err != nil {
			outcome = string(executor.AsError(err).Code)
		} else if c.reply != nil && c.reply.IsError {
			outcome = "error"
		}
		backend := ""
		if c.ex != nil {
			backend = c.ex.Backend()
		}
		s.opts.Observer.ObserveCall(c.Tool.Name, backend, outcome, time.Since(start))
		return r, err
	}
}
