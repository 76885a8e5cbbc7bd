package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// socialPage mimics the compose form of Mastodon's web app, as far as the
// post_status example plugin relies on it: a form.compose-form with a
// textarea and a submit button, which posts the status to the server and
// clears the textarea once the server has it.
const socialPage = `<!doctype html><html><head><meta charset="utf-8"><title>Mastodon</title></head><body>
<form class="compose-form">
  <textarea class="autosuggest-textarea__textarea" placeholder="What's on your mind?"></textarea>
  <div class="compose-form__submit"><button type="submit" class="button">Post</button></div>
</form>
<div id="timeline"></div>
<script>
document.querySelector('form.compose-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const ta = ev.target.querySelector('textarea');
  const r = await fetch('/api/v1/statuses', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify({status: ta.value})});
  if (!r.ok) return;
  const d = document.createElement('div');
  d.className = 'status__content';
  d.textContent = ta.value;
  document.getElementById('timeline').prepend(d);
  ta.value = '';
});
</script></body></html>`

// socialSite serves socialPage at /publish and records the statuses posted.
type socialSite struct {
	mu    sync.Mutex
	posts []string
}

func (s *socialSite) serve(t *testing.T) string {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /publish", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(socialPage))
	})
	mux.HandleFunc("POST /api/v1/statuses", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Status string `json:"status"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.posts = append(s.posts, body.Status)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"1"}`))
	})
	return serveMux(t, mux)
}

func (s *socialSite) posted() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.posts...)
}

// demoSite serves the built-in demo site's files (what `chromegate demo`
// serves) on a loopback port.
func demoSite(t *testing.T) string {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir("../cmd/chromegate/internal/demo/site")))
	return "http://127.0.0.1:" + serveMux(t, mux) + "/"
}

// pluginDir writes the shipped examples with `chromegate plugins init`, a
// malformed plugin beside them, and the recipe's policy data with the test
// hosts in place of mastodon.social. It returns the directory and the data
// file.
func pluginDir(t *testing.T) (dir, data string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "plugins")
	if out, err := exec.Command(binary, "plugins", "init", dir).CombinedOutput(); err != nil {
		t.Fatalf("plugins init: %v\n%s", err, out)
	}
	broken := `{"name": "broken", "description": "calls a tool that does not exist", "read_only": true, "steps": [{"tool": "teleport"}]}`
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "policy", "post_status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if pm, _ := d["plugin_mutations"].([]any); len(pm) != 1 || pm[0] != "post_status" {
		t.Fatalf("the recipe's policy data: %s", raw)
	}
	d["allow_domains"] = []string{"social.test", "127.0.0.1"}
	d["plugin_mutations"] = []string{"post_status", "acme_signup"}
	b, _ := json.Marshal(d)
	data = filepath.Join(t.TempDir(), "data.json")
	if err := os.WriteFile(data, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, data
}

const socialRules = "--browser-arg=--host-resolver-rules=MAP social.test 127.0.0.1, MAP other.test 127.0.0.1"

