package cdp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/executor"
)

// Which browser is launched: a named one as named; a headless one that
// loads no extension as a headless shell when one is installed (auto) or
// required (on); anything else as FindChromium finds it. It changes the
// package's candidate lists and CHROME_PATH, so it does not run in
// parallel.
func TestLaunchExecutable(t *testing.T) {
	dir := t.TempDir()
	exe := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shell, chromium, named := exe("chromium-headless-shell"), exe("chromium"), exe("my-chrome")
	savedShells, savedChromiums := headlessShellCandidates, chromiumCandidates
	t.Cleanup(func() { headlessShellCandidates, chromiumCandidates = savedShells, savedChromiums })
	chromiumCandidates = []string{chromium}
	t.Setenv("CHROME_PATH", "")

	tests := []struct {
		name    string
		opts    Options
		env     string
		noShell bool
		want    string
		code    executor.Code
	}{
		{name: "default", want: shell},
		{name: "auto", opts: Options{HeadlessShell: HeadlessShellAuto}, want: shell},
		{name: "headed", opts: Options{Headed: true}, want: chromium},
		{name: "extension", opts: Options{ExtensionDir: dir}, want: chromium},
		{name: "off", opts: Options{HeadlessShell: HeadlessShellOff}, want: chromium},
		{name: "named", opts: Options{ExecutablePath: named}, want: named},
		{name: "CHROME_PATH", env: named, want: named},
		{name: "on", opts: Options{HeadlessShell: HeadlessShellOn}, want: shell},
		{name: "on, named", opts: Options{HeadlessShell: HeadlessShellOn, ExecutablePath: named}, want: named},
		{name: "on, headed", opts: Options{HeadlessShell: HeadlessShellOn, Headed: true}, code: executor.CodeBadArgs},
		{name: "auto, none installed", noShell: true, want: chromium},
		{name: "on, none installed", opts: Options{HeadlessShell: HeadlessShellOn}, noShell: true, code: executor.CodeLaunchFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			headlessShellCandidates = []string{filepath.Join(dir, "missing"), shell}
			if tc.noShell {
				headlessShellCandidates = []string{filepath.Join(dir, "missing")}
			}
			t.Setenv("CHROME_PATH", tc.env)
			b, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.launchExecutable()
			if tc.code != "" {
				if executor.CodeOf(err) != tc.code {
					t.Fatalf("got %q, %v; want %s", got, err, tc.code)
				}
				if tc.code == executor.CodeLaunchFailed && !strings.Contains(executor.AsError(err).Hint, "chromium-headless-shell") {
					t.Errorf("hint %q names no package", executor.AsError(err).Hint)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	for v, ok := range map[string]bool{"": true, "auto": true, "on": true, "off": true, "maybe": false, "ON": false} {
		if err := CheckHeadlessShell(v); (err == nil) != ok {
			t.Errorf("CheckHeadlessShell(%q) = %v", v, err)
		}
	}
	if _, err := LaunchExecutable(Options{HeadlessShell: "maybe"}); executor.CodeOf(err) != executor.CodeBadArgs {
		t.Errorf(`HeadlessShell "maybe": %v, want BAD_ARGS`, err)
	}
	headlessShellCandidates = []string{shell}
	if got, err := LaunchExecutable(Options{}); err != nil || got != shell {
		t.Errorf("LaunchExecutable = %q, %v; want %q (what a launch would pick)", got, err, shell)
	}
}

// A position goes to secure origins only, whichever browser would accept
// the grant.
func TestTrustworthyOrigin(t *testing.T) {
	for origin, want := range map[string]bool{
		"https://example.com":       true,
		"wss://example.com":         true,
		"http://localhost:8080":     true,
		"http://app.localhost":      true,
		"http://127.0.0.1:9":        true,
		"http://[::1]:9":            true,
		"http://allowed.test:3000":  false,
		"http://10.0.0.1":           false,
		"ftp://example.com":         false,
		"null":                      false,
		"http://localhost.evil.com": false,
	} {
		if got := trustworthyOrigin(origin); got != want {
			t.Errorf("trustworthyOrigin(%q) = %v, want %v", origin, got, want)
		}
	}
}
