package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
)

// The fault suite: each fault hits a call in flight, which must end with
// isError and a cause well before its own deadline; the server keeps
// serving and the next call works. (TestBrowserKilled covers Chromium
// killed between and during calls.)

// inflight starts a call and returns the channel its result arrives on; a
// protocol error arrives as a result whose text starts "protocol error".
func (s *server) inflight(tool string, args map[string]any) <-chan *sdk.CallToolResult {
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := s.session.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "protocol error: " + err.Error()}}}
		}
		done <- res
	}()
	return done
}

// failsWith waits for the call in flight to end with isError carrying one
// of codes, within limit (a generous bound: the call's own deadline is
// longer, so waiting it out would fail).
func failsWith(t *testing.T, done <-chan *sdk.CallToolResult, limit time.Duration, codes ...string) string {
	t.Helper()
	select {
	case res := <-done:
		txt := resultText(res)
		if !res.IsError {
			t.Fatalf("the call in flight succeeded: %s", short(txt))
		}
		if strings.HasPrefix(txt, "protocol error") {
			t.Fatalf("the call in flight failed at the protocol level, want isError: %s", txt)
		}
		for _, c := range codes {
			if strings.Contains(txt, c) {
				if !strings.Contains(txt, "Next:") {
					t.Errorf("the error does not say what to do next: %s", txt)
				}
				return txt
			}
		}
		t.Fatalf("the call in flight failed with %s, want one of %v", short(txt), codes)
	case <-time.After(limit):
		t.Fatalf("the call in flight did not fail within %v of the fault", limit)
	}
	return ""
}

// driverPID is the Playwright driver (node … run-driver) this server
// started, or 0.
func (s *server) driverPID() int {
	for _, pid := range s.procs() {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(string(cmdline), "run-driver") {
			return pid
		}
	}
	return 0
}

// spinPage starts an endless loop in the page once it has loaded (so the
// navigation itself returns).
const spinPage = `<!doctype html><html><head><title>Spin</title></head><body><p id="p">spinning soon</p>
<script>setTimeout(() => { while (true) {} }, 300)</script></body></html>`

// oomPage allocates until the renderer dies.
const oomPage = `<!doctype html><html><head><title>Hog</title></head><body><p>allocating</p>
<script>setTimeout(() => { const keep = []; while (true) keep.push(new Array(1e6).fill(Math.random())) }, 300)</script></body></html>`

func faultSite(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/spin", page(spinPage))
	mux.HandleFunc("/oom", page(oomPage))
	mux.HandleFunc("/form", page(formPage))
	mux.HandleFunc("/other", page(otherPage))
	return testkit.Serve(t, mux)
}

// TestFaultDriverKilled: the Playwright driver (node) dies under a call;
// the call fails promptly and the next call starts a new driver.
func TestFaultDriverKilled(t *testing.T) {
	testkit.Backends(t, testkit.CDP) // the driver belongs to the launcher backend
	base := faultSite(t)
	s := startServer(t, permissive...)
	s.call("navigate", map[string]any{"url": base + "/form"})
	first := s.driverPID()
	if first == 0 {
		t.Fatalf("no driver process among %v", s.procs())
	}
	done := s.inflight("wait_for", map[string]any{"selector": "#never", "timeout_ms": 120000})
	time.Sleep(time.Second)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	txt := failsWith(t, done, 60*time.Second, "TARGET_GONE", "DETACHED", "LAUNCH_FAILED", "INTERNAL")
	t.Logf("the call in flight: %s", short(txt))
	var res *sdk.CallToolResult
	waitFor(t, 30*time.Second, func() bool {
		res = s.try("navigate", map[string]any{"url": base + "/other"})
		return !res.IsError
	})
	if !strings.Contains(resultText(res), "Other page") {
		t.Fatalf("after the driver died: %s", resultText(res))
	}
	if pid := s.driverPID(); pid == 0 || pid == first {
		t.Fatalf("no new driver (old %d, now %d)", first, pid)
	}
}

