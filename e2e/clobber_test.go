package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// TestClobberedForm is a page that names its controls after the DOM
// properties and methods chromegate's scripts read (tagName,
// getAttribute, childNodes, hidden, ownerDocument, submit, requestSubmit
// …): named access makes them the form's properties in every world, the
// isolated one too. The page tries to blank its form out of the outline,
// or make every read and act on it fail; each tool still sees and works
// the form as it is.
func TestClobberedForm(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	s := startServer(t, permissive...)
	base := "http://127.0.0.1:" + snapshotSite(t)
	s.call("navigate", map[string]any{"url": base + "/snapshot/clobber.html"})
	_, outline := s.snapshotOf(nil)
	for _, want := range []string{"form Clobbered", "textbox Tag name", "textbox Scroll into view", "button Send it", "form Search here", "textbox Search words", `"The paragraph after the form."`, "button Last"} {
		if !strings.Contains(outline, want) {
			t.Errorf("the outline lost %q:\n%s", want, outline)
		}
	}
	if strings.Contains(outline, "[object ") {
		t.Errorf("a control, not a property, reached the outline:\n%s", outline)
	}
	tag, send := refOf(t, outline, "textbox Tag name"), refOf(t, outline, "button Send it")

	t.Run("scoped snapshot and text of the form", func(t *testing.T) {
		s.t = t
		_, scoped := s.snapshotOf(map[string]any{"selector": "form"})
		if !strings.Contains(scoped, "textbox Get attribute") || !strings.Contains(scoped, "button Send it") {
			t.Errorf("the form's own snapshot:\n%s", scoped)
		}
		if txt := resultText(s.call("query", map[string]any{"selector": "form"})); !strings.Contains(txt, `"form"`) || strings.Contains(txt, "[object ") {
			t.Errorf("query form: %s", txt)
		}
	})
	t.Run("act in the form by ref", func(t *testing.T) {
		s.t = t
		s.call("fill", map[string]any{"ref": tag, "value": "typed here"})
		s.call("click", map[string]any{"ref": send})
		if got := s.evalString(`document.querySelector('[name=submit][type=button]').textContent`); got != "Sent: typed here" {
			t.Errorf("fill then click in a clobbered form: %q", got)
		}
	})
	t.Run("fill_form submits a form whose submit and requestSubmit are controls", func(t *testing.T) {
		s.t = t
		res := s.call("fill_form", map[string]any{"fields": []any{map[string]any{"ref": refOf(t, outline, "textbox Search words"), "value": "needle"}}, "submit": true})
		if txt := resultText(res); strings.Contains(txt, "[object ") {
			t.Errorf("fill_form: %s", txt)
		}
		waitFor(t, 20*time.Second, func() bool {
			res := s.try("eval", map[string]any{"expression": "location.search"})
			txt := resultText(res)
			return !res.IsError && strings.Contains(txt, `"?q=needle`) && strings.Contains(txt, "requestSubmit=1")
		})
	})
}
