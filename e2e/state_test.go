package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp/httpapi"
)

// stateRules map the storage-state tests' hosts to 127.0.0.1 inside
// Chromium (and for chromegate's egress proxy).
const stateRules = "--browser-arg=--host-resolver-rules=MAP app.test 127.0.0.1, MAP evil.test 127.0.0.1"

// Values the storage-state tests look for in every result and log line:
// none of them may appear anywhere but in the browser and the state file.
const (
	notesPassword = "correct-horse-9d2b"
	notesDraft    = "draft-5c1e-unsent"
	notesTheme    = "theme-7f3a-dusk"
)

// notesApp is the server side of testdata/pages/spa-login.html: a login
// that hands out a bearer token (and sets a session cookie), and an API
// that answers only to that token. It counts logins, and the requests it
// saw carrying the token.
type notesApp struct {
	token, sid string
	requests   atomic.Int32 // every request the app's server saw
	logins     atomic.Int32
	authed     atomic.Int32
	mu         sync.Mutex
	evilCookie []string // cookies evil.test's handler was sent
}

func newNotesApp(t *testing.T) (*notesApp, string) {
	t.Helper()
	app := &notesApp{token: "tok-" + fmt.Sprint(time.Now().UnixNano()) + "-a91f", sid: "sid-" + fmt.Sprint(time.Now().UnixNano()) + "-0c7e"}
	mux := http.NewServeMux()
	mux.Handle("/pages/", http.StripPrefix("/pages/", http.FileServer(http.Dir("testdata/pages"))))
	mux.HandleFunc("/api/login", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ User, Pass string }
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&in) != nil || in.User != "ada" || in.Pass != notesPassword {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		app.logins.Add(1)
		http.SetCookie(w, &http.Cookie{Name: "notes_sid", Value: app.sid, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
			Expires: time.Now().Add(time.Hour)})
		fmt.Fprintf(w, `{"token":%q}`, app.token)
	})
	mux.HandleFunc("/api/me", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+app.token {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		app.authed.Add(1)
		c, err := r.Cookie("notes_sid")
		fmt.Fprintf(w, `{"user":"ada","cookie":%v}`, err == nil && c.Value == app.sid)
	})
	mux.HandleFunc("/evil", func(w http.ResponseWriter, r *http.Request) {
		app.mu.Lock()
		for _, c := range r.Cookies() {
			app.evilCookie = append(app.evilCookie, c.Name)
		}
		app.mu.Unlock()
		fmt.Fprint(w, `<!doctype html><title>Evil</title><p>evil</p>`)
	})
	counted := http.NewServeMux()
	counted.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		app.requests.Add(1)
		mux.ServeHTTP(w, r)
	})
	return app, serveMux(t, counted)
}

// secrets are the values no result or log may carry.
func (a *notesApp) secrets() []string {
	return []string{a.token, a.sid, notesPassword, notesDraft, notesTheme}
}

// logIn logs into the notes app with the password, through chromegate.
func logIn(t *testing.T, s *server, appURL string) {
	t.Helper()
	s.call("navigate", map[string]any{"url": appURL})
	s.call("wait_for", map[string]any{"text": "Please log in"})
	s.call("fill", map[string]any{"selector": "#user", "value": "ada"})
	s.call("fill", map[string]any{"selector": "#pass", "value": notesPassword})
	s.call("click", map[string]any{"selector": "#go"})
	s.call("wait_for", map[string]any{"text": "Logged in as ada"})
}

// loggedIn waits until the app in the selected tab says who is logged in,
// and returns the page's text.
func loggedIn(t *testing.T, s *server) string {
	t.Helper()
	s.call("wait_for", map[string]any{"text": "Logged in as ada", "timeout_ms": 10000})
	// The app writes its status line, then reads IndexedDB and writes the
	// line of what it kept (draft=, theme=, cookie=): wait for that too.
	s.call("wait_for", map[string]any{"text": "cookie=", "timeout_ms": 10000})
	return resultText(s.call("get_text", map[string]any{"selector": "body"}))
}

