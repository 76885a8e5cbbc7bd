package e2e

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/policies"
)

// TestOPABundlesAndDecisionLogs runs the built binary with --opa-config
// over HTTP: its policy is a signed bundle `chromegate policy build` made,
// served by a Go file server that sends ETags as nginx does; its
// decisions go to a Go collector of OPA decision-log uploads. A
// navigation the first bundle denies is allowed once the second is
// published; the collector receives both decisions with their bundle's
// revision and the replica's label, and never the token in the URL.
// Before the first bundle is published (the server answers 404) every call
// is denied, saying why, and /readyz is 503; the metrics name the revision
// in force.
func TestOPABundlesAndDecisionLogs(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	base := site(t)
	dir := t.TempDir()

	signKey, pub := bundleSigner(t, dir)
	served := t.TempDir()
	build := func(rev string, allow []string) {
		t.Helper()
		buildDefaultBundle(t, signKey, rev, allow, filepath.Join(served, "authz.tar.gz"))
	}
	bundles := httptest.NewServer(etagFiles(served))
	t.Cleanup(bundles.Close)
	col := &logCollector{}
	collector := httptest.NewServer(col)
	t.Cleanup(collector.Close)
	cfgPath := opaConfigFile(t, dir, bundles.URL+"/authz.tar.gz", collector.URL, pub)
	metricsAddr := freeLoopback(t)
	h := startHTTP(t, dir, "--opa-config", cfgPath, "--replica", "e2e-replica", "--enable-mutations", "--metrics-addr", metricsAddr)
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + metricsAddr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	navigate := func(url string) (allowed bool, body string) {
		t.Helper()
		params, _ := json.Marshal(map[string]any{"url": url})
		code, _, body := h.rest("POST", "/api/v1/command", "", `{"command":"navigate","params":`+string(params)+`}`, nil)
		if code != http.StatusOK && !strings.Contains(body, "POLICY_DENIED") {
			t.Fatalf("navigate: %d %s", code, body)
		}
		return !strings.Contains(body, "POLICY_DENIED"), body
	}
	// No bundle yet: every call denied (the tool is not even listed), and
	// /readyz says why, with the bundle server's answer.
	var last string
	waitUntil(t, "/readyz to give the bundle server's Not Found", func() bool {
		var code int
		code, last = get("/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(last, "no policy bundle has been activated yet") &&
			strings.Contains(last, "server replied with Not Found")
	}, func() string { return last })
	if ok, body := navigate(base + "/form"); ok {
		t.Fatalf("allowed before any bundle: %s", body)
	}

	// Then v1 decides: it denies the site with its own reason.
	build("v1", []string{})
	waitUntil(t, "bundle v1", func() bool {
		_, last = navigate(base + "/form")
		return strings.Contains(last, "allow_domains")
	}, func() string { return last })
	if ok, body := navigate(base + "/form"); ok {
		t.Fatalf("v1 allowed the site: %s", body)
	}

	// Over MCP too, the bundle's policy decides.
	cs := h.connect("", nil)
	if res := mcpCall(t, cs, "navigate", map[string]any{"url": base + "/form"}); !res.IsError || !strings.Contains(resultText(res), "POLICY_DENIED") {
		t.Fatalf("navigate over MCP under v1: %s", resultText(res))
	}

	published := time.Now()
	build("v2", []string{"127.0.0.1"})
	waitUntil(t, "bundle v2 to allow the site", func() bool { ok, _ := navigate(base + "/form"); return ok })
	t.Logf("bundle activation through the binary: publish → first call allowed under v2: %v (polling every 1 s)", time.Since(published))
	const secret = "tok-e2e-5ecret-in-the-query"
	if ok, body := navigate(base + "/form?token=" + secret); !ok {
		t.Fatalf("v2 denied the site: %s", body)
	}
	if res := mcpCall(t, cs, "navigate", map[string]any{"url": base + "/other"}); res.IsError {
		t.Fatalf("navigate over MCP under v2: %s", resultText(res))
	}

	if _, body := get("/metrics"); !strings.Contains(body, `chromegate_policy_bundle_info{bundle="authz",revision="v2"} 1`) ||
		!strings.Contains(body, "chromegate_policy_waiting 0") {
		t.Fatalf("metrics after v2:\n%s", grepLines(body, "chromegate_policy_", "chromegate_decision_logs_"))
	}
	var sawV1, sawV2 bool
	waitUntil(t, "decisions of both revisions at the collector", func() bool {
		sawV1, sawV2 = false, false
		for _, ev := range col.events() {
			labels, _ := ev["labels"].(map[string]any)
			if labels["replica"] != "e2e-replica" || labels["team"] != "e2e" {
				t.Fatalf("labels: %v", labels)
			}
			// Decisions made before any bundle activated name none.
			bundles, _ := ev["bundles"].(map[string]any)
			authz, _ := bundles["authz"].(map[string]any)
			rev, _ := authz["revision"].(string)
			input, _ := ev["input"].(map[string]any)
			if input["tool"] != "navigate" || input["target_host"] != "127.0.0.1" {
				continue
			}
			result, _ := ev["result"].(map[string]any)
			allow := result["allow"] == true
			sawV1 = sawV1 || rev == "v1" && !allow
			sawV2 = sawV2 || rev == "v2" && allow
		}
		return sawV1 && sawV2
	})
	if raw := col.body(); strings.Contains(raw, secret) {
		t.Fatalf("the collector received the token:\n%s", raw)
	}
}

// bundleSigner writes an RSA key that signs bundles to dir/sign.pem and
// returns its path and the public key, PEM.
func bundleSigner(t testing.TB, dir string) (signKey, public string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	signKey = filepath.Join(dir, "sign.pem")
	if err := os.WriteFile(signKey, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), 0o600); err != nil {
		t.Fatal(err)
	}
	return signKey, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
}

