package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/helpers"
	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
)

// snapshotSite serves the fixture pages of testdata/snapshot under
// /snapshot/ and returns the port.
func snapshotSite(t *testing.T) string {
	t.Helper()
	return serveMux(t, snapshotMux())
}

func snapshotMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/snapshot/", http.StripPrefix("/snapshot/", http.FileServer(http.Dir("testdata/snapshot"))))
	return mux
}

// snapshotOf runs snapshot with args and returns its header and outline.
func (s *server) snapshotOf(args map[string]any) (head map[string]any, outline string) {
	s.t.Helper()
	res := s.call("snapshot", args)
	text := resultText(res)
	content, _, ok := mcp.Unfence(text)
	if !ok {
		s.t.Fatalf("snapshot result is not fenced page content:\n%s", short(text))
	}
	// The text shows the outline after what the caller was not told yet
	// of the page (mcp/lean.go); the structured content has every field.
	var d struct {
		Data map[string]any `json:"data"`
		Text string         `json:"text"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &d); err != nil || d.Data == nil {
		s.t.Fatalf("snapshot's structured content %s: %v", short(string(b)), err)
	}
	if !strings.HasSuffix(content, d.Text) {
		s.t.Fatalf("the text does not end with the outline:\n%s", short(text))
	}
	return d.Data, d.Text
}

// refInOutline finds the refs of an outline (a control's line starts with
// it; a list of links names its letters once) for the golden files.
var refInOutline = regexp.MustCompile(`(?m)^( *)(?:[a-z]+([0-9]+) |links \(ref [a-z]+\+)`)

// goldenRefs writes the refs of an outline with the letters "e": document
// tokens differ from run to run; the numbers do not.
func goldenRefs(outline string) string {
	return refInOutline.ReplaceAllStringFunc(outline, func(m string) string {
		sm := refInOutline.FindStringSubmatch(m)
		if sm[2] == "" {
			return sm[1] + "links (ref e+"
		}
		return sm[1] + "e" + sm[2] + " "
	})
}

// refOf finds the ref of the first control whose outline line contains all
// of words.
func refOf(t testing.TB, outline string, words ...string) string {
	t.Helper()
	for _, r := range helpers.OutlineRefs(outline) {
		all := true
		for _, w := range words {
			all = all && strings.Contains(r.Line, w)
		}
		if all {
			return r.Ref
		}
	}
	t.Fatalf("no line with a ref contains %q in:\n%s", words, short(outline))
	return ""
}

func TestSnapshotGolden(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	s := startServer(t, permissive...)
	base := "http://127.0.0.1:" + snapshotSite(t)
	for _, page := range []string{"article", "form", "links", "named", "shadow", "spa", "clobber"} {
		t.Run(page, func(t *testing.T) {
			s.t = t
			s.call("navigate", map[string]any{"url": base + "/snapshot/" + page + ".html"})
			_, outline := s.snapshotOf(nil)
			if strings.Contains(outline, "[object ") {
				// named.html: a control named title or name shadows its
				// form's property; the outline reads attributes.
				t.Errorf("an element's property, not its attribute, reached the outline:\n%s", outline)
			}
			got := goldenRefs(outline) + "\n"
			testkit.Golden(t, filepath.Join("testdata", "snapshot", page+".golden"), []byte(got))
			t.Logf("%s: %d characters", page, len([]rune(outline)))
		})
	}
}

// contentOf is the page content of a fenced tool result.
func contentOf(t testing.TB, text string) string {
	t.Helper()
	content, _, ok := mcp.Unfence(text)
	if !ok {
		t.Fatalf("not fenced page content:\n%s", short(text))
	}
	return content
}

func TestSnapshotRefs(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	s := startServer(t, permissive...)
	base := "http://127.0.0.1:" + snapshotSite(t)

	t.Run("click by ref, re-render, navigation", func(t *testing.T) {
		s.t = t
		s.call("navigate", map[string]any{"url": base + "/snapshot/spa.html"})
		_, outline := s.snapshotOf(nil)
		lunch, refresh, sent := refOf(t, outline, `button Lunch on Friday?`), refOf(t, outline, `button Refresh`), refOf(t, outline, `button Sent`)
		s.call("click", map[string]any{"ref": lunch})
		if got := s.evalString(`out.textContent`); got != "opened Lunch on Friday?" {
			t.Fatalf("click by ref: %q", got)
		}
		// The list re-renders with new elements; the rest stays.
		s.call("click", map[string]any{"ref": refresh})
		if got := s.evalString(`clock.textContent`); got != "tick 1" {
			t.Fatalf("refresh: %q", got)
		}
		txt := s.fail("REF_EXPIRED", "click", map[string]any{"ref": lunch})
		if !strings.Contains(txt, "removed") || !strings.Contains(txt, "snapshot") {
			t.Errorf("a ref of a re-rendered element: %s", txt)
		}
		_, again := s.snapshotOf(nil)
		if refOf(t, again, `button Refresh`) != refresh || refOf(t, again, `button Sent`) != sent {
			t.Errorf("refs of untouched elements changed across snapshots:\n%s\n---\n%s", outline, again)
		}
		if refOf(t, again, `button Lunch on Friday?`) == lunch {
			t.Errorf("a new element got an old ref")
		}
		// A same-document navigation (pushState) keeps the refs.
		s.call("click", map[string]any{"ref": sent})
		s.call("click", map[string]any{"ref": refresh})
		if got := s.evalString(`location.hash + ' ' + heading.textContent + ' ' + clock.textContent`); got != "#sent Sent tick 2" {
			t.Errorf("after pushState: %q", got)
		}
		// A navigation expires every ref of the page.
		s.call("navigate", map[string]any{"url": base + "/snapshot/spa.html"})
		txt = s.fail("REF_EXPIRED", "click", map[string]any{"ref": refresh})
		if !strings.Contains(txt, "earlier page") || !strings.Contains(txt, "take a new snapshot") {
			t.Errorf("a ref after navigation: %s", txt)
		}
		s.fail("REF_EXPIRED", "get_text", map[string]any{"ref": refresh})
		s.fail("BAD_ARGS", "click", map[string]any{"ref": "nope"})
	})

	t.Run("shadow DOM and iframe", func(t *testing.T) {
		s.t = t
		s.call("navigate", map[string]any{"url": base + "/snapshot/shadow.html"})
		_, outline := s.snapshotOf(nil)
		if strings.Contains(outline, "Secret closed button") {
			t.Errorf("a closed shadow root is in the outline:\n%s", outline)
		}
		s.call("click", map[string]any{"ref": refOf(t, outline, `button Follow`)})
		s.call("type", map[string]any{"ref": refOf(t, outline, `textbox Note`), "text": "hi"})
		s.call("fill", map[string]any{"ref": refOf(t, outline, `textbox Card number`), "value": "4242"})
		s.call("click", map[string]any{"ref": refOf(t, outline, `button Pay now`)})
		if got := s.evalString(`out.textContent + ' / ' + card.shadowRoot.getElementById('note').value`); got != "paid 4242 / hi" {
			t.Errorf("acting by ref in a shadow root and an iframe: %q", got)
		}
		_, again := s.snapshotOf(map[string]any{"interactive_only": true})
		if !strings.Contains(again, `textbox "Note" value="hi"`) {
			t.Errorf("the outline does not show the typed value:\n%s", again)
		}
	})

	t.Run("scope, interactive_only, paging", func(t *testing.T) {
		s.t = t
		s.call("navigate", map[string]any{"url": base + "/snapshot/article.html"})
		_, aside := s.snapshotOf(map[string]any{"selector": "aside"})
		if !strings.Contains(aside, `button Subscribe`) || strings.Contains(aside, `"News"`) {
			t.Errorf("scoped to aside:\n%s", aside)
		}
		_, outline := s.snapshotOf(nil)
		_, byRef := s.snapshotOf(map[string]any{"ref": refOf(t, outline, `button Subscribe`)})
		if !regexp.MustCompile(`^[a-z]+[0-9]+ button Subscribe(\n|$)`).MatchString(byRef) {
			t.Errorf("scoped to a ref:\n%s", byRef)
		}
		_, only := s.snapshotOf(map[string]any{"interactive_only": true})
		if regexp.MustCompile(`(?m)^ *["#]`).MatchString(only) || !strings.Contains(only, ` link Part two`) {
			t.Errorf("interactive_only:\n%s", only)
		}
		s.fail("SELECTOR_NOT_FOUND", "snapshot", map[string]any{"selector": "#nothing"})
		s.fail("BAD_ARGS", "snapshot", map[string]any{"selector": "aside", "ref": "ab1"})

		s.call("navigate", map[string]any{"url": base + "/snapshot/links.html"})
		head, first := s.snapshotOf(map[string]any{"max_chars": 600})
		next, _ := head["next"].(float64)
		if next == 0 || len(first) > 700 || !strings.Contains(first, fmt.Sprintf("call snapshot with offset=%d", int(next))) {
			t.Fatalf("a cut snapshot (next %v):\n%s", head["next"], first)
		}
		_, rest := s.snapshotOf(map[string]any{"offset": next})
		whole := s.outlineOnly()
		full := strings.Split(strings.TrimSpace(whole), "\n")
		want, cont := full[int(next)], rest
		// A page that starts inside a list of links repeats the list's head,
		// so its numbers still make refs.
		if regexp.MustCompile(`^ *[0-9]+ `).MatchString(want) {
			if head, _, _ := strings.Cut(rest, "\n"); !strings.HasPrefix(strings.TrimSpace(head), "links (ref ") {
				t.Errorf("offset %v inside a list starts with %q, not the list's head", next, head)
			}
			rest = rest[strings.Index(rest, "\n")+1:]
		}
		if !strings.HasPrefix(rest, want) {
			t.Errorf("offset %v continues with %q, want line %q", next, strings.SplitN(rest, "\n", 2)[0], want)
		}
		if got, all := helpers.OutlineRefs(cont), helpers.OutlineRefs(whole); len(got) == 0 || !slices.Contains(all, got[0]) {
			t.Errorf("the continuation's refs %+v do not start with one of the whole outline's", got)
		}
	})

	t.Run("query", func(t *testing.T) {
		s.t = t
		s.call("navigate", map[string]any{"url": base + "/snapshot/links.html"})
		var q struct {
			Showing string `json:"showing"`
			Items   []struct {
				Tag, Role, Name, Ref string
				Attrs                map[string]string
			} `json:"items"`
		}
		text := contentOf(t, resultText(s.call("query", map[string]any{"selector": "li a", "limit": 5})))
		if err := json.Unmarshal([]byte(text), &q); err != nil {
			t.Fatalf("query result: %v\n%s", err, text)
		}
		if q.Showing != "5 of 300" || len(q.Items) != 5 || q.Items[0].Role != "link" || q.Items[0].Name != "Bravo guide 1" ||
			q.Items[0].Attrs["href"] != "/docs/bravo-1.html" || q.Items[0].Ref == "" {
			t.Errorf("query: %+v", q)
		}
		// Query and snapshot share one registry: the same element, the same ref.
		_, outline := s.snapshotOf(nil)
		if refOf(t, outline, `link Bravo guide 1`) != q.Items[0].Ref {
			t.Errorf("query ref %s is not the snapshot's", q.Items[0].Ref)
		}

		s.call("navigate", map[string]any{"url": base + "/snapshot/form.html"})
		text = contentOf(t, resultText(s.call("query", map[string]any{"selector": "input[type=checkbox]"})))
		if err := json.Unmarshal([]byte(text), &q); err != nil {
			t.Fatal(err)
		}
		if q.Showing != "2 of 2" || q.Items[1].Name != "I accept the terms" {
			t.Fatalf("query checkboxes: %+v", q)
		}
		s.call("click", map[string]any{"ref": q.Items[1].Ref})
		if got := s.evalString(`tos.checked`); got != "true" {
			t.Errorf("click a query ref: tos.checked = %s", got)
		}
		s.fail("BAD_ARGS", "query", map[string]any{"selector": "##"})
	})
}