// The two shipped plugins run end to end on real Chromium, under a policy
// that lets only those plugins change pages; a malformed plugin file is
// reported and skipped; a step off the policy stops its plugin; the
// plugin's arguments are validated against its schema.
func TestPluginExamples(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	demo := demoSite(t)
	social := &socialSite{}
	socialPort := social.serve(t)
	dir, data := pluginDir(t)
	s := startServer(t, socialRules, "--plugins="+dir, "--data="+data)

	// Listed like any tool; click is not (mutations are off), the
	// plugins that may mutate are.
	tools, err := s.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, tl := range tools.Tools {
		listed[tl.Name] = true
	}
	if !listed["acme_signup"] || !listed["post_status"] || listed["broken"] || listed["click"] || listed["fill_form"] {
		t.Errorf("tools/list: %v", listed)
	}

	// The malformed file: on stderr and in chrome_status, with its reason.
	if log := s.log.String(); !strings.Contains(log, "plugin rejected") || !strings.Contains(log, "broken.json") || !strings.Contains(log, `unknown tool \"teleport\"`) {
		t.Errorf("server log does not report broken.json:\n%s", tail(log, 3000))
	}
	var st struct {
		Plugins struct {
			Loaded   []string `json:"loaded"`
			Rejected []struct {
				File   string `json:"file"`
				Reason string `json:"reason"`
			} `json:"rejected"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(jsonPart(resultText(s.call("chrome_status", nil)))), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Plugins.Loaded) != 2 || len(st.Plugins.Rejected) != 1 || filepath.Base(st.Plugins.Rejected[0].File) != "broken.json" ||
		!strings.Contains(st.Plugins.Rejected[0].Reason, "teleport") {
		t.Errorf("chrome_status plugins: %+v", st.Plugins)
	}

	// acme_signup against the demo site: it really navigates, fills,
	// submits and reads the site's confirmation.
	res := s.call("acme_signup", map[string]any{"site": demo, "name": "Ada Lovelace", "email": "ada@example.com", "plan": "pro"})
	var signup struct {
		Confirmation string  `json:"confirmation"`
		Site         string  `json:"site"`
		Filled       float64 `json:"filled"`
	}
	if err := json.Unmarshal([]byte(jsonPart(resultText(res))), &signup); err != nil {
		t.Fatalf("acme_signup result: %v\n%s", err, resultText(res))
	}
	want := "Thanks, Ada Lovelace! We will write to ada@example.com (plan: pro)."
	if signup.Confirmation != want || signup.Site != "Acme Newsletter — sign up" || signup.Filled != 4 {
		t.Errorf("acme_signup: %+v", signup)
	}
	if _, _, ok := strings.Cut(resultText(res), "«page-"); !ok {
		t.Error("a result carrying page text is not fenced")
	}

	// post_status against the local mimic of the compose form: the text
	// reaches the server exactly, quotes and markup included.
	text := `Hello from chromegate: "quoted", <b>not bold</b> & {{params.text}} ✓`
	res = s.call("post_status", map[string]any{"text": text, "instance": "http://social.test:" + socialPort})
	if got := social.posted(); len(got) != 1 || got[0] != text {
		t.Errorf("posted %q, want [%q]", got, text)
	}
	var post struct {
		PostedTo string `json:"posted_to"`
		Text     string `json:"text"`
	}
	if err := json.Unmarshal([]byte(jsonPart(resultText(res))), &post); err != nil || post.PostedTo != "http://social.test:"+socialPort+"/publish" || post.Text != text {
		t.Errorf("post_status result %+v (%v): %s", post, err, resultText(res))
	}

	// The plugin_mutations switch is for the plugins, not the model.
	s.fail("POLICY_DENIED", "click", map[string]any{"selector": "#submit"})

	// A step the policy denies stops the plugin, naming the step; the
	// page is not touched.
	txt := s.fail("POLICY_DENIED", "post_status", map[string]any{"text": "x", "instance": "http://other.test:" + socialPort})
	if !strings.HasPrefix(txt, "POLICY_DENIED: plugin post_status stopped at step 1 (open, navigate): navigation to other.test is not allowed") {
		t.Errorf("denied step: %s", txt)
	}
	if n := len(social.posted()); n != 1 {
		t.Errorf("%d posts after the denied run, want 1", n)
	}

	// Arguments are validated against the plugin's schema.
	for _, args := range []map[string]any{
		{"site": demo, "name": "Ada", "email": "not an email"},
		{"site": demo, "name": "Ada", "email": "ada@example.com", "plan": "gold"},
		{"site": demo, "email": "ada@example.com"},
		{"site": demo, "name": "Ada", "email": "ada@example.com", "url": "http://other.test/"},
	} {
		s.fail("BAD_ARGS", "acme_signup", args)
	}
	if strings.Contains(s.log.String(), "ada@example.com") {
		t.Error("a form value reached the server log")
	}
}

// readSteps is a plugin of n get_text steps on the current page.
func readSteps(n int) string {
	steps := make([]string, n)
	for i := range steps {
		steps[i] = fmt.Sprintf(`{"name": "r%d", "tool": "get_text", "args": {"selector": "#para"}}`, i)
	}
	return fmt.Sprintf(`{"name": "read_n", "description": "Read #para %d times.", "read_only": true, "steps": [%s]}`, n, strings.Join(steps, ","))
}

// BenchmarkPluginOverhead compares, on real Chromium over stdio, a plugin
// of 8 get_text steps with the same 8 calls made one by one by the client:
// per step, what the plugin's own gating and substitution cost, and what
// it saves in round trips. Each call or step is decided by the default
// policy.
func BenchmarkPluginOverhead(b *testing.B) {
	const n = 8
	base := site(b)
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "read_n.json"), []byte(readSteps(n)), 0o644); err != nil {
		b.Fatal(err)
	}
	s := startServer(b, "--allow-domain=127.0.0.1", "--plugins="+dir)
	s.call("navigate", map[string]any{"url": base + "/form"})
	var direct, plugin []time.Duration
	for b.Loop() {
		start := time.Now()
		for range n {
			s.call("get_text", map[string]any{"selector": "#para"})
		}
		direct = append(direct, time.Since(start))
		start = time.Now()
		s.call("read_n", nil)
		plugin = append(plugin, time.Since(start))
	}
	perStep := func(d []time.Duration) float64 { return float64(median(d).Microseconds()) / 1000 / n }
	b.ReportMetric(perStep(direct), "direct-ms/call")
	b.ReportMetric(perStep(plugin), "plugin-ms/step")
	b.ReportMetric(perStep(plugin)/perStep(direct), "plugin/direct")
}

// A plugin step that clicks a link off the allowlist is stopped by the
// same landing check as a direct click: the tab goes back to about:blank,
// and nothing after the step runs.
func TestPluginStepLandingDenied(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	port := policySite(t)
	dir := t.TempDir()
	plugin := `{"name": "follow_away", "description": "Open the links page and follow the link.", "read_only": false,
	  "params": {"type": "object", "required": ["site"], "properties": {"site": {"type": "string"}}},
	  "steps": [
	    {"name": "open", "tool": "navigate", "args": {"url": "{{params.site}}/link-to-other"}},
	    {"name": "follow", "tool": "click", "args": {"selector": "#away"}},
	    {"name": "read", "tool": "get_text", "args": {}}
	  ]}`
	if err := os.WriteFile(filepath.Join(dir, "follow.json"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, resolverRules, "--allow-domain=allowed.test", "--enable-mutations", "--plugins="+dir)
	txt := s.fail("POLICY_DENIED", "follow_away", map[string]any{"site": "http://allowed.test:" + port})
	// The egress boundary blocks the load itself; the landing check would
	// catch it otherwise.
	// The host the link chose is named only inside the page fence.
	if server, page, _ := strings.Cut(txt, "\n«page-"); !strings.HasPrefix(server, "POLICY_DENIED: plugin follow_away stopped at step 2 (follow, click): the page could not load: the policy blocked its request") ||
		strings.Contains(server, "other.test") || !strings.Contains(page, "other.test") {
		t.Errorf("got %s", txt)
	}
	s.waitTabAt("about:blank")
	if strings.Contains(s.log.String(), `step=read`) {
		t.Error("a step ran after the denied one")
	}
}
