package mcp

import (
	"context"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy/gate"
)

// Every surface is decided on the document that produced what it shows:
// a network-log entry and its body, a console message, a dialog. The
// backend names that document (executor.Source) by the browser's own
// identifiers; here it is decided like a read of that document with the
// same decision that outlines a denied frame as a placeholder (a
// gate.KindDocument question: the gate.KindFrame decision, failing closed
// on a document of unknown origin), and what a denied document produced
// is withheld and counted, its words never shown. A record whose
// document the backend could not name is withheld too.

// DocumentDenied reports whether what the document at rawURL, of the
// given security origin ("" when the URL's own origin stands), produced
// must be withheld from c's caller: the frame decision, failing closed.
// A URL that does not carry its origin (about:srcdoc, about:blank,
// data:, blob:) with no origin from the browser is denied.
func (c *Call) DocumentDenied(ctx context.Context, rawURL, origin string) bool {
	q := c.question(gate.KindDocument)
	q.Document = &gate.Document{URL: rawURL, Origin: origin}
	return !c.srv.ask(ctx, q).Allow
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
	if !src.Known() {
		// Named by nothing: denied by the gate's rule, asked all the same.
		return s.c.DocumentDenied(ctx, "", "")
	}
	v, ok := s.seen[*src]
	if !ok {
		v = s.c.DocumentDenied(ctx, src.URL, src.Origin)
		s.seen[*src] = v
	}
	return v
}
