package cdp

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

func writeDriver(t *testing.T, version string) string {
	t.Helper()
	dir := t.TempDir()
	pkg := filepath.Join(dir, "package")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "cli.js"), []byte("// cli"), 0o644); err != nil {
		t.Fatal(err)
	}
	if version != "" {
		pj := `{"name":"playwright-core","version":"` + version + `"}`
		if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(pj), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFindDriver(t *testing.T) {
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", "")
	good := writeDriver(t, DriverVersion)
	d, err := FindDriver(good)
	if err != nil {
		t.Fatal(err)
	}
	if d.Dir != good || d.Version != DriverVersion || d.Node == "" {
		t.Errorf("driver: %+v", d)
	}

	// The environment is the fallback for the flag.
	t.Setenv("PLAYWRIGHT_DRIVER_PATH", good)
	if d, err := FindDriver(""); err != nil || d.Dir != good {
		t.Errorf("from PLAYWRIGHT_DRIVER_PATH: %+v, %v", d, err)
	}

	tests := []struct {
		name, dir, msg, hint string
	}{
		{"missing", filepath.Join(t.TempDir(), "none"), "cli.js is missing", "chromegate setup"},
		{"wrong version", writeDriver(t, "1.2.3"), "1.2.3", "chromegate setup"},
		{"no package.json", writeDriver(t, ""), "version", "chromegate setup"},
	}
	for _, tc := range tests {
		_, err := FindDriver(tc.dir)
		e := wantCode(t, err, executor.CodeLaunchFailed)
		if !strings.Contains(e.Message, tc.msg) || !strings.Contains(e.Hint, tc.hint) {
			t.Errorf("%s: %v", tc.name, e)
		}
	}

	t.Setenv("PLAYWRIGHT_NODEJS_PATH", "/nonexistent/node")
	_, err = FindDriver(good)
	if e := wantCode(t, err, executor.CodeLaunchFailed); !strings.Contains(e.Message, "PLAYWRIGHT_NODEJS_PATH") {
		t.Errorf("bad node: %v", e)
	}
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", "")
	t.Setenv("PATH", t.TempDir())
	_, err = FindDriver(good)
	if e := wantCode(t, err, executor.CodeLaunchFailed); e.Hint != NodeHint || !strings.Contains(NodeHint, "nodejs") {
		t.Errorf("no node: %v", e)
	}
}

func TestFindChromium(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "chrome")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CHROME_PATH", fake)
	if p, err := FindChromium(""); err != nil || p != fake {
		t.Errorf("CHROME_PATH: %q, %v", p, err)
	}
	if p, err := FindChromium(fake); err != nil || p != fake {
		t.Errorf("flag: %q, %v", p, err)
	}
	_, err := FindChromium("/nonexistent/chrome")
	if e := wantCode(t, err, executor.CodeLaunchFailed); !strings.Contains(e.Hint, "apt-get install -y chromium") {
		t.Errorf("missing: %v", e)
	}
}

func TestDefaultDirs(t *testing.T) {
	t.Setenv("CHROMEGATE_CACHE_DIR", "/c")
	t.Setenv("CHROMEGATE_DATA_DIR", "")
	t.Setenv("XDG_DATA_HOME", "/x")
	if got := DefaultDriverDir(); got != "/c/playwright-core-"+DriverVersion {
		t.Errorf("driver dir %s", got)
	}
	if got := DefaultDataDir(); got != "/x/chromegate" {
		t.Errorf("data dir %s", got)
	}
	t.Setenv("CHROMEGATE_DATA_DIR", "/d")
	if got := DefaultDataDir(); got != "/d" {
		t.Errorf("data dir %s", got)
	}
}

func tarball(t *testing.T, entries map[string]string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "x.tgz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExtractTarGz(t *testing.T) {
	dest := t.TempDir()
	if err := extractTarGz(tarball(t, map[string]string{"package/cli.js": "x", "package/lib/a.js": "y"}), dest); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "package", "lib", "a.js")); err != nil || string(b) != "y" {
		t.Errorf("extracted %q, %v", b, err)
	}
	for _, evil := range []string{"../escape.js", "package/../../escape.js", "/abs.js"} {
		dest := t.TempDir()
		if err := extractTarGz(tarball(t, map[string]string{evil: "x"}), dest); err == nil {
			t.Errorf("%s: accepted", evil)
		}
		if _, serr := os.Stat(filepath.Join(filepath.Dir(dest), "escape.js")); serr == nil {
			t.Errorf("%s: escaped the destination", evil)
		}
	}
}

