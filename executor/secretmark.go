package executor

// SecretMark is the rule of a field that holds an operator's secret: a
// secret is a property of the field it was typed into, not a string to
// find. Once type, fill or fill_form (or a plugin's step) inserted a secret
// into an element (TypeParams.OnlyOrigin), the element is marked with what
// it shows (TypeParams.Shown: its text with each secret as <secret:NAME>),
// and every read of chromegate that shows an element's value (the outline
// of snapshot and so of changes, query) shows the mark instead, edited or
// not (Home then Delete, a selection typed over), until a plain value
// replaces it through chromegate (fill, or type with clear: Unmark) or the
// element is gone. A hidden input of the same form that holds a value reads
// as the mark too (a page that copies the field into one).
//
// The marks live in chromegate's isolated world (a WeakMap from element
// to mark, scripts/refs.js), on both backends, where the page can neither
// read, forge nor remove one. What a page copies where the browser cannot
// tell (its text, a request, a value read by eval) is the string layer's:
// the vault's redaction of every run of six characters of a secret.
const SecretMark = "chromegateSecretFields"
