package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
)

func TestJoinDenials(t *testing.T) {
	t.Parallel()
	t0 := time.UnixMilli(1_700_000_000_000)
	ms := t0.UnixMilli()
	rs := []executor.NetworkRequest{
		// the page before: its failure takes its denial along
		{ID: "0", URL: "https://gone.test/", Outcome: executor.OutcomeFailed, StartMs: ms - 100, DurationMs: 1, Nav: 1},
		{ID: "0b", URL: "https://gone.test/ok", Outcome: executor.OutcomeAllowed, StartMs: ms - 100, DurationMs: 1, Nav: 1},
		{ID: "1", URL: "https://ok.test/", Outcome: executor.OutcomeAllowed, StartMs: ms, DurationMs: 20},
		// a tunnel the proxy refused: the denial names the origin only
		{ID: "2", URL: "https://evil.test/x?d=1", Outcome: executor.OutcomeFailed, Error: "net::ERR_TUNNEL_CONNECTION_FAILED", StartMs: ms + 10, DurationMs: 5},
		// a routed denial names the URL
		{ID: "3", URL: "http://evil.test:8080/y", Outcome: executor.OutcomeFailed, StartMs: ms + 20, DurationMs: 1},
		// a failure that is the network's, not the policy's
		{ID: "4", URL: "https://down.test/", Outcome: executor.OutcomeFailed, Error: "net::ERR_CONNECTION_REFUSED", StartMs: ms + 30, DurationMs: 3},
		// the same host much later: not that denial's doing
		{ID: "5", URL: "https://evil.test/late", Outcome: executor.OutcomeFailed, StartMs: ms + 60_000, DurationMs: 3},
	}
	ds := []egress.Denial{
		{Seq: 1, Time: t0.Add(-time.Hour), URL: "https://old.test:443/", Method: "CONNECT", Reason: "before the log"},
		{Seq: 9, Time: t0.Add(-50 * time.Millisecond), URL: "https://gone.test:443/", Method: "CONNECT", Reason: "the page before's"},
		{Seq: 2, Time: t0.Add(12 * time.Millisecond), URL: "https://evil.test:443/", Method: "CONNECT", Reason: "host not allowed"},
		{Seq: 3, Time: t0.Add(20 * time.Millisecond), URL: "http://evil.test:8080/y", Method: "GET", Type: "fetch", Reason: "port not allowed"},
		{Seq: 4, Time: t0.Add(40 * time.Millisecond), URL: "https://u:p@beacon.test:443/", Method: "CONNECT", Type: "unknown", Reason: "not allowed"},
	}
	for i := range rs[2:] {
		rs[2+i].Nav = 2
	}
	got := joinDenials(rs, ds, 2)
	type row struct{ ID, Outcome, Reason, URL string }
	var rows []row
	for _, r := range got {
		rows = append(rows, row{r.ID, r.Outcome, r.Reason, r.URL})
	}
	want := []row{
		{"1", "allowed", "", "https://ok.test/"},
		{"2", "denied", "host not allowed", "https://evil.test/x?d=1"},
		{"3", "denied", "port not allowed", "http://evil.test:8080/y"},
		{"4", "failed", "", "https://down.test/"},
		{"5", "failed", "", "https://evil.test/late"},
		{"denied-4", "denied", "not allowed", "https://beacon.test:443/"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("joined (-want +got):\n%s", diff)
	}
}

func TestPageRequests(t *testing.T) {
	t.Parallel()
	var rs []executor.NetworkRequest
	for i := range 10 {
		r := executor.NetworkRequest{ID: fmt.Sprint(i), URL: fmt.Sprintf("https://a.test/%d", i), ResourceType: "fetch", Outcome: executor.OutcomeAllowed}
		if i%2 == 1 {
			r.ResourceType, r.Outcome = "image", executor.OutcomeFailed
		}
		if i == 7 {
			r.URL = "https://CDN.test/7"
		}
		rs = append(rs, r)
	}
	ids := func(rs []executor.NetworkRequest) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.ID)
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		name          string
		f             netFilter
		offset, limit int
		want          string
		matched, next int
	}{
		{"first page", netFilter{}, 0, 4, "0,1,2,3", 10, 4},
		{"middle page", netFilter{}, 4, 4, "4,5,6,7", 10, 8},
		{"last page", netFilter{}, 8, 4, "8,9", 10, 0},
		{"past the end", netFilter{}, 20, 4, "", 10, 0},
		{"default limit", netFilter{}, 0, 0, "0,1,2,3,4,5,6,7,8,9", 10, 0},
		{"by type", netFilter{Types: []string{"image"}}, 0, 2, "1,3", 5, 2},
		{"by types", netFilter{Types: []string{"image", "fetch"}}, 0, 50, "0,1,2,3,4,5,6,7,8,9", 10, 0},
		{"by outcome", netFilter{Outcome: "allowed"}, 2, 2, "4,6", 5, 4},
		{"by url, any case", netFilter{URL: "cdn.TEST"}, 0, 5, "7", 1, 0},
		{"all filters", netFilter{URL: "a.test/", Types: []string{"image"}, Outcome: "failed"}, 0, 50, "1,3,5,9", 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			page, matched, next := pageRequests(rs, tt.f, tt.offset, tt.limit)
			if got := ids(page); got != tt.want || matched != tt.matched || next != tt.next {
				t.Errorf("page %q matched %d next %d; want %q, %d, %d", got, matched, next, tt.want, tt.matched, tt.next)
			}
		})
	}
}

