package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/internal/testkit"
)

// The start-up starts the Playwright driver while it gets everything else
// ready (Chromium's path, the egress proxy and its listeners, the profile
// and its lock), and begins at server start, before the client's first
// call. These tests break each part with the real binary and check that
// the server says what broke and that no driver or browser outlives the
// failure: not after the failed call, not after the server exits.

// startupLeftovers lists the processes of the server's tree other than the
// server itself, with their command lines.
func startupLeftovers(mark string, server int) []string {
	var out []string
	for _, pid := range markedProcs(mark) {
		if pid == server {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprintf("%d %s", pid, short(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))))
	}
	return out
}

// waitNoLeftovers waits, with a generous deadline (a driver being stopped
// takes its browser with it, on a loaded machine slowly), until only the
// server itself (server > 0) or nothing is left of the tree.
func waitNoLeftovers(t *testing.T, what, mark string, server int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		left := startupLeftovers(mark, server)
		if server <= 0 {
			left = nil
			for _, pid := range markedProcs(mark) {
				cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				left = append(left, fmt.Sprintf("%d %s", pid, short(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: processes left behind:\n%s", what, strings.Join(left, "\n"))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// brokenDriver is a driver directory of the right version whose cli.js
// exits at once, as a half-installed or corrupted driver does.
func brokenDriver(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	pkg := filepath.Join(dir, "package")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"package.json": fmt.Sprintf(`{"name":"playwright-core","version":%q}`, cdp.DriverVersion),
		"cli.js":       "process.stderr.write('this driver is broken\\n'); process.exit(3)\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// dyingBrowser is an executable that says why on stderr and exits, as a
// Chromium without its libraries or with a bad flag does.
func dyingBrowser(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "chromium")
	script := "#!/bin/sh\necho 'chromium: error while loading shared libraries: libnss3.so' >&2\nexit 127\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestStartupFailureLeavesNothing breaks one part of the parallel start-up
// at a time. The warm-up at server start fails; the first call reports the
// failure (LAUNCH_FAILED, naming what broke); no driver or browser is left
// running, neither then nor after the server exits.
func TestStartupFailureLeavesNothing(t *testing.T) {
	testkit.Backends(t, testkit.CDP) // the start-up of a launched browser: the other backends launch none of their own
	needBrowser(t)
	base := site(t)
	cases := []struct {
		name string
		args []string
		want []string // in the error text
	}{
		{"driver missing", []string{"--driver-path=" + t.TempDir()}, []string{"Playwright driver", "not installed"}},
		{"driver broken", []string{"--driver-path=" + brokenDriver(t)}, []string{"Playwright driver", "did not start"}},
		{"browser missing", []string{"--executable-path=" + filepath.Join(t.TempDir(), "no-chromium")}, []string{"does not exist or is not executable"}},
		{"browser exits at launch", []string{"--executable-path=" + dyingBrowser(t)}, []string{"did not start", "libnss3"}},
		{"browser exits at launch, persistent profile", []string{persistentProfile, "--executable-path=" + dyingBrowser(t)}, []string{"did not start", "libnss3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, append(slices.Clone(permissive), c.args...)...)
			txt := s.fail("LAUNCH_FAILED", "navigate", map[string]any{"url": base + "/form"})
			for _, w := range c.want {
				if !strings.Contains(txt, w) {
					t.Errorf("the error does not say %q:\n%s", w, txt)
				}
			}
			waitNoLeftovers(t, "after the failed call", s.mark, s.cmd.Process.Pid)
			// A second call tries again and fails the same way, and again
			// leaves nothing.
			s.fail("LAUNCH_FAILED", "navigate", map[string]any{"url": base + "/form"})
			waitNoLeftovers(t, "after the retry", s.mark, s.cmd.Process.Pid)
			s.stop()
			if err := waitExit(s.cmd, 60*time.Second); err != nil {
				t.Fatal(err)
			}
			waitNoLeftovers(t, "after the server exited", s.mark, 0)
		})
	}
}

// waitExit waits for an MCP server whose client went away to exit.
func waitExit(cmd *exec.Cmd, within time.Duration) error {
	done := make(chan struct{})
	go func() {
		for {
			if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
				close(done)
				return
			}
			// A zombie is gone but for its parent's wait.
			if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)); err != nil || strings.Contains(string(st), ") Z ") {
				close(done)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	select {
	case <-done:
		return nil
	case <-time.After(within):
		return fmt.Errorf("the server (pid %d) did not exit within %s of its client leaving", cmd.Process.Pid, within)
	}
}

// spawnServe starts `chromegate serve` with its stdin held open (as an MCP
// client would) and the tree marked, without connecting a client.
func spawnServe(t *testing.T, mark string, args ...string) (*exec.Cmd, *testkit.Buffer, io.WriteCloser) {
	t.Helper()
	full := append([]string{"serve", "--data-dir=" + t.TempDir(), "--log-level=debug", "--isolated"}, args...)
	cmd := exec.Command(binary, full...)
	cmd.Env = append(os.Environ(), "CHROMEGATE_E2E_MARK="+mark)
	log := &testkit.Buffer{}
	cmd.Stderr = log
	cmd.Stdout = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, log, stdin
}

// TestStartupPolicyFailureLeavesNothing: a policy that does not compile
// stops the server with the reason before any driver or browser starts,
// and none is left.
func TestStartupPolicyFailureLeavesNothing(t *testing.T) {
	testkit.Backends(t, testkit.CDP) // the start-up of a launched browser: the other backends launch none of their own
	needBrowser(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "broken.rego"), []byte("package chromegate\n\nallow if {\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("e2e-policy-%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd, log, _ := spawnServe(t, mark, "--policy="+dir)
	err := cmd.Wait()
	var exit *exec.ExitError
	if err == nil || !errors.As(err, &exit) {
		t.Fatalf("serve with a broken policy: want a failing exit, got %v\n%s", err, log.String())
	}
	if !strings.Contains(log.String(), "load policy") || !strings.Contains(log.String(), "broken.rego") {
		t.Errorf("the server does not say which policy failed:\n%s", log.String())
	}
	waitNoLeftovers(t, "after the policy failed", mark, 0)
}

// TestStartupSIGTERMLeavesNothing stops the server with SIGTERM while its
// start-up is under way (the driver running, the browser launching or
// just launched) and checks that the whole tree goes.
func TestStartupSIGTERMLeavesNothing(t *testing.T) {
	testkit.Backends(t, testkit.CDP) // the start-up of a launched browser: the other backends launch none of their own
	needBrowser(t)
	for _, stage := range []string{"driver", "browser"} {
		t.Run("while the "+stage+" starts", func(t *testing.T) {
			mark := fmt.Sprintf("e2e-term-%s-%d-%d", stage, os.Getpid(), time.Now().UnixNano())
			cmd, log, _ := spawnServe(t, mark, permissive...)
			deadline := time.Now().Add(60 * time.Second)
			for !startupReached(mark, cmd.Process.Pid, stage) {
				if time.Now().After(deadline) {
					t.Fatalf("the %s never started:\n%s", stage, log.String())
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := waitExit(cmd, 60*time.Second); err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			waitNoLeftovers(t, "after SIGTERM during start-up", mark, 0)
		})
	}
}

// startupReached reports whether the server's start-up has a process of
// stage running: the driver (node … run-driver), or a browser.
func startupReached(mark string, server int, stage string) bool {
	for _, pid := range markedProcs(mark) {
		if pid == server {
			continue
		}
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		switch stage {
		case "driver":
			if bytes.Contains(cmdline, []byte("run-driver")) {
				return true
			}
		case "browser":
			if bytes.Contains(cmdline, []byte("--remote-debugging-pipe")) {
				return true
			}
		}
	}
	return false
}
