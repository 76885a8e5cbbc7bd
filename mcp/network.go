package mcp

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/google/jsonschema-go/jsonschema"
)

// The network log: network_requests lists a tab's requests since its last
// navigation, network_request shows one with its headers and, asked, its
// body. Both are reads of the tab's page, decided by the policy like
// get_text. The backend reports what the browser saw; here the failures
// the egress boundary caused are told apart from other network errors, by
// joining them with the session's denials, and denials the browser never
// reported as a request of the tab (a preconnect, a worker's fetch) are
// listed too.

// Network tool limits.
const (
	defaultNetLimit = 50
	maxNetLimit     = 200
	// joinSlackMs is how far a denial's time may lie outside a failed
	// request's span and still be its cause (clocks of the browser and
	// the server, a request queued behind its tunnel).
	joinSlackMs = 2000
	// unseenSlackMs is how long before a listing's first request a
	// denial may have been made and still belong to the listing: the
	// browser's report of a request reaches chromegate after the proxy
	// decided it.
	unseenSlackMs = 250
	// deniedIDPrefix names a denial the browser never reported, in ids.
	deniedIDPrefix = "denied-"
)

var resourceTypes = []string{
	"document", "stylesheet", "image", "media", "font", "script", "texttrack", "xhr", "fetch",
	"eventsource", "websocket", "manifest", "ping", "other", "unknown",
}

// netReqOut is one request as the network tools show it.
type netReqOut struct {
	ID         string `json:"id"`
	Method     string `json:"method"`
	URL        string `json:"url"`
	Type       string `json:"type"`
	Status     int    `json:"status,omitempty"`
	Size       int64  `json:"size,omitempty"` // bytes received; left out when unknown
	DurationMs int64  `json:"duration_ms,omitempty"`
	Outcome    string `json:"outcome"`
	Reason     string `json:"reason,omitempty"`
	Error      string `json:"error,omitempty"`
	Navigation bool   `json:"navigation,omitempty"`
	MIMEType   string `json:"mime_type,omitempty"`
	// Note explains an entry the browser never reported for this tab.
	Note string `json:"note,omitempty"`
}

type headerOut struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type networkRequestsOut struct {
	TabID    string         `json:"tab_id"`
	URL      string         `json:"url"`
	Total    int            `json:"total"`
	Outcomes map[string]int `json:"outcomes"`
	Matched  int            `json:"matched"`
	Offset   int            `json:"offset,omitempty"`
	Next     int            `json:"next,omitempty"`
	Dropped  int            `json:"dropped,omitempty"`
	// Withheld counts the requests of documents outside the policy (a
	// denied frame's, a refused page's), which are not listed.
	Withheld int         `json:"withheld,omitempty"`
	Note     string      `json:"note,omitempty"`
	Requests []netReqOut `json:"requests"`
}

// withheldRequests says why requests are missing from a listing.
const withheldRequests = "requests made by pages or frames outside the policy are not shown"

type networkRequestOut struct {
	TabID           string      `json:"tab_id"`
	Request         netReqOut   `json:"request"`
	RequestHeaders  []headerOut `json:"request_headers,omitempty"`
	ResponseHeaders []headerOut `json:"response_headers,omitempty"`
	BodyBytes       int64       `json:"body_bytes,omitempty"`
	BodyTruncated   bool        `json:"body_truncated,omitempty"`
	// BodyNote says why no body follows when one was asked for.
	BodyNote string `json:"body_note,omitempty"`
}

func reqOut(r executor.NetworkRequest) netReqOut {
	o := netReqOut{
		ID: r.ID, Method: r.Method, URL: executor.RedactURL(r.URL), Type: r.ResourceType, Status: r.Status,
		Outcome: r.Outcome, Reason: r.Reason, Error: r.Error, Navigation: r.Navigation, MIMEType: r.MIMEType,
	}
	if r.Size > 0 {
		o.Size = r.Size
	}
	if r.DurationMs > 0 {
		o.DurationMs = r.DurationMs
	}
	return o
}

func headersOut(hs []executor.Header) []headerOut {
	hs = executor.RedactHeaders(hs) // again: whatever a backend did
	out := make([]headerOut, len(hs))
	for i, h := range hs {
		out[i] = headerOut{h.Name, h.Value}
	}
	return out
}

