package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/internal/testkit"
)

// policySite serves pages that lead off the allowlist: a redirect, a script
// navigation and a link, all to other.test.
func policySite(t *testing.T) (port string) {
	base := site(t)
	u, _ := url.Parse(base)
	port = u.Port()
	other := "http://other.test:" + port + "/other"
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// Everything else comes from the common site.
		resp, err := http.Get(base + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = bufio.NewReader(resp.Body).WriteTo(w)
	})
	mux.HandleFunc("/to-other", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other, http.StatusFound)
	})
	mux.HandleFunc("/script-to-other", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Leaving</title><p>leaving soon</p><script>setTimeout(()=>location=%q,1000)</script>`, other)
	})
	mux.HandleFunc("/link-to-other", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Links</title><a id="away" href=%q>away</a><input id="secret">`, other)
	})
	return serveMux(t, mux)
}

// serveMux serves mux on a loopback port and returns the port.
func serveMux(t *testing.T, mux *http.ServeMux) string {
	t.Helper()
	_, port, _ := strings.Cut(strings.TrimPrefix(testkit.Serve(t, mux), "http://"), ":")
	return port
}

// resolverRules map the test hosts to 127.0.0.1 inside Chromium only.
const resolverRules = "--browser-arg=--host-resolver-rules=MAP allowed.test 127.0.0.1, MAP other.test 127.0.0.1"

// TestDefaultPolicy drives the embedded default policy end to end: only
// allowed.test is allowlisted, and everything the issue lists is denied.
func TestDefaultPolicy(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	port := policySite(t)
	allowed := "http://allowed.test:" + port
	logPath := filepath.Join(t.TempDir(), "decisions.jsonl")
	s := startServer(t, resolverRules, "--allow-domain=allowed.test", "--enable-mutations", "--unsafe-enable-eval",
		"--decision-log="+logPath)

	if txt := resultText(s.call("navigate", map[string]any{"url": allowed + "/form"})); !strings.Contains(txt, "Test form") {
		t.Fatalf("navigation to the allowed host: %s", txt)
	}
	denied := []string{
		"http://other.test:" + port + "/other",
		"file:///etc/passwd",
		"chrome://settings",
		"javascript:alert(1)",
		"data:text/html,x",
		"http://127.0.0.1:" + port + "/form",
		"http://2130706433:" + port + "/form",
		"http://0x7f.1:" + port + "/form",
		"http://[::1]:" + port + "/form",
		"http://169.254.169.254/latest/meta-data/",
		"http://localhost:" + port + "/form",
	}
	for _, u := range denied {
		t.Run("navigate "+u, func(t *testing.T) {
			txt := s.fail("POLICY_DENIED", "navigate", map[string]any{"url": u})
			if !strings.Contains(txt, "Next:") {
				t.Fatalf("no hint on what would allow it: %s", txt)
			}
			// Nothing was loaded: the tab still shows the allowed page.
			if got := s.evalString(`location.host`); got != "allowed.test:"+port {
				t.Fatalf("after a denied navigation the tab shows %q", got)
			}
		})
	}

	t.Run("redirect off the allowlist is denied on arrival", func(t *testing.T) {
		txt := s.fail("POLICY_DENIED", "navigate", map[string]any{"url": allowed + "/to-other"})
		if !strings.Contains(txt, "other.test") || strings.Contains(txt, "Other page") {
			t.Fatalf("denial should name other.test and show nothing of it: %s", txt)
		}
		if tabs := resultText(s.call("tabs_list", nil)); !strings.Contains(tabs, "about:blank") || strings.Contains(tabs, "Other page") {
			t.Fatalf("the tab was not sent back to about:blank: %s", tabs)
		}
	})
	t.Run("a click that leaves the allowlist is denied on arrival", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": allowed + "/link-to-other"})
		txt := s.fail("POLICY_DENIED", "click", map[string]any{"selector": "#away"})
		if !strings.Contains(txt, "other.test") {
			t.Fatalf("denial should name other.test: %s", txt)
		}
	})
	t.Run("reads of a page that wandered off are denied", func(t *testing.T) {
		for _, tool := range []string{"get_text", "get_html", "screenshot", "eval", "click"} {
			// Each denial sends the tab to about:blank: wander off again.
			// The page leaves a second after it loads; on a loaded machine
			// it may still be gone before the navigation's landing is
			// decided, and the navigation is then denied (and the tab
			// blanked): go again.
			for attempt := 1; ; attempt++ {
				res := s.try("navigate", map[string]any{"url": allowed + "/script-to-other"})
				if !res.IsError {
					break
				}
				if txt := resultText(res); !strings.HasPrefix(txt, "POLICY_DENIED") || attempt == 3 {
					t.Fatalf("navigate (attempt %d): %s", attempt, txt)
				}
			}
			s.waitTabHidden()
			args := map[string]any{}
			switch tool {
			case "eval":
				args["expression"] = "document.body.innerText"
			case "click":
				args["selector"] = "#h"
			}
			txt := s.fail("POLICY_DENIED", tool, args)
			if strings.Contains(txt, "Other") && !strings.Contains(txt, "other.test") {
				t.Fatalf("%s leaked page content: %s", tool, txt)
			}
		}
	})
	t.Run("decision log", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": allowed + "/link-to-other"})
		const typed, cookie = "typed-s3cret-value", "cookie-s3cret-value"
		s.call("type", map[string]any{"selector": "#secret", "text": typed})
		s.call("cookies_set", map[string]any{"cookies": []map[string]any{{"name": "sid", "value": cookie, "url": allowed}}})
		s.call("eval", map[string]any{"expression": "'eval-s3cret-source'.length"})
		st, err := os.Stat(logPath)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("decision log mode %v, want 0600", st.Mode().Perm())
		}
		raw, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{typed, cookie, "eval-s3cret-source"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("the decision log contains %q", secret)
			}
			if strings.Contains(s.log.String(), secret) {
				t.Errorf("the server log contains %q", secret)
			}
		}
		tools := map[string]int{}
		deniedOther := false
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("decision log line is not JSON: %q", line)
			}
			for _, k := range []string{"time", "principal", "tool", "action", "allow", "eval_us"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("decision log line lacks %q: %s", k, line)
				}
			}
			tool, _ := m["tool"].(string)
			phase, _ := m["phase"].(string)
			host, _ := m["target_host"].(string)
			allow, _ := m["allow"].(bool)
			if phase == "call" {
				tools[tool]++
			}
			if tool == "navigate" && host == "other.test" && !allow {
				deniedOther = true
			}
		}
		if tools["type"] != 1 || tools["cookies_set"] != 1 {
			t.Fatalf("want one call decision each for type and cookies_set, got %v", tools)
		}
		if !deniedOther {
			t.Fatal("the denied navigation to other.test is not in the decision log")
		}
	})
}

