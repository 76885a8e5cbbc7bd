package cdp

import "testing"

// TestSetupCommandOfAnotherProgram: a program that embeds this package (the
// test binary here) is not chromegate, so the hint keeps the plain command
// rather than advertise its own path; chromegate's own binary is named by
// its path in the bundle and archive tests (e2e TestBundleFirstRun).
func TestSetupCommandOfAnotherProgram(t *testing.T) {
	if got := SetupCommand(); got != "chromegate setup" {
		t.Errorf("SetupCommand() = %q in a test binary, want chromegate setup", got)
	}
}
