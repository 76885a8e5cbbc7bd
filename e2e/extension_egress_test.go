package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// hits counts the requests a test server received, by path.
type hits struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hits) add(path string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = map[string]int{}
	}
	h.n[path]++
}

func (h *hits) get(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[path]
}

func (h *hits) all() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for k, v := range h.n {
		out[k] = v
	}
	return out
}

// pathCountingServer counts every request (WebSocket handshakes included) and
// answers each with a small page.
func pathCountingServer(t *testing.T) (port string, h *hits) {
	h = &hits{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.add(r.URL.Path)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>reached</title><p>reached")
	})
	return serveMux(t, mux), h
}

// userChromium runs Chromium as a user would, with chromegate's extension
// paired through the native host, popups allowed (as in a browser
// Playwright launches), test names mapped to 127.0.0.1 and a DevTools port
// standing for the user's own automation. It returns that port.
func userChromium(t *testing.T, args ...string) (s *server, devtoolsPort string) {
	t.Helper()
	s, profile := pairedChromium(t, args, "--disable-popup-blocking", "--remote-debugging-port=0",
		"--host-resolver-rules=MAP allowed.test 127.0.0.1, MAP evil.test 127.0.0.1")
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if port, _, ok := strings.Cut(string(b), "\n"); err == nil && ok && port != "" {
			return s, port
		}
		if time.Now().After(deadline) {
			t.Fatalf("Chromium wrote no DevToolsActivePort: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// strictEgress is a data file turning the default policy's strict egress
// on: requests only to allowed hosts (and listed asset hosts).
func strictEgress(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(p, []byte(`{"strict_egress": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return "--data=" + p
}

// TestExtensionEgress drives an allowed page that reaches for a denied
// host and a loopback "internal service" every way a page can — frames,
// images, stylesheets, fetch, sendBeacon, a redirect, WebSocket, popups —
// through the extension: none of it reaches either server, while the
// page's own subresources and an allowed popup still load. A tab the user
// opens outside chromegate is never filtered.
func TestExtensionEgress(t *testing.T) {
	testkit.Backends(t, testkit.Ext)
	evilPort, evil := pathCountingServer(t)
	internalPort, internal := pathCountingServer(t)
	evilURL := "http://evil.test:" + evilPort
	internalURL := "http://127.0.0.1:" + internalPort
	var ok hits
	mux := http.NewServeMux()
	mux.HandleFunc("/attack", func(w http.ResponseWriter, r *http.Request) {
		ok.add(r.URL.Path)
		w.Header().Set("Content-Type", "text/html")
		var b strings.Builder
		b.WriteString(`<!doctype html><title>attack</title><link rel="stylesheet" href="/ok.css"><img src="/ok.png"><img src="/to-evil">`)
		for _, base := range []string{evilURL, internalURL} {
			fmt.Fprintf(&b, `<iframe src="%[1]s/frame"></iframe><img src="%[1]s/img.png"><link rel="stylesheet" href="%[1]s/s.css">`, base)
		}
		b.WriteString(`<script>fetch("/ok-fetch");navigator.sendBeacon("/ok-beacon","x");`)
		for _, base := range []string{evilURL, internalURL} {
			ws := strings.Replace(base, "http:", "ws:", 1)
			fmt.Fprintf(&b, `fetch(%[1]q+"/fetch").catch(()=>{});navigator.sendBeacon(%[1]q+"/beacon","x");`+
				`try{new WebSocket(%[2]q+"/ws")}catch(e){};window.open(%[1]q+"/popup");`, base, ws)
		}
		b.WriteString(`window.open("/ok-popup");</script><p>attack page`)
		fmt.Fprint(w, b.String())
	})
	mux.HandleFunc("/to-evil", func(w http.ResponseWriter, r *http.Request) {
		ok.add(r.URL.Path)
		http.Redirect(w, r, evilURL+"/redirected.png", http.StatusFound)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		ok.add(r.URL.Path)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<!doctype html><title>ok</title><p>ok")
	})
	allowedPort := serveMux(t, mux)
	allowed := "http://allowed.test:" + allowedPort

	s, devtools := userChromium(t, "--allow-domain=allowed.test", strictEgress(t))

	txt := resultText(s.call("navigate", map[string]any{"url": allowed + "/attack"}))
	if id := firstTabID(t, txt); !strings.HasPrefix(id, "ext:") {
		t.Fatalf("navigate went through %s, want the extension", id)
	}
	// The page's own subresources and the allowed popup load.
	deadline := time.Now().Add(15 * time.Second)
	for _, p := range []string{"/ok.css", "/ok.png", "/to-evil", "/ok-fetch", "/ok-beacon", "/ok-popup"} {
		for ok.get(p) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("the allowed %s never loaded; the allowed server saw %v", p, ok.all())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(time.Second) // whatever else the page started has had time to leave
	if got := evil.all(); len(got) != 0 {
		t.Errorf("the denied host was reached through the extension: %v", got)
	}
	if got := internal.all(); len(got) != 0 {
		t.Errorf("the loopback service was reached through the extension: %v", got)
	}
	// Nothing of a denied popup is listed; the allowed one is.
	tabs := resultText(s.call("tabs_list", nil))
	if strings.Contains(tabs, evilURL) || strings.Contains(tabs, internalURL) {
		t.Errorf("tabs_list shows a denied popup:\n%s", tabs)
	}
	if !strings.Contains(tabs, allowed+"/ok-popup") {
		t.Errorf("tabs_list does not show the allowed popup:\n%s", tabs)
	}

	// A tab the user opens (here through their own DevTools client) is
	// the user's: the extension never filters it, even to a denied host.
	req, _ := http.NewRequest(http.MethodPut, "http://127.0.0.1:"+devtools+"/json/new?"+evilURL+"/user", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	deadline = time.Now().Add(10 * time.Second)
	for evil.get("/user") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the user's own tab never reached %s (the extension filtered it?); the host saw %v", evilURL, evil.all())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// and only the user's tab reached it
	if got := evil.all(); !slices.Equal(mapKeys(got), []string{"/favicon.ico", "/user"}) && !slices.Equal(mapKeys(got), []string{"/user"}) {
		t.Errorf("the denied host saw more than the user's tab: %v", got)
	}
}

func mapKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