// outlineOnly is the whole outline of the page, uncut.
func (s *server) outlineOnly() string {
	s.t.Helper()
	_, o := s.snapshotOf(map[string]any{"max_chars": 1000000})
	return o
}

// TestSnapshotPolicy: snapshot and query read the page, so the policy
// denies them on a page outside the allowlist, like every other read.
func TestSnapshotPolicy(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	mux := snapshotMux()
	var port string
	mux.HandleFunc("/wander", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Wander</title><button>stay</button><script>setTimeout(()=>location="http://other.test:%s/snapshot/form.html",300)</script>`, port)
	})
	port = serveMux(t, mux)
	s := startServer(t, resolverRules, "--allow-domain=allowed.test")
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/snapshot/form.html"})
	s.snapshotOf(nil)
	s.call("query", map[string]any{"selector": "input"})

	for _, tool := range []string{"snapshot", "query"} {
		// Each denial sends the tab back to about:blank: wander again.
		s.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/wander"})
		s.waitTabHidden()
		txt := s.fail("POLICY_DENIED", tool, map[string]any{"selector": "input"})
		// The boundary kept other.test from loading: the tab shows
		// Chromium's error page, and the read is denied there.
		if !(strings.Contains(txt, "other.test") || strings.Contains(txt, "chromewebdata")) || strings.Contains(txt, "Full name") {
			t.Errorf("%s on other.test: %s", tool, txt)
		}
		if tabs := resultText(s.call("tabs_list", nil)); !strings.Contains(tabs, `"about:blank"`) {
			t.Errorf("after %s was denied, the tab was not sent to about:blank: %s", tool, tabs)
		}
	}
}
