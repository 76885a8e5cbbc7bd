package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every surface is decided on the document that produced what it shows
// (issue 27, findings 4, 5, 6 and 8). A hostile page on an allowed host
// frames a document the caller may not read; that document makes XHRs,
// logs to the console from eval, from scripts whose sourceURL names the
// allowed origin and from an about:srcdoc child, and alerts. The
// snapshot shows the frame as a placeholder; nothing of the frame may
// reach the model through the network log (entries, headers, bodies),
// the console or a dialog report, and what was withheld is counted.

// dframeMark is in every word the denied frame produces.
const dframeMark = "DFRAME"

// dframeSite serves the hostile page and the denied document on every
// host (told apart by the Host header), over http and, for the https
// variant, over TLS.
type dframeSite struct {
	port, tlsPort string
	mu            sync.Mutex
	hits          []string
	// to is where /host frames and /go sends the tab: the page's own
	// URL must not carry it.
	to string
	// alert, closed by the test, lets the denied frame alert.
	alert chan struct{}
}

// saw waits for one of whats to be hit and returns it ("" if none).
func (f *dframeSite) saw(whats ...string) string {
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		f.mu.Lock()
		i := slices.IndexFunc(whats, func(w string) bool { return slices.Contains(f.hits, w) })
		f.mu.Unlock()
		if i >= 0 {
			return whats[i]
		}
	}
	return ""
}

// dframeDoc is the denied document: it fetches (its XHR's URL and body
// carry the mark), logs from eval, from scripts that claim the allowed
// origin as their source, from an about:srcdoc child, throws, and at
// last alerts.
func dframeDoc(allowed string) string {
	src := allowed + "/app.js"
	return `<!doctype html><title>` + dframeMark + `-TITLE</title><p>` + dframeMark + `-TEXT</p>
<iframe id="kid" srcdoc="<script>console.log('` + dframeMark + `-SRCDOC'); parent.postMessage('kid', '*')</script>"></iframe>
<script>
const tell = (what) => fetch('/hit?what=' + what);
window.addEventListener('message', () => tell('srcdoc'));
fetch('/xhr?` + dframeMark + `-XHRURL=1').then(r => r.text()).then(() => tell('xhr'));
const x = new XMLHttpRequest(); x.open('GET', '/xhr2?q=` + dframeMark + `-XHR2'); x.send();
eval("console.log('` + dframeMark + `-EVAL')");
eval("console.warn('` + dframeMark + `-SRCURL')\n//# sourceURL=` + src + `");
const s = document.createElement('script');
s.textContent = "console.error('` + dframeMark + `-SCRIPT')\n//# sourceURL=` + src + `";
document.head.appendChild(s);
setTimeout(() => { throw new Error('` + dframeMark + `-THROW') }, 0);
fetch('/wait-alert').then(() => tell('alerting')).then(() => { alert('` + dframeMark + `-ALERT'); tell('answered'); });
</script>`
}

func newDframeSite(t *testing.T) *dframeSite {
	f := &dframeSite{alert: make(chan struct{})}
	mux := http.NewServeMux()
	html := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.Host, ":")
		allowed := "http://allowed.test:" + f.port
		switch r.URL.Path {
		case "/hit":
			f.mu.Lock()
			f.hits = append(f.hits, host+":"+r.URL.Query().Get("what"))
			f.mu.Unlock()
		case "/host":
			f.mu.Lock()
			to := f.to
			f.mu.Unlock()
			html(w, `<!doctype html><title>Host</title><h1>Host page</h1><iframe title="widget" src="`+to+`" width="300" height="200"></iframe>
<script>console.log('PAGE-OK')</script>`)
		case "/bounce":
			// a redirect hop the routed boundary does not see
			http.Redirect(w, r, "http://other.test:"+f.port+"/denied?user=alice&token=T0K3N", http.StatusFound)
		case "/denied":
			w.Header().Set("X-Frame-Secret", dframeMark+"-HEADER")
			html(w, dframeDoc(allowed))
		case "/wait-alert":
			select {
			case <-f.alert:
			case <-time.After(30 * time.Second):
			}
		case "/xhr", "/xhr2":
			w.Header().Set("Access-Control-Allow-Origin", "*")
			fmt.Fprint(w, dframeMark+"-BODY")
		case "/go":
			// a page that takes its tab to a page the caller may not read
			f.mu.Lock()
			to := f.to
			f.mu.Unlock()
			html(w, `<!doctype html><title>Go</title><script>setTimeout(() => location.href = `+fmt.Sprintf("%q", to)+`, 300)</script>`)
		case "/private":
			html(w, `<!doctype html><title>`+dframeMark+`-PRIVATE</title><script>const x = new XMLHttpRequest(); x.open('GET', '/api/data?`+dframeMark+`-API=1', false); x.send(); fetch('/hit?what=api')</script>`)
		case "/favicon.ico":
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	})
	f.port = serveMux(t, mux)
	ts := httptest.NewUnstartedServer(mux)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	_, f.tlsPort, _ = strings.Cut(strings.TrimPrefix(ts.URL, "https://"), ":")
	return f
}

