package ext

import (
	"context"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/executor/ext/bridge"
)

// Bounds of a decide frame's fields; a request over them is denied.
const (
	maxRequestURL   = 32 << 10
	maxRequestField = 2048
)

// decider decides the extension's requests with the backend's Boundary
// (nil is a disabled boundary, which allows everything).
type decider struct {
	b *egress.Boundary
}

var _ bridge.Decider = decider{}

// Decide checks a decide frame's request and asks the boundary.
func (d decider) Decide(ctx context.Context, w *egress.Request) (bool, string) {
	r, why := requestOf(w)
	if why != "" {
		return false, why
	}
	v := d.b.DecideRequest(ctx, r)
	return v.Allow, v.Reason
}

// requestOf checks a decide frame's request and completes it as a request
// of the extension's session: the frame's fields, normalised, and the
// server's own (session, hook, backend), which a frame cannot set. Addr
// stays invalid: the extension cannot see the address a request will be
// sent to.
func requestOf(w *egress.Request) (*egress.Request, string) {
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
