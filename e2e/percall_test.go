package e2e

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// selectorPages are the hostile pages of TestSelectorClickGuarantees: each
// records in window.hits what received a click (target id, and whether it
// was trusted), so a test sees both that its button was clicked and that
// nothing else was.
var selectorPages = map[string]string{
	"hidden": `<button id="b" style="display:none">Hidden</button>
<button id="v" style="visibility:hidden">Invisible</button>`,
	"disabled": `<button id="b" disabled>Disabled</button>
<div aria-disabled="true"><button id="a">Inside aria-disabled</button></div>
<fieldset disabled><button id="f">In a disabled fieldset</button></fieldset>`,
	// b moves for ever; s moves for 600 ms, then stays.
	"moving": `<style>@keyframes slide{from{left:0}to{left:400px}}
.m{position:absolute;top:40px;width:100px;height:40px}</style>
<button id="b" class="m" style="animation:slide 1s linear infinite">Moving</button>
<button id="s" class="m" style="top:120px;animation:slide 600ms linear 1 forwards">Settling</button>`,
	// The overlay covers the button from the start.
	"covered": `<button id="b" style="position:absolute;left:40px;top:40px;width:120px;height:40px">Covered</button>
<div id="overlay" style="position:fixed;inset:0;background:rgba(0,0,0,.1)"></div>`,
	// The overlay slides over the button the moment the pointer reaches
	// it: the press lands on the overlay unless the click is watched.
	"ambush": `<button id="b" style="position:absolute;left:40px;top:40px;width:120px;height:40px">Ambushed</button>
<div id="overlay" style="position:fixed;left:0;top:0;width:10px;height:10px"></div>
<script>
const ov = document.getElementById('overlay');
const jump = () => { ov.style.width = '100vw'; ov.style.height = '100vh'; };
for (const ev of ['mouseover', 'mousemove', 'pointerover', 'pointermove']) document.getElementById('b').addEventListener(ev, jump);
</script>`,
	"several": `<button class="m" id="first">One</button><button class="m" id="second">Two</button>`,
	"button":  `<button id="b" onclick="this.dataset.n = (+this.dataset.n || 0) + 1">count</button>`,
	// late appears after 500 ms; shadow's button lives in a shadow root.
	"late": `<div id="host"></div><script>
setTimeout(() => { const b = document.createElement('button'); b.id = 'late'; b.textContent = 'Late'; document.body.append(b); }, 500);
document.getElementById('host').attachShadow({mode: 'open'}).innerHTML = '<button id="shadowed">In a shadow root</button>';
</script>`,
}

// The script of every selector page: every click, press and mouse-down
// the document receives is recorded with its target, as any listener of
// the page would see it (the window's capturing listeners a page adds
// before chromegate's run before its guard: those are the page's own
// business, like Playwright's).
const selectorRecorder = `<script>
window.hits = [];
for (const ev of ['pointerdown', 'mousedown', 'click']) document.addEventListener(ev, (e) => {
  const t = e.composedPath()[0];
  hits.push(e.type + ':' + (t.id || t.tagName) + (e.isTrusted ? '' : ':untrusted'));
}, true);
</script>`

func serveSelectorPages(t testing.TB) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, ok := selectorPages[strings.TrimPrefix(r.URL.Path, "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<!doctype html><title>Selectors</title><style>body{margin:0}</style>%s%s", selectorRecorder, body)
	})
	return testkit.Serve(t, mux)
}

