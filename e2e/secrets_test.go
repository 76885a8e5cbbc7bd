package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// secretValue is the operator's password in these tests: & and spaces make
// its URL, HTML and JSON forms differ from it.
const secretValue = `Tr0ub4dor&3 horse "staple"`

// secretForms are the ways a page, a server or a log could write the value.
func secretForms() map[string]string {
	j, _ := json.Marshal(secretValue)
	return map[string]string{
		"plain":  secretValue,
		"query":  url.QueryEscape(secretValue),
		"path":   url.PathEscape(secretValue),
		"json":   strings.Trim(string(j), `"`),
		"html":   html.EscapeString(secretValue),
		"base64": base64.StdEncoding.EncodeToString([]byte(secretValue)),
		// A part long enough to mean something.
		"part": secretValue[:12],
	}
}

// assertNoSecret fails when text holds the value in any form.
func assertNoSecret(t *testing.T, where, text string) {
	t.Helper()
	for form, s := range secretForms() {
		if strings.Contains(text, s) {
			i := strings.Index(text, s)
			t.Errorf("%s holds the secret (%s form) near: %q", where, form, text[max(0, i-80):min(len(text), i+len(s)+40)])
		}
	}
}

// secretSite serves a login page on every host. The page is its own
// attacker: as the field changes it copies the value into its text, its
// title, a data attribute and the console; the server it posts to records
// what it got, and answers with a page that echoes it back.
type secretSite struct {
	port  string
	mu    sync.Mutex
	posts map[string][]string // host → passwords received
	keys  map[string]int      // host → input events the page reported
}

func (s *secretSite) posted(host string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.posts[host]...)
}

// postedWithin waits up to d for host's first post: a click on a submit
// button returns once the click is done, and the browser sends the form a
// moment later.
func (s *secretSite) postedWithin(host string, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		if got := s.posted(host); len(got) > 0 || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *secretSite) inputs(host string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[host]
}

const loginPage = `<!doctype html><html><head><meta charset="utf-8"><title>Sign in</title></head><body>
<form id="f" method="POST" action="/session">
<label>User <input id="user" name="user"></label>
<label>Password <input id="pw" name="password" type="password"></label>
<button id="go" type="submit">Sign in</button>
</form>
<p id="echo"></p>
<script>
pw.addEventListener('input', () => {
  echo.textContent = 'you typed ' + pw.value;
  document.title = 'Sign in: ' + pw.value;
  pw.dataset.copy = pw.value;
  console.log('the password is ' + pw.value);
  fetch('/key', {method: 'POST'});
});
</script></body></html>`

func newSecretSite(t *testing.T) *secretSite {
	s := &secretSite{posts: map[string][]string{}, keys: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.Host, ":")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/login":
			fmt.Fprint(w, loginPage)
		case "/steal":
			// Moves focus into a frame of other.test as the field is
			// focused, so that what is typed next lands there.
			fmt.Fprintf(w, `<!doctype html><title>Steal</title>
<input id="pw" type="password" aria-label="Password">
<iframe id="f" src="http://other.test:%s/catch"></iframe>
<script>pw.addEventListener('focus', () => f.focus());</script>`, s.port)
		case "/catch":
			fmt.Fprint(w, `<!doctype html><title>Catch</title><input id="c">
<script>
window.addEventListener('focus', () => c.focus());
c.addEventListener('input', () => fetch('/key', {method: 'POST'}));
</script>`)
		case "/hop":
			// Navigates to other.test as soon as the field takes focus
			// or input: the rest of the text would go to the next page.
			fmt.Fprintf(w, `<!doctype html><title>Hop</title><input id="pw" type="password" aria-label="Password">
<script>
const hop = () => { location.href = 'http://other.test:%s/login'; };
pw.addEventListener('focus', hop);
pw.addEventListener('input', () => { fetch('/key', {method: 'POST'}); hop(); });
</script>`, s.port)
		case "/key":
			s.mu.Lock()
			s.keys[host]++
			s.mu.Unlock()
		case "/session":
			r.ParseForm()
			pw := r.PostForm.Get("password")
			s.mu.Lock()
			s.posts[host] = append(s.posts[host], pw)
			s.mu.Unlock()
			// The server echoes it, as a careless one would: plainly, in
			// markup, in a script's JSON and base64.
			j, _ := json.Marshal(pw)
			fmt.Fprintf(w, `<!doctype html><title>Welcome</title><p id="msg">Signed in with %s</p><div data-pw="%s"></div><script>window.pw = %s; window.b64 = %q;</script>`,
				html.EscapeString(pw), html.EscapeString(pw), j, base64.StdEncoding.EncodeToString([]byte(pw)))
		default:
			http.NotFound(w, r)
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	_, s.port, _ = net.SplitHostPort(ln.Addr().String())
	return s
}

