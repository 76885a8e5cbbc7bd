package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// The secrets of other.test's documents: none may reach a result.
const (
	frameSecret = "FRAME-SECRET-7b1e"
	popupSecret = "POPUP-SECRET-4c9a"
)

// frameSite serves allowed.test's shop, which frames a widget of
// other.test (a host the policy lets pages frame but never lets the model
// read), and a same-origin frame of its own. The widget reports to its
// own server every input the page gets, so a test can tell whether a
// fill, a click or a choice reached it; it also opens a popup, an
// about:blank it writes its secret into — a document of other.test's
// origin under the URL about:blank. The shop opens one of its own, which
// is allowed.test's.
type frameSite struct {
	port string
	mu   sync.Mutex
	hits []string // what the widget saw: "click", "input:<value>", ...
}

func (f *frameSite) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.hits...)
}

func newFrameSite(t *testing.T) *frameSite {
	f := &frameSite{}
	mux := http.NewServeMux()
	html := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.Host, ":")
		switch {
		case host == "other.test" && r.URL.Path == "/widget":
			html(w, `<!doctype html><title>Widget</title>
<p id="s">`+frameSecret+`</p>
<input id="i" aria-label="Card"><input id="file" type="file">
<select id="sel"><option value="a">A</option><option value="b">B</option></select>
<button id="btn">Pay</button><a id="dl" href="/file.txt" download>receipt</a>
<script>
  const tell = (what) => fetch('/hit?what=' + encodeURIComponent(what));
  btn.addEventListener('click', () => tell('click'));
  btn.addEventListener('mouseover', () => tell('hover'));
  i.addEventListener('input', () => tell('input:' + i.value));
  i.addEventListener('keydown', (e) => tell('key:' + e.key));
  sel.addEventListener('change', () => tell('select:' + sel.value));
  file.addEventListener('change', () => tell('file'));
  const w = window.open('about:blank', 'widgetpopup');
  w.document.write('<title>Widget popup</title><p>`+popupSecret+`</p>');
  w.document.close();
</script>`)
		case host == "other.test" && r.URL.Path == "/hit":
			f.mu.Lock()
			f.hits = append(f.hits, r.URL.Query().Get("what"))
			f.mu.Unlock()
		case host == "other.test" && r.URL.Path == "/file.txt":
			f.mu.Lock()
			f.hits = append(f.hits, "download")
			f.mu.Unlock()
			fmt.Fprint(w, frameSecret)
		case host == "allowed.test" && r.URL.Path == "/shop":
			html(w, fmt.Sprintf(`<!doctype html><title>Shop</title><h1>Shop</h1>
<iframe id="f" title="Widget" src="http://other.test:%s/widget" width="420" height="160"></iframe>
<iframe id="same" title="Notes" src="/notes" width="420" height="80"></iframe>
<script>
  const w = window.open('about:blank', 'shoppopup');
  w.document.write('<title>Shop popup</title><p>shop notes</p>');
  w.document.close();
</script>`, f.port))
		case host == "allowed.test" && r.URL.Path == "/notes":
			html(w, `<!doctype html><title>Notes</title><input id="note" aria-label="Note"><p id="said"></p>
<script>note.addEventListener('input', () => { said.textContent = 'note ' + note.value; });</script>`)
		default:
			http.NotFound(w, r)
		}
	})
	f.port = serveMux(t, mux)
	return f
}

// frameablePolicy is the default policy plus one operator rule: pages may
// frame other.test (a payment widget, say) and it may fetch from itself,
// while the model may still neither navigate to it nor read it.
func frameablePolicy(t *testing.T) string {
	t.Helper()
	rule := "\n# The test's operator lets pages frame other.test.\nrequest_allowed if target.host == \"other.test\"\n"
	return defaultPolicyWith(t, func(src string) string { return src + rule })
}

