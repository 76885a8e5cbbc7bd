package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/executor"
)

// A console listing shows only what the caller may see: messages of an
// earlier page outside the policy and of a frame or script of a host the
// caller may not read are withheld and counted; an operator's secret a
// page logs is redacted like in every result.
func TestConsoleScreenedAndRedacted(t *testing.T) {
	t.Parallel()
	h := secretHarness(t, "https://login.test/a")
	f := h.fake()
	add := func(m executor.ConsoleMessage) {
		t.Helper()
		if err := f.AddConsole("", m); err != nil {
			t.Fatal(err)
		}
	}
	add(executor.ConsoleMessage{Text: "own page", URL: "https://login.test/app.js", Line: 1, Column: 2})
	add(executor.ConsoleMessage{Text: "inline script"})
	add(executor.ConsoleMessage{Text: "the password is " + testSecret})
	add(executor.ConsoleMessage{Text: "EVIL-FRAME", URL: "https://evil.test/widget.js"})
	add(executor.ConsoleMessage{Text: "EVIL-PAGE", Page: "https://evil.test/"})
	add(executor.ConsoleMessage{Text: "NAMELESS", Page: "about:blank"})
	add(executor.ConsoleMessage{Text: "allowed other page", Page: "https://other.test/"})

	res := h.call("console_messages", map[string]any{"navigations": 10})
	text := textOf(res)
	if res.IsError {
		t.Fatal(text)
	}
	for _, bad := range []string{"EVIL", "NAMELESS", testSecret} {
		if strings.Contains(text, bad) {
			t.Errorf("%q was shown:\n%s", bad, text)
		}
	}
	content, _, ok := Unfence(text)
	if !ok {
		t.Fatalf("not fenced:\n%s", text)
	}
	var out consoleOut
	if err := json.Unmarshal([]byte(content), &out); err != nil {
		t.Fatal(err)
	}
	if out.Total != 4 || out.Withheld != 3 || out.Note == "" {
		t.Errorf("total %d withheld %d note %q, want 4, 3 and a note", out.Total, out.Withheld, out.Note)
	}
	if out.Messages[0].Source != "https://login.test/app.js:1:2" || out.Messages[3].Page != "https://other.test/" {
		t.Errorf("messages: %+v", out.Messages)
	}
	if !strings.Contains(text, "the password is <secret:PASSWORD>") {
		t.Errorf("the secret is not redacted to its reference:\n%s", text)
	}
}

// A pdf call's arguments are checked before the backend prints anything.
func TestPDFBadArgs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for _, args := range []map[string]any{{"scale": 2.5}, {"ranges": "1;2"}, {"format": "B5"}, {"max_bytes": 0}} {
		if res := h.call("pdf", args); !res.IsError || !strings.Contains(textOf(res), "BAD_ARGS") {
			t.Errorf("%v: %s", args, textOf(res))
		}
	}
	for _, c := range h.fake().Calls() {
		if c.Method == "PDF" {
			t.Errorf("the backend was asked to print: %+v", c)
		}
	}
}
