package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor/cdp"
)

// remoteArgs are the flags that point a server at the browser server the
// package started for CHROMEGATE_E2E_BACKEND=browser-server (a local
// `playwright run-server` from the pinned playwright-core); nil otherwise.
// For =cdp-endpoint each server gets a bare Chromium of its own
// (cdpEndpointFor).
var remoteArgs []string

// stopRemote ends the remote browser at the end of the package.
var stopRemote = func() {}

// startRemote starts what e2eBackend needs before the tests run.
func startRemote() error {
	switch e2eBackend {
	case "browser-server":
		d, err := cdp.FindDriver("")
		if err != nil {
			return err
		}
		cmd := exec.Command(d.Node, filepath.Join(d.Dir, "package", "cli.js"), "run-server", "--host", "127.0.0.1", "--port", "0", "--unsafe")
		ep, stop, err := startAndScan(cmd, regexp.MustCompile(`Listening on (ws://\S+)`), true)
		if err != nil {
			return fmt.Errorf("playwright run-server: %w", err)
		}
		stopRemote = stop
		remoteArgs = []string{"--browser-endpoint=" + ep}
	}
	return nil
}

// cdpEndpointFor starts a bare Chromium for one server (parallel tests
// attached to one browser would share its tabs) and returns the flag that
// attaches to it; the browser is killed when the test ends.
func cdpEndpointFor(t testing.TB, mark string) string {
	t.Helper()
	exe, err := cdp.FindChromium("")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--no-first-run", "--disable-sync", "--disable-dev-shm-usage",
		"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0", "--user-data-dir="+t.TempDir(),
		// What the policy tests pass with --browser-arg, which an attached
		// browser cannot take (the certificates: the https test sites').
		strings.TrimPrefix(resolverRules, "--browser-arg="), "--ignore-certificate-errors", "about:blank")
	cmd.Env = append(os.Environ(), "CHROMEGATE_E2E_MARK="+mark+"-browser")
	ep, stop, err := startAndScan(cmd, regexp.MustCompile(`DevTools listening on (ws://\S+)`), false)
	if err != nil {
		t.Fatalf("chromium with a CDP endpoint: %v", err)
	}
	t.Cleanup(stop)
	return "--cdp-endpoint=" + ep
}

// startAndScan starts cmd in its own process group and waits for a line
// of its stdout (or stderr) matching re, returning the first group and a
// function that kills the group.
func startAndScan(cmd *exec.Cmd, re *regexp.Regexp, stdout bool) (string, func(), error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var pipe io.ReadCloser
	var err error
	if stdout {
		pipe, err = cmd.StdoutPipe()
	} else {
		pipe, err = cmd.StderrPipe()
	}
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	select {
	case ep := <-found:
		return ep, stop, nil
	case <-ctx.Done():
		stop()
		return "", nil, fmt.Errorf("no endpoint announced within 30 s")
	}
}
