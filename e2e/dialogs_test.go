package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Dialogs are decided, never defaulted (issue 14): a dialog a call raises
// is reported open and the page left waiting; every call that needs the
// page meanwhile says so at once (DIALOG_OPEN), never by timing out; the
// model answers with dialog_answer, which the policy decides.

const deleteAllMessage = "Delete all 1,204 records? This cannot be undone."

// dialogSite serves allowed.test's dialog pages. deletes counts the
// deletions the records page asked the server for; accepted counts the
// dialogs an attacker's page saw accepted.
type dialogSite struct {
	base     string
	deletes  atomic.Int32
	accepted atomic.Int32
}

func newDialogSite(t *testing.T) *dialogSite {
	t.Helper()
	d := &dialogSite{}
	mux := http.NewServeMux()
	page := func(path, title, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
		})
	}
	mux.HandleFunc("/delete-all", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			d.deletes.Add(1)
		}
	})
	mux.HandleFunc("/accepted", func(w http.ResponseWriter, r *http.Request) { d.accepted.Add(1) })
	// The page.
	page("/records", "Records", `<p id="count">1204 records</p>
<button id="delete" onclick="if (confirm('`+deleteAllMessage+`')) fetch('/delete-all', {method: 'POST'}).then(() => { document.getElementById('count').textContent = '0 records'; })">Delete all</button>`)
	page("/confirm-load", "Confirm on load", `<p id="count">1204 records</p>
<script>if (confirm('`+deleteAllMessage+`')) fetch('/delete-all', {method: 'POST'});</script>`)
	page("/prompt", "Prompt", `<p id="out">nobody</p>
<button id="ask" onclick="document.getElementById('out').textContent = 'Hello, ' + prompt('Your name?', 'anon')">ask</button>`)
	page("/leave", "Leave", `<input id="field"><script>addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = ''; });</script>`)
	page("/landing", "Landing", `<p>landed</p>`)
	page("/alert-load", "Alerting", `<p id="p">after the alert</p><input id="i"><button id="b" onclick="this.textContent='clicked'">b</button>
<script>alert('loading')</script>`)
	// The attacker's pages: confirms in a loop, each accepted one reported.
	page("/loop", "Loop", `<p>loop</p><script>const f = () => { if (confirm('again')) fetch('/accepted'); setTimeout(f, 0); }; setTimeout(f, 0);</script>`)
	// A same-site popup that raises a dialog: it shares the opener's
	// renderer, so the opener is held too.
	page("/opener", "Opener", `<p id="t">opener</p><button id="open" onclick="window.open('/loop', '_blank')">open</button>`)
	d.base = "http://allowed.test:" + serveMux(t, mux)
	// A popup outside the policy (a blob: document) that confirms in a
	// loop and reports each accepted confirm to the server.
	mux.HandleFunc("/blob-opener", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		doc := fmt.Sprintf(`<title>SECRET-TITLE</title><script>const f = () => { if (confirm("SECRET-DIALOG")) fetch(%q); setTimeout(f, 0); }; f();<\/script>`, d.base+"/accepted")
		fmt.Fprintf(w, `<!doctype html><title>Blob opener</title><p id="t">opener</p><button id="open">open</button><script>
const doc = %s;
document.getElementById('open').onclick = () => window.open(URL.createObjectURL(new Blob([doc], {type: 'text/html'})), '_blank');
</script>`, jsString(doc))
	})
	return d
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func startDialogServer(t *testing.T, args ...string) (*server, *dialogSite) {
	t.Helper()
	d := newDialogSite(t)
	s := startServer(t, append([]string{resolverRules, "--allow-domain=allowed.test"}, args...)...)
	return s, d
}

// dialogsOf decodes the dialogs a result reports.
func dialogsOf(t *testing.T, res *sdk.CallToolResult) []map[string]string {
	t.Helper()
	var out struct {
		Dialogs []map[string]string `json:"dialogs"`
	}
	if err := json.Unmarshal(structuredData(res), &out); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, resultText(res))
	}
	return out.Dialogs
}

// urlOf decodes the url a result reports.
func urlOf(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	var out struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(structuredData(res), &out); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, resultText(res))
	}
	return out.URL
}