// buildDefaultBundle runs `chromegate policy build` on the default policy
// with allow as its allow_domains, signed with signKey, to out (written
// atomically by the command).
func buildDefaultBundle(t testing.TB, signKey, rev string, allow []string, out string) {
	t.Helper()
	src := t.TempDir()
	if err := policies.WriteTree(src); err != nil {
		t.Fatal(err)
	}
	dataPath := filepath.Join(src, "default", "data.json")
	var data map[string]any
	raw, _ := os.ReadFile(dataPath)
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	data["allow_domains"] = allow
	raw, _ = json.Marshal(data)
	if err := os.WriteFile(dataPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(binary, "policy", "build", "--signing-key", signKey, "--revision", rev,
		"-o", out, filepath.Join(src, "default")).CombinedOutput()
	if err != nil {
		t.Fatalf("policy build: %v\n%s", err, b)
	}
}

// opaConfigFile writes an OPA configuration to dir/opa.json: one signed
// bundle "authz" at bundleURL (polled every second) verified with pub,
// decision logs to collectorURL (uploaded every second; none when empty),
// labels.team "e2e". Several replicas may share it (--replica tells them
// apart).
func opaConfigFile(t testing.TB, dir, bundleURL, collectorURL, pub string) string {
	t.Helper()
	u, err := url.Parse(bundleURL)
	if err != nil {
		t.Fatal(err)
	}
	resource := strings.TrimPrefix(u.Path, "/")
	u.Path = ""
	cfg := map[string]any{
		"services": map[string]any{"bundles": map[string]any{"url": u.String()}},
		"keys":     map[string]any{"release": map[string]any{"algorithm": "RS256", "key": pub}},
		"bundles": map[string]any{"authz": map[string]any{"service": "bundles", "resource": resource,
			"signing": map[string]any{"keyid": "release"}, "polling": map[string]any{"min_delay_seconds": 1, "max_delay_seconds": 1}}},
		"labels": map[string]any{"team": "e2e"},
	}
	if collectorURL != "" {
		cfg["services"].(map[string]any)["collector"] = map[string]any{"url": collectorURL}
		cfg["decision_logs"] = map[string]any{"service": "collector", "reporting": map[string]any{"min_delay_seconds": 1, "max_delay_seconds": 1}}
	}
	raw, _ := json.Marshal(cfg)
	p := filepath.Join(dir, "opa.json")
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// etagFiles serves dir with an ETag per content, as nginx does, so that
// OPA's If-None-Match polls get 304 until the bundle changes.
func etagFiles(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(filepath.Join(dir, filepath.Clean("/"+r.URL.Path)))
		if err == nil {
			sum := sha256.Sum256(b)
			etag := `"` + hex.EncodeToString(sum[:8]) + `"`
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", etag)
		}
		files.ServeHTTP(w, r)
	})
}

// logCollector takes OPA's decision-log uploads: gzip'd JSON arrays.
type logCollector struct {
	mu  sync.Mutex
	raw bytes.Buffer
	evs []map[string]any
}

func (c *logCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b, err := io.ReadAll(zr)
	var evs []map[string]any
	if err == nil {
		err = json.Unmarshal(b, &evs)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.raw.Write(b)
	c.evs = append(c.evs, evs...)
	c.mu.Unlock()
}

func (c *logCollector) events() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.evs...)
}

func (c *logCollector) body() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw.String()
}

// waitUntil polls cond every 100 ms for up to a minute; on giving up it
// shows what each of last says.
func waitUntil(t testing.TB, what string, cond func() bool, last ...func() string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			var seen []string
			for _, f := range last {
				seen = append(seen, f())
			}
			t.Fatalf("waiting for %s: gave up after a minute; last: %s", what, strings.Join(seen, "; "))
		}
	}
}

// grepLines keeps the lines of s that start with one of prefixes.
func grepLines(s string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