// stateReport is what state_save and state_load return.
type stateReport struct {
	Name    string `json:"name"`
	Origins []struct {
		Origin         string `json:"origin"`
		Cookies        int    `json:"cookies"`
		LocalStorage   int    `json:"local_storage"`
		SessionStorage int    `json:"session_storage"`
		IndexedDB      int    `json:"indexed_db"`
	} `json:"origins"`
	Cookies        int                                     `json:"cookies"`
	LocalStorage   int                                     `json:"local_storage"`
	SessionStorage int                                     `json:"session_storage"`
	IndexedDB      int                                     `json:"indexed_db"`
	Skipped        []struct{ Origin, What, Reason string } `json:"skipped"`
}

func parseReport(t *testing.T, text string) stateReport {
	t.Helper()
	var r stateReport
	body := text
	if strings.Contains(text, "«page-") {
		head, _ := pageContent(t, text)
		b, _ := json.Marshal(head)
		body = string(b)
	}
	if err := json.Unmarshal([]byte(jsonPart(body)), &r); err != nil {
		t.Fatalf("state result %q: %v", short(text), err)
	}
	return r
}

func noSecrets(t *testing.T, where, text string, secrets []string) {
	t.Helper()
	for _, v := range secrets {
		if strings.Contains(text, v) {
			t.Errorf("%s carries the value %q", where, v)
		}
	}
}