const secretResolver = "--browser-arg=--host-resolver-rules=MAP login.test 127.0.0.1, MAP other.test 127.0.0.1"

// secretsFile writes the operator's secrets file, 0600.
func secretsFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(path, []byte("# the operator's\nPASSWORD='"+secretValue+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func secretFlags(t *testing.T, site *secretSite, dlog string) []string {
	return []string{secretResolver, "--allow-domain=login.test", "--allow-domain=other.test",
		"--enable-mutations", "--unsafe-enable-eval", "--decision-log=" + dlog,
		"--secrets=" + secretsFile(t), "--secret-origins=PASSWORD=http://login.test:" + site.port}
}

// wholeResult is everything of a result a client could show: its text and
// its structured content.
func wholeResult(res *sdk.CallToolResult) string {
	b, _ := json.Marshal(res)
	return resultText(res) + "\n" + string(b)
}

// TestSecretTypedOnItsOrigin logs into login.test with <secret:PASSWORD>:
// the site's server gets the password, and the model never does, however
// the page echoes it.
func TestSecretTypedOnItsOrigin(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	site := newSecretSite(t)
	dlog := filepath.Join(t.TempDir(), "decisions.jsonl")
	s := startServer(t, secretFlags(t, site, dlog)...)
	login := "http://login.test:" + site.port + "/login"
	var seen strings.Builder
	call := func(tool string, args map[string]any) string {
		t.Helper()
		res := s.call(tool, args)
		text := wholeResult(res)
		seen.WriteString(text)
		return text
	}

	call("navigate", map[string]any{"url": login})
	call("type", map[string]any{"selector": "#user", "text": "alice"})
	call("type", map[string]any{"selector": "#pw", "text": "<secret:PASSWORD>"})

	// The page copied the value everywhere it could: every read shows the
	// name.
	for _, read := range []struct {
		tool string
		args map[string]any
	}{
		{"get_text", map[string]any{}},
		{"get_text", map[string]any{"selector": "#echo"}},
		{"snapshot", map[string]any{}},
		{"get_html", map[string]any{"outer": true}},
		{"eval", map[string]any{"expression": `[pw.value, pw.dataset.copy, document.title, encodeURIComponent(pw.value), btoa(pw.value), JSON.stringify({p: pw.value})].join(' | ')`}},
		{"query", map[string]any{"selector": "#echo"}},
		{"tabs_list", map[string]any{}},
	} {
		text := call(read.tool, read.args)
		if !strings.Contains(text, "<secret:PASSWORD>") {
			t.Errorf("%s %v should show <secret:PASSWORD>: %s", read.tool, read.args, short(text))
		}
	}
	// Filled again by ref, as a model that took the ref from a snapshot
	// would: the guarded path of refs.
	_, outline := s.snapshotOf(nil)
	call("fill", map[string]any{"ref": refOf(t, outline, "Password"), "value": "<secret:PASSWORD>"})
	// Sign in: the form posts the real value to login.test.
	call("click", map[string]any{"selector": "#go"})
	if got := site.postedWithin("login.test", 5*time.Second); len(got) != 1 || got[0] != secretValue {
		t.Fatalf("login.test received %q, want the secret", got)
	}
	// The welcome page commits a moment after the post arrived.
	welcome := ""
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		welcome = call("get_html", map[string]any{"outer": true})
		if strings.Contains(welcome, "Signed in with") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(welcome, "Signed in with <secret:PASSWORD>") && !strings.Contains(welcome, "Signed in with &lt;secret:PASSWORD&gt;") {
		t.Errorf("the welcome page should show the name: %s", short(welcome))
	}
	call("eval", map[string]any{"expression": `window.pw + ' ' + window.b64`})
	// The POST's response, read back from the network log: the server
	// echoed the password in it.
	var list netListing
	if err := json.Unmarshal([]byte(jsonPart(resultText(s.call("network_requests", map[string]any{})))), &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range list.Requests {
		if strings.HasSuffix(e.URL, "/session") {
			found = true
			body := call("network_request", map[string]any{"id": e.ID, "include_body": true})
			if !strings.Contains(body, "Signed in with <secret:PASSWORD>") {
				t.Errorf("the POST's response body should show the name: %s", short(body))
			}
		}
	}
	if !found {
		t.Errorf("no /session request in the network log: %+v", list.Requests)
	}

	assertNoSecret(t, "the results", seen.String())
	assertNoSecret(t, "the server's debug log", s.log.String())
	b, _ := os.ReadFile(dlog)
	assertNoSecret(t, "the decision log", string(b))
	if !strings.Contains(string(b), `"secrets":["PASSWORD"]`) {
		t.Errorf("the decision log should name the secret of the type call:\n%s", b)
	}
}

// TestSecretRefusedOffItsOrigin types the same reference on other.test,
// which the policy lets the model navigate to and type on, but which the
// secret is not bound to: denied, and nothing reaches the field.
func TestSecretRefusedOffItsOrigin(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	site := newSecretSite(t)
	dlog := filepath.Join(t.TempDir(), "decisions.jsonl")
	s := startServer(t, secretFlags(t, site, dlog)...)
	s.call("navigate", map[string]any{"url": "http://other.test:" + site.port + "/login"})

	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"type", map[string]any{"selector": "#pw", "text": "<secret:PASSWORD>"}},
		{"type", map[string]any{"selector": "#pw", "text": "prefix <secret:PASSWORD>", "press_enter": true}},
		{"fill", map[string]any{"selector": "#pw", "value": "<secret:PASSWORD>"}},
		{"fill_form", map[string]any{"fields": []any{map[string]any{"selector": "#user", "value": "bob"}, map[string]any{"selector": "#pw", "value": "<secret:PASSWORD>"}}, "submit": true}},
	} {
		txt := s.fail("POLICY_DENIED", c.tool, c.args)
		want := fmt.Sprintf("secret PASSWORD may not be typed on http://other.test:%s; it is bound to http://login.test:%s", site.port, site.port)
		if !strings.Contains(txt, want) {
			t.Errorf("%s: the denial should say %q: %s", c.tool, want, txt)
		}
		assertNoSecret(t, c.tool+"'s denial", txt)
	}
	if got := s.evalString(`[user.value, pw.value, echo.textContent].join('|')`); got != "||" {
		t.Errorf("a denied call typed something: %q", got)
	}
	if n := site.inputs("other.test"); n != 0 {
		t.Errorf("other.test's page saw %d input events", n)
	}
	if got := site.posted("other.test"); len(got) != 0 {
		t.Errorf("other.test received a form: %q", got)
	}

	// An undeclared name, or a malformed reference, types nothing either.
	txt := s.fail("BAD_ARGS", "type", map[string]any{"selector": "#pw", "text": "<secret:PASSWROD>"})
	if !strings.Contains(txt, "PASSWROD") || !strings.Contains(txt, "<secret:PASSWORD>") {
		t.Errorf("the unknown name's error should name it and the declared ones: %s", txt)
	}
	s.fail("BAD_ARGS", "fill", map[string]any{"selector": "#pw", "value": "<secret:PASSWORD"})
	// <secret:> is the literal text.
	s.call("fill", map[string]any{"selector": "#user", "value": "<secret:>X>"})
	if got := s.evalString(`user.value`); got != "<secret:X>" {
		t.Errorf("the escape typed %q", got)
	}
	assertNoSecret(t, "the server's debug log", s.log.String())
	b, _ := os.ReadFile(dlog)
	assertNoSecret(t, "the decision log", string(b))
}

// TestSecretOverREST runs the login through POST /api/v1/command with the
// secret declared in the environment: the answers never hold the value,
// and the browser chromegate starts does not inherit the variable.
func TestSecretOverREST(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	site := newSecretSite(t)
	dir := t.TempDir()
	key := createKey(t, dir, "agent")
	h := startHTTPEnv(t, dir, fmt.Sprintf("e2e-secret-%d", os.Getpid()), []string{"CHROMEGATE_SECRET_PASSWORD=" + secretValue},
		secretResolver, "--allow-domain=login.test", "--allow-domain=other.test", "--enable-mutations", "--unsafe-enable-eval",
		"--secret-origins=PASSWORD=http://login.test:"+site.port)
	var seen strings.Builder
	rest := func(command string, params map[string]any, want int) string {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"command": command, "params": params})
		status, _, rb := h.rest("POST", "/api/v1/command", key, string(body), nil)
		if status != want {
			t.Fatalf("%s: status %d, want %d: %s", command, status, want, rb)
		}
		seen.WriteString(rb)
		return rb
	}
	rest("navigate", map[string]any{"url": "http://login.test:" + site.port + "/login"}, 200)
	rest("type", map[string]any{"selector": "#pw", "text": "<secret:PASSWORD>"}, 200)
	if got := rest("get_text", map[string]any{"selector": "#echo"}, 200); !strings.Contains(got, "you typed <secret:PASSWORD>") {
		t.Errorf("get_text over REST: %s", got)
	}
	rest("eval", map[string]any{"expression": "pw.value"}, 200)
	rest("click", map[string]any{"selector": "#go"}, 200)
	if got := site.postedWithin("login.test", 5*time.Second); len(got) != 1 || got[0] != secretValue {
		t.Fatalf("login.test received %q, want the secret", got)
	}
	rest("get_html", map[string]any{}, 200)
	rest("navigate", map[string]any{"url": "http://other.test:" + site.port + "/login"}, 200)
	if got := rest("type", map[string]any{"selector": "#pw", "text": "<secret:PASSWORD>"}, 403); !strings.Contains(got, "may not be typed on") {
		t.Errorf("denied over REST: %s", got)
	}
	assertNoSecret(t, "the REST answers", seen.String())
	assertNoSecret(t, "the server's debug log", h.log.String())
	for _, pid := range h.procs() {
		if pid == h.cmd.Process.Pid {
			continue // its /proc environ is the one it was started with
		}
		env, _ := os.ReadFile(filepath.Join("/proc", fmt.Sprint(pid), "environ"))
		if strings.Contains(string(env), "CHROMEGATE_SECRET_PASSWORD") {
			t.Errorf("process %d inherited the secret's variable", pid)
		}
	}
}

