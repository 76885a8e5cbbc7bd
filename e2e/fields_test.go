package e2e

import (
	"strings"
	"testing"

	"github.com/chromegate/chromegate/internal/testkit"
)

// TestKeysAndFields: a key name Playwright and the extension cannot press
// is BAD_ARGS at once, naming the key, before any element is waited for;
// typing, filling or pressing a typing key into a disabled or read-only
// field is BAD_ARGS rather than a success that changed nothing.
func TestKeysAndFields(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	base := site(t)
	s := startServer(t, permissive...)
	s.call("navigate", map[string]any{"url": base + "/fields"})
	_, outline := s.snapshotOf(nil)
	roRef := refOf(t, outline, "Read-only")

	cases := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		// With a selector that matches nothing: before any waiting, the key.
		{"unknown key", "press", map[string]any{"key": "Entr", "selector": "#nothing-here", "timeout_ms": 3000}, `"Entr"`},
		{"unknown key in a combo", "press", map[string]any{"key": "Control+Shft+a"}, `"Shft"`},
		{"unknown key, no target", "press", map[string]any{"key": "PgDown"}, "Enter, Tab"},
		{"type into a disabled field", "type", map[string]any{"selector": "#off", "text": "x", "timeout_ms": 3000}, "disabled"},
		{"type into a read-only field", "type", map[string]any{"selector": "#ro", "text": "x", "timeout_ms": 3000}, "read-only"},
		{"type into a read-only textarea", "type", map[string]any{"selector": "#rotext", "text": "x", "timeout_ms": 3000}, "read-only"},
		{"type into a read-only field by ref", "type", map[string]any{"ref": roRef, "text": "x"}, "read-only"},
		{"clear a read-only field", "type", map[string]any{"selector": "#ro", "text": "x", "clear": true, "timeout_ms": 3000}, "read-only"},
		{"fill a disabled field", "fill", map[string]any{"selector": "#off", "value": "x", "timeout_ms": 3000}, "disabled"},
		{"fill a read-only field", "fill", map[string]any{"selector": "#ro", "value": "x", "timeout_ms": 3000}, "read-only"},
		{"press a character into a read-only field", "press", map[string]any{"selector": "#ro", "key": "a", "timeout_ms": 3000}, "read-only"},
		{"press Backspace in a read-only field by ref", "press", map[string]any{"ref": roRef, "key": "Backspace"}, "read-only"},
		{"press a key on a disabled field", "press", map[string]any{"selector": "#off", "key": "Tab", "timeout_ms": 3000}, "disabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s.t = t
			txt := s.fail("BAD_ARGS", c.tool, c.args)
			if !strings.Contains(txt, c.want) {
				t.Fatalf("error text lacks %q: %s", c.want, txt)
			}
		})
	}
	s.t = t
	if got := s.evalString(`[off.value, ro.value, rotext.value, ro.dataset.keys || ''].join('|')`); got != "locked|fixed|kept|" {
		t.Fatalf("the fields changed or took keys: %q", got)
	}
	// What a read-only field does take still works: Tab and Enter.
	s.call("press", map[string]any{"selector": "#ro", "key": "Tab"})
	s.call("press", map[string]any{"ref": roRef, "key": "Enter"})
	s.call("type", map[string]any{"selector": "#open", "text": "ok"})
	if got := s.evalString(`[ro.dataset.keys, document.getElementById("open").value].join('|')`); got != "Tab,Enter|ok" && got != "TabEnter|ok" {
		t.Fatalf("keys a read-only field takes, and an open field: %q", got)
	}
}