// TestFramesAreNotPierced: an allowed page frames a document of a denied
// host; the model tries every tool that takes a target with selectors
// that step into the frame, in several spellings. None reads the frame's
// content or acts on it (the widget's server hears of nothing): selectors
// stay in the main frame, whatever the frame's origin, and the outline
// shows the denied frame as a placeholder naming its host, without refs
// (a frame of an allowed origin would be outlined with refs: see
// xframes_test.go). A same-origin frame still works by ref.
func TestFramesAreNotPierced(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	site := newFrameSite(t)
	s := startServer(t, resolverRules, "--policy="+frameablePolicy(t), "--allow-domain=allowed.test",
		"--enable-mutations", "--unsafe-enable-eval", "--enable-downloads")
	shop := "http://allowed.test:" + site.port + "/shop"
	// The navigation waits for the load event, which waits for the frames.
	s.call("navigate", map[string]any{"url": shop})

	spellings := []string{
		"iframe >> internal:control=enter-frame >> ",
		"#f>>internal:control=enter-frame>>",
		"  css=iframe#f  >>  internal:control=enter-frame  >>  ",
		"iframe >> *internal:control=enter-frame >> ",
		"iframe >> INTERNAL:Control=enter-frame >> ",
		`iframe >> internal\:control=enter-frame >> `,
		"iframe >> internal\\u003acontrol=enter-frame >> ",
		`body >> internal:has="iframe >> internal:control=enter-frame >> #s" >> `,
	}
	file := filepath.Join(t.TempDir(), "card.txt")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, pre := range spellings {
		calls := []struct {
			tool string
			args map[string]any
		}{
			{"get_text", map[string]any{"selector": pre + "#s"}},
			{"get_text", map[string]any{"selector": pre + "text=Pay"}},
			{"get_html", map[string]any{"selector": pre + "body"}},
			{"get_html", map[string]any{"selector": pre + "#s", "outer": true}},
			{"query", map[string]any{"selector": pre + "p"}},
			{"screenshot", map[string]any{"selector": pre + "#s"}},
			{"wait_for", map[string]any{"selector": pre + "#s", "timeout_ms": 2000}},
			{"wait_for", map[string]any{"selector": pre + "#s", "visible": true, "timeout_ms": 2000}},
			{"snapshot", map[string]any{"selector": pre + "body"}},
			{"extract_links", map[string]any{"selector": pre + "body"}},
			{"read_as_markdown", map[string]any{"selector": pre + "body"}},
			{"fill", map[string]any{"selector": pre + "#i", "value": "4242"}},
			{"type", map[string]any{"selector": pre + "#i", "text": "4242"}},
			{"press", map[string]any{"selector": pre + "#i", "key": "Enter"}},
			{"click", map[string]any{"selector": pre + "#btn"}},
			{"hover", map[string]any{"selector": pre + "#btn"}},
			{"scroll", map[string]any{"selector": pre + "#btn"}},
			{"select_option", map[string]any{"selector": pre + "#sel", "values": []string{"b"}}},
			{"set_files", map[string]any{"selector": pre + "#file", "paths": []string{file}}},
			{"drag", map[string]any{"from_selector": pre + "#s", "to_selector": "h1"}},
			{"download_file", map[string]any{"selector": pre + "#dl"}},
			{"fill_form", map[string]any{"fields": []map[string]any{{"selector": pre + "#i", "value": "4242"}}}},
		}
		for _, c := range calls {
			res := s.try(c.tool, c.args)
			txt := resultText(res)
			if strings.Contains(txt, frameSecret) || strings.Contains(txt, popupSecret) {
				t.Errorf("%s %v returned the frame's secret: %s", c.tool, c.args, short(txt))
			}
			if !res.IsError || !strings.Contains(txt, "BAD_ARGS") || !strings.Contains(txt, "cannot enter frames") {
				t.Errorf("%s %v: want BAD_ARGS, selectors cannot enter frames; got: %s", c.tool, c.args, short(txt))
			}
		}
	}
	// Give a fetch the widget might have sent a moment to arrive.
	time.Sleep(300 * time.Millisecond)
	if hits := site.seen(); len(hits) > 0 {
		t.Errorf("the widget in the denied frame was acted on: %q", hits)
	}

	// The page's own content, and the same-origin frame by ref, still work.
	if txt := resultText(s.call("get_text", map[string]any{"selector": "h1"})); !strings.Contains(txt, "Shop") {
		t.Errorf("get_text of the page's own heading: %s", txt)
	}
	// The frame of the denied origin is a placeholder naming its host
	// (its iframe's own title is the shop's); its refs do not exist.
	_, outline := s.snapshotOf(nil)
	if strings.Contains(outline, frameSecret) || !strings.Contains(outline, `iframe "Widget" [other.test: not allowed]`) || strings.Contains(outline, "Pay") {
		t.Errorf("the outline shows the cross-origin frame:\n%s", outline)
	}
	s.call("fill", map[string]any{"ref": refOf(t, outline, `textbox Note`), "value": "hello"})
	if _, again := s.snapshotOf(nil); !strings.Contains(again, "note hello") {
		t.Errorf("filling the same-origin frame by ref had no effect:\n%s", again)
	}
}