// unseenNote marks a denial no request of the tab showed.
const unseenNote = "decided before the browser reported it as this tab's request: a preconnect, a worker's or another tab's request"

// joinDenials marks the failed requests of a log that the policy denied,
// with its reason, and returns the requests of generation from on: rs
// reaches one generation further back, so that a denial its requests
// caused is not taken for one of the listing's. The session's denials
// that match no request and came after the listing's first request are
// appended: the browser never showed them as the tab's. rs is changed in
// place.
func joinDenials(rs []executor.NetworkRequest, ds []egress.Denial, from int) []executor.NetworkRequest {
	var startMs int64
	for _, r := range rs {
		if r.Nav >= from {
			startMs = r.StartMs
			break
		}
	}
	rs = slices.DeleteFunc(rs, func(r executor.NetworkRequest) bool { return r.Nav < from && r.Outcome != executor.OutcomeFailed })
	if len(ds) == 0 {
		return slices.DeleteFunc(rs, func(r executor.NetworkRequest) bool { return r.Nav < from })
	}
	used := make([]bool, len(ds))
	for i := range rs {
		r := &rs[i]
		if r.Outcome != executor.OutcomeFailed {
			continue
		}
		for j, d := range ds {
			if deniedMatch(r, d) {
				r.Outcome, r.Reason = executor.OutcomeDenied, d.Reason
				used[j] = true
				break
			}
		}
	}
	rs = slices.DeleteFunc(rs, func(r executor.NetworkRequest) bool { return r.Nav < from })
	if startMs == 0 {
		return rs
	}
	for j, d := range ds {
		if used[j] || d.Time.UnixMilli() < startMs-unseenSlackMs {
			continue
		}
		rs = append(rs, unseen(d, from))
	}
	return rs
}

// unseen is a denial no request of the log showed, as an entry of
// generation nav.
func unseen(d egress.Denial, nav int) executor.NetworkRequest {
	return executor.NetworkRequest{
		ID: deniedIDPrefix + strconv.FormatUint(d.Seq, 10), Method: d.Method, URL: executor.RedactURL(d.URL),
		ResourceType: d.Type, Navigation: d.Navigation, Size: -1, StartMs: d.Time.UnixMilli(),
		Outcome: executor.OutcomeDenied, Reason: d.Reason, Nav: nav,
	}
}

// deniedMatch tells whether denial d caused failed request r: the same URL
// (a routed or extension denial, a plain-http request through the proxy),
// or, for a proxy tunnel, the same host and port; at about the same time.
func deniedMatch(r *executor.NetworkRequest, d egress.Denial) bool {
	t := d.Time.UnixMilli()
	end := r.StartMs + max(r.DurationMs, 0)
	if t < r.StartMs-joinSlackMs || t > end+joinSlackMs {
		return false
	}
	if executor.RedactURL(d.URL) == r.URL {
		return true
	}
	if d.Method != "CONNECT" {
		return false
	}
	return hostPort(d.URL) == hostPort(r.URL)
}