// copyState puts a saved state file where a server with dataDir keeps
// principal's states.
func copyState(t *testing.T, file, dataDir, principal, name string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dataDir, "state", principal)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestStorageStateLogin: log into a single-page app once with the
// password, save the state, and come back logged in without it — into a
// fresh server over stdio, by serve --storage-state and by state_load.
func TestStorageStateLogin(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	t.Parallel()
	app, port := newNotesApp(t)
	appURL := "http://app.test:" + port + "/pages/spa-login.html"
	origin := "http://app.test:" + port
	flags := []string{stateRules, "--allow-domain=app.test", "--enable-mutations"}

	s := startServer(t, flags...)
	logIn(t, s, appURL)
	if app.logins.Load() != 1 {
		t.Fatalf("%d logins, want 1", app.logins.Load())
	}
	res := s.call("state_save", map[string]any{"name": "notes"})
	text := resultText(res)
	noSecrets(t, "state_save's result", text, app.secrets())
	rep := parseReport(t, text)
	cdpBackend := e2eBackend != "ext"
	wantSkipped := 0
	if !cdpBackend {
		wantSkipped = 1 // the extension reads no IndexedDB, and says so
		if len(rep.Skipped) != 1 || rep.Skipped[0].What != "indexed_db" {
			t.Errorf("state_save on the extension skipped %+v, want its IndexedDB named", rep.Skipped)
		}
	}
	if rep.Name != "notes" || rep.Cookies != 1 || rep.LocalStorage != 1 || rep.SessionStorage != 1 || len(rep.Skipped) != wantSkipped {
		t.Errorf("state_save reported %+v", rep)
	}
	if len(rep.Origins) != 1 || rep.Origins[0].Origin != origin {
		t.Errorf("state_save origins %+v, want only %s", rep.Origins, origin)
	}
	if cdpBackend && rep.IndexedDB != 1 {
		t.Errorf("state_save saved %d IndexedDB databases, want 1", rep.IndexedDB)
	}
	if list := resultText(s.call("state_list", nil)); !strings.Contains(list, `"name":"notes"`) {
		t.Errorf("state_list: %s", list)
	}

	// The file: 0600 in a 0700 directory of the principal's, holding the
	// state in Playwright's format.
	file := filepath.Join(s.dataDir, "state", "local", "notes.json")
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", fi.Mode().Perm())
	}
	for _, d := range []string{filepath.Dir(file), filepath.Dir(filepath.Dir(file))} {
		if di, err := os.Stat(d); err != nil || di.Mode().Perm() != 0o700 {
			t.Errorf("state dir %s mode %v (%v), want 0700", d, di.Mode().Perm(), err)
		}
	}
	raw, _ := os.ReadFile(file)
	var st struct {
		Cookies []map[string]any `json:"cookies"`
		Origins []map[string]any `json:"origins"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), app.token) || !strings.Contains(string(raw), app.sid) || len(st.Origins) != 1 {
		t.Errorf("the state file does not hold the login:\n%s", short(string(raw)))
	}
	entries, _ := os.ReadDir(filepath.Dir(file))
	if len(entries) != 1 {
		t.Errorf("the state dir holds %d files, want only notes.json (no temporary file left)", len(entries))
	}

	// Names are names, never paths.
	for _, bad := range []string{"../notes", "a/b", "..", ".hidden", "/etc/passwd", "x\\y", strings.Repeat("n", 65)} {
		txt := s.fail("BAD_ARGS", "state_save", map[string]any{"name": bad})
		if !strings.Contains(txt, "A-Z a-z 0-9") {
			t.Errorf("name %q refused without saying what is allowed: %s", bad, txt)
		}
		s.fail("BAD_ARGS", "state_load", map[string]any{"name": bad})
	}
	if _, err := os.Stat(filepath.Join(s.dataDir, "notes.json")); err == nil {
		t.Error("a name with ../ wrote outside the state dir")
	}

	t.Run("serve --storage-state", func(t *testing.T) {
		before := app.logins.Load()
		s2 := startServer(t, append(flags, "--storage-state="+file)...)
		// The first call restores the state into the new context. On
		// the launched browser no request leaves for the origin while
		// it does (the extension opens a tab on the origin instead).
		requests := app.requests.Load()
		s2.call("tabs_list", nil)
		if !waitLog(s2, "--storage-state restored") {
			t.Errorf("the server did not log the restore")
		}
		if cdpBackend && app.requests.Load() != requests {
			t.Errorf("restoring sent %d requests to the app's server", app.requests.Load()-requests)
		}
		authed := app.authed.Load()
		s2.call("navigate", map[string]any{"url": appURL})
		page := loggedIn(t, s2)
		if app.logins.Load() != before {
			t.Errorf("the app was logged into again")
		}
		if app.authed.Load() == authed {
			t.Errorf("the app's server never saw the restored token")
		}
		if !strings.Contains(page, "cookie=sent") {
			t.Errorf("the session cookie was not restored: %s", page)
		}
		if cdpBackend && !strings.Contains(page, "theme="+notesTheme) {
			t.Errorf("IndexedDB was not restored: %s", page)
		}
		noSecrets(t, "the server log", s2.log.String(), app.secrets())
	})

	t.Run("state_load", func(t *testing.T) {
		before := app.logins.Load()
		s3 := startServer(t, flags...)
		copyState(t, file, s3.dataDir, "local", "notes")
		// The extension writes storage into tabs it drives: open the
		// app first (it asks for the password), then load, then reload.
		s3.call("navigate", map[string]any{"url": appURL})
		s3.call("wait_for", map[string]any{"text": "Please log in"})
		out := resultText(s3.call("state_load", map[string]any{"name": "notes"}))
		noSecrets(t, "state_load's result", out, app.secrets())
		lr := parseReport(t, out)
		if lr.Cookies != 1 || lr.LocalStorage != 1 || len(lr.Skipped) != 0 || lr.SessionStorage != 1 {
			t.Errorf("state_load reported %+v", lr)
		}
		// The tab the caller sees stayed where it was, and is the only one.
		if tabs := resultText(s3.call("tabs_list", nil)); strings.Count(tabs, `"tab_id"`) != 1 || !strings.Contains(tabs, appURL) {
			t.Errorf("tabs after state_load: %s", tabs)
		}
		authed := app.authed.Load()
		s3.call("reload", nil)
		page := loggedIn(t, s3)
		if app.authed.Load() == authed {
			t.Errorf("the app's server never saw the restored token")
		}
		if app.logins.Load() != before || !strings.Contains(page, "cookie=sent") || !strings.Contains(page, "draft=kept") {
			t.Errorf("after state_load: %d logins (want %d), page %s", app.logins.Load(), before, page)
		}
		noSecrets(t, "the server log", s3.log.String(), app.secrets())
	})
	noSecrets(t, "the server log", s.log.String(), app.secrets())
}

// waitLog waits for a message in the server's log.
func waitLog(s *server, msg string) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(s.log.String(), msg) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// TestStorageStateRefusals is the attacker's side: a state file planting
// cookies and storage for an origin the policy denies loads nothing of it;
// files that are too large or not a state are refused and the server
// keeps serving.
func TestStorageStateRefusals(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	t.Parallel()
	app, port := newNotesApp(t)
	appOrigin := "http://app.test:" + port
	evilOrigin := "http://evil.test:" + port
	// The policy data is a file the server watches: first only app.test,
	// then evil.test too, to look at what the browser holds for it.
	data := filepath.Join(t.TempDir(), "data.json")
	writeData := func(hosts ...string) {
		b, _ := json.Marshal(map[string]any{"allow_domains": hosts, "enable_mutations": true, "enable_eval": true})
		if err := os.WriteFile(data, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeData("app.test")
	s := startServer(t, stateRules, "--data="+data)

	planted := fmt.Sprintf(`{"cookies":[
	  {"name":"planted","value":"evil-cookie-31d7","domain":"evil.test","path":"/","expires":-1,"httpOnly":false,"secure":false,"sameSite":"Lax"},
	  {"name":"parent","value":"evil-cookie-31d7","domain":".test","path":"/","expires":-1,"httpOnly":false,"secure":false,"sameSite":"Lax"},
	  {"name":"ok","value":"app-cookie-ok","domain":"app.test","path":"/","expires":-1,"httpOnly":false,"secure":false,"sameSite":"Lax"}],
	 "origins":[
	  {"origin":%q,"localStorage":[{"name":"planted","value":"evil-storage-31d7"}],"sessionStorage":[{"name":"planted","value":"evil-storage-31d7"}]},
	  {"origin":%q,"localStorage":[{"name":"notes-token","value":"not-the-token"}]}]}`, evilOrigin, appOrigin)
	copyState(t, writeTemp(t, planted), s.dataDir, "local", "planted")
	s.call("navigate", map[string]any{"url": appOrigin + "/pages/spa-login.html"})
	out := resultText(s.call("state_load", map[string]any{"name": "planted"}))
	rep := parseReport(t, out)
	skipped := map[string]string{}
	for _, k := range rep.Skipped {
		skipped[k.Origin] = k.What + ": " + k.Reason
	}
	if !strings.Contains(skipped["http://evil.test"], "cookies") || !strings.Contains(skipped["http://test"], "cookies") ||
		!strings.Contains(skipped[evilOrigin], "storage") || !strings.Contains(skipped[evilOrigin], "not loaded") {
		t.Errorf("skipped %v, want evil.test's cookies and storage and .test's cookie, with the policy's reason", skipped)
	}
	if rep.Cookies != 1 || rep.LocalStorage != 1 {
		t.Errorf("loaded %+v, want app.test's one cookie and one key", rep)
	}
	if strings.Contains(out, "evil-cookie-31d7") || strings.Contains(out, "evil-storage-31d7") {
		t.Errorf("state_load's result carries a value: %s", out)
	}
	if got := s.evalString(`document.cookie`); strings.Contains(got, "parent") || !strings.Contains(got, "ok=app-cookie-ok") {
		t.Errorf("app.test's cookies after the load: %q", got)
	}

	// Now let the tests look at evil.test: the browser holds nothing of
	// it, and its server is sent no planted cookie.
	writeData("app.test", "evil.test")
	waitFor(t, 15*time.Second, func() bool {
		return !s.try("navigate", map[string]any{"url": evilOrigin + "/evil"}).IsError
	})
	if got := s.evalString(`JSON.stringify([document.cookie, localStorage.length, sessionStorage.length])`); got != `["",0,0]` {
		t.Errorf("evil.test's cookies, localStorage and sessionStorage after the load: %s", got)
	}
	app.mu.Lock()
	sent := strings.Join(app.evilCookie, ",")
	app.mu.Unlock()
	if sent != "" {
		t.Errorf("evil.test was sent the cookies %s", sent)
	}

	t.Run("malformed and huge", func(t *testing.T) {
		cases := map[string]struct{ body, want string }{
			"notjson": {`{"cookies": [`, "not a storage state"},
			"array":   {`[1,2,3]`, "not a JSON object"},
			"other":   {`{"cookies":[],"origins":[],"extensions":{}}`, `unknown field "extensions"`},
			"badorig": {`{"cookies":[],"origins":[{"origin":"javascript:alert(1)","localStorage":[]}]}`, "origins[0].origin is not an http or https origin"},
			"nodom":   {`{"cookies":[{"name":"a","value":"secret-31d7"}],"origins":[]}`, "cookies[0] has no valid domain"},
			"huge":    {`{"cookies":[],"origins":[],"pad":"` + strings.Repeat("x", 33<<20) + `"}`, "over the limit"},
		}
		for name, c := range cases {
			copyState(t, writeTemp(t, c.body), s.dataDir, "local", name)
			txt := s.fail("BAD_ARGS", "state_load", map[string]any{"name": name})
			if !strings.Contains(txt, c.want) || strings.Contains(txt, "secret-31d7") {
				t.Errorf("%s: %s", name, short(txt))
			}
		}
		s.fail("BAD_ARGS", "state_load", map[string]any{"name": "never-saved"})
		s.call("tabs_list", nil) // still serving
	})

	t.Run("serve refuses a bad file", func(t *testing.T) {
		bad := writeTemp(t, `{"cookies": "no"}`)
		out, err := exec.Command(binary, "serve", "--isolated", "--data-dir="+t.TempDir(), "--storage-state="+bad).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "--storage-state") || !strings.Contains(string(out), "not a storage state") {
			t.Errorf("serve with a bad --storage-state: %v\n%s", err, out)
		}
	})
}

func writeTemp(t *testing.T, body string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestStorageStateHTTP: over HTTP, a state belongs to the key that saved
// it. Log in with the password in one named session, save; another named
// session of the same key loads it over MCP, another over REST's command
// endpoint, and both are logged in without the password; another key
// cannot load it; and a server started with --storage-state starts every
// named session logged in.
func TestStorageStateHTTP(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	app, port := newNotesApp(t)
	appURL := "http://app.test:" + port + "/pages/spa-login.html"
	dir := t.TempDir()
	ci := createKey(t, dir, "ci")
	eve := createKey(t, dir, "eve")
	dlog := filepath.Join(dir, "decisions.jsonl")
	flags := []string{stateRules, "--allow-domain=app.test", "--enable-mutations", "--unsafe-enable-eval", "--decision-log", dlog}
	h := startHTTP(t, dir, flags...)
	var results []string
	call := func(cs *sdk.ClientSession, tool string, args map[string]any) string {
		t.Helper()
		txt := resultText(mustOK(t, tool, mcpCall(t, cs, tool, args)))
		results = append(results, txt)
		return txt
	}
	rest := func(key, session, tool string, args map[string]any) (int, string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"command": tool, "params": args, "session": session})
		status, _, rb := h.rest("POST", "/api/v1/command", key, string(body), nil)
		results = append(results, rb)
		return status, rb
	}

	work := h.connect(ci, map[string]string{httpapi.SessionHeader: "work"})
	call(work, "navigate", map[string]any{"url": appURL})
	call(work, "wait_for", map[string]any{"text": "Please log in"})
	call(work, "fill", map[string]any{"selector": "#user", "value": "ada"})
	call(work, "fill", map[string]any{"selector": "#pass", "value": notesPassword})
	call(work, "click", map[string]any{"selector": "#go"})
	call(work, "wait_for", map[string]any{"text": "Logged in as ada"})
	call(work, "state_save", map[string]any{"name": "notes"})
	file := filepath.Join(dir, "state", "ci", "notes.json")
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key's state file: %v %v", fi, err)
	}
	logins := app.logins.Load()

	t.Run("named session over MCP", func(t *testing.T) {
		fresh := h.connect(ci, map[string]string{httpapi.SessionHeader: "fresh"})
		call(fresh, "navigate", map[string]any{"url": appURL})
		call(fresh, "wait_for", map[string]any{"text": "Please log in"})
		call(fresh, "state_load", map[string]any{"name": "notes"})
		call(fresh, "reload", nil)
		call(fresh, "wait_for", map[string]any{"text": "Logged in as ada", "timeout_ms": 10000})
	})
	t.Run("named session over REST", func(t *testing.T) {
		if st, rb := rest(ci, "rest1", "state_load", map[string]any{"name": "notes"}); st != 200 || !strings.Contains(rb, `"ok":true`) {
			t.Fatalf("REST state_load: %d %s", st, rb)
		}
		if st, rb := rest(ci, "rest1", "navigate", map[string]any{"url": appURL}); st != 200 {
			t.Fatalf("REST navigate: %d %s", st, rb)
		}
		if st, rb := rest(ci, "rest1", "wait_for", map[string]any{"text": "Logged in as ada", "timeout_ms": 10000}); st != 200 {
			t.Errorf("REST session after state_load: %d %s", st, rb)
		}
	})
	t.Run("another key", func(t *testing.T) {
		st, rb := rest(eve, "eve1", "state_load", map[string]any{"name": "notes"})
		if st == 200 || !strings.Contains(rb, "BAD_ARGS") || !strings.Contains(rb, `no saved state is called \"notes\"`) {
			t.Errorf("eve loaded ci's state: %d %s", st, rb)
		}
		cs := h.connect(eve, nil)
		res := mcpCall(t, cs, "state_load", map[string]any{"name": "notes"})
		if !res.IsError {
			t.Errorf("eve loaded ci's state over MCP: %s", resultText(res))
		}
		if list := resultText(mcpCall(t, cs, "state_list", nil)); strings.Contains(list, "notes") {
			t.Errorf("eve lists ci's states: %s", list)
		}
		if _, rb := rest(eve, "eve1", "navigate", map[string]any{"url": appURL}); strings.Contains(rb, "Logged in") {
			t.Errorf("eve's session is logged in: %s", rb)
		}
	})
	if app.logins.Load() != logins {
		t.Errorf("the app was logged into %d more times", app.logins.Load()-logins)
	}

	t.Run("serve --storage-state", func(t *testing.T) {
		dir2 := t.TempDir()
		key := createKey(t, dir2, "ci")
		h2 := startHTTP(t, dir2, stateRules, "--allow-domain=app.test", "--storage-state="+file)
		for _, session := range []string{"run-1", "run-2"} {
			body, _ := json.Marshal(map[string]any{"command": "navigate", "params": map[string]any{"url": appURL}, "session": session})
			if st, _, rb := h2.rest("POST", "/api/v1/command", key, string(body), nil); st != 200 {
				t.Fatalf("navigate: %d %s", st, rb)
			}
			body, _ = json.Marshal(map[string]any{"command": "wait_for", "params": map[string]any{"text": "Logged in as ada", "timeout_ms": 10000}, "session": session})
			if st, _, rb := h2.rest("POST", "/api/v1/command", key, string(body), nil); st != 200 {
				t.Errorf("session %s did not start logged in: %d %s", session, st, rb)
			}
		}
		noSecrets(t, "the second server's log", h2.log.String(), app.secrets())
	})

	for i, r := range results {
		noSecrets(t, fmt.Sprintf("result %d", i), r, app.secrets())
	}
	noSecrets(t, "the server log", h.log.String(), app.secrets())
	dl, _ := os.ReadFile(dlog)
	noSecrets(t, "the decision log", string(dl), app.secrets())
	if !strings.Contains(string(dl), `"tool":"state_load"`) {
		t.Errorf("the decision log has no state_load decision")
	}
}

