package executor

import (
	_ "embed"
	"regexp"
	"strings"
)

// refsScript is the ref registry every backend's scripts share (see
// scripts/refs.js), without its leading comment.
//
//go:embed scripts/refs.js
var refsScript string

//go:embed scripts/element.js
var elementScript string

// ElementScript acts on the element a ref names, for a backend (see
// scripts/element.js for its operations). It is composed with the
// registry and with SelectScript (as chromegateSelect), ready for
// ScriptParams.Source.
var ElementScript = "(() => {\nconst chromegateSelect = (" + SelectScript + ");\nconst chromegateGuarded = (" + GuardedScript + ");\nreturn " + WithRefs(stripComments(elementScript)) + ";\n})()"

// WithRefs composes a page script (an expression whose value is a
// function, as ScriptParams.Source) with the ref registry: inside it,
// chromegateRefs(env) returns the document's registry, with refFor(el),
// lookup(ref) and prune().
func WithRefs(source string) string {
	return "(() => {\n" + stripComments(refsScript) + "\nreturn (\n" + source + "\n);\n})()"
}

// stripComments drops a script's leading comment lines, which would
// otherwise travel with every call.
func stripComments(src string) string {
	lines := strings.Split(src, "\n")
	for len(lines) > 0 && strings.HasPrefix(strings.TrimSpace(lines[0]), "//") {
		lines = lines[1:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

var refPattern = regexp.MustCompile(`^[a-z]+[0-9]+$`)

// ValidRef reports whether ref has the shape of a ref (letters, then
// digits: "kq12"), so a malformed one is refused before any browser call.
func ValidRef(ref string) bool { return refPattern.MatchString(ref) }

// RefError turns a registry lookup failure ("malformed", "expired" with
// why "navigated" or "removed", "unknown") into the contract's error.
func RefError(ref, failure, why string) *Error {
	switch failure {
	case "expired":
		if why == "removed" {
			return Errorf(CodeRefExpired, "ref %s: its element was removed from the page", ref).
				WithHint("the page changed; take a new snapshot and use a current ref")
		}
		return Errorf(CodeRefExpired, "ref %s is from an earlier page: the tab navigated since it was issued", ref).
			WithHint("take a new snapshot and use a current ref")
	case "unknown":
		return Errorf(CodeBadArgs, "ref %s was never issued on this page (refs come from snapshot or query)", ref).
			WithHint("take a new snapshot and use a ref from it")
	}
	if regexp.MustCompile(`^[0-9]+$`).MatchString(ref) {
		return Errorf(CodeBadArgs, "%q is not a ref: in a snapshot's \"links (ref kq+number):\" list, the ref is the letters and the number, kq%s", ref, ref).
			WithHint("put the list's letters before the number")
	}
	return Errorf(CodeBadArgs, "%q is not a ref (refs look like kq12)", ref).
		WithHint("take a new snapshot and use a ref from it, or pass a selector")
}

//go:embed scripts/frame.js
var frameScript string

// FrameScript is what a backend runs to route refs and points through
// frames of other origins (see scripts/frame.js), composed with the
// registry.
var FrameScript = WithRefs(stripComments(frameScript))