// dframeRules map the test hosts to the loopback.
const dframeRules = "--browser-arg=--host-resolver-rules=MAP *.test 127.0.0.1, MAP allowed.test 127.0.0.1"

// dframePolicy is the default policy plus the operator's rules: pages may
// frame evil.allowed.test (a host of the page's own site, which the
// model may not read), and other.test stands for a public host, which
// pages may fetch from as from any (a tunnel to it is such a request).
func dframePolicy(t *testing.T) string {
	t.Helper()
	rules := `
# The test's operator lets pages frame evil.allowed.test, and other.test
# stands for a public host.
request_allowed if target.host == "evil.allowed.test"

request_allowed if {
	target.host == "other.test"
	not navigation_request
}
`
	return defaultPolicyWith(t, func(src string) string { return src + rules })
}

// TestDeniedFrameSurfaces: the denied document is a frame of the page's
// own site (evil.allowed.test in allowed.test: in the page's renderer),
// loaded by the operator's rule.
func TestDeniedFrameSurfaces(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	site := newDframeSite(t)
	testDeniedFrame(t, site, "http://evil.allowed.test:"+site.port+"/denied?user=alice&token=T0K3N")
}

// TestDeniedFrameSurfacesRouted: with the routed boundary, a redirect hop
// of an allowed frame lands it on other.test (routing does not see
// hops), a host the caller may not read.
func TestDeniedFrameSurfacesRouted(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Remote)
	site := newDframeSite(t)
	testDeniedFrame(t, site, "http://allowed.test:"+site.port+"/bounce", "--egress-via=route")
}

// TestDeniedFrameSurfacesHTTPS: on the default egress proxy, an https
// frame on a public host is a CONNECT tunnel to it, which the proxy
// allows as it allows any public host's subresources.
func TestDeniedFrameSurfacesHTTPS(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	site := newDframeSite(t)
	testDeniedFrame(t, site, "https://other.test:"+site.tlsPort+"/denied?user=alice&token=T0K3N",
		"--browser-arg=--ignore-certificate-errors")
}

