package mcp

// The field rule (executor.SecretMark): a secret is a property of the field
// it was typed into, not a string to find. A text holding a secret goes in
// guarded (secretOrigin) and marks the field with fieldShown, its text with
// each secret as <secret:NAME>; every read of the field's value shows that
// mark from then on, edited or not. A plain fill, or a type that clears
// the field, on a server that holds secrets takes the mark off (Unmark):
// the field then holds only what the model typed. Redaction (package vault)
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
		return red
	}
	return ""
}

// unmarks says whether a plain text that replaces a field's content takes
// a secret's mark off it: only a server with secrets marks fields.
func (c *Call) unmarks() bool { return c.srv.opts.Secrets.Len() > 0 }
