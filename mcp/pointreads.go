package mcp

import (
	"context"

	"github.com/chromegate/chromegate/executor"
)

// Reads are reads wherever they hide: an action at a point (click, hover,
// scroll, drag at x,y) tells what it hit, and the name of what it hit is
// the page's words (up to 100 characters of its text). The names are
// shown only to a caller that could read the page: the test that
// withholds changes from a caller that cannot snapshot (readAllowed: the
// caller's tool ACL and list filter, then the policy's decision to read
// the tab's document; a hit in a frame, the policy's decision on the
// frame's document too), made once per call. Otherwise a hit carries the
// facts that are not the page's words: its point, role, tag, ref and
// frame.

// hitReader decides, once per call, whether c's caller may read the names
// of what c's points hit on tab.
type hitReader struct {
	c    *Call
	tab  string
	page *bool            // the tab's document, once decided
	rc   *Call            // the read call the decision made
	docs map[string]error // frame documents, by origin and URL
}

// mayRead reports whether the name of h may be shown.
func (hr *hitReader) mayRead(ctx context.Context, h executor.Hit) bool {
	c := hr.c
	if c.srv == nil || c.Executor() == nil {
		return false
	}
	if hr.page == nil {
		_, rc, err := c.srv.readAllowed(ctx, c, c.Executor(), hr.tab, executor.Target{})
		ok := err == nil
		hr.page, hr.rc = &ok, rc
	}
	if !*hr.page {
		return false
	}
	if h.MainFrame {
		return true
	}
	key := h.Origin + " " + h.URL
	if hr.docs == nil {
		hr.docs = map[string]error{}
	}
	err, done := hr.docs[key]
	if !done {
		err = hr.rc.FrameDecider()(ctx, h.URL, h.Origin)
		hr.docs[key] = err
	}
	return err == nil
}
