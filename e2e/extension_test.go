package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/executor/ext/pairing"
	"github.com/chromegate/chromegate/internal/testkit"
)

// firstTabID is the tab id a tool result names.
func firstTabID(t *testing.T, txt string) string {
	t.Helper()
	m := tabIDPattern.FindStringSubmatch(txt)
	if m == nil {
		t.Fatalf("no tab id in %s", short(txt))
	}
	return m[1]
}

// TestExtensionPairedOverCDP loads the extension into the browser
// chromegate launches, pairs it over CDP and drives pages through it; then
// the kill switch cuts the extension off and the next call falls back to
// the CDP backend.
func TestExtensionPairedOverCDP(t *testing.T) {
	testkit.Backends(t, testkit.Ext)
	base := site(t)
	start := time.Now()
	s := startServer(t, append([]string{"--with-extension"}, permissive...)...)
	s.waitPaired()
	t.Logf("server start to paired extension: %s", time.Since(start).Round(time.Millisecond))

	h, err := pairing.ReadHandshake(s.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	txt := resultText(s.call("navigate", map[string]any{"url": base + "/form"}))
	id := firstTabID(t, txt)
	if !strings.HasPrefix(id, "ext:") {
		t.Fatalf("navigate went through %s, want the extension", id)
	}
	if backend, st := s.status(); backend != "ext" || !st.Connected || st.ExtVersion == "" || !slices.Contains(st.Attached, id) {
		t.Fatalf("chrome_status: backend %q, extension %+v (want %s attached)", backend, st, id)
	}
	if got := s.evalString(`document.title`); got != "Test form" {
		t.Fatalf("eval through the extension: title %q", got)
	}

	// A manual pairing code from the running server, for the options page.
	out, err := exec.Command(binary, "pair", "code", "--data-dir", s.dataDir).CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^code [A-Z2-9]{4}-[A-Z2-9]{4}$`).Match(out) || strings.Contains(string(out), h.Token) {
		t.Fatalf("pair code: %v\n%s", err, out)
	}

	// The kill switch (SIGHUP, as `chromegate pair reset` sends).
	out, err = exec.Command(binary, "pair", "reset", "--data-dir", s.dataDir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "token rotated") {
		t.Fatalf("pair reset: %v\n%s", err, out)
	}
	t0 := time.Now()
	txt = resultText(s.call("navigate", map[string]any{"url": base + "/"}))
	t.Logf("first call after the extension was cut off: %s", time.Since(t0).Round(time.Millisecond))
	if id := firstTabID(t, txt); !strings.HasPrefix(id, "cdp:") {
		t.Fatalf("after the kill switch the call went through %s, want the CDP fallback", id)
	}
	if backend, st := s.status(); backend != "cdp" || st.Connected {
		t.Fatalf("after the kill switch: backend %q, extension %+v", backend, st)
	}
	if strings.Contains(s.log.String(), h.Token) {
		t.Fatal("the pairing token reached the server's log")
	}
}

// TestExtensionNativeMessaging runs Chromium the way a user does (not
// started by any automation), with the extension loaded and the native
// host registered in the test's own profile: the extension pairs itself
// through the host, and pages it drives do not report navigator.webdriver.
func TestExtensionNativeMessaging(t *testing.T) {
	testkit.Backends(t, testkit.Ext)
	needBrowser(t)
	base := site(t)
	s, profile := pairedChromium(t, permissive)

	txt := resultText(s.call("navigate", map[string]any{"url": base + "/form"}))
	if id := firstTabID(t, txt); !strings.HasPrefix(id, "ext:") {
		t.Fatalf("navigate went through %s, want the extension", id)
	}
	if got := s.eval(`navigator.webdriver`); got != false {
		t.Fatalf("navigator.webdriver = %v on a page the extension drives, want false", got)
	}
	if got := s.evalString(`document.querySelector('h1').textContent`); got == "" {
		t.Fatal("reading the page through the extension gave nothing")
	}
	if backend, st := s.status(); backend != "ext" || !st.Paired {
		t.Fatalf("chrome_status: backend %q, extension %+v", backend, st)
	}
	if _, err := os.Stat(filepath.Join(profile, "NativeMessagingHosts", pairing.NativeHostName+".json")); err != nil {
		t.Fatal(err)
	}
}

// pairedChromium installs chromegate's extension and native host, starts a
// server that drives only the extension (serverArgs added), and runs
// Chromium as a user would with the extension loaded (browserFlags added),
// paired through native messaging. Both end with the test. It returns the
// server and the browser's profile directory.
func pairedChromium(t *testing.T, serverArgs []string, browserFlags ...string) (s *server, profile string) {
	t.Helper()
	needBrowser(t)
	dataDir, profile, extDir := t.TempDir(), t.TempDir(), t.TempDir()
	for _, a := range [][]string{
		{"extension", "install", extDir},
		{"pair", "install", "--profile-dir", profile, "--data-dir", dataDir},
	} {
		if out, err := exec.Command(binary, a...).CombinedOutput(); err != nil {
			t.Fatalf("chromegate %v: %v\n%s", a, err, out)
		}
	}
	s = startServer(t, append([]string{"--no-cdp-fallback", "--data-dir=" + dataDir}, serverArgs...)...)
	s.dataDir = dataDir
	exe, err := cdp.FindChromium("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	flags := append([]string{"--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync",
		"--disable-dev-shm-usage"}, browserFlags...)
	flags = append(flags, "--user-data-dir="+profile, "--disable-extensions-except="+extDir, "--load-extension="+extDir, "about:blank")
	browser := exec.CommandContext(ctx, exe, flags...)
	browser.Env = append(os.Environ(), "CHROMEGATE_E2E_MARK="+s.mark)
	browser.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	browser.Cancel = func() error { return syscall.Kill(-browser.Process.Pid, syscall.SIGKILL) }
	var blog testkit.Buffer
	browser.Stderr = &blog
	if err := browser.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = browser.Wait()
		if t.Failed() {
			t.Logf("chromium log:\n%s", tail(blog.String(), 3000))
		}
	})
	s.waitPaired()
	return s, profile
}