// wantOpen checks that res reports one dialog of typ left open, with its
// message, and the next call.
func wantOpen(t *testing.T, what string, res *sdk.CallToolResult, typ, message string) {
	t.Helper()
	ds := dialogsOf(t, res)
	if len(ds) == 0 {
		t.Fatalf("%s: no dialog reported: %s", what, resultText(res))
	}
	d := ds[len(ds)-1]
	if d["type"] != typ || d["action"] != "open" || (message != "" && d["message"] != message) || !strings.Contains(d["next"], "dialog_answer") {
		t.Errorf("%s: want an open %s %q with the next call, got %v", what, typ, message, ds)
	}
	if strings.Contains(unfenced(res), message) && message != "" {
		t.Errorf("%s: the dialog's words are outside the fence:\n%s", what, resultText(res))
	}
}

// wantDialogOpen checks that res is DIALOG_OPEN, saying what to call next.
func wantDialogOpen(t *testing.T, what string, res *sdk.CallToolResult) {
	t.Helper()
	txt := resultText(res)
	if !res.IsError || !strings.HasPrefix(txt, "DIALOG_OPEN") || !strings.Contains(txt, "dialog_answer") {
		t.Errorf("%s: want DIALOG_OPEN naming dialog_answer, got: %s", what, txt)
	}
}

func textOfPage(t *testing.T, s *server) string {
	t.Helper()
	return resultText(s.call("get_text", nil))
}

// otherTabs lists the ids of the tabs that are not selected.
func otherTabs(t *testing.T, s *server) []string {
	t.Helper()
	var list struct {
		Tabs []struct {
			TabID    string `json:"tab_id"`
			Selected bool   `json:"selected"`
		} `json:"tabs"`
	}
	if err := json.Unmarshal([]byte(jsonPart(resultText(s.call("tabs_list", nil)))), &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tb := range list.Tabs {
		if !tb.Selected {
			ids = append(ids, tb.TabID)
		}
	}
	return ids
}

// popupOf waits for the tab a click opened; "" when none is listed
// (through the extension a blob: popup, which makes no request for the
// boundary to decide, is never listed: its dialogs are dismissed at once).
func popupOf(t *testing.T, s *server) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ids := otherTabs(t, s); len(ids) > 0 {
			return ids[len(ids)-1]
		}
	}
	return ""
}

// TestDialogConfirmKeepsRecords: the page. The click opens the
// confirm and returns; the records are there (on the page, and on the
// server) until the model accepts; a dismiss keeps them.
func TestDialogConfirmKeepsRecords(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	s, d := startDialogServer(t, "--enable-mutations")
	s.call("navigate", map[string]any{"url": d.base + "/records"})
	click := func() {
		t.Helper()
		res := s.call("click", map[string]any{"selector": "#delete", "timeout_ms": 20000})
		wantOpen(t, "the click", res, "confirm", deleteAllMessage)
	}
	click()
	// The page waits: a read says so at once, naming the dialog.
	res := s.try("get_text", nil)
	wantDialogOpen(t, "get_text while the confirm is open", res)
	if !strings.Contains(resultText(res), deleteAllMessage) || strings.Contains(unfenced(res), deleteAllMessage) {
		t.Errorf("DIALOG_OPEN does not name the dialog inside the fence: %s", resultText(res))
	}
	if n := d.deletes.Load(); n != 0 {
		t.Fatalf("the records were deleted before any answer (%d)", n)
	}
	// Dismissed: the records stay.
	res = s.call("dialog_answer", map[string]any{"accept": false})
	if ds := dialogsOf(t, res); len(ds) != 1 || ds[0]["action"] != "dismissed" {
		t.Errorf("dismiss: %v", ds)
	}
	if txt := textOfPage(t, s); !strings.Contains(txt, "1204 records") {
		t.Errorf("after the dismiss: %s", txt)
	}
	// Accepted: the page goes on and deletes them.
	click()
	res = s.call("dialog_answer", map[string]any{"accept": true})
	if ds := dialogsOf(t, res); len(ds) != 1 || ds[0]["action"] != "accepted" {
		t.Errorf("accept: %v", ds)
	}
	for deadline := time.Now().Add(5 * time.Second); d.deletes.Load() == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
	}
	if n := d.deletes.Load(); n != 1 {
		t.Fatalf("after the accept the server saw %d deletions, want 1", n)
	}
	s.call("wait_for", map[string]any{"text": "0 records", "timeout_ms": 5000})
}

