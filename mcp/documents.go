package mcp

import (
	"context"

	"github.com/chromegate/chromegate/executor"
)

// Every surface is decided on the document that produced what it shows:
// a network-log entry and its body, a console message, a dialog. The
// backend names that document (executor.Source) by the browser's own
// identifiers; here it is decided like a read of that document with the
// same decision that outlines a denied frame as a placeholder
// (FrameGate, via Call.FrameDecider), and what a denied document produced
// is withheld and counted, its words never shown. A record whose
// document the backend could not name is withheld too.

// DocumentDenied reports whether what the document at rawURL, of the
// given security origin ("" when the URL's own origin stands), produced
// must be withheld from c's caller: the frame decision, failing closed.
// A URL that does not carry its origin (about:srcdoc, about:blank,
// data:, blob:) with no origin from the browser is denied.
func (c *Call) DocumentDenied(ctx context.Context, rawURL, origin string) bool {
	if c.srv.opts.Gate == AllowAll {
		return false
	}
	if origin == "" && (rawURL == "" || executor.OriginHidden(rawURL)) {
		return true
	}
	return c.FrameDecider()(ctx, rawURL, origin) != nil
}

// sourceScreen decides, for one call, the documents its records came
// from, each once.
type sourceScreen struct {
	c    *Call
	seen map[executor.Source]bool
}

func (c *Call) sourceScreen() *sourceScreen {
	return &sourceScreen{c: c, seen: map[executor.Source]bool{}}
}

// denied reports whether the record of src is to be withheld.
func (s *sourceScreen) denied(ctx context.Context, src *executor.Source) bool {
	if s.c.srv.opts.Gate == AllowAll {
		return false
	}
	if !src.Known() {
		return true
	}
	v, ok := s.seen[*src]
	if !ok {
		v = s.c.DocumentDenied(ctx, src.URL, src.Origin)
		s.seen[*src] = v
	}
	return v
}
