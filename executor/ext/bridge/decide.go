package bridge

import (
	"context"

	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/executor/ext/wire"
)

// DefaultMaxDecisions bounds the request decisions in flight on one
// connection: past it a decide frame is denied at once, so a page that
// floods requests cannot queue unbounded work on the server.
const DefaultMaxDecisions = 256

// A Decider decides the requests of the tabs the extension drives: the
// extension pauses each one and asks with a decide frame. Decide is called
// on a goroutine of its own, at most Options.MaxDecisions at once per
// connection; ctx ends when the connection closes. reason explains a
// denial.
type Decider interface {
	Decide(ctx context.Context, r *egress.Request) (allow bool, reason string)
}

// SetDecider makes d decide the requests of the tabs the extension drives.
// Until it is called, every request is denied.
func (b *Bridge) SetDecider(d Decider) {
	b.decider.Store(&d)
}

// decide answers a decide frame on its own goroutine, never holding up
// the read loop; with MaxDecisions already in flight the request is denied
// at once.
func (c *Conn) decide(f wire.Frame) {
	select {
	case c.decisions <- struct{}{}:
	default:
		c.answer(f.ID, false, "too many requests are waiting for a decision")
		return
	}
	go func() {
		defer func() { <-c.decisions }()
		allow, reason := c.verdict(f.Request)
		c.answer(f.ID, allow, reason)
	}()
}

func (c *Conn) verdict(r *egress.Request) (allow bool, reason string) {
	d := c.b.decider.Load()
	if d == nil || *d == nil {
		return false, "the server has no request boundary for the extension"
	}
	return (*d).Decide(c.ctx, r)
}

func (c *Conn) answer(id string, allow bool, reason string) {
	f := wire.Frame{V: wire.Version, Type: wire.TypeDecision, ID: id, Allow: allow}
	if !allow {
		f.Reason = reason
	}
	if err := c.send(f); err != nil && !c.isClosed() {
		// The extension fails the request when no answer comes in time.
		c.b.log.Warn("could not answer a request decision", "err", err)
	}
}
