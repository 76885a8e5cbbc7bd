package cdp

import (
	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// The documents records come from (executor/source.go), on this backend:
// a request's document is Playwright's request.frame() (the frame the
// browser says made it) as it is when the request starts, or, for a
// navigation, the document the request loads; a console message's and a
// dialog's come from the execution context and frame id of the event
// (sources of console.go and dialog.go). Nothing is read in the page.

// requestSource is the document that made req: for a navigation the
// document it loads (its own URL), else the frame's current document.
// Nil when the browser named no frame (a service worker's request).
func requestSource(req playwright.Request) (src *executor.Source) {
	defer func() {
		if recover() != nil {
			src = nil
		}
	}()
	f := req.Frame()
	if req.IsNavigationRequest() {
		return &executor.Source{URL: executor.RedactURL(req.URL()), Main: f == nil || f.ParentFrame() == nil}
	}
	if f == nil {
		return nil
	}
	return frameSource(f)
}

// frameSource is f's current document. A document whose URL does not
// carry its origin (about:srcdoc, about:blank) has its parent's: the
// first frame up whose URL does (an opaque one, data: at the top, is
// "null").
func frameSource(f playwright.Frame) *executor.Source {
	src := &executor.Source{URL: executor.RedactURL(f.URL()), Main: f.ParentFrame() == nil}
	if !executor.OriginHidden(src.URL) {
		return src
	}
	src.Origin = executor.OpaqueOrigin
	for p, depth := f.ParentFrame(), 0; p != nil && depth < 64; p, depth = p.ParentFrame(), depth+1 {
		if u := p.URL(); !executor.OriginHidden(u) {
			src.Origin = executor.OriginOf(u)
			break
		}
	}
	return src
}
