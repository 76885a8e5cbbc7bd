package e2e

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/google/go-cmp/cmp"
)

// scriptsFixture is one page for TestPageScriptsAgree: visible text and
// text the eye cannot see (innerText leaves it out), a body taller than
// the screenshot cap, a button to take a ref of, and a title.
const scriptsFixture = `<!doctype html><title>Scripts fixture</title>
<style>body{margin:0} #tall{height:3000px;width:300px}</style>
<h1>Visible heading</h1>
<p>first line<br>second line</p>
<p hidden>hidden words</p>
<p style="display:none">undisplayed words</p>
<button id=go onclick="this.remove()">Go away</button>
<div id=tall></div>`

// TestPageScriptsAgree runs each page script the backends share
// (executor/scripts: text.js, dims.js, hastext.js, eval.js with
// jsonsafe.js, and the ref errors the server words for both) through the
// CDP backend and through the extension, on the same page, and wants the
// same answers.
func TestPageScriptsAgree(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, scriptsFixture)
	})
	url := "http://127.0.0.1:" + serveMux(t, mux) + "/"

	evals := []string{
		`1 + 1`,
		`undefined`,
		`[NaN, Infinity, -Infinity, 0.5, -0]`,
		`({a: undefined, b: null, f() {}, s: Symbol('x'), n: 3})`,
		`(() => { const o = {n: 1, list: [1]}; o.self = o; o.list.push(o.list); return o; })()`,
		`new Date(0)`,
		`[new Date(NaN), /a+b/g, new Error('boom'), new URL('https://example.com/x?y')]`,
		`[2n ** 3n, 2n ** 70n, -(2n ** 70n)]`,
		`document.body`,
		`new Map([[1, 2]])`,
		`() => ({called: true})`,
		`Promise.resolve(NaN)`,
		`let d = new Date(86400000); [d, NaN, 5n]`,
		`var cyc = [1]; cyc.push(cyc); cyc`,
		`throw new Error('boom')`,
		`noSuchVariable`,
	}

	answers := map[string]map[string]string{}
	for _, backend := range []struct{ name, flag, prefix string }{
		{"cdp", "--no-extension", "cdp:"},
		{"ext", "--with-extension", "ext:"},
	} {
		t.Run(backend.name, func(t *testing.T) {
			s := startServer(t, append([]string{backend.flag}, permissive...)...)
			got := map[string]string{}
			answers[backend.name] = got
			if id := firstTabID(t, resultText(s.call("navigate", map[string]any{"url": url}))); !strings.HasPrefix(id, backend.prefix) {
				t.Fatalf("navigate went through %s, want the %s backend", id, backend.name)
			}

			// text.js
			got["get_text"] = contentOf(t, resultText(s.call("get_text", nil)))

			// dims.js: a full page capped below the page's height says how
			// tall the page is.
			res := s.call("screenshot", map[string]any{"full_page": true, "max_height": 1000})
			cfg, _, _ := image1(t, res)
			got["screenshot full page"] = fmt.Sprintf("%d high; %s", cfg.Height, regexp.MustCompile(`"full_height":[0-9]+`).FindString(resultText(res)))

			// hastext.js: visible text is found, hidden text is not.
			for _, w := range []struct {
				text string
				gone bool
			}{{"second line", false}, {"hidden words", true}, {"undisplayed words", true}} {
				r := s.try("wait_for", map[string]any{"text": w.text, "gone": w.gone, "timeout_ms": 3000})
				got[fmt.Sprintf("wait_for %q gone=%v", w.text, w.gone)] = fmt.Sprint(r.IsError)
			}
			r := s.try("wait_for", map[string]any{"text": "hidden words", "timeout_ms": 1000})
			got["wait_for hidden text times out"] = fmt.Sprint(r.IsError && strings.Contains(resultText(r), "TIMEOUT"))

			// eval.js and jsonsafe.js
			for _, expr := range evals {
				got["eval "+expr] = string(structuredData(s.try("eval", map[string]any{"expression": expr})))
			}

			// The ref errors, worded by the server for both backends.
			_, outline := s.snapshotOf(nil)
			ref := refOf(t, outline, "button Go away")
			s.call("click", map[string]any{"ref": ref})
			got["click a removed ref"] = s.fail("REF_EXPIRED", "click", map[string]any{"ref": ref})
			got["click a never-issued ref"] = s.fail("BAD_ARGS", "click", map[string]any{"ref": "zz999"})
			s.call("navigate", map[string]any{"url": url + "?again"})
			got["click a ref of an earlier page"] = s.fail("REF_EXPIRED", "get_text", map[string]any{"ref": ref})
		})
	}
	cdpAnswers, extAnswers := answers["cdp"], answers["ext"]
	if cdpAnswers == nil || extAnswers == nil {
		t.Fatal("a backend did not answer")
	}
	// Each backend names its tabs its own way, and each ref wears its
	// document's own token.
	tabs := regexp.MustCompile(`(?:cdp|ext):[0-9a-f]+:[^"\s]+`)
	refs := regexp.MustCompile(`\b[a-z]{2,}[0-9]+\b`)
	norm := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = refs.ReplaceAllString(tabs.ReplaceAllString(v, "TAB"), "REF")
		}
		return out
	}
	if diff := cmp.Diff(norm(cdpAnswers), norm(extAnswers)); diff != "" {
		t.Errorf("the backends answer differently (-cdp +ext):\n%s", diff)
	}
	for _, want := range []string{`"value":["NaN","Infinity","-Infinity",0.5`, `"1180591620717411303424"`, `"1970-01-01T00:00:00.000Z"`, `"[Circular]"`} {
		found := false
		for _, v := range cdpAnswers {
			found = found || strings.Contains(v, want)
		}
		if !found {
			t.Errorf("no eval answer contains %s", want)
		}
	}
	if got := cdpAnswers["get_text"]; !strings.Contains(got, "second line") || strings.Contains(got, "hidden words") {
		t.Errorf("get_text: %q", got)
	}
	if got := cdpAnswers["screenshot full page"]; !strings.HasPrefix(got, "1000 high") || !strings.Contains(got, `"full_height":3`) {
		t.Errorf("capped full-page screenshot: %s", got)
	}
}