// TestSafeDefaults: with no switches, eval and the mutating tools are not
// even listed, and calling them by name is denied.
func TestSafeDefaults(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	port := policySite(t)
	s := startServer(t, resolverRules, "--allow-domain=allowed.test")
	res, err := s.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tool := range res.Tools {
		listed[tool.Name] = true
	}
	for _, hidden := range []string{"eval", "click", "type", "fill", "cookies_set", "download_file"} {
		if listed[hidden] {
			t.Errorf("%s is listed without its switch", hidden)
		}
	}
	for _, shown := range []string{"navigate", "get_text", "screenshot", "tabs_list", "chrome_status", "hover"} {
		if !listed[shown] {
			t.Errorf("%s is not listed", shown)
		}
	}
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/form"})
	s.fail("POLICY_DENIED", "click", map[string]any{"selector": "#counter"})
	s.fail("POLICY_DENIED", "eval", map[string]any{"expression": "1"})
	if txt := resultText(s.call("get_text", map[string]any{"selector": "#para"})); !strings.Contains(txt, "Hello world") {
		t.Fatalf("reads on the allowed host: %s", txt)
	}

	t.Run("switches bring them back", func(t *testing.T) {
		s2 := startServer(t, resolverRules, "--allow-domain=allowed.test", "--unsafe-enable-eval", "--enable-mutations", "--tools=all")
		res, err := s2.session.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tool := range res.Tools {
			names[tool.Name] = true
		}
		if !names["eval"] || !names["click"] {
			t.Fatalf("eval or click still hidden with their switches: %v", names)
		}
		s2.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/form"})
		s2.call("click", map[string]any{"selector": "#counter"})
		if got := s2.evalString(`document.querySelector('#counter').textContent`); got != "clicked 1" {
			t.Fatalf("click with mutations on: %q", got)
		}
	})
}
