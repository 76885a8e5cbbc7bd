package wire

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/extension"
)

// TestMethodsMatchTheExtension compares the Go list of command methods with
// extension/methods.js (embedded, parsed by extension.Methods), in both
// directions and in order: a method the server sends that the extension
// lacks, or one the extension serves that the server never names, fails.
func TestMethodsMatchTheExtension(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(extension.Methods(), Methods()); diff != "" {
		t.Fatalf("wire.Methods differs from extension/methods.js (-js +go):\n%s", diff)
	}
}

// TestEventsMatchTheExtension: the events the server handles are exactly
// those the extension may send (extension/methods.js EVENTS).
func TestEventsMatchTheExtension(t *testing.T) {
	t.Parallel()
	if diff := cmp.Diff(extension.Events(), Events()); diff != "" {
		t.Fatalf("wire.Events differs from extension/methods.js (-js +go):\n%s", diff)
	}
}
