package cdp

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// NodeHint says how to install Node.js (which runs the Playwright driver)
// on this system.
var NodeHint = map[string]string{
	"darwin":  "install Node.js: brew install node, or the installer from nodejs.org",
	"windows": "install Node.js: winget install OpenJS.NodeJS.LTS, or the installer from nodejs.org",
}[runtime.GOOS]

// chromiumHint says how to get a browser on this system.
var chromiumHint = map[string]string{
	"darwin":  "install Google Chrome (or pass --executable-path / set CHROME_PATH)",
	"windows": "install Google Chrome (or pass --executable-path / set CHROME_PATH)",
}[runtime.GOOS]

func init() {
	if NodeHint == "" {
		NodeHint = "apt-get install -y nodejs npm (or your distribution's Node.js package)"
	}
	if chromiumHint == "" {
		chromiumHint = "apt-get install -y chromium (or pass --executable-path / set CHROME_PATH)"
	}
}

// SetupCommand is the command line that installs the driver with this very
// binary: `chromegate setup` when chromegate on PATH is this binary, else
// the binary's full path (in a Claude Desktop bundle or an unpacked
// archive nothing is on PATH).
func SetupCommand() string {
	self, err := os.Executable()
	if err != nil {
		return "chromegate setup"
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	if !strings.HasPrefix(strings.ToLower(filepath.Base(self)), "chromegate") {
		return "chromegate setup" // a program that embeds this package
	}
	if onPath, err := exec.LookPath("chromegate"); err == nil {
		if real, err := filepath.EvalSymlinks(onPath); err == nil && real == self {
			return "chromegate setup"
		}
	}
	if strings.ContainsAny(self, " '\\\"") {
		return `"` + self + `" setup`
	}
	return self + " setup"
}