// TestFaultSpinningPage: a page that never yields its main thread; reads
// of it time out with TIMEOUT within their timeout_ms, the server answers
// other calls meanwhile, and another tab works.
func TestFaultSpinningPage(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	base := faultSite(t)
	s := startServer(t, permissive...)
	s.call("navigate", map[string]any{"url": base + "/spin"})
	spinTab := tabIDs(s)[0]
	time.Sleep(time.Second) // the loop starts 300 ms after load
	s.fail("TIMEOUT", "eval", map[string]any{"expression": "1+1", "tab_id": spinTab, "timeout_ms": 2000})
	s.fail("TIMEOUT", "get_text", map[string]any{"tab_id": spinTab, "timeout_ms": 2000})
	// The server stays responsive while the renderer spins.
	s.call("chrome_status", nil)
	other := resultText(s.call("tab_new", map[string]any{"url": base + "/other"}))
	if !strings.Contains(other, "Other page") {
		t.Fatalf("a new tab beside the spinning one: %s", short(other))
	}
	if txt := resultText(s.call("get_text", map[string]any{"tab_id": firstTabID(t, other)})); !strings.Contains(txt, "Other") {
		t.Fatalf("reading the other tab: %s", short(txt))
	}
	s.call("tab_close", map[string]any{"tab_id": spinTab})
}

// TestFaultRendererCrash: a page allocates until its renderer dies (a small
// V8 heap makes that quick); the call on it fails with a clear error and a
// new tab works.
func TestFaultRendererCrash(t *testing.T) {
	testkit.Backends(t, testkit.CDP) // the heap limit is a launch flag
	base := faultSite(t)
	s := startServer(t, append([]string{"--browser-arg=--js-flags=--max-old-space-size=32"}, permissive...)...)
	s.call("navigate", map[string]any{"url": base + "/form"})
	done := s.inflight("navigate", map[string]any{"url": base + "/oom", "timeout_ms": 60000})
	res := <-done
	if !res.IsError {
		// The navigation returned before the heap ran out; the next
		// call on the tab meets the crash.
		done = s.inflight("wait_for", map[string]any{"selector": "#never", "timeout_ms": 60000})
		txt := failsWith(t, done, 50*time.Second, "TARGET_GONE")
		if !strings.Contains(txt, "crashed") {
			t.Fatalf("the error does not say the page crashed: %s", txt)
		}
	} else if txt := resultText(res); !strings.Contains(strings.ToLower(txt), "crash") && !strings.Contains(txt, "TARGET_GONE") {
		t.Fatalf("the navigation into the crash failed without saying so: %s", txt)
	}
	txt := resultText(s.call("tab_new", map[string]any{"url": base + "/other"}))
	if !strings.Contains(txt, "Other page") {
		t.Fatalf("a new tab after the crash: %s", short(txt))
	}
}

// TestFaultBlackholePort: navigation to a port that accepts and never
// answers times out with TIMEOUT within timeout_ms; the next call works.
func TestFaultBlackholePort(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	base := faultSite(t)
	ln := testkit.Listen(t)
	held := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held <- c // held open, never answered
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		for {
			select {
			case c := <-held:
				c.Close()
			default:
				return
			}
		}
	})
	s := startServer(t, permissive...)
	s.call("navigate", map[string]any{"url": base + "/form"}) // the browser is up: the deadline is the navigation's
	txt := s.fail("TIMEOUT", "navigate", map[string]any{"url": "http://" + ln.Addr().String() + "/never", "timeout_ms": 3000})
	if !strings.Contains(txt, "Next:") {
		t.Fatalf("no hint: %s", txt)
	}
	if txt := resultText(s.call("navigate", map[string]any{"url": base + "/other"})); !strings.Contains(txt, "Other page") {
		t.Fatalf("after the timeout: %s", short(txt))
	}
}

// endpointHealth is chrome_status's "endpoints".
type endpointHealth struct {
	Endpoint  string `json:"endpoint"`
	Healthy   bool   `json:"healthy"`
	Sessions  int    `json:"sessions"`
	LastError string `json:"last_error"`
}