// TestAboutBlankOfDeniedOrigin: the denied widget opens an about:blank
// window and writes its secret into it; the model selects that tab and
// reads it. The document is other.test's, whatever its URL says: every
// read is denied and the tab listing hides it. The shop's own popup (an
// about:blank of allowed.test) and a fresh tab stay readable.
//
// The popups open without a user gesture, which the browsers chromegate
// launches allow (Playwright turns the popup blocker off) and a bare
// Chromium attached with --cdp-endpoint does not: the test is not in the
// Makefile's REMOTE_SUITE.
func TestAboutBlankOfDeniedOrigin(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	site := newFrameSite(t)
	s := startServer(t, resolverRules, "--policy="+frameablePolicy(t), "--allow-domain=allowed.test",
		"--enable-mutations", "--unsafe-enable-eval")
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/shop"})
	shop := waitTabs(s, 3)[0].ID
	shopPopup := tabTitled(s, "Shop popup")
	if listing := resultText(s.call("tabs_list", nil)); strings.Contains(listing, "Widget popup") || !strings.Contains(listing, "outside the policy") {
		t.Errorf("tabs_list shows other.test's about:blank: %s", listing)
	}
	for i, c := range []struct {
		tool string
		args map[string]any
	}{
		{"get_text", nil},
		{"get_text", map[string]any{"selector": "p"}},
		{"get_html", nil},
		{"snapshot", nil},
		{"query", map[string]any{"selector": "p"}},
		{"screenshot", nil},
		{"read_as_markdown", nil},
		{"extract_links", nil},
		{"wait_for", map[string]any{"text": popupSecret, "timeout_ms": 2000}},
		{"eval", map[string]any{"expression": "document.body.innerText"}},
		{"click", map[string]any{"selector": "p"}},
	} {
		if i > 0 {
			// A denied call sent the tab away from the document: the
			// shop loads again, and its widget writes the window again.
			s.call("tab_select", map[string]any{"tab_id": shop})
			s.call("reload", nil)
		}
		s.call("tab_select", map[string]any{"tab_id": writtenTab(s)})
		txt := s.fail("POLICY_DENIED", c.tool, c.args)
		if strings.Contains(txt, popupSecret) {
			t.Errorf("%s on other.test's about:blank returned its secret: %s", c.tool, short(txt))
		}
		if !strings.Contains(txt, "outside the policy") {
			t.Errorf("%s: the denial should say the tab showed a page outside the policy: %s", c.tool, short(txt))
		}
	}

	// allowed.test's own about:blank is allowed.test's: readable.
	s.call("tab_select", map[string]any{"tab_id": shopPopup})
	if txt := resultText(s.call("get_text", nil)); !strings.Contains(txt, "shop notes") {
		t.Errorf("get_text of allowed.test's about:blank: %s", txt)
	}
	// A fresh tab is about:blank as the browser made it: readable.
	s.call("tab_new", nil)
	s.call("get_text", nil)
	s.call("screenshot", nil)
}

// writtenTab waits until the tab listing hides a tab (other.test's
// about:blank: outside the policy) and returns the last one it hides —
// or, should the listing show it, the one titled as the widget wrote.
func writtenTab(s *server) string {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tabs := listTabs(s)
		for i := len(tabs) - 1; i >= 0; i-- {
			if tabs[i].Note != "" || tabs[i].Title == "Widget popup" {
				return tabs[i].ID
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no tab is listed as outside the policy: %v", tabs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tabEntry is one tab of tabs_list.
type tabEntry struct {
	ID    string `json:"tab_id"`
	URL   string `json:"url"`
	Title string `json:"title"`
	Note  string `json:"note"`
}

func listTabs(s *server) []tabEntry {
	s.t.Helper()
	var out struct {
		Tabs []tabEntry `json:"tabs"`
	}
	txt := resultText(s.call("tabs_list", nil))
	if err := json.Unmarshal([]byte(jsonPart(txt)), &out); err != nil {
		s.t.Fatalf("tabs_list: %v\n%s", err, txt)
	}
	return out.Tabs
}

// tabTitled returns the id of the tab with title, or fails.
func tabTitled(s *server, title string) string {
	s.t.Helper()
	for _, tab := range listTabs(s) {
		if tab.Title == title {
			return tab.ID
		}
	}
	s.t.Fatalf("no tab titled %q", title)
	return ""
}

// waitTabs waits until n tabs are open and returns them, in the order
// they opened.
func waitTabs(s *server, n int) []tabEntry {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tabs := listTabs(s)
		if len(tabs) == n {
			return tabs
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("want %d tabs, have %v", n, tabs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