func FuzzSafeJoin(f *testing.F) {
	for _, s := range []string{"package/cli.js", "../x", "a/../../b", "/etc/passwd", "a/./b", "..", "", "a\\..\\..\\b"} {
		f.Add(s)
	}
	dest := filepath.Join(os.TempDir(), "dest")
	f.Fuzz(func(t *testing.T, name string) {
		p, err := safeJoin(dest, name)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(dest, p)
		if rerr != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			t.Fatalf("safeJoin(%q) = %q escapes %q", name, p, dest)
		}
	})
}

func TestInstallDriverIsIdempotent(t *testing.T) {
	needBrowser(t) // needs the installed driver
	d, err := FindDriver("")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := InstallDriver(ctxFor(t, 60*time.Second), d.Dir, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "already installed") {
		t.Errorf("progress: %q", out.String())
	}
}

func TestChromiumArgs(t *testing.T) {
	b, err := New(Options{BrowserArgs: []string{"--lang=de", "--enable-features=Foo,WebMCP"}})
	if err != nil {
		t.Fatal(err)
	}
	args := b.chromiumArgs()
	joined := strings.Join(args, " ")
	for _, want := range []string{"--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--no-first-run", "--disable-sync", "--disable-dev-shm-usage", "--site-per-process", "--lang=de"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %s in %v", want, args)
		}
	}
	if last := args[len(args)-1]; last != "--enable-features=CDPScreenshotNewSurface,WebMCP,DevToolsWebMCPSupport,Foo" {
		t.Errorf("features not merged into one last flag: %s", last)
	}
	if strings.Count(joined, "--enable-features") != 1 {
		t.Errorf("more than one --enable-features: %v", args)
	}
	if hasNoSandbox := strings.Contains(joined, "--no-sandbox"); hasNoSandbox != (os.Geteuid() == 0) {
		t.Errorf("--no-sandbox present = %v as uid %d", hasNoSandbox, os.Geteuid())
	}
}

// TestDriverVersionPinned: DriverVersion is what playwright-go checks for.
func TestDriverVersionPinned(t *testing.T) {
	runMu.Lock() // NewDriver sets playwright-go's package logger
	defer runMu.Unlock()
	d, err := playwright.NewDriver(&playwright.RunOptions{DriverDirectory: t.TempDir(), Stdout: io.Discard, Stderr: io.Discard, Logger: discardLogger})
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != DriverVersion {
		t.Errorf("playwright-go pins %s, DriverVersion is %s", d.Version, DriverVersion)
	}
}

func TestNeedsPatch(t *testing.T) {
	dir := writeDriver(t, DriverVersion)
	if needsPatch(dir) {
		t.Error("a driver without a bundle needs no patch")
	}
	lib := filepath.Join(dir, "package", "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(lib, "coreBundle.js")
	for content, want := range map[string]bool{
		"x = pageError.location.url;":        true,
		`x = pageError.location?.url || "";`: false,
		"nothing to see":                     false,
	} {
		if err := os.WriteFile(bundle, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := needsPatch(dir); got != want {
			t.Errorf("needsPatch(%q) = %v", content, got)
		}
	}
	if d, err := FindDriver(""); err == nil && needsPatch(d.Dir) {
		t.Errorf("the installed driver in %s is not patched", d.Dir)
	}
}

// TestShimIsNotWrapped: a FindDriver that runs while a driver starts (and
// PLAYWRIGHT_NODEJS_PATH names the version shim) still finds the real node.
func TestShimIsNotWrapped(t *testing.T) {
	t.Setenv("CHROMEGATE_CACHE_DIR", t.TempDir())
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", "")
	dir := writeDriver(t, DriverVersion)
	d, err := FindDriver(dir)
	if err != nil {
		t.Fatal(err)
	}
	shim, err := versionShim(d)
	if err != nil {
		t.Skip("no shim on this system:", err)
	}
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", shim)
	again, err := FindDriver(dir)
	if err != nil || again.Node != d.Node {
		t.Errorf("with the shim in the environment: node %q, %v; want %q", again.Node, err, d.Node)
	}
	if shim2, _ := versionShim(again); shim2 != shim {
		t.Errorf("a second shim %q wraps the first %q", shim2, shim)
	}
	out, err := exec.Command(shim, filepath.Join(dir, "package", "cli.js"), "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "Version "+DriverVersion {
		t.Errorf("the shim answered %q, %v", out, err)
	}
}
