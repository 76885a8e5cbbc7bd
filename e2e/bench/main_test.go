//go:build peers

package bench

import (
	"os"
	"testing"

	"github.com/chromegate/chromegate/executor/cdp"
)

// TestMain points every server of a benchmark at the same browser.
// chromegate would otherwise launch the headless shell where one is
// installed (its default for a headless browser), while the peers run the
// Chromium they are given; a test that compares on the headless shell
// (TestPeersLoad) names it to every server itself.
func TestMain(m *testing.M) {
	if os.Getenv("CHROME_PATH") == "" {
		if exe, err := cdp.FindChromium(""); err == nil {
			os.Setenv("CHROME_PATH", exe)
		}
	}
	os.Exit(m.Run())
}