func (s *server) endpoints() []endpointHealth {
	s.t.Helper()
	var st struct {
		Endpoints []endpointHealth `json:"endpoints"`
	}
	txt := jsonPart(resultText(s.call("chrome_status", nil)))
	if err := json.Unmarshal([]byte(txt), &st); err != nil {
		s.t.Fatalf("chrome_status: %v\n%s", err, txt)
	}
	if st.Endpoints == nil {
		// The status may nest the pool under the browser.
		var nested struct {
			Browser struct {
				Endpoints []endpointHealth `json:"endpoints"`
			} `json:"browser"`
		}
		_ = json.Unmarshal([]byte(txt), &nested)
		st.Endpoints = nested.Browser.Endpoints
	}
	return st.Endpoints
}

// TestFaultEndpointDropped: two browser servers; the one serving the
// session is killed under a call. The call fails promptly, chrome_status
// shows that endpoint out of rotation, and the next call runs on the other.
func TestFaultEndpointDropped(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	base := faultSite(t)
	mark := fmt.Sprintf("e2e-drop-%d", time.Now().UnixNano())
	epA, stopA := startBrowserServer(t, mark+"-a")
	epB, stopB := startBrowserServer(t, mark+"-b")
	s := startServer(t, append([]string{"--no-extension", "--browser-endpoint=" + epA, "--browser-endpoint=" + epB}, permissive...)...)
	s.call("navigate", map[string]any{"url": base + "/form"})
	var serving string
	for _, e := range s.endpoints() {
		if e.Sessions > 0 {
			serving = e.Endpoint
		}
	}
	stop, other := stopA, epB
	switch serving {
	case epA:
	case epB:
		stop, other = stopB, epA
	default:
		t.Fatalf("no endpoint serves the session: %+v", s.endpoints())
	}
	done := s.inflight("wait_for", map[string]any{"selector": "#never", "timeout_ms": 120000})
	time.Sleep(time.Second)
	stop()
	txt := failsWith(t, done, 60*time.Second, "TARGET_GONE", "DETACHED", "NO_BACKEND", "LAUNCH_FAILED")
	t.Logf("the call in flight: %s", short(txt))
	var res *sdk.CallToolResult
	waitFor(t, 30*time.Second, func() bool {
		res = s.try("navigate", map[string]any{"url": base + "/other"})
		return !res.IsError
	})
	if !strings.Contains(resultText(res), "Other page") {
		t.Fatalf("the next call: %s", resultText(res))
	}
	health := s.endpoints()
	for _, e := range health {
		switch e.Endpoint {
		case serving:
			if e.Healthy || e.LastError == "" {
				t.Errorf("the dropped endpoint is shown healthy: %+v", e)
			}
		case other:
			if !e.Healthy || e.Sessions != 1 {
				t.Errorf("the endpoint left should be healthy with the session: %+v", e)
			}
		}
	}
	if len(health) != 2 {
		t.Fatalf("chrome_status endpoints: %+v", health)
	}
}

// TestFaultExtensionDropped: the extension is cut off (`chromegate pair
// reset`) under a slow call; the call fails with EXTENSION_DISCONNECTED and
// the next call falls back to the CDP backend.
func TestFaultExtensionDropped(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	base := faultSite(t)
	s := startServer(t, append([]string{"--with-extension"}, permissive...)...)
	s.waitPaired()
	txt := resultText(s.call("navigate", map[string]any{"url": base + "/form"}))
	if id := firstTabID(t, txt); !strings.HasPrefix(id, "ext:") {
		t.Fatalf("navigate went through %s, want the extension", id)
	}
	done := s.inflight("wait_for", map[string]any{"selector": "#never", "timeout_ms": 120000})
	time.Sleep(time.Second)
	if out, err := exec.Command(binary, "pair", "reset", "--data-dir", s.dataDir).CombinedOutput(); err != nil {
		t.Fatalf("pair reset: %v\n%s", err, out)
	}
	failsWith(t, done, 30*time.Second, "EXTENSION_DISCONNECTED")
	txt = resultText(s.call("navigate", map[string]any{"url": base + "/other"}))
	if id := firstTabID(t, txt); !strings.HasPrefix(id, "cdp:") || !strings.Contains(txt, "Other page") {
		t.Fatalf("the next call did not fall back to CDP: %s", short(txt))
	}
}