// TestDialogAcceptRefusedByPolicy: with mutations off the accept of a
// confirm the page raised as it loaded is POLICY_DENIED and the records
// stay; with the operator's refuse_dialogs, so is the accept of the
// issue's confirm even with mutations on. A dismiss works either way.
func TestDialogAcceptRefusedByPolicy(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	t.Run("safe mode", func(t *testing.T) {
		s, d := startDialogServer(t)
		res := s.call("navigate", map[string]any{"url": d.base + "/confirm-load", "timeout_ms": 20000})
		wantOpen(t, "the navigation", res, "confirm", deleteAllMessage)
		s.fail("POLICY_DENIED", "dialog_answer", map[string]any{"accept": true})
		s.call("dialog_answer", map[string]any{"accept": false})
		if txt := textOfPage(t, s); !strings.Contains(txt, "1204 records") || d.deletes.Load() != 0 {
			t.Errorf("after the refused accept and the dismiss: %s, %d deletions", txt, d.deletes.Load())
		}
	})
	t.Run("refuse_dialogs", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "data.json")
		if err := os.WriteFile(data, []byte(`{"refuse_dialogs": ["(?i)\\bdelete"]}`), 0o600); err != nil {
			t.Fatal(err)
		}
		s, d := startDialogServer(t, "--enable-mutations", "--data="+data)
		s.call("navigate", map[string]any{"url": d.base + "/records"})
		wantOpen(t, "the click", s.call("click", map[string]any{"selector": "#delete"}), "confirm", deleteAllMessage)
		txt := s.fail("POLICY_DENIED", "dialog_answer", map[string]any{"accept": true})
		if !strings.Contains(txt, "refuse_dialogs") {
			t.Errorf("the denial does not say why: %s", txt)
		}
		s.call("dialog_answer", map[string]any{"accept": false})
		if txt := textOfPage(t, s); !strings.Contains(txt, "1204 records") || d.deletes.Load() != 0 {
			t.Errorf("after the refused accept: %s, %d deletions", txt, d.deletes.Load())
		}
	})
}

// TestDialogPromptAnswered: a prompt answered with the model's text; the
// page shows it.
func TestDialogPromptAnswered(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	s, d := startDialogServer(t, "--enable-mutations")
	s.call("navigate", map[string]any{"url": d.base + "/prompt"})
	res := s.call("click", map[string]any{"selector": "#ask"})
	wantOpen(t, "the click", res, "prompt", "Your name?")
	if ds := dialogsOf(t, res); ds[0]["default"] != "anon" {
		t.Errorf("the prompt's default is not reported: %v", ds)
	}
	res = s.call("dialog_answer", map[string]any{"accept": true, "prompt_text": "Ada Lovelace"})
	if ds := dialogsOf(t, res); len(ds) != 1 || ds[0]["answer"] != "Ada Lovelace" {
		t.Errorf("the answer: %v", ds)
	}
	if txt := textOfPage(t, s); !strings.Contains(txt, "Hello, Ada Lovelace") {
		t.Errorf("the page does not show the answer: %s", txt)
	}
}