// TestStorageStatePlaywright: the file format is Playwright's. A state
// Playwright's own storageState wrote (with IndexedDB) starts chromegate
// logged in, and a state chromegate saved (with its extra sessionStorage)
// starts a Playwright context logged in.
func TestStorageStatePlaywright(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	t.Parallel()
	needBrowser(t)
	drv, err := cdp.FindDriver("")
	if err != nil {
		t.Fatal(err)
	}
	exe, err := cdp.FindChromium("")
	if err != nil {
		t.Fatal(err)
	}
	node := cmp.Or(drv.Node, "node")
	script, _ := filepath.Abs("testdata/playwright-state.js")
	playwright := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(node, append([]string{script, filepath.Join(drv.Dir, "package"), exe}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("playwright %s: %v\n%s", args[0], err, stderr.String())
		}
		return string(out)
	}
	app, port := newNotesApp(t)
	origin := "http://app.test:" + port
	appURL := origin + "/pages/spa-login.html"
	cdpBackend := e2eBackend != "ext"

	// Playwright → chromegate.
	theirs := filepath.Join(t.TempDir(), "playwright.json")
	playwright("write", origin, theirs, app.token, app.sid)
	raw, _ := os.ReadFile(theirs)
	if !strings.Contains(string(raw), `"indexedDB"`) {
		t.Fatalf("Playwright wrote no IndexedDB:\n%s", short(string(raw)))
	}
	s := startServer(t, stateRules, "--allow-domain=app.test", "--enable-mutations", "--unsafe-enable-eval", "--storage-state="+theirs)
	s.call("navigate", map[string]any{"url": appURL})
	page := loggedIn(t, s)
	if !strings.Contains(page, "cookie=sent") || (cdpBackend && !strings.Contains(page, "theme="+notesTheme)) {
		t.Errorf("chromegate from Playwright's state: %s", page)
	}
	if app.logins.Load() != 0 {
		t.Errorf("the app was logged into")
	}

	// chromegate → Playwright, with sessionStorage (which Playwright
	// ignores) in the file.
	s.eval(`sessionStorage.setItem("notes-draft", "` + notesDraft + `")`)
	rep := parseReport(t, resultText(s.call("state_save", map[string]any{"name": "ours"})))
	if rep.SessionStorage != 1 {
		t.Errorf("saved %+v, want the draft in sessionStorage", rep)
	}
	ours := filepath.Join(s.dataDir, "state", "local", "ours.json")
	var got struct {
		Token, Theme string
		Draft        *string
		Cookies      []string
	}
	if err := json.Unmarshal([]byte(playwright("read", origin, ours)), &got); err != nil {
		t.Fatal(err)
	}
	if got.Token != app.token || !slices.Contains(got.Cookies, "notes_sid="+app.sid) || (cdpBackend && got.Theme != notesTheme) {
		t.Errorf("Playwright from chromegate's state: token ok %v, cookies %d, theme %q", got.Token == app.token, len(got.Cookies), got.Theme)
	}
	if got.Draft != nil {
		t.Errorf("Playwright restored sessionStorage, which it is not known to do: the format note in the README is stale")
	}
}
