package cdp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
)

func runScript(t *testing.T, s *Session, tab, source string, arg any) string {
	t.Helper()
	raw, _ := json.Marshal(arg)
	r, err := s.RunScript(ctxFor(t, 10*time.Second), executor.ScriptParams{TabID: tab, Source: source, Arg: raw})
	if err != nil {
		t.Fatalf("RunScript(%s): %v", source, err)
	}
	return string(r.Value)
}

func TestRunScriptIsolatedWorld(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/")

	// The argument arrives parsed, the result returns as JSON, promises are
	// awaited, and env carries the document token.
	if got := runScript(t, s, tab, `async (a) => ({sum: a.x + a.y, title: document.title})`, map[string]int{"x": 2, "y": 3}); got != `{"sum":5,"title":"Home"}` {
		t.Errorf("result = %s", got)
	}
	if got := runScript(t, s, tab, `() => undefined`, nil); got != "null" {
		t.Errorf("undefined = %s", got)
	}
	doc := runScript(t, s, tab, `(arg, env) => env.doc`, nil)
	if len(doc) < 4 { // a JSON string of at least two letters
		t.Errorf("env.doc = %s", doc)
	}

	// State persists within a document.
	runScript(t, s, tab, `() => { globalThis.registry = {secret: 42}; }`, nil)
	if got := runScript(t, s, tab, `() => globalThis.registry && globalThis.registry.secret`, nil); got != "42" {
		t.Errorf("registry in the same document = %s", got)
	}
	// The page sees none of it and cannot forge it.
	if got := evalJSON(t, s, tab, `typeof globalThis.registry`); got != `"undefined"` {
		t.Errorf("the page sees the registry: %s", got)
	}
	evalJSON(t, s, tab, `(globalThis.registry = {secret: 666}, Object.defineProperty(Object.prototype, 'secret', {get() { return 7; }, configurable: true}), 1)`)
	if got := runScript(t, s, tab, `() => [globalThis.registry.secret, ({}).secret === undefined]`, nil); got != `[42,true]` {
		t.Errorf("the page reached the isolated world: %s", got)
	}
	// The DOM is shared: the isolated world reads what the page wrote.
	evalJSON(t, s, tab, `(document.body.dataset.x = 'from page', 1)`)
	if got := runScript(t, s, tab, `() => document.body.dataset.x`, nil); got != `"from page"` {
		t.Errorf("DOM from the isolated world = %s", got)
	}
	if got := runScript(t, s, tab, `(a, env) => env.doc`, nil); got != doc {
		t.Errorf("document token changed within a document: %s then %s", doc, got)
	}

	// A same-document navigation keeps the document, its global and its
	// token.
	evalJSON(t, s, tab, `(history.pushState({}, '', '#moved'), 1)`)
	if got := runScript(t, s, tab, `(a, env) => [globalThis.registry.secret, location.hash]`, nil); got != `[42,"#moved"]` {
		t.Errorf("registry after pushState: %s", got)
	}

	// A navigation brings a fresh global and a new token.
	if _, err := s.Navigate(ctxFor(t, 10*time.Second), executor.NavigateParams{TabID: tab, URL: srv.URL + "/form"}); err != nil {
		t.Fatal(err)
	}
	if got := runScript(t, s, tab, `() => typeof globalThis.registry`, nil); got != `"undefined"` {
		t.Errorf("registry after navigation: %s", got)
	}
	if got := runScript(t, s, tab, `(a, env) => env.doc`, nil); got == doc {
		t.Errorf("document token %s reused after navigation", got)
	}
	// Reload is a new document too.
	runScript(t, s, tab, `() => { globalThis.mark = 1; }`, nil)
	if _, err := s.Reload(ctxFor(t, 10*time.Second), executor.HistoryParams{TabID: tab}); err != nil {
		t.Fatal(err)
	}
	if got := runScript(t, s, tab, `() => typeof globalThis.mark`, nil); got != `"undefined"` {
		t.Errorf("global after reload: %s", got)
	}

	// A script that throws is EVAL_FAILED with the exception's message.
	_, err := s.RunScript(ctxFor(t, 5*time.Second), executor.ScriptParams{TabID: tab, Source: `() => { throw new Error('boom'); }`})
	if e := wantCode(t, err, executor.CodeEvalFailed); !strings.Contains(e.Message, "boom") {
		t.Errorf("exception message: %v", e)
	}
	_, err = s.RunScript(ctxFor(t, 5*time.Second), executor.ScriptParams{TabID: tab, Source: `() => 1`, Arg: json.RawMessage(`{`)})
	wantCode(t, err, executor.CodeBadArgs)
}

// The world's CDP session must not disturb what Playwright does on the
// page: a download after a script once crashed the driver (Page.enable on
// the second session).
func TestRunScriptThenDownload(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/dlpage")
	runScript(t, s, tab, `() => 1`, nil)
	if _, err := s.Download(ctxFor(t, 10*time.Second), executor.DownloadParams{TabID: tab, Target: executor.Target{Selector: "#dl"}, Filename: "after-script.txt"}); err != nil { // its own name: TestDownload checks the default one
		t.Fatal(err)
	}
	if got := runScript(t, s, tab, `() => 2`, nil); got != "2" {
		t.Errorf("script after a download: %s", got)
	}
}

func TestDocToken(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for n := range uint64(26 * 26 * 3) {
		tok := docToken(n)
		if seen[tok] || len(tok) < 2 {
			t.Fatalf("docToken(%d) = %q repeats or is short", n, tok)
		}
		seen[tok] = true
	}
}
