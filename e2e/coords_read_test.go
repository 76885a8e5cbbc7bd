package e2e

import (
	"strings"
	"testing"

	"github.com/chromegate/chromegate/internal/testkit"
)

// TestHoverHitNamesNeedRead: a key allowed only navigate and hover is
// refused get_text; hovering over the page at {x, y} must not read it for
// it either: the hit has its role and ref, no name (the page's words).
func TestHoverHitNamesNeedRead(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	site := newCoordsSite(t)
	dir := t.TempDir()
	narrow := createKey(t, dir, "narrow", "--allow-tools=navigate,hover")
	wide := createKey(t, dir, "wide")
	h := startHTTP(t, dir, resolverRules, "--policy="+frameablePolicy(t), "--allow-domain=allowed.test", "--enable-mutations")
	url := "http://allowed.test:" + site.port + "/coords"

	cs := h.connect(narrow, nil)
	mustOK(t, "navigate", mcpCall(t, cs, "navigate", map[string]any{"url": url}))
	if res := mcpCall(t, cs, "get_text", nil); !res.IsError {
		t.Fatal("get_text was allowed to a key of navigate,hover")
	}
	txt := resultText(mustOK(t, "hover", mcpCall(t, cs, "hover", map[string]any{"x": 100, "y": 60})))
	if strings.Contains(txt, "Buy now") {
		t.Errorf("a key that cannot read the page got its words from a hover: %s", short(txt))
	}
	if hit := hitOf(t, txt); hit["name"] != nil || hit["role"] != "button" {
		t.Errorf("hit %v, want the button without its name", hit)
	}

	// A key that can read the page still gets the name.
	cw := h.connect(wide, nil)
	mustOK(t, "navigate", mcpCall(t, cw, "navigate", map[string]any{"url": url}))
	if hit := hitOf(t, resultText(mustOK(t, "hover", mcpCall(t, cw, "hover", map[string]any{"x": 100, "y": 60})))); hit["name"] != "Buy now" {
		t.Errorf("a reading key's hit %v, want the name Buy now", hit)
	}
}