func testDeniedFrame(t *testing.T, site *dframeSite, frameURL string, flags ...string) {
	s := startServer(t, append([]string{dframeRules, "--policy=" + dframePolicy(t), "--allow-domain=allowed.test",
		"--enable-mutations"}, flags...)...)
	var seen []string
	record := func(res *sdk.CallToolResult) *sdk.CallToolResult {
		seen = append(seen, wholeResult(res))
		return res
	}
	site.mu.Lock()
	site.to = frameURL
	site.mu.Unlock()
	record(s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/host"}))
	host := ""
	for _, what := range []string{"xhr", "srcdoc"} {
		hit := site.saw("evil.allowed.test:"+what, "other.test:"+what)
		if hit == "" {
			t.Fatalf("the denied frame did not get to %q: the test proves nothing", what)
		}
		host, _, _ = strings.Cut(hit, ":")
	}
	_, outline := s.snapshotOf(nil)
	seen = append(seen, outline)
	if !strings.Contains(outline, "not allowed]") {
		t.Errorf("the snapshot does not show the frame as one the policy denies:\n%s", outline)
	}

	t.Run("network log", func(t *testing.T) {
		var l struct {
			Withheld int `json:"withheld"`
			Requests []struct {
				ID  string `json:"id"`
				URL string `json:"url"`
			} `json:"requests"`
		}
		res := record(s.call("network_requests", map[string]any{"navigations": 10, "limit": 200}))
		if err := json.Unmarshal([]byte(jsonPart(resultText(res))), &l); err != nil {
			t.Fatal(err)
		}
		for _, leak := range []string{"alice", "T0K3N", "/xhr", host + ":"} {
			if strings.Contains(resultText(res), leak) {
				t.Errorf("network_requests lists %q of the denied frame:\n%s", leak, resultText(res))
			}
		}
		if (e2eBackend != "ext" || host == "evil.allowed.test") && l.Withheld < 2 {
			t.Errorf("withheld %d requests of the denied frame, want its document and XHRs: %s", l.Withheld, resultText(res))
		}
		own := false
		for _, r := range l.Requests {
			own = own || strings.HasSuffix(r.URL, "/host")
			record(s.try("network_request", map[string]any{"id": r.ID, "include_body": true}))
		}
		if !own {
			t.Errorf("the allowed page's own document is not listed: %s", resultText(res))
		}
	})
	t.Run("console", func(t *testing.T) {
		l := waitConsole(t, s, "PAGE-OK", map[string]any{"navigations": 10})
		res := record(s.call("console_messages", map[string]any{"navigations": 10}))
		if (e2eBackend != "ext" || host == "evil.allowed.test") && l.Withheld < 5 {
			t.Errorf("withheld %d messages of the denied frame, want its eval, sourceURL, srcdoc and thrown ones: %s", l.Withheld, resultText(res))
		}
	})
	t.Run("dialog", func(t *testing.T) {
		close(site.alert)
		if site.saw(host+":alerting") == "" {
			t.Fatal("the denied frame never got to alert")
		}
		time.Sleep(300 * time.Millisecond) // the alert is open
		_, outline := s.snapshotOf(nil)
		seen = append(seen, outline)
		told := false
		for _, tool := range []string{"tabs_list", "get_text", "tabs_list"} {
			told = strings.Contains(record(s.try(tool, nil)).Content[0].(*sdk.TextContent).Text, "dialog on a page outside the policy") || told
		}
		t.Logf("the dialog was told as one outside the policy: %v", told)
		if (e2eBackend != "ext" || host == "evil.allowed.test") && site.saw(host+":answered") == "" {
			t.Errorf("the denied frame's alert was never answered (the server dismisses one it may not report)")
		}
	})
	for _, txt := range seen {
		if strings.Contains(txt, dframeMark) {
			t.Errorf("a result carries the denied frame's words: %s", short(txt))
		}
	}
}

// TestRefusedPageNetworkLog (finding 8): a page takes its tab to a page
// the caller may not read (the operator lets pages go there, the model
// may not read it), which fetches with a token in its URL; the call that
// finds the tab there refuses it and blanks the tab. network_requests on
// the blank tab lists nothing of the refused page, however far back it
// reaches.
func TestRefusedPageNetworkLog(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	site := newDframeSite(t)
	s := startServer(t, dframeRules, "--policy="+dframePolicy(t), "--allow-domain=allowed.test", "--enable-mutations")
	site.to = "http://evil.allowed.test:" + site.port + "/private?user=alice&token=T0K3N"
	s.try("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/go"})
	if site.saw("evil.allowed.test:api") == "" {
		t.Fatal("the refused page never ran: the test proves nothing")
	}
	var seen []string
	refused := false
	for range 5 {
		res := s.try("network_requests", nil)
		seen = append(seen, wholeResult(res))
		if !res.IsError {
			break
		}
		refused = refused || strings.HasPrefix(resultText(res), "POLICY_DENIED")
	}
	t.Logf("refused on the way: %v", refused)
	for _, n := range []int{1, 2, 10} {
		seen = append(seen, wholeResult(s.call("network_requests", map[string]any{"navigations": n})))
	}
	seen = append(seen, wholeResult(s.call("console_messages", map[string]any{"navigations": 10})))
	for _, txt := range seen {
		for _, leak := range []string{"alice", "T0K3N", dframeMark, "/api/data"} {
			if strings.Contains(txt, leak) {
				t.Errorf("a listing on the blanked tab shows %q of the refused page: %s", leak, short(txt))
			}
		}
	}
}

// BenchmarkFrameSources measures what deciding every record on its
// document costs: the snapshot and network_requests of a page with five
// frames of another site (out of process), medians of interleaved calls.
// Run it on two commits to compare (one run each, not an assertion).
func BenchmarkFrameSources(b *testing.B) {
	site := newXframeSite(b)
	s := startServer(b, xframeRules, "--policy="+xframePolicy(b), "--allow-domain=allowed.test",
		"--allow-domain=sub.allowed.test", "--allow-domain=widget.test", "--enable-mutations")
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/outer?frames=pay,pay,pay,pay,pay"})
	s.call("snapshot", nil) // the frames' worlds are made once per document
	s.call("network_requests", nil)
	samples := map[string][]time.Duration{}
	n := max(b.N, 21)
	b.ResetTimer()
	for range n {
		for _, tool := range []string{"snapshot", "network_requests", "console_messages"} {
			start := time.Now()
			s.call(tool, nil)
			samples[tool] = append(samples[tool], time.Since(start))
		}
	}
	b.StopTimer()
	ms := func(k string) float64 { return float64(median(samples[k]).Microseconds()) / 1000 }
	for _, k := range []string{"snapshot", "network_requests", "console_messages"} {
		b.ReportMetric(ms(k), k+"-ms")
	}
	b.Logf("5 cross-origin frames, medians of %d: snapshot %.1f ms, network_requests %.1f ms, console_messages %.1f ms",
		n, ms("snapshot"), ms("network_requests"), ms("console_messages"))
}