// TestDialogBeforeUnload: a navigation away from a page with a
// beforeunload handler (armed by a click through chromegate) reports the
// dialog and waits: dismissed, the tab stays; accepted, it lands where the
// navigation went. A reload waits the same way.
func TestDialogBeforeUnload(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	s, d := startDialogServer(t, "--enable-mutations", "--unsafe-enable-eval")
	s.call("navigate", map[string]any{"url": d.base + "/leave"})
	s.call("click", map[string]any{"selector": "#field"}) // the user gesture beforeunload needs
	for _, accept := range []bool{false, true} {
		res := s.call("navigate", map[string]any{"url": d.base + "/landing", "timeout_ms": 20000})
		wantOpen(t, "the navigation", res, "beforeunload", "")
		if u := urlOf(t, res); !strings.HasSuffix(u, "/leave") {
			t.Errorf("the navigation reports %s while it waits, want the page it leaves", u)
		}
		res = s.call("dialog_answer", map[string]any{"accept": accept})
		want := "/leave"
		if accept {
			want = "/landing"
		}
		if u := urlOf(t, res); !strings.HasSuffix(u, want) {
			t.Errorf("beforeunload answered %v: the answer reports %s, want %s", accept, u, want)
		}
		if u := selectedURL(t, s); !strings.HasSuffix(u, want) {
			t.Errorf("beforeunload answered %v: the tab is at %s, want %s", accept, u, want)
		}
	}
	// reload waits on it the same way.
	s.call("navigate", map[string]any{"url": d.base + "/leave"})
	s.call("click", map[string]any{"selector": "#field"})
	wantOpen(t, "reload", s.call("reload", map[string]any{"timeout_ms": 20000}), "beforeunload", "")
	s.call("dialog_answer", map[string]any{"accept": false})
	s.call("type", map[string]any{"selector": "#field", "text": "kept"})
	if got := s.evalString("document.getElementById('field').value"); got != "kept" {
		t.Errorf("after a dismissed reload the page is not the same document: field %q", got)
	}
}

// TestDialogAlertOnLoadHangsNothing: a page that raises an alert as it
// loads holds no call: the navigation returns with the alert open, every
// call that needs the page answers DIALOG_OPEN at once (never TIMEOUT),
// the calls that do not keep working, and after the answer they all
// work. With --accept-alerts the calls just work and the alert is
// reported accepted.
func TestDialogAlertOnLoadHangsNothing(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"snapshot", nil},
		{"get_text", nil},
		{"get_html", nil},
		{"click", map[string]any{"selector": "#b"}},
		{"eval", map[string]any{"expression": "1 + 1"}},
		{"screenshot", nil},
		{"wait_for", map[string]any{"selector": "#p"}},
		{"type", map[string]any{"selector": "#i", "text": "x"}},
		{"navigate", map[string]any{"url": "about:blank"}},
	}
	t.Run("answered by the model", func(t *testing.T) {
		s, d := startDialogServer(t, "--enable-mutations", "--unsafe-enable-eval")
		res := s.call("navigate", map[string]any{"url": d.base + "/alert-load", "timeout_ms": 20000})
		wantOpen(t, "the navigation", res, "alert", "loading")
		for _, c := range calls {
			args := map[string]any{"timeout_ms": 20000}
			for k, v := range c.args {
				args[k] = v
			}
			if c.tool == "eval" || c.tool == "get_html" || c.tool == "screenshot" || c.tool == "snapshot" || c.tool == "get_text" {
				delete(args, "timeout_ms") // these take the default deadline
			}
			start := time.Now()
			res := s.try(c.tool, args)
			t.Logf("%s: %s after %s", c.tool, firstLine(resultText(res)), time.Since(start).Round(time.Millisecond))
			wantDialogOpen(t, c.tool, res)
		}
		for _, tool := range []string{"tabs_list", "chrome_status"} {
			s.call(tool, nil)
		}
		s.call("dialog_answer", map[string]any{"accept": true})
		if txt := textOfPage(t, s); !strings.Contains(txt, "after the alert") {
			t.Errorf("after the answer: %s", txt)
		}
		s.call("click", map[string]any{"selector": "#b"})
		if got := s.evalString("document.getElementById('b').textContent"); got != "clicked" {
			t.Errorf("after the answer the click did not land: %q", got)
		}
	})
	t.Run("--accept-alerts", func(t *testing.T) {
		s, d := startDialogServer(t, "--enable-mutations", "--unsafe-enable-eval", "--accept-alerts")
		res := s.call("navigate", map[string]any{"url": d.base + "/alert-load", "timeout_ms": 20000})
		if ds := dialogsOf(t, res); len(ds) != 1 || ds[0]["type"] != "alert" || ds[0]["action"] != "accepted" || ds[0]["message"] != "loading" {
			t.Errorf("the alert is not reported accepted: %v", ds)
		}
		for _, c := range calls[:len(calls)-1] {
			s.call(c.tool, c.args)
		}
	})
}

