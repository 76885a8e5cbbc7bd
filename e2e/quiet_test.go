package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// recordingProxy is an HTTP proxy that forwards nothing: it writes down
// every request a browser sends it (a CONNECT tunnel's host, a plain-http
// request's URL) and refuses each.
type recordingProxy struct {
	addr  string
	start time.Time
	mu    sync.Mutex
	seen  []string
}

func newRecordingProxy(t *testing.T) *recordingProxy {
	t.Helper()
	ln := testkit.Listen(t)
	p := &recordingProxy{addr: ln.Addr().String(), start: time.Now()}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := r.Host
		if r.Method != http.MethodConnect {
			target = r.URL.String()
		}
		p.mu.Lock()
		p.seen = append(p.seen, fmt.Sprintf("%s %s (%.1fs)", r.Method, target, time.Since(p.start).Seconds()))
		p.mu.Unlock()
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusForbidden)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

func (p *recordingProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// quietIdle is how long a test leaves the browser alone on a local page.
// Chromium 156 asked Google for the time, an on-demand component and the
// account cookie jar within about a second of starting (and again each
// minute), so a few seconds after the page has loaded is past them.
const quietIdle = 6 * time.Second

// TestBrowserMakesNoCallOfItsOwn: the launched browser, left on an allowed
// local page, sends nothing anywhere else. Every request the browser makes
// that does not go to loopback is sent to a proxy that records it (the
// egress boundary is off so that the browser's --proxy-server is that
// proxy), for the persistent profile, an in-memory profile, and the
// persistent profile with chromegate's extension loaded (the ext backend's
// launch).
func TestBrowserMakesNoCallOfItsOwn(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	modes := []struct {
		name string
		args []string
	}{
		{"isolated", []string{"--no-extension"}},
		{"persistent", []string{persistentProfile, "--no-extension"}},
		{"persistent with the extension", []string{"--with-extension"}},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel() // each browser idles for quietIdle: together
			base := site(t)
			rec := newRecordingProxy(t)
			args := append([]string{"--unsafe-no-egress-boundary", "--browser-arg=--proxy-server=http://" + rec.addr}, permissive...)
			s := startServer(t, append(args, m.args...)...)
			s.call("navigate", map[string]any{"url": base + "/form"})
			time.Sleep(quietIdle)
			if got := s.evalString("document.title"); got != "Test form" {
				t.Fatalf("the page is %q, not the test form", got)
			}
			if reqs := rec.requests(); len(reqs) > 0 {
				t.Fatalf("the browser sent %d request(s) no page made, after %s on a local page:\n%s",
					len(reqs), quietIdle, strings.Join(reqs, "\n"))
			}
		})
	}
}

// TestBrowserOwnRequestsRefused: a request the browser makes of its own
// accord that a switch misses still does not leave an isolated browser:
// its own network goes to the egress proxy's listener that refuses
// everything, and says so in the log. The test undoes one of the quiet
// switches (Google sign-in's server) so that Chromium makes such a
// request. It runs Chromium: a headless shell has no sign-in to make one.
func TestBrowserOwnRequestsRefused(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	base := site(t)
	s := startServer(t, append([]string{"--no-extension", "--headless-shell=off", "--browser-arg=--gaia-url=https://accounts.google.com/"}, permissive...)...)
	s.call("navigate", map[string]any{"url": base + "/form"})
	deadline := time.Now().Add(quietIdle)
	for !strings.Contains(s.log.String(), "refused a request the browser made of its own accord") {
		if time.Now().After(deadline) {
			t.Fatalf("no refused request of the browser's own in the log within %s", quietIdle)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(s.log.String(), "accounts.google.com") {
		t.Fatalf("the refused request is not the sign-in one:\n%s", tail(s.log.String(), 3000))
	}
}