// TestSelectorClickGuarantees: a click by selector acts only on an element
// that is visible, enabled, still and the one that receives the click,
// from the side of a page that tries to make it act otherwise; it waits
// as Playwright does for one that becomes so, and a selector matching
// several elements clicks the first, as before.
func TestSelectorClickGuarantees(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	base := serveSelectorPages(t)
	s := startServer(t, permissive...)
	open := func(page string) {
		t.Helper()
		s.call("navigate", map[string]any{"url": base + "/" + page})
	}
	hits := func() string { t.Helper(); return s.evalString("hits.join(' ')") }
	click := func(sel string) map[string]any {
		return map[string]any{"selector": sel, "timeout_ms": 2500, "changes": false}
	}
	// A target that never becomes actionable is refused at the deadline,
	// whatever it is: a second is enough to show it.
	never := func(sel string) map[string]any {
		return map[string]any{"selector": sel, "timeout_ms": 1000, "changes": false}
	}
	refused := func(t *testing.T, sel, why string) {
		t.Helper()
		txt := s.fail("TIMEOUT", "click", never(sel))
		if !strings.Contains(txt, "did not become actionable") || !strings.Contains(txt, why) {
			t.Errorf("click %s: want a TIMEOUT that says it did not become actionable (%s), got: %s", sel, why, txt)
		}
		if h := hits(); h != "" {
			t.Errorf("click %s: the page received %q, want nothing", sel, h)
		}
	}

	t.Run("hidden", func(t *testing.T) {
		open("hidden")
		refused(t, "#b", "visible")
		refused(t, "#v", "visible")
	})
	t.Run("disabled", func(t *testing.T) {
		open("disabled")
		refused(t, "#b", "disabled")
		refused(t, "#a", "disabled")
		refused(t, "#f", "disabled")
	})
	t.Run("moving", func(t *testing.T) {
		open("moving")
		refused(t, "#b", "moving")
		// One that comes to rest is waited for, then clicked.
		s.call("click", click("#s"))
		if h := hits(); h != "pointerdown:s mousedown:s click:s" {
			t.Errorf("the settling button: the page received %q, want one trusted click on it", h)
		}
	})
	t.Run("covered", func(t *testing.T) {
		open("covered")
		txt := s.fail("TIMEOUT", "click", never("#b"))
		if !strings.Contains(txt, "on top") && !strings.Contains(txt, "another element") {
			t.Errorf("want a TIMEOUT that says another element is on top, got: %s", txt)
		}
		if h := hits(); h != "" {
			t.Errorf("the page received %q, want nothing (the overlay must not get the click)", h)
		}
	})
	t.Run("overlay arrives with the pointer", func(t *testing.T) {
		open("ambush")
		txt := s.fail("TIMEOUT", "click", never("#b"))
		if !strings.Contains(txt, "did not become actionable") {
			t.Errorf("want a TIMEOUT that says it did not become actionable, got: %s", txt)
		}
		if h := hits(); h != "" {
			t.Errorf("the page received %q: the press meant for the button reached the overlay", h)
		}
	})
	t.Run("several match", func(t *testing.T) {
		open("several")
		s.call("click", click(".m"))
		if h := hits(); h != "pointerdown:first mousedown:first click:first" {
			t.Errorf("the page received %q, want one click on the first match", h)
		}
	})
	t.Run("appears later and in a shadow root", func(t *testing.T) {
		open("late")
		s.call("click", click("#late"))
		s.call("click", click("#shadowed"))
		s.call("click", click("text=In a shadow root"))
		if h := hits(); !strings.HasPrefix(h, "pointerdown:late mousedown:late click:late") || strings.Count(h, "click:shadowed") != 2 {
			t.Errorf("the page received %q, want a click on the late button, then two on the shadowed one", h)
		}
	})
}

// BenchmarkSelectorClick clicks one button by CSS selector and by ref, and
// evaluates 1+1, through the extension and through the CDP backend in the
// same run, calls interleaved; outline changes off (changes: false), so
// the figures are the click's own. It reports each median and the
// selector/ref ratio of each backend (the aim: at most 2).
func BenchmarkSelectorClick(b *testing.B) {
	needBrowser(b)
	base := serveSelectorPages(b)
	viaExt := startServer(b, append([]string{"--with-extension"}, permissive...)...)
	viaExt.waitPaired()
	viaCDP := startServer(b, append([]string{"--no-extension"}, permissive...)...)
	refs := map[*server]string{}
	for _, s := range []*server{viaExt, viaCDP} {
		s.call("navigate", map[string]any{"url": base + "/button"})
		m := buttonRef.FindStringSubmatch(resultText(s.call("snapshot", nil)))
		if m == nil {
			b.Fatal("no ref for the button in the snapshot")
		}
		refs[s] = m[1]
	}
	type sample struct{ sel, ref, eval []time.Duration }
	got := map[*server]*sample{viaExt: {}, viaCDP: {}}
	timed := func(s *server, tool string, args map[string]any) time.Duration {
		t0 := time.Now()
		s.call(tool, args)
		return time.Since(t0)
	}
	for b.Loop() {
		for _, s := range []*server{viaExt, viaCDP} {
			g := got[s]
			g.sel = append(g.sel, timed(s, "click", map[string]any{"selector": "#b", "changes": false}))
			g.ref = append(g.ref, timed(s, "click", map[string]any{"ref": refs[s], "changes": false}))
			g.eval = append(g.eval, timed(s, "eval", map[string]any{"expression": "1+1"}))
		}
	}
	for name, s := range map[string]*server{"extension": viaExt, "cdp": viaCDP} {
		g := got[s]
		sel, ref := median(g.sel), median(g.ref)
		b.ReportMetric(float64(sel.Microseconds())/1000, name+"-selector-ms")
		b.ReportMetric(float64(ref.Microseconds())/1000, name+"-ref-ms")
		b.ReportMetric(float64(median(g.eval).Microseconds())/1000, name+"-eval-ms")
		b.ReportMetric(float64(sel)/float64(ref), name+"-selector/ref")
	}
}

// buttonRef is the ref of the button page's button in a snapshot.
var buttonRef = regexp.MustCompile(`(?m)^ *([a-z]+[0-9]+) button count`)