// hostPort is an absolute URL's host:port, the port defaulted by scheme
// (a WebSocket's like its HTTP twin: it tunnels the same way).
func hostPort(raw string) string {
	scheme, _, _ := strings.Cut(raw, "://")
	host := egress.HostOf(raw)
	if host == "" {
		return ""
	}
	_, rest, _ := strings.Cut(raw, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if _, port, err := net.SplitHostPort(rest); err == nil && port != "" {
		return host + ":" + port
	}
	switch strings.ToLower(scheme) {
	case "https", "wss":
		return host + ":443"
	default:
		return host + ":80"
	}
}

// netFilter selects requests.
type netFilter struct {
	URL     string
	Types   []string
	Outcome string
}

func (f netFilter) match(r executor.NetworkRequest) bool {
	if f.URL != "" && !strings.Contains(strings.ToLower(r.URL), strings.ToLower(f.URL)) {
		return false
	}
	if f.Outcome != "" && r.Outcome != f.Outcome {
		return false
	}
	if len(f.Types) > 0 {
		for _, t := range f.Types {
			if r.ResourceType == t {
				return true
			}
		}
		return false
	}
	return true
}

// pageRequests filters rs and cuts one page of it: the page, the number
// that matched, and the offset of the next page (0 at the end).
func pageRequests(rs []executor.NetworkRequest, f netFilter, offset, limit int) (page []executor.NetworkRequest, matched, next int) {
	if limit <= 0 {
		limit = defaultNetLimit
	}
	for _, r := range rs {
		if !f.match(r) {
			continue
		}
		if matched >= offset && len(page) < limit {
			page = append(page, r)
		}
		matched++
	}
	if offset+len(page) < matched {
		next = offset + len(page)
	}
	return page, matched, next
}

// denials returns the session's denials the boundary still holds.
func (c *Call) denials() []egress.Denial {
	return c.srv.opts.Egress.Since(c.Session, 0)
}

func networkRequests(ctx context.Context, c *Call, a networkRequestsIn) (*Result, error) {
	n := max(a.Navigations, 1)
	log, err := c.Executor().Network(ctx, executor.NetworkParams{TabID: a.TabID, Navigations: min(n+1, executor.MaxNetworkNavigations)})
	if err != nil {
		return nil, err
	}
	rs, withheld := c.screenRequests(ctx, joinDenials(log.Requests, c.denials(), log.Nav-n+1))
	out := networkRequestsOut{
		TabID: log.TabID, URL: log.URL, Total: len(rs), Outcomes: map[string]int{},
		Offset: a.Offset, Dropped: log.Dropped, Withheld: withheld, Requests: []netReqOut{},
	}
	if withheld > 0 {
		out.Note = withheldRequests
	}
	for _, r := range rs {
		out.Outcomes[r.Outcome]++
	}
	page, matched, next := pageRequests(rs, netFilter{URL: a.URL, Types: a.Types, Outcome: a.Outcome}, a.Offset, a.Limit)
	out.Matched, out.Next = matched, next
	for _, r := range page {
		o := reqOut(r)
		if strings.HasPrefix(r.ID, deniedIDPrefix) {
			o.Note = unseenNote
		}
		out.Requests = append(out.Requests, o)
	}
	// URLs are the page's choice: the whole listing is page content.
	return &Result{Value: out, Untrusted: true, Page: &log.PageState}, nil
}

func networkRequest(ctx context.Context, c *Call, a networkRequestIn) (*Result, error) {
	if seq, ok := strings.CutPrefix(a.ID, deniedIDPrefix); ok {
		return deniedEntry(ctx, c, seq, a.IncludeBody)
	}
	e, err := c.Executor().NetworkEntry(ctx, executor.NetworkEntryParams{
		TabID: a.TabID, ID: a.ID, Body: a.IncludeBody, MaxBody: a.MaxBytes,
	})
	if err != nil {
		return nil, err
	}
	r := e.Request
	if c.sourceScreen().denied(ctx, r.Doc) {
		return nil, requestWithheld(a.ID)
	}
	r = joinDenials([]executor.NetworkRequest{r}, c.denials(), r.Nav)[0]
	out := networkRequestOut{
		TabID: e.TabID, Request: reqOut(r),
		RequestHeaders: headersOut(r.RequestHeaders), ResponseHeaders: headersOut(r.ResponseHeaders),
	}
	res := &Result{Value: &out, Untrusted: true, Page: &e.PageState}
	if !a.IncludeBody {
		return res, nil
	}
	if r.Outcome != executor.OutcomeAllowed {
		// A denied request has no body to show, whatever a backend sent.
		out.BodyNote = "no body: the request was " + r.Outcome
		return res, nil
	}
	out.BodyBytes, out.BodyTruncated, out.BodyNote = e.BodySize, e.BodyTruncated, e.BodyNote
	if e.Body != "" && e.BodyNote == "" {
		if out.BodyTruncated {
			out.BodyNote = fmt.Sprintf("the body was cut at %d of %d bytes", len(e.Body), e.BodySize)
		}
		res.Text = e.Body
		res.readURL = r.URL
	}
	return res, nil
}

// screenRequests drops the requests whose document (the frame that made
// it, or the document a navigation loaded) the caller may not read, and
// counts them. The session's denials the browser never reported
// (deniedIDPrefix) are the boundary's own record and stay.
func (c *Call) screenRequests(ctx context.Context, rs []executor.NetworkRequest) ([]executor.NetworkRequest, int) {
	sc := c.sourceScreen()
	withheld := 0
	out := rs[:0]
	for _, r := range rs {
		if !strings.HasPrefix(r.ID, deniedIDPrefix) && sc.denied(ctx, r.Doc) {
			withheld++
			continue
		}
		out = append(out, r)
	}
	return out, withheld
}

// requestWithheld is the error of network_request for an entry of a
// document outside the policy: nothing of it is shown, not even its URL.
func requestWithheld(id string) error {
	return executor.Errorf(executor.CodePolicyDenied, "network_request: request %q was made by a page or frame the policy does not allow; nothing of it is shown", id).
		WithHint("call network_requests: it lists the requests you may see and counts the others as withheld")
}

// deniedEntry shows a denial the browser never reported: what the policy
// decided, no headers, never a body.
func deniedEntry(ctx context.Context, c *Call, seq string, body bool) (*Result, error) {
	t, err := c.Page(ctx)
	if err != nil {
		return nil, err
	}
	for _, d := range c.denials() {
		if strconv.FormatUint(d.Seq, 10) != seq {
			continue
		}
		out := networkRequestOut{TabID: t.ID, Request: reqOut(unseen(d, 0))}
		out.Request.Note = unseenNote
		if body {
			out.BodyNote = "no body: the request was denied"
		}
		ps := executor.PageState{TabID: t.ID, URL: t.URL, Title: t.Title}
		return &Result{Value: &out, Untrusted: true, Page: &ps}, nil
	}
	return nil, badArgs("no request %q in the session's log of denials", deniedIDPrefix+seq).
		WithHint("call network_requests for the ids; old denials are let go")
}

// Network: a tab's requests, as the egress boundary decided them. Each
// tool is one constructor: its declaration, its class, the facts the call
// path needs; the handlers
// live with the feature (network.go).

// groupNetwork is the README row of these tools.
var groupNetwork = &ToolGroup{Name: "network log"}

func networkRequestsTool() *Tool {
	return newTool(Tool{
		Name: "network_requests", Title: "Network requests",
		Group:       groupNetwork,
		Output:      &Output{Value: networkRequestsOut{}},
		Description: "A tab's requests since it loaded, with outcome and reason. Filter: url, types, outcome. Also: navigations, offset, limit." + pageTextDoc,
		Rare:        []string{"navigations", "offset", "limit"},
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		CutHint: "filter by url, types or outcome, or pass a smaller limit",
	}, networkRequests)
}

// networkRequestsIn is network_requests' input: filters and a page of
// the log.
type networkRequestsIn struct {
	URL         string   `json:"url,omitempty"`
	Types       []string `json:"types,omitempty"`
	Outcome     string   `json:"outcome,omitempty"`
	Navigations int      `json:"navigations,omitempty"`
	Offset      int      `json:"offset,omitempty"`
	Limit       int      `json:"limit,omitempty"`
	tabIn
}

func (networkRequestsIn) shape(s *jsonschema.Schema) {
	setEnum(s, "types", resourceTypes...)
	setEnum(s, "outcome", executor.OutcomeAllowed, executor.OutcomeDenied, executor.OutcomeFailed, executor.OutcomePending)
	setRange(s, "navigations", 1, executor.MaxNetworkNavigations)
	setRange(s, "offset", 0, executor.MaxNetworkEntries)
	setRange(s, "limit", 1, maxNetLimit)
}

func networkRequestTool() *Tool {
	return newTool(Tool{
		Name: "network_request", Title: "Network request",
		Group:       groupNetwork,
		Output:      &Output{Value: networkRequestOut{}, Text: true},
		Description: "One request by id: headers (credentials redacted); include_body adds the response. Also: max_bytes." + pageTextDoc,
		Rare:        []string{"max_bytes"},
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		CutHint: "pass a smaller max_bytes",
	}, networkRequest)
}

// networkRequestIn is network_request's input.
type networkRequestIn struct {
	ID          string `json:"id"`
	IncludeBody bool   `json:"include_body,omitempty"`
	MaxBytes    int    `json:"max_bytes,omitempty"`
	tabIn
}

func (networkRequestIn) shape(s *jsonschema.Schema) {
	setRange(s, "max_bytes", 1, executor.MaxBodyBytes)
}
