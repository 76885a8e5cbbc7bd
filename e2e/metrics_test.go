package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// TestMetricsScrapedByPrometheus: serve --metrics-addr is scraped by
// Debian's real prometheus, and its query API answers the calls and the
// policy decisions the test made: one call allowed, one denied; then a
// browser killed under it: the crash, the sessions lost and the relaunch.
func TestMetricsScrapedByPrometheus(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	metricsAddr := freeLoopback(t)
	h := startHTTP(t, t.TempDir(), "--metrics-addr", metricsAddr)
	// A page that rebinds its name to 127.0.0.1 reads no metrics and
	// starts no browser through /readyz.
	for _, path := range []string{"/metrics", "/readyz"} {
		req, _ := http.NewRequest("GET", "http://"+metricsAddr+path, nil)
		req.Host = "rebound.example:80"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s with a rebound Host: %d", path, resp.StatusCode)
		}
	}

	if code, _, body := h.rest("POST", "/api/v1/command", "", `{"command":"chrome_status","params":{}}`, nil); code != 200 {
		t.Fatalf("chrome_status: %d %s", code, body)
	}
	if _, _, body := h.rest("POST", "/api/v1/command", "", `{"command":"navigate","params":{"url":"data:text/html,secret"}}`, nil); !json.Valid([]byte(body)) {
		t.Fatalf("navigate: %s", body)
	}

	promAddr, log := startPrometheus(t, metricsAddr)
	wait := func(query, want string) {
		t.Helper()
		got := ""
		for deadline := time.Now().Add(60 * time.Second); got != want; time.Sleep(500 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("prometheus: %s = %q, want %q\nprometheus log:\n%s", query, got, want, tail(log.String(), 4000))
			}
			got = promQuery(t, promAddr, query)
		}
	}
	for query, want := range map[string]string{
		`chromegate_tool_calls_total{tool="navigate",outcome="POLICY_DENIED"}`: "1",
		`chromegate_tool_calls_total{tool="chrome_status",outcome="ok"}`:       "1",
		`chromegate_policy_decisions_total{phase="call",result="deny"}`:        "1",
		`count(chromegate_build_info)`:                                         "1",
		`chromegate_browser_launches_total{backend="cdp",result="ok"}`:         "1",
		`chromegate_sessions{kind="named"}`:                                    "1", // the REST calls' default context
	} {
		wait(query, want)
	}

	// The browser killed: a crash, both its sessions (the default one and
	// the REST calls') lost, and the next call starts another browser.
	h.killBrowser()
	wait(`chromegate_browser_crashes_total{backend="cdp"}`, "1")
	if code, _, body := h.rest("POST", "/api/v1/command", "", `{"command":"tabs_list","params":{}}`, nil); code != 200 || strings.Contains(body, `"isError":true`) {
		t.Fatalf("tabs_list after the crash: %d %s", code, body)
	}
	wait(`chromegate_browser_launches_total{backend="cdp",result="ok"}`, "2")
	wait(`sum(chromegate_sessions_lost_total{backend="cdp"})`, "2")
	wait(`chromegate_sessions{kind="named"}`, "1")
}

// startPrometheus runs Debian's prometheus scraping targets (host:port)
// every second, and returns its address and log.
func startPrometheus(t testing.TB, targets ...string) (string, *testkit.Buffer) {
	t.Helper()
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("prometheus is not installed: make metrics-deps")
		}
		t.Skip("prometheus is not installed: make metrics-deps")
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: chromegate\n    static_configs:\n      - targets: ['%s']\n", strings.Join(targets, "', '"))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := freeLoopback(t)
	cmd := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)
	log := &testkit.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return promAddr, log
}

// promQuery asks Prometheus's HTTP API for an instant vector's first
// value; "" when it has none (yet).
func promQuery(t testing.TB, addr, query string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return "" // not listening yet
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Data struct {
			Result []struct {
				Value []any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if json.Unmarshal(b, &out) != nil || len(out.Data.Result) == 0 || len(out.Data.Result[0].Value) != 2 {
		return ""
	}
	s, _ := out.Data.Result[0].Value[1].(string)
	return s
}

// freeLoopback returns a loopback address whose port was free a moment ago.
func freeLoopback(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
