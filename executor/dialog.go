package executor

import (
	"fmt"
	"strings"
)

// DialogArticle is "an alert", "a confirm", ...: a dialog's type in a
// sentence.
func DialogArticle(typ string) string {
	if typ == "alert" {
		return "an alert"
	}
	return "a " + typ
}

// DialogHint says what to call next about a dialog open on tab id; what
// is the call that met it ("" for none).
func DialogHint(id, typ, what string) string {
	h := fmt.Sprintf("answer it: dialog_answer {tab_id: %q, accept: true|false}", id)
	if typ == "prompt" {
		h += " (prompt_text to type an answer)"
	}
	if typ == "beforeunload" {
		h += "; accept leaves the page and lets the navigation go on, dismiss stays"
	}
	if what != "" {
		h += "; then call " + strings.Fields(what)[0] + " again if it is still needed"
	}
	return h
}

// DialogWords is a dialog's words as a fenced note shows them.
func DialogWords(d Dialog) string {
	if d.Type == "prompt" && d.Default != "" {
		return fmt.Sprintf("%s: %q (default %q)", d.Type, d.Message, d.Default)
	}
	return fmt.Sprintf("%s: %q", d.Type, d.Message)
}
