package vault

import (
	"fmt"
	"strings"
)

// RefOpen starts a reference: <secret:NAME> stands for the value of the
// secret NAME, and <secret:> for the literal text "<secret:".
const RefOpen = "<secret:"

// Part is a piece of a text with references: literal Text, or the name of
// the Secret it refers to.
type Part struct {
	Text   string
	Secret string
}

// RefError is a malformed reference: where it starts (a byte offset) and
// what is wrong. It never quotes the text.
type RefError struct {
	Offset int
	Reason string
}

func (e *RefError) Error() string {
	return fmt.Sprintf("malformed secret reference at byte %d: %s; write <secret:NAME>, or <secret:> for the literal text \"<secret:\"", e.Offset, e.Reason)
}

// ParseRefs splits s into literal text and references. Every "<secret:"
// in s starts either a reference, <secret:NAME> (NAME as ValidName), or
// the escape <secret:>, which is the literal text "<secret:"; anything
// else is a *RefError, so that a typo never types half a reference. Other
// text, "<" and "secret:" included, is literal. Adjacent literal pieces are
// joined, and a text without references is one literal Part (none for "").
func ParseRefs(s string) ([]Part, error) {
	var parts []Part
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, Part{Text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; ; {
		j := strings.Index(s[i:], RefOpen)
		if j < 0 {
			lit.WriteString(s[i:])
			break
		}
		start := i + j
		lit.WriteString(s[i:start])
		rest := s[start+len(RefOpen):]
		end := strings.IndexByte(rest, '>')
		if end < 0 {
			return nil, &RefError{Offset: start, Reason: "no closing >"}
		}
		name := rest[:end]
		switch {
		case name == "":
			lit.WriteString(RefOpen)
		case !ValidName(name):
			return nil, &RefError{Offset: start, Reason: "a secret's name is letters, digits and _, starting with a letter or _"}
		default:
			flush()
			parts = append(parts, Part{Secret: name})
		}
		i = start + len(RefOpen) + end + 1
	}
	flush()
	return parts, nil
}

// HasRefs says whether s contains "<secret:" at all: a cheap test before
// ParseRefs.
func HasRefs(s string) bool { return strings.Contains(s, RefOpen) }
