package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
)

// Answer budgets (issue [lean]): what a model reads of the everyday
// answers, on a real browser. A change that grows them fails here, with
// the numbers printed, so that it is a decision in review.
const (
	// maxPlainFill bounds a fill of a text field that changes nothing
	// but the field.
	maxPlainFill = 120
	// maxFenceOverhead bounds what a fenced result carries besides the
	// page's own content: the two markers and their line ends.
	maxFenceOverhead = 60
)

// leanPage is a form like the peers bench's: a heading, a button that
// changes nothing visible, a text field, a select and some text.
const leanPage = `<!doctype html><html><head><meta charset="utf-8"><title>Lean</title></head><body>
<h1>Lean</h1><button id="b" onclick="this.dataset.n=(+this.dataset.n||0)+1">count</button>
<label>Text <input id="t" type="text"></label>
<select id="s"><option>a</option><option>b</option></select>
<p>Some text to read.</p><a href="/lean?next">next</a></body></html>`

// TestAnswerBudget drives the everyday calls on a real page and holds
// their answers to the budget: a plain fill, a click that changes nothing
// visible, eval of 1+1, a read; and the fence costs its markers alone.
func TestAnswerBudget(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/lean", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, leanPage)
	})
	base := "http://127.0.0.1:" + serveMux(t, mux)
	s := startServer(t, "--allow-domain=127.0.0.1", "--enable-mutations", "--unsafe-enable-eval")

	type answer struct {
		op, text string
	}
	var answers []answer
	call := func(op, tool string, args map[string]any) string {
		t.Helper()
		txt := resultText(s.call(tool, args))
		answers = append(answers, answer{op, txt})
		return txt
	}
	call("navigate", "navigate", map[string]any{"url": base + "/lean"})
	fill := call("fill (first on the page)", "fill", map[string]any{"selector": "#t", "value": "hello"})
	call("fill again", "fill", map[string]any{"selector": "#t", "value": "hello world"})
	click := call("click, nothing visible changes", "click", map[string]any{"selector": "#b"})
	eval := call("eval 1+1", "eval", map[string]any{"expression": "1+1"})
	sel := call("select_option", "select_option", map[string]any{"selector": "#s", "values": []string{"b"}})
	read := call("get_text h1", "get_text", map[string]any{"selector": "h1"})
	nav := call("click a link", "click", map[string]any{"selector": "a"})

	var b strings.Builder
	for _, a := range answers {
		fmt.Fprintf(&b, "  %-32s %4d  %q\n", a.op, utf8.RuneCountInString(a.text), short(a.text))
	}
	t.Logf("answers, characters a model reads:\n%s", b.String())

	if n := utf8.RuneCountInString(fill); n > maxPlainFill {
		t.Errorf("a plain fill answers in %d characters, over the budget of %d:\n%s", n, maxPlainFill, fill)
	}
	if !strings.Contains(fill, `value="hello"`) || strings.Contains(fill, "tab_id") || strings.Contains(fill, "Lean") {
		t.Errorf("a plain fill should say the field's new value, and nothing the navigation said:\n%s", fill)
	}
	if click != "{}" {
		t.Errorf("a click that changes nothing visible answers %q, want {}", click)
	}
	if eval != "2" {
		t.Errorf("eval of 1+1 answers %q, want 2", eval)
	}
	if !strings.Contains(sel, `value="b"`) {
		t.Errorf("select_option does not say the select's new value:\n%s", sel)
	}
	if !strings.Contains(nav, "/lean?next") || !strings.Contains(nav, "link next") {
		t.Errorf("a click that loads a page should give its url and outline:\n%s", nav)
	}
	// Everything a fenced result carries besides the page's own words:
	// the markers, the head, the line ends.
	content, after, ok := mcp.Unfence(read)
	if !ok || after != "" {
		t.Fatalf("get_text is not one fenced block:\n%s", read)
	}
	overhead := utf8.RuneCountInString(read) - utf8.RuneCountInString("Lean")
	t.Logf("fence overhead per result: %d characters (budget %d)", overhead, maxFenceOverhead)
	if overhead > maxFenceOverhead {
		t.Errorf("the fence costs %d characters, over the budget of %d:\n%s", overhead, maxFenceOverhead, read)
	}
	if !strings.HasSuffix(content, "\nLean") {
		t.Errorf("get_text: %q", content)
	}
}
