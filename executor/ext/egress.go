package ext

import (
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
)

// DefaultMaxDecisions bounds the request decisions in flight on one
// connection: past it a decide frame is denied at once, so a page that
// floods requests cannot queue unbounded work on the server.
const DefaultMaxDecisions = 256

// Bounds of a decide frame's fields; a request over them is denied.
const (
	maxRequestURL   = 32 << 10
	maxRequestField = 2048
)

// requestHook is what decides the extension's requests: the backend's
// Boundary (nil is a disabled boundary, which allows everything).
type requestHook struct {
	b *egress.Boundary
}

// setBoundary makes b decide the requests of the tabs the extension
// drives. Until it is called, every request is denied.
func (b *Bridge) setBoundary(bd *egress.Boundary) {
	b.hook.Store(&requestHook{b: bd})
}

// decide answers a decide frame on its own goroutine, never holding up
// the read loop; with MaxDecisions already in flight the request is denied
// at once.
func (c *Conn) decide(f Frame) {
	select {
	case c.decisions <- struct{}{}:
	default:
		c.answer(f.ID, egress.Verdict{Reason: "too many requests are waiting for a decision"})
		return
	}
	go func() {
		defer func() { <-c.decisions }()
		c.answer(f.ID, c.verdict(f.Request))
	}()
}

func (c *Conn) verdict(w *WireRequest) egress.Verdict {
	h := c.b.hook.Load()
	if h == nil {
		return egress.Verdict{Reason: "the server has no request boundary for the extension"}
	}
	r, why := requestOf(w)
	if why != "" {
		return egress.Verdict{Reason: why}
	}
	return h.b.DecideRequest(c.ctx, r)
}

func (c *Conn) answer(id string, v egress.Verdict) {
	f := Frame{V: WireVersion, Type: TypeDecision, ID: id, Allow: v.Allow}
	if !v.Allow {
		f.Reason = v.Reason
	}
	if err := c.send(f); err != nil && !c.isClosed() {
		// The extension fails the request when no answer comes in time.
		c.b.log.Warn("could not answer a request decision", "err", err)
	}
}

// requestOf checks a decide frame's request and builds the egress request
// of the extension's session. Addr stays invalid: the extension cannot
// see the address a request will be sent to.
func requestOf(w *WireRequest) (*egress.Request, string) {
	switch {
	case w == nil || w.URL == "":
		return nil, "the request has no URL"
	case len(w.URL) > maxRequestURL:
		return nil, "the request URL is too long to decide"
	case len(w.Method) > maxRequestField || len(w.ResourceType) > maxRequestField ||
		len(w.FrameOrigin) > maxRequestField || len(w.PageOrigin) > maxRequestField:
		return nil, "the request is too large to decide"
	}
	method := strings.ToUpper(w.Method)
	if method == "" {
		method = "GET"
	}
	typ := strings.ToLower(w.ResourceType)
	if typ == "" {
		typ = "other"
	}
	return &egress.Request{
		Session:      executor.DefaultSession,
		URL:          w.URL,
		Method:       method,
		ResourceType: typ,
		Navigation:   w.Navigation,
		TopLevel:     w.TopLevel && w.Navigation,
		FrameOrigin:  w.FrameOrigin,
		PageOrigin:   w.PageOrigin,
		Via:          egress.ViaExtension,
		Backend:      BackendName,
	}, ""
}
