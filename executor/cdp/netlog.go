package cdp

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// netLog is a tab's network log: the page's request events, recorded in a
// ring of executor.MaxNetworkEntries. Each main-frame document request
// (not a redirect hop of one) starts a new generation; a listing reaches
// back one or a few generations.
//
// The event handlers run on playwright-go's dispatch goroutine: they only
// read what the event carried (no round trip) and hold mu briefly. What
// costs a round trip — sizes without a Content-Length, full headers, a
// body — is read when a tool asks, on the tool's goroutine, never under mu.
type netLog struct {
	mu      sync.Mutex
	nav     int                              // generations started
	ring    []*netEntry                      // oldest first
	byReq   map[playwright.Request]*netEntry // requests still in flight
	next    int
	dropped map[int]int // entries of a generation the ring let go
	max     int
	// docSeen: a main-frame document request came since the main frame
	// last committed a document (committed).
	docSeen bool
}

type netEntry struct {
	r     executor.NetworkRequest
	req   playwright.Request
	resp  playwright.Response
	start time.Time
	// sized: the size was read (or could not be); no second try.
	sized bool
}

func newNetLog(max int) *netLog {
	return &netLog{byReq: map[playwright.Request]*netEntry{}, dropped: map[int]int{}, max: max}
}

// watch records p's request events.
func (l *netLog) watch(p playwright.Page) {
	p.OnRequest(l.onRequest)
	p.OnResponse(l.onResponse)
	p.OnRequestFinished(l.onFinished)
	p.OnRequestFailed(l.onFailed)
	p.OnFrameNavigated(func(f playwright.Frame) {
		if f == p.MainFrame() {
			l.committed(f.URL())
		}
	})
}

// committed starts a new generation for a main-frame document that came
// without a document request of its own (about:blank after a refused
// load, a blank the server sent the tab to): nothing of the page before
// stays in the current listing. A document request already started one
// (docSeen); a same-document navigation keeps its document's URL scheme
// and is not blank.
func (l *netLog) committed(url string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := l.docSeen
	l.docSeen = false
	if seen || !executor.OriginHidden(url) {
		return
	}
	l.newGeneration()
}

// mainDocument reports whether req loads a new document into the tab's
// top frame: a navigation request that is not a redirect hop.
func mainDocument(req playwright.Request) (main bool) {
	defer func() {
		if recover() != nil {
			main = false
		}
	}()
	if !req.IsNavigationRequest() || req.RedirectedFrom() != nil {
		return false
	}
	f := req.Frame()
	// A navigation's frame may not exist yet (a new tab's first load):
	// it can only be the top frame then.
	return f == nil || f.ParentFrame() == nil
}

func (l *netLog) onRequest(req playwright.Request) {
	now := time.Now()
	main := mainDocument(req)
	e := &netEntry{req: req, start: now, r: executor.NetworkRequest{
		Method: req.Method(), URL: executor.RedactURL(req.URL()), ResourceType: req.ResourceType(),
		Navigation: req.IsNavigationRequest(), Size: -1, StartMs: now.UnixMilli(), DurationMs: -1,
		Outcome: executor.OutcomePending, Doc: requestSource(req),
	}}
	l.mu.Lock()
	defer l.mu.Unlock()
	if main {
		l.newGeneration()
		l.docSeen = true
	}
	l.next++
	e.r.ID = strconv.Itoa(l.next)
	e.r.Nav = l.nav
	if len(l.ring) >= l.max {
		gone := l.ring[0]
		delete(l.byReq, gone.req)
		l.dropped[gone.r.Nav]++
		l.ring[0] = nil
		l.ring = l.ring[1:]
	}
	l.ring = append(l.ring, e)
	l.byReq[req] = e
}

// newGeneration starts one; generations no listing can reach are let go
// at once. l.mu is held.
func (l *netLog) newGeneration() {
	l.nav++
	old := l.nav - executor.MaxNetworkNavigations
	delete(l.dropped, old)
	n := 0
	for n < len(l.ring) && l.ring[n].r.Nav <= old {
		delete(l.byReq, l.ring[n].req)
		n++
	}
	l.ring = l.ring[n:]
}

func (l *netLog) onResponse(resp playwright.Response) {
	req := resp.Request()
	h := resp.Headers() // local: the headers the event carried
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byReq[req]
	if e == nil {
		return
	}
	e.resp = resp
	e.r.Status = resp.Status()
	e.r.MIMEType = h["content-type"]
	if n, err := strconv.ParseInt(h["content-length"], 10, 64); err == nil && n >= 0 && h["content-encoding"] == "" {
		e.r.Size, e.sized = n, true
	}
}

func (l *netLog) onFinished(req playwright.Request) {
	l.end(req, executor.OutcomeAllowed, "")
}

func (l *netLog) onFailed(req playwright.Request) {
	why := "failed"
	if err := req.Failure(); err != nil {
		why = err.Error()
	}
	l.end(req, executor.OutcomeFailed, why)
}

func (l *netLog) end(req playwright.Request, outcome, why string) {
	now := time.Now()
	t := req.Timing()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byReq[req]
	if e == nil {
		return
	}
	delete(l.byReq, req)
	e.r.Outcome, e.r.Error = outcome, why
	// The browser's own timing, relative to the request's start, is
	// exact; StartMs stays on this machine's clock, which the boundary's
	// denials use too (a remote browser's clock may be off).
	e.r.DurationMs = now.Sub(e.start).Milliseconds()
	if t != nil && t.StartTime > 0 && t.ResponseEnd > 0 {
		e.r.DurationMs = int64(t.ResponseEnd)
	}
}