// netHarness is a server whose boundary denies evil.test, with a fake
// browser whose tab logged an allowed and a denied request.
func netHarness(t *testing.T) (*harness, *egress.Boundary) {
	t.Helper()
	b := egress.NewBoundary(egress.DeciderFunc(func(_ context.Context, r *egress.Request) egress.Verdict {
		if egress.HostOf(r.URL) == "evil.test" {
			return egress.Verdict{Reason: "host not in allow_domains"}
		}
		return egress.Verdict{Allow: true}
	}))
	h := newHarness(t, func(o *Options) { o.Egress = b })
	f := h.fake()
	now := time.Now().UnixMilli()
	must := func(_ string, err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.AddRequest("", executor.NetworkRequest{ID: "1", Method: "GET", URL: "https://ok.test/data", ResourceType: "fetch",
		Status: 200, Size: 11, MIMEType: "application/json", StartMs: now, DurationMs: 3,
		RequestHeaders:  []executor.Header{{Name: "Cookie", Value: "sid=COOKIE-SECRET"}, {Name: "Authorization", Value: "Bearer AUTH-SECRET"}, {Name: "Accept", Value: "*/*"}},
		ResponseHeaders: []executor.Header{{Name: "Set-Cookie", Value: "sid=SETCOOKIE-SECRET"}, {Name: "Content-Type", Value: "application/json"}},
	}, []byte(`{"ok":true}`)))
	must(f.AddRequest("", executor.NetworkRequest{ID: "2", Method: "POST", URL: "https://evil.test/exfil", ResourceType: "fetch",
		Outcome: executor.OutcomeFailed, Error: "net::ERR_TUNNEL_CONNECTION_FAILED", StartMs: now, DurationMs: 1,
	}, []byte("SHOULD-NEVER-SHOW")))
	b.DecideRequest(t.Context(), &egress.Request{Session: DefaultSession, URL: "https://evil.test:443/", Method: "CONNECT", ResourceType: "unknown", Via: egress.ViaProxy})
	return h, b
}

func TestNetworkRequestsJoinsTheBoundary(t *testing.T) {
	t.Parallel()
	h, _ := netHarness(t)
	res := h.call("network_requests", map[string]any{})
	text := textOf(res)
	if res.IsError {
		t.Fatal(text)
	}
	body, _, ok := Unfence(strings.SplitN(text, "\n[chromegate", 2)[0])
	if !ok {
		t.Fatalf("the listing is not fenced as page content:\n%s", text)
	}
	var out networkRequestsOut
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	if out.Total != 2 || out.Outcomes["denied"] != 1 || out.Outcomes["allowed"] != 1 || len(out.Requests) != 2 {
		t.Fatalf("listing: %+v", out)
	}
	if d := out.Requests[1]; d.Outcome != "denied" || d.Reason != "host not in allow_domains" || d.Error == "" {
		t.Errorf("the denied request reads %+v", d)
	}
	res = h.call("network_requests", map[string]any{"outcome": "denied"})
	if text := textOf(res); !strings.Contains(text, `"matched":1,`) || strings.Contains(text, "ok.test") {
		t.Errorf("outcome filter:\n%s", text)
	}
}

