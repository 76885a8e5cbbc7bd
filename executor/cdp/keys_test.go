package cdp

import (
	"errors"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/executor"
)

func TestCheckKey(t *testing.T) {
	for _, k := range []string{"Enter", "a", "A", "/", "+", "Shift++", "Control+Shift+KeyA", "ControlOrMeta+a", "F12", "PageDown", "Space", "Digit1"} {
		if err := checkKey(k); err != nil {
			t.Errorf("%q: %v", k, err)
		}
	}
	for _, k := range []string{"Entr", "PgDown", "Control+Shft+a", "é", "Esc", "enter"} {
		err := checkKey(k)
		var xe *executor.Error
		if !errors.As(err, &xe) || xe.Code != executor.CodeBadArgs {
			t.Errorf("%q: want BAD_ARGS, got %v", k, err)
			continue
		}
		if !strings.Contains(xe.Hint, "Enter, Tab") {
			t.Errorf("%q: the hint does not show what key names look like: %q", k, xe.Hint)
		}
	}
}

func TestKeyTypes(t *testing.T) {
	cases := []struct {
		key  string
		mods []string
		want bool
	}{
		{"a", nil, true}, {"KeyA", nil, true}, {"Digit1", nil, true}, {"Space", nil, true},
		{"Backspace", nil, true}, {"Delete", nil, true}, {"a", []string{"shift"}, true}, {"Shift+A", nil, true},
		{"Enter", nil, false}, {"Tab", nil, false}, {"ArrowDown", nil, false}, {"a", []string{"ctrl"}, false},
		{"Control+a", nil, false}, {"F5", nil, false}, {"NumpadEnter", nil, false},
	}
	for _, c := range cases {
		if got := keyTypes(c.key, c.mods); got != c.want {
			t.Errorf("keyTypes(%q, %v) = %v", c.key, c.mods, got)
		}
	}
}
