package cdp

import (
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// keyNames are the names Playwright's keyboard knows besides one
// character of the US layout (usKeyboardLayout.ts of Playwright 1.60: the
// codes, the aliases, and ControlOrMeta). Playwright throws on any other
// only once the action runs, after a Locator has waited for its element;
// press checks the name first so that a wrong one is BAD_ARGS at once.
var keyNames = setOf(strings.Fields(`Alt AltGraph AltLeft AltRight ArrowDown ArrowLeft ArrowRight ArrowUp
	AudioVolumeDown AudioVolumeMute AudioVolumeUp Backquote Backslash Backspace BracketLeft BracketRight
	CapsLock Comma ContextMenu Control ControlLeft ControlOrMeta ControlRight Delete
	Digit0 Digit1 Digit2 Digit3 Digit4 Digit5 Digit6 Digit7 Digit8 Digit9 End Enter Equal Escape
	F1 F2 F3 F4 F5 F6 F7 F8 F9 F10 F11 F12 Home Insert
	KeyA KeyB KeyC KeyD KeyE KeyF KeyG KeyH KeyI KeyJ KeyK KeyL KeyM KeyN KeyO KeyP KeyQ KeyR KeyS KeyT
	KeyU KeyV KeyW KeyX KeyY KeyZ MediaPlayPause MediaTrackNext MediaTrackPrevious Meta MetaLeft MetaRight
	Minus NumLock Numpad0 Numpad1 Numpad2 Numpad3 Numpad4 Numpad5 Numpad6 Numpad7 Numpad8 Numpad9
	NumpadAdd NumpadDecimal NumpadDivide NumpadEnter NumpadMultiply NumpadSubtract PageDown PageUp Pause
	Period PrintScreen Quote ScrollLock Semicolon Shift ShiftLeft ShiftRight Slash Space Tab`))

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// validKey reports whether Playwright can press name: a key name, or one
// printable ASCII character (the US layout's characters).
func validKey(name string) bool {
	if keyNames[name] {
		return true
	}
	return len(name) == 1 && (name[0] >= ' ' && name[0] <= '~' || name[0] == '\n' || name[0] == '\r')
}

// comboKeys splits a key the way Playwright reads it ("Control+Shift+A",
// "+" alone is a key, "Shift++" is Shift and "+").
func comboKeys(key string) []string {
	if key == "+" {
		return []string{"+"}
	}
	parts := strings.Split(key, "+")
	if n := len(parts); n > 1 && parts[n-1] == "" {
		parts = append(parts[:n-2], "+")
	}
	return parts
}

// checkKey answers BAD_ARGS for a key Playwright cannot press, naming it
// and saying what names look like.
func checkKey(key string) error {
	for _, k := range comboKeys(key) {
		if !validKey(k) {
			return executor.Errorf(executor.CodeBadArgs, "key %q is not a key name", k).
				WithHint("use a key name such as Enter, Tab, Escape, ArrowDown, Backspace, Delete, PageDown, F5, Space, KeyA or Digit1, or one character such as a, A or /; to enter text use type")
		}
	}
	return nil
}

// keyTypes reports whether pressing key with modifiers would type or
// delete text in a field (a character, Space, Backspace, Delete, with no
// modifier but Shift), as opposed to a key a read-only field also takes
// (Tab, Enter, arrows, shortcuts).
func keyTypes(key string, modifiers []string) bool {
	for _, m := range modifiers {
		if name := modifierNames[strings.ToLower(m)]; name != "Shift" {
			return false
		}
	}
	parts := comboKeys(key)
	for _, m := range parts[:len(parts)-1] {
		if m != "Shift" && m != "ShiftLeft" && m != "ShiftRight" {
			return false
		}
	}
	k := parts[len(parts)-1]
	switch {
	case k == "\n" || k == "\r":
		return false
	case len(k) == 1, k == "Space", k == "Backspace", k == "Delete":
		return true
	case strings.HasPrefix(k, "Key"), strings.HasPrefix(k, "Digit"), strings.HasPrefix(k, "Numpad") && k != "NumpadEnter":
		return true
	}
	return false
}

// fieldCheck fails at once when the target is a field that cannot take
// what the action would do: a disabled element takes no keys at all, a
// read-only one no text (text). Left to Playwright, type and press would
// send their keys into nothing and report success, and fill and clear
// would wait for the field to change until the call's deadline. An element
// that is not a field (a div with key handlers, a contenteditable) passes.
func (c *call) fieldCheck(loc playwright.Locator, t executor.Target, what string, text bool) error {
	disabled, err := loc.IsDisabled(playwright.LocatorIsDisabledOptions{Timeout: c.to()})
	if err != nil {
		return err // not found: targetErr says so
	}
	if disabled {
		return executor.Errorf(executor.CodeBadArgs, "%s on %s: the element is disabled", what, t).
			WithHint("a disabled field takes no input; enable it first (a checkbox, a previous step) or pick another element")
	}
	if !text {
		return nil
	}
	editable, err := loc.IsEditable(playwright.LocatorIsEditableOptions{Timeout: c.to()})
	if err != nil || editable {
		// err: not a field Playwright can judge (it throws for any element
		// that is not an input, textarea, select or contenteditable).
		return nil
	}
	return executor.Errorf(executor.CodeBadArgs, "%s on %s: the element is read-only", what, t).
		WithHint("a read-only field takes no text; pick another element")
}