// TestDialogAttacks: a page that opens confirms in a loop, a same-site
// popup whose dialogs hold its opener, and a popup outside the policy
// that confirms in a loop: no call hangs, and nothing is ever accepted.
func TestDialogAttacks(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	s, d := startDialogServer(t, "--enable-mutations")
	t.Run("a loop of confirms", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": d.base + "/landing"})
		res := s.call("tab_new", map[string]any{"url": d.base + "/loop", "timeout_ms": 20000})
		wantOpen(t, "tab_new", res, "confirm", "again")
		for range 3 {
			wantDialogOpen(t, "get_text", s.try("get_text", nil))
			res := s.call("dialog_answer", map[string]any{"accept": false})
			// (The next confirm is reported here, or by the next call.)
			if ds := dialogsOf(t, res); len(ds) < 1 || ds[0]["action"] != "dismissed" {
				t.Errorf("a dismiss in the loop: %v", ds)
			}
		}
		// The way out: the tab goes, the session goes on.
		s.call("tab_close", nil)
		if txt := textOfPage(t, s); !strings.Contains(txt, "landed") {
			t.Errorf("the other tab after the loop's closed: %s", txt)
		}
	})
	t.Run("a same-site popup's dialogs", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": d.base + "/opener"})
		// The click opens the popup, whose confirm may hold the click's
		// own end: done, or DIALOG_OPEN saying it may have acted.
		if res := s.try("click", map[string]any{"selector": "#open"}); res.IsError && !strings.Contains(resultText(res), "may have acted") {
			t.Errorf("the click that opened the popup: %s", resultText(res))
		}
		for _, tool := range []string{"get_text", "snapshot"} {
			start := time.Now()
			res := s.try(tool, map[string]any{"timeout_ms": 20000})
			t.Logf("%s on the opener: %s after %s", tool, firstLine(resultText(res)), time.Since(start).Round(time.Millisecond))
			if res.IsError && !strings.HasPrefix(resultText(res), "DIALOG_OPEN") {
				t.Errorf("%s on the opener while its popup's confirm is open: %s", tool, resultText(res))
			}
		}
		// The popup's own tab names its dialog; closing it frees the opener.
		popup := popupOf(t, s)
		if popup == "" {
			t.Fatal("the popup is not listed")
		}
		wantDialogOpen(t, "get_text on the popup", s.try("get_text", map[string]any{"tab_id": popup}))
		s.call("tab_close", map[string]any{"tab_id": popup})
		if txt := textOfPage(t, s); !strings.Contains(txt, "opener") {
			t.Errorf("the opener after its popup closed: %s", txt)
		}
	})
	t.Run("a popup outside the policy", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": d.base + "/blob-opener"})
		s.call("click", map[string]any{"selector": "#open"})
		time.Sleep(500 * time.Millisecond) // the popup's first confirm opens
		var seen []string
		for _, tool := range []string{"get_text", "snapshot", "tabs_list", "get_text"} {
			start := time.Now()
			res := s.try(tool, map[string]any{})
			seen = append(seen, resultText(res))
			t.Logf("%s: %s after %s", tool, firstLine(resultText(res)), time.Since(start).Round(time.Millisecond))
			if res.IsError && !strings.HasPrefix(resultText(res), "DIALOG_OPEN") {
				t.Errorf("%s: %s", tool, resultText(res))
			}
		}
		// A call on the popup's tab is refused, and the tab sent away from
		// it with its dialogs dismissed; the opener is free again.
		if popup := popupOf(t, s); popup == "" {
			t.Logf("the popup is not listed on this backend")
		} else {
			res := s.try("get_text", map[string]any{"tab_id": popup})
			t.Logf("get_text on the popup: %s", resultText(res))
			seen = append(seen, resultText(res))
			if !res.IsError || !strings.HasPrefix(resultText(res), "POLICY_DENIED") {
				t.Errorf("get_text on the denied popup: %s", resultText(res))
			}
		}
		res := s.call("get_text", nil)
		seen = append(seen, resultText(res))
		if !strings.Contains(resultText(res), "opener") {
			t.Errorf("the opener after its popup was sent away: %s", resultText(res))
		}
		for _, txt := range seen {
			if strings.Contains(txt, "SECRET") {
				t.Errorf("a result tells what the denied popup wrote: %s", txt)
			}
		}
	})
	time.Sleep(300 * time.Millisecond)
	if n := d.accepted.Load(); n != 0 {
		t.Errorf("an attacker's dialog was accepted %d times", n)
	}
}
