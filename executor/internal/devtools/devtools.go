// Package devtools reads the raw replies of the Chrome DevTools Protocol
// the way every backend needs them: a field deep in a decoded reply, an
// exception's one-line text, and whether an error means the execution
// context went away with its document.
package devtools

import "strings"

// Dig follows path through nested JSON objects decoded as map[string]any;
// nil when any step is missing.
func Dig(v any, path ...string) any {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// ExceptionText is the first line of an exceptionDetails' description,
// else its text.
func ExceptionText(ex map[string]any) string {
	if d, ok := Dig(ex, "exception", "description").(string); ok && d != "" {
		if i := strings.IndexByte(d, '\n'); i >= 0 {
			d = d[:i]
		}
		return d
	}
	t, _ := ex["text"].(string)
	return t
}

// ContextGone recognises the protocol's errors for an execution context
// that no longer exists (the document it belonged to was replaced).
func ContextGone(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find context") || strings.Contains(s, "Execution context was destroyed") ||
		strings.Contains(s, "Cannot find default execution context") || strings.Contains(s, "Inspected target navigated or closed")
}
