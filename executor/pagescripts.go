package executor

import _ "embed"

// Page scripts every backend runs the same way: the CDP backend evaluates
// them itself, the extension receives them in welcome (ExtensionScripts),
// so neither keeps a copy of its own.
var (
	//go:embed scripts/clipboard.js
	clipboardScript string
	//go:embed scripts/scrollsettle.js
	scrollSettleScript string
	//go:embed scripts/scrollpos.js
	scrollPosScript string
	//go:embed scripts/text.js
	textScript string
	//go:embed scripts/dims.js
	dimsScript string
	//go:embed scripts/hastext.js
	hasTextScript string
	//go:embed scripts/eval.js
	evalScript string
	//go:embed scripts/jsonsafe.js
	jsonSafeScript string
	//go:embed scripts/select.js
	selectScript string
	//go:embed scripts/insert.js
	insertScript string

	// ClipboardScript is a function (text) that writes text to the
	// clipboard from the page, falling back to execCommand('copy'); it
	// returns the method that worked.
	ClipboardScript = stripComments(clipboardScript)
	// ScrollSettleScript is a function ([x, y]) that resolves, after a
	// wheel, once the scroll position left (x, y) and held still.
	ScrollSettleScript = stripComments(scrollSettleScript)
	// ScrollPosScript is a function () returning the scroll position [x, y].
	ScrollPosScript = stripComments(scrollPosScript)
	// TextScript is a function () returning [the page's visible text, its
	// title].
	TextScript = stripComments(textScript)
	// DimsScript is a function () returning the document's scroll size
	// and the device scale [width, height, devicePixelRatio], in CSS pixels.
	DimsScript = stripComments(dimsScript)
	// HasTextScript is a function (text) reporting whether the page's
	// visible text contains text.
	HasTextScript = stripComments(hasTextScript)
	// EvalScript is a function (opts, thunk, safe) that runs an eval's
	// expression (thunk) and returns {v: its JSON-safe value, t: the
	// title}; EvalSource composes it.
	EvalScript = stripComments(evalScript)
	// JSONSafeScript is a function (value) returning value made JSON-safe
	// (NaN, the infinities, BigInts, Dates, cycles); eval's value and a
	// bare evaluation's both go through it.
	JSONSafeScript = stripComments(jsonSafeScript)
	// SelectScript is a function (element, wanted) that does a
	// select_option: matches the wanted values or shown labels (a cut
	// label "…" by its prefix), selects, and fires input and change; see
	// scripts/select.js. ElementScript composes it for refs and the
	// extension.
	SelectScript = stripComments(selectScript)
	// InsertScript is a function (element, {text, origin, replace,
	// shown}) that inserts a text holding a secret into element in one
	// step, only while its document is of origin and it holds the focus
	// (see TypeParams.OnlyOrigin), and marks the element (SecretMark); or
	// (element, {unmark: true}) that takes the mark off. It is composed
	// with the ref registry, whose file keeps the marks.
	InsertScript = WithRefs(stripComments(insertScript))
)

// EvalSource is the function (opts) that evaluates expr for eval, opts
// being {awaitPromise, timeoutMs}: EvalScript given expr (on lines of its
// own, so a trailing // comment cannot eat the rest) and JSONSafeScript.
// The extension composes the same from the scripts of welcome.
func EvalSource(expr string) string {
	return "(opts) => (" + EvalScript + ")(opts, () => (\n" + expr + "\n), " + JSONSafeScript + ")"
}

// ExtensionScripts are the page scripts the bridge hands the extension in
// welcome, by the names its executor asks for.
func ExtensionScripts() map[string]string {
	return map[string]string{
		"element":      ElementScript,
		"webmcp":       PageToolsScript(),
		"clipboard":    ClipboardScript,
		"scrollsettle": ScrollSettleScript,
		"scrollpos":    ScrollPosScript,
		"text":         TextScript,
		"dims":         DimsScript,
		"hastext":      HasTextScript,
		"eval":         EvalScript,
		"jsonsafe":     JSONSafeScript,
		"insert":       InsertScript,
		"frame":        FrameScript,
		"point":        PointScript,
	}
}
