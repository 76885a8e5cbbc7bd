package executor

import (
	_ "embed"
	"strings"
)

//go:embed scripts/selectorpoint.js
var selectorPointScript string

//go:embed scripts/guarded.js
var guardedScript string

// GuardedScript is a function () returning the outcome of the click the
// element script's point op guarded, {verdict, page}, and ending the
// guard (see scripts/guarded.js); ElementScript's op "guarded" is the same.
var GuardedScript = stripComments(guardedScript)

// SelectorPointScript finds where a click on a plain CSS selector's
// element goes, in the isolated world, with a ref's checks (see
// scripts/selectorpoint.js): {x, y, ref}, {fallback} for the backend's own
// selector engine, or element.js's {error, why}. Ready for
// ScriptParams.Source.
var SelectorPointScript = WithRefs("(" + stripComments(selectorPointScript) + ")(" + ElementScript + ")")

// FastSelector reports whether sel may take SelectorPointScript's path:
// not a chain (">>", whose parts Playwright resolves one inside another)
// and not using :has(), which Playwright evaluates through shadow roots
// and the browser does not (nor escapes, which could spell it). Anything
// else the browser's CSS parser refuses falls back in the page.
func FastSelector(sel string) bool {
	s := strings.ToLower(sel)
	return sel != "" && !strings.Contains(s, ">>") && !strings.Contains(s, ":has(") && !strings.Contains(s, `\`)
}