// TestSecretStaysOnItsPage is the attacker's side: pages of the secret's
// own origin that try to get the value onto another origin while it is
// typed. A text with a secret is never typed key by key: it goes in whole,
// into the named field only, in the same page script that checks the
// field's document is of the allowed origin and that the field kept the
// focus. So focus moved into a frame of other.test as the field is focused
// fails the call with nothing typed anywhere; a page that navigates as the
// field changes gets the whole value in the field the policy allowed, and
// the next page none of it.
func TestSecretStaysOnItsPage(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	site := newSecretSite(t)
	dlog := filepath.Join(t.TempDir(), "decisions.jsonl")
	s := startServer(t, secretFlags(t, site, dlog)...)
	login := "http://login.test:" + site.port

	s.call("navigate", map[string]any{"url": login + "/steal"})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"type", map[string]any{"selector": "#pw", "text": "<secret:PASSWORD>"}},
		{"type", map[string]any{"selector": "#pw", "text": "x<secret:PASSWORD>", "clear": true}},
		{"fill", map[string]any{"selector": "#pw", "value": "<secret:PASSWORD>"}},
	} {
		txt := s.fail("POLICY_DENIED", c.tool, c.args)
		if !strings.Contains(txt, "focus left the field") {
			t.Errorf("%s: the denial should say focus moved: %s", c.tool, txt)
		}
		assertNoSecret(t, c.tool+"'s denial", txt)
	}
	// fill_form reports each field: this one is rejected, for that reason.
	form := wholeResult(s.call("fill_form", map[string]any{"fields": []any{map[string]any{"selector": "#pw", "value": "<secret:PASSWORD>"}}, "submit": true}))
	if !strings.Contains(form, `"status":"rejected"`) || !strings.Contains(form, "focus left the field") || !strings.Contains(form, `"filled":0`) {
		t.Errorf("fill_form should reject the field: %s", form)
	}
	assertNoSecret(t, "fill_form's result", form)
	_, outline := s.snapshotOf(nil)
	s.fail("POLICY_DENIED", "type", map[string]any{"ref": refOf(t, outline, "Password"), "text": "<secret:PASSWORD>"})
	if n := site.inputs("other.test"); n != 0 {
		t.Errorf("the frame of other.test took %d inputs", n)
	}
	if got := s.evalString(`pw.value`); got != "" {
		t.Errorf("the field holds %q", got)
	}

	s.call("navigate", map[string]any{"url": login + "/hop"})
	res := s.try("type", map[string]any{"selector": "#pw", "text": "<secret:PASSWORD>"})
	assertNoSecret(t, "type on the hopping page", wholeResult(res))
	if n := site.inputs("login.test"); n > 1 {
		t.Errorf("the hopping page saw %d input events; the secret should go in as one", n)
	}
	s.waitTabAt("http://other.test:" + site.port + "/login")
	if n := site.inputs("other.test"); n != 0 {
		t.Errorf("other.test's page took %d inputs", n)
	}
	if got := settledEval(s, `[user.value, pw.value].join('|')`); got != "|" {
		t.Errorf("other.test's fields hold %q", got)
	}
	assertNoSecret(t, "the server's debug log", s.log.String())
}

// settledEval evaluates expr once the tab has stopped hopping: the page
// above navigates on focus and again on input, so the first document an
// eval lands in may be replaced under it ("Execution context was
// destroyed"); it tries again for up to 10 s.
func settledEval(s *server, expr string) string {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := s.try("eval", map[string]any{"expression": expr})
		if !res.IsError {
			return s.evalString(expr)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("eval %s: %s", expr, resultText(res))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
