package mcp

import "sync/atomic"

// The field rule (executor.SecretMark): a secret is a property of the field
// it was typed into, not a string to find. A text holding a secret goes in
// guarded (secretOrigin) and marks the field with fieldShown, its text with
// each secret as <secret:NAME>; every read of the field's value shows that
// mark from then on, edited or not. A plain fill, or a type that clears
// the field, on a server that holds secrets takes the mark off (Unmark):
// the field then holds only what the model typed. Taking a mark off costs
// a round trip to the page, so it is done only once the server marked a
// field (fieldMarks). Redaction (package vault)
// stays the second layer, for what a page copies where the browser cannot
// tell.

// fieldShown is what a field reads as once text, with its secrets' values
// expanded, is typed into it: text redacted, or "" when text holds no
// secret.
func (c *Call) fieldShown(text string) string {
	v := c.srv.opts.Secrets
	if v.Len() == 0 {
		return ""
	}
	if red := v.Redact(text); red != text {
		c.srv.marked.Store(true)
		return red
	}
	return ""
}

// fieldMarks is set once a field was marked: before that, no field of any
// page can hold a mark.
type fieldMarks struct{ atomic.Bool }

// unmarks says whether a plain text that replaces a field's content takes
// a secret's mark off it: once the server marked a field.
func (c *Call) unmarks() bool { return c.srv.marked.Load() }