// list returns the entries of the last n generations, the current
// generation and how many of the listed ones the ring let go.
func (l *netLog) list(n int) (out []*netEntry, rs []executor.NetworkRequest, nav, dropped int) {
	n = max(1, min(n, executor.MaxNetworkNavigations))
	l.mu.Lock()
	defer l.mu.Unlock()
	from := l.nav - n + 1
	for g := max(from, 0); g <= l.nav; g++ {
		dropped += l.dropped[g]
	}
	for _, e := range l.ring {
		if e.r.Nav >= from {
			out = append(out, e)
			rs = append(rs, e.r)
		}
	}
	return out, rs, l.nav, dropped
}

// find returns the entry with id and a copy of its record.
func (l *netLog) find(id string) (*netEntry, executor.NetworkRequest, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.ring {
		if e.r.ID == id {
			return e, e.r, true
		}
	}
	return nil, executor.NetworkRequest{}, false
}

// setSize records a size read after the fact.
func (l *netLog) setSize(e *netEntry, n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.sized = true
	if n >= 0 {
		e.r.Size = n
	}
}

// sizeWorkers bounds the size reads a listing makes at once, and
// sizeBudget how long it spends on them: a size is a nicety.
const (
	sizeWorkers = 8
	sizeBudget  = 2 * time.Second
)

// fillSizes reads, for completed entries whose response had no usable
// Content-Length, the body size the browser received (one round trip
// each), within sizeBudget.
func (l *netLog) fillSizes(ctx context.Context, es []*netEntry, rs []executor.NetworkRequest) {
	type job struct {
		i int
		e *netEntry
	}
	var jobs []job
	l.mu.Lock()
	for i, e := range es {
		if !e.sized && e.r.Outcome == executor.OutcomeAllowed && e.resp != nil {
			jobs = append(jobs, job{i, e})
		}
	}
	l.mu.Unlock()
	if len(jobs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, sizeBudget)
	defer cancel()
	ch := make(chan job)
	var mu sync.Mutex
	closed := false // rs belongs to the caller again
	var wg sync.WaitGroup
	for w := 0; w < min(sizeWorkers, len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				n := int64(-1)
				if sz, err := j.e.req.Sizes(); err == nil && sz != nil {
					n = int64(sz.ResponseBodySize)
				}
				l.setSize(j.e, n)
				mu.Lock()
				if n >= 0 && !closed {
					rs[j.i].Size = n
				}
				mu.Unlock()
			}
		}()
	}
	go func() {
		defer close(ch)
		for _, j := range jobs {
			select {
			case ch <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	mu.Lock() // workers still running write no more into rs after this
	closed = true
	mu.Unlock()
}

// Network implements executor.Executor.
func (s *Session) Network(ctx context.Context, p executor.NetworkParams) (executor.NetworkLog, error) {
	var out executor.NetworkLog
	st, err := s.onTab(ctx, p.TabID, "network_requests", func(c *call) error {
		es, rs, nav, dropped := c.t.net.list(p.Navigations)
		c.t.net.fillSizes(ctx, es, rs)
		if rs == nil {
			rs = []executor.NetworkRequest{}
		}
		out = executor.NetworkLog{Requests: rs, Nav: nav, Dropped: dropped}
		return nil
	})
	out.PageState = st
	return out, err
}

// NetworkEntry implements executor.Executor.
func (s *Session) NetworkEntry(ctx context.Context, p executor.NetworkEntryParams) (executor.NetworkEntry, error) {
	var out executor.NetworkEntry
	st, err := s.onTab(ctx, p.TabID, "network_request", func(c *call) error {
		e, r, ok := c.t.net.find(p.ID)
		if !ok {
			return executor.Errorf(executor.CodeBadArgs, "no request %q in the tab's network log", p.ID).
				WithHint("call network_requests for the ids; the log keeps the last navigations only")
		}
		if hs, err := e.req.HeadersArray(); err == nil {
			r.RequestHeaders = headersOf(hs)
		} else {
			r.RequestHeaders = executor.HeadersOf(e.req.Headers())
		}
		if e.resp != nil {
			if hs, err := e.resp.HeadersArray(); err == nil {
				r.ResponseHeaders = headersOf(hs)
			} else {
				r.ResponseHeaders = executor.HeadersOf(e.resp.Headers())
			}
		}
		r.RequestHeaders = executor.RedactHeaders(r.RequestHeaders)
		r.ResponseHeaders = executor.RedactHeaders(r.ResponseHeaders)
		out.Request = r
		if !p.Body {
			return nil
		}
		switch {
		case r.Outcome != executor.OutcomeAllowed:
			out.BodyNote = "no body: the request was " + r.Outcome
		case e.resp == nil:
			out.BodyNote = "no body: there was no response"
		default:
			body, err := e.resp.Body()
			if err != nil {
				out.BodyNote = "the body is not available: " + firstLine(err)
				return nil
			}
			out.BodySize = int64(len(body))
			out.Body, out.BodyTruncated, out.BodyNote, _ = executor.TextBody(r.MIMEType, body, p.MaxBody)
		}
		return nil
	})
	out.PageState = st
	return out, err
}

func headersOf(nv []playwright.NameValue) []executor.Header {
	out := make([]executor.Header, len(nv))
	for i, h := range nv {
		out[i] = executor.Header{Name: h.Name, Value: h.Value}
	}
	return out
}
