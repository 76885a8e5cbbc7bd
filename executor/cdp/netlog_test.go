package cdp

import (
	"errors"
	"fmt"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/chromegate/chromegate/executor"
)

// fakeReq is the part of a playwright.Request the log's handlers read.
type fakeReq struct {
	playwright.Request
	url      string
	nav      bool
	from     playwright.Request
	failure  string
	resource string
}

func (r *fakeReq) URL() string                        { return r.url }
func (r *fakeReq) Method() string                     { return "GET" }
func (r *fakeReq) ResourceType() string               { return r.resource }
func (r *fakeReq) IsNavigationRequest() bool          { return r.nav }
func (r *fakeReq) RedirectedFrom() playwright.Request { return r.from }
func (r *fakeReq) Frame() playwright.Frame            { return nil }
func (r *fakeReq) Timing() *playwright.RequestTiming  { return nil }
func (r *fakeReq) Failure() error {
	if r.failure == "" {
		return nil
	}
	return errors.New(r.failure)
}

func TestNetLogRing(t *testing.T) {
	t.Parallel()
	l := newNetLog(5)
	doc := &fakeReq{url: "https://u:p@a.test/", nav: true, resource: "document"}
	l.onRequest(doc)
	l.onFinished(doc)
	var reqs []*fakeReq
	for i := range 9 {
		r := &fakeReq{url: fmt.Sprintf("https://a.test/%d", i), resource: "fetch"}
		reqs = append(reqs, r)
		l.onRequest(r)
	}
	reqs[8].failure = "net::ERR_BLOCKED_BY_CLIENT"
	l.onFailed(reqs[8])
	l.onFinished(reqs[0]) // let go by the ring: ignored
	_, rs, nav, dropped := l.list(1)
	if len(rs) != 5 || dropped != 5 || nav != 1 || rs[0].URL != "https://a.test/4" {
		t.Fatalf("ring of 5 after 10: %d entries, %d dropped, nav %d, first %q", len(rs), dropped, nav, rs[0].URL)
	}
	if last := rs[4]; last.Outcome != executor.OutcomeFailed || last.Error != "net::ERR_BLOCKED_BY_CLIENT" || last.DurationMs < 0 {
		t.Errorf("failed entry: %+v", last)
	}
	if len(l.byReq) != 4 {
		t.Errorf("%d requests in flight, want 4 (the ring let go of the others)", len(l.byReq))
	}

	// A redirect hop is no new navigation; a new document is.
	hop := &fakeReq{url: "https://a.test/next", nav: true, from: doc, resource: "document"}
	l.onRequest(hop)
	if _, _, nav, _ := l.list(1); nav != 1 {
		t.Errorf("a redirect hop started generation %d", nav)
	}
	next := &fakeReq{url: "https://b.test/", nav: true, resource: "document"}
	l.onRequest(next)
	_, rs, nav, _ = l.list(1)
	if nav != 2 || len(rs) != 1 || rs[0].URL != "https://b.test/" {
		t.Errorf("after a navigation: nav %d, %+v", nav, rs)
	}
	if _, rs, _, _ := l.list(2); len(rs) != 5 {
		t.Errorf("two generations: %d entries", len(rs))
	}
	if _, r, ok := l.find("1"); ok {
		t.Errorf("entry 1 should be gone from a ring of 5: %+v", r)
	}
	if _, r, ok := l.find(rs[0].ID); !ok || r.URL != rs[0].URL {
		t.Errorf("find %s: %+v %v", rs[0].ID, r, ok)
	}

	// Generations past the reach of a listing are let go.
	l = newNetLog(100)
	for i := range executor.MaxNetworkNavigations + 3 {
		l.onRequest(&fakeReq{url: fmt.Sprintf("https://c.test/%d", i), nav: true, resource: "document"})
	}
	if n := len(l.ring); n != executor.MaxNetworkNavigations {
		t.Errorf("%d entries kept, want one per reachable generation", n)
	}
}

func TestNetLogRedactsURLs(t *testing.T) {
	t.Parallel()
	l := newNetLog(10)
	l.onRequest(&fakeReq{url: "https://user:pw@a.test/x", resource: "fetch"})
	if _, rs, _, _ := l.list(1); rs[0].URL != "https://a.test/x" {
		t.Errorf("URL kept its userinfo: %q", rs[0].URL)
	}
}
