package executor

import _ "embed"

// Page scripts every backend runs the same way: the CDP backend evaluates
// them itself, the extension receives them in welcome, so neither keeps a
// copy of its own.
var (
	//go:embed scripts/clipboard.js
	clipboardScript string
	//go:embed scripts/scrollsettle.js
	scrollSettleScript string

	// ClipboardScript is a function (text) that writes text to the
	// clipboard from the page, falling back to execCommand('copy'); it
	// returns the method that worked.
	ClipboardScript = stripComments(clipboardScript)
	// ScrollSettleScript is a function ([x, y]) that resolves, after a
	// wheel, once the scroll position left (x, y) and held still.
	ScrollSettleScript = stripComments(scrollSettleScript)
)

// ExtensionScripts are the page scripts the bridge hands the extension in
// welcome, by the names its executor asks for.
func ExtensionScripts() map[string]string {
	return map[string]string{
		"element":      ElementScript,
		"webmcp":       PageToolsScript(),
		"clipboard":    ClipboardScript,
		"scrollsettle": ScrollSettleScript,
	}
}