func TestNetworkRequestRedactsAndBodies(t *testing.T) {
	t.Parallel()
	h, _ := netHarness(t)
	f := h.fake()
	// A backend that forgot to redact, and sent a denied request's body:
	// neither reaches the model.
	f.Handle("NetworkEntry", func(ctx context.Context, params any) (any, error) {
		p := params.(executor.NetworkEntryParams)
		f.Handle("NetworkEntry", nil)
		defer f.Handle("NetworkEntry", nil)
		e, err := f.NetworkEntry(ctx, p)
		if err != nil {
			return nil, err
		}
		e.Request.RequestHeaders = []executor.Header{{Name: "Cookie", Value: "sid=COOKIE-SECRET"}, {Name: "authorization", Value: "AUTH-SECRET"}}
		e.Request.ResponseHeaders = []executor.Header{{Name: "set-cookie", Value: "SETCOOKIE-SECRET"}, {Name: "Proxy-Authorization", Value: "PROXY-SECRET"}}
		e.Body = "SHOULD-NEVER-SHOW"
		return e, nil
	})
	for _, id := range []string{"1", "2"} {
		text := textOf(h.call("network_request", map[string]any{"id": id, "include_body": true}))
		for _, secret := range []string{"COOKIE-SECRET", "AUTH-SECRET", "SETCOOKIE-SECRET", "PROXY-SECRET"} {
			if strings.Contains(text, secret) {
				t.Errorf("request %s: %s leaks:\n%s", id, secret, text)
			}
		}
		if id == "2" && (strings.Contains(text, "SHOULD-NEVER-SHOW") || !strings.Contains(text, `"body_note":"no body: the request was denied"`)) {
			t.Errorf("a denied request shows a body:\n%s", text)
		}
	}

	// The fake's own rules: redacted, a body for the allowed request,
	// capped and fenced, none for the failed one.
	h2, _ := netHarness(t)
	text := textOf(h2.call("network_request", map[string]any{"id": "1", "include_body": true, "max_bytes": 4}))
	if !strings.Contains(text, `{"name":"Cookie","value":"[redacted]"}`) || strings.Contains(text, "SECRET") {
		t.Errorf("headers not redacted:\n%s", text)
	}
	content, _, ok := Unfence(text)
	if !ok || !strings.HasSuffix(content, "\n{\"ok") || !strings.Contains(content, `"body_bytes":11,"body_truncated":true`) {
		t.Errorf("body not capped and fenced:\n%s", text)
	}
	text = textOf(h2.call("network_request", map[string]any{"id": "2", "include_body": true}))
	if strings.Contains(text, "SHOULD-NEVER-SHOW") || !strings.Contains(text, `"outcome":"denied"`) {
		t.Errorf("denied request:\n%s", text)
	}
	if res := h2.call("network_request", map[string]any{"id": "99"}); !res.IsError || !strings.Contains(textOf(res), "network_requests") {
		t.Errorf("unknown id: %s", textOf(res))
	}
}

func TestNetworkRequestOfAnUnseenDenial(t *testing.T) {
	t.Parallel()
	h, b := netHarness(t)
	b.DecideRequest(t.Context(), &egress.Request{Session: DefaultSession, URL: "https://evil.test/beacon", Method: "POST", ResourceType: "ping", Via: egress.ViaRoute})
	text := textOf(h.call("network_requests", map[string]any{"outcome": "denied"}))
	if !strings.Contains(text, `"id":"denied-2","method":"POST","url":"https://evil.test/beacon"`) || !strings.Contains(text, unseenNote) {
		t.Fatalf("unseen denial not listed:\n%s", text)
	}
	text = textOf(h.call("network_request", map[string]any{"id": "denied-2", "include_body": true}))
	if !strings.Contains(text, `"reason":"host not in allow_domains"`) || !strings.Contains(text, `"body_note":"no body: the request was denied"`) {
		t.Errorf("unseen denial entry:\n%s", text)
	}
}

// A request is decided on the document that made it: a denied frame's
// (by its URL, or by the origin an about:srcdoc child inherits), or one
// the backend could not name, is withheld from the listing and counted,
// and network_request on its id shows nothing of it.
func TestNetworkRequestsOfDeniedDocuments(t *testing.T) {
	t.Parallel()
	h := secretHarness(t, "https://login.test/a")
	f := h.fake()
	add := func(id, url string, doc *executor.Source) {
		t.Helper()
		if _, err := f.AddRequest("", executor.NetworkRequest{ID: id, Method: "GET", URL: url, ResourceType: "xhr", Status: 200, Doc: doc}, []byte("BODY-"+id)); err != nil {
			t.Fatal(err)
		}
	}
	add("own", "https://login.test/api", nil)
	add("frame", "https://login.test/api?FRAME-TOKEN", &executor.Source{URL: "https://evil.test/ad"})
	add("srcdoc", "https://login.test/api?SRCDOC-TOKEN", &executor.Source{URL: "about:srcdoc", Origin: "https://evil.test"})
	add("blank", "https://login.test/api?BLANK-TOKEN", &executor.Source{URL: "about:blank"})
	add("unknown", "https://login.test/api?UNKNOWN-TOKEN", &executor.Source{})
	text := textOf(h.call("network_requests", map[string]any{}))
	content, _, ok := Unfence(text)
	var out networkRequestsOut
	if !ok || json.Unmarshal([]byte(content), &out) != nil {
		t.Fatalf("listing:\n%s", text)
	}
	if out.Total != 1 || out.Withheld != 4 || out.Note == "" || out.Requests[0].ID != "own" {
		t.Errorf("total %d withheld %d note %q, want only the page's own and 4 withheld:\n%s", out.Total, out.Withheld, out.Note, text)
	}
	for _, id := range []string{"frame", "srcdoc", "blank", "unknown"} {
		res := h.call("network_request", map[string]any{"id": id, "include_body": true})
		if txt := textOf(res); !res.IsError || !strings.HasPrefix(txt, "POLICY_DENIED") || strings.Contains(txt, "TOKEN") || strings.Contains(txt, "BODY") {
			t.Errorf("network_request %s: %s", id, txt)
		}
	}
	if txt := textOf(h.call("network_request", map[string]any{"id": "own", "include_body": true})); !strings.Contains(txt, "BODY-own") {
		t.Errorf("the page's own request: %s", txt)
	}
}
