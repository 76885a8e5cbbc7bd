package e2e

// The three ways chromegate is installed, each from an empty directory as a
// user would: the Claude Desktop bundle (built and packed by the official
// mcpb CLI, resolved as Claude Desktop resolves it), the release archive,
// and the extension's zip loaded unpacked and paired.

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/dist"
)

// releaseStamp is what the release build under test is stamped with.
var releaseStamp = dist.Stamp{Version: "0.0.0-e2e", Commit: "e2e0commit", Date: "2026-01-02T03:04:05Z"}

var (
	releaseOnce sync.Once
	releaseBin  string
	releaseErr  error
)

// releaseBinary builds chromegate for this machine as `make release` does
// (static, -trimpath, stamped), once per run.
func releaseBinary(t *testing.T) string {
	t.Helper()
	releaseOnce.Do(func() {
		dir, err := os.MkdirTemp("", "chromegate-release-")
		if err != nil {
			releaseErr = err
			return
		}
		releaseBin = filepath.Join(dir, hostTarget().Exe())
		start := time.Now()
		releaseErr = dist.Build(context.Background(), "..", hostTarget(), releaseStamp, releaseBin)
		t.Logf("release build for %s: %v", hostTarget(), time.Since(start).Round(time.Millisecond))
	})
	if releaseErr != nil {
		t.Fatal(releaseErr)
	}
	return releaseBin
}

func hostTarget() dist.Target { return dist.Target{OS: runtime.GOOS, Arch: runtime.GOARCH} }

// mcpbDir holds the pinned mcpb CLI (`make mcpb-deps`).
const mcpbDir = "testdata/mcpb"

func needMCPBCLI(t *testing.T) string {
	t.Helper()
	cli, err := filepath.Abs(filepath.Join(mcpbDir, "node_modules", ".bin", "mcpb"))
	if err == nil {
		if _, err = os.Stat(cli); err == nil {
			return cli
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("the mcpb CLI is not installed (%v): make mcpb-deps", err)
	}
	t.Skipf("the mcpb CLI is not installed: make mcpb-deps")
	return ""
}

// TestBundle packs the Claude Desktop bundle with the official CLI (which
// validates the manifest first), unzips it into an empty directory, starts
// its binary over stdio with the command line Claude Desktop resolves from
// the manifest and the user's settings, lists the tools (every tool of the
// tool table, as the manifest says) and drives a page within the settings:
// an allowed domain opens, another is refused, a click needs the mutations
// setting.
func TestBundle(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	cli := needMCPBCLI(t)
	bin := releaseBinary(t)
	work := t.TempDir()
	stage := filepath.Join(work, "stage")
	if err := dist.StageBundle(stage, releaseStamp, hostTarget(), bin); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(work, dist.BundleName(releaseStamp.Version, hostTarget()))
	if err := dist.Pack(t.Context(), cli, stage, bundle); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(bundle); err == nil {
		t.Logf("bundle %s: %.1f MB", filepath.Base(bundle), float64(st.Size())/1e6)
	}

	start := time.Now()
	installed := filepath.Join(work, "Claude Extensions", "chromegate") // a space, as on macOS
	unzipTo(t, bundle, installed)
	var manifest dist.Manifest
	readJSON(t, filepath.Join(installed, "manifest.json"), &manifest)

	var names []string
	for _, tl := range manifest.Tools {
		names = append(names, tl.Name)
	}
	var table []string
	for _, tl := range mcp.Tools() {
		table = append(table, tl.Name)
	}
	if !slices.Equal(names, table) {
		t.Errorf("the manifest lists %v, the tool table %v", names, table)
	}

	url := site(t)
	dataDir := filepath.Join(work, "data")
	s := startBundle(t, installed, map[string]any{
		"allowed_domains": "127.0.0.1, example.invalid", "enable_mutations": true, "data_dir": dataDir, "tools": "all",
	}, nil)
	// tools/list shows what the policy lets this configuration call, with
	// every tool group on: every tool of the manifest but those the form
	// has no setting for (eval and download_file need serve's
	// --unsafe-enable-eval, --enable-downloads).
	listed := s.toolNames()
	for _, n := range names {
		if hidden := n == "eval" || n == "download_file"; slices.Contains(listed, n) == hidden {
			t.Errorf("tools/list has %s: %v; want %v", n, !hidden, hidden)
		}
	}
	for _, n := range listed {
		if !slices.Contains(names, n) {
			t.Errorf("tools/list has %s, which the manifest does not list", n)
		}
	}
	s.call("navigate", map[string]any{"url": url + "/form"})
	t.Logf("bundle: unzip + start + first tool call: %v", time.Since(start).Round(time.Millisecond))
	s.call("click", map[string]any{"selector": "button"})
	s.fail("POLICY_DENIED", "navigate", map[string]any{"url": "http://localhost.test/"})
	if _, err := os.Stat(filepath.Join(dataDir, "profile")); err != nil {
		entries, _ := os.ReadDir(dataDir)
		t.Errorf("the data_dir setting was not used: %v (holds %v)", err, entries)
	}

	// Mutations off (the form's default): reads work, a click is refused.
	s.stop()
	s = startBundle(t, installed, map[string]any{"allowed_domains": "127.0.0.1", "data_dir": dataDir}, nil)
	s.call("navigate", map[string]any{"url": url + "/form"})
	s.fail("POLICY_DENIED", "click", map[string]any{"selector": "button"})
}

// TestBundleFirstRun starts the bundle on a machine without the Playwright
// driver: the server still answers MCP (so Claude Desktop shows it), and
// chrome_status, the log and a call that needs the browser say what is
// missing and the command that installs it, naming the binary inside the
// bundle. With "Install the Playwright driver" on, the server installs it
// itself and the next call works.
func TestBundleFirstRun(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	cli := needMCPBCLI(t)
	bin := releaseBinary(t)
	work := t.TempDir()
	stage := filepath.Join(work, "stage")
	if err := dist.StageBundle(stage, releaseStamp, hostTarget(), bin); err != nil {
		t.Fatal(err)
	}
	bundle := filepath.Join(work, "chromegate.mcpb")
	if err := dist.Pack(t.Context(), cli, stage, bundle); err != nil {
		t.Fatal(err)
	}
	installed := filepath.Join(work, "ext")
	unzipTo(t, bundle, installed)
	self := filepath.Join(installed, "server", hostTarget().Exe())
	noDriver := filepath.Join(work, "driver")
	env := []string{"PLAYWRIGHT_DRIVER_PATH=" + noDriver}
	settings := map[string]any{"allowed_domains": "127.0.0.1", "data_dir": filepath.Join(work, "data"), "install_driver": false, "tools": "core, observe"}

	s := startBundle(t, installed, settings, env)
	if names := s.toolNames(); !slices.Contains(names, "navigate") || !slices.Contains(names, "console_messages") || slices.Contains(names, "emulate") {
		t.Fatalf("the tool groups core and observe list %v", names)
	}
	st := jsonPart(resultText(s.call("chrome_status", nil)))
	if !strings.Contains(st, `"ready":false`) || !strings.Contains(st, self+" setup") {
		t.Errorf("chrome_status does not say the driver is missing and how to install it (%s setup):\n%s", self, st)
	}
	msg := s.fail("LAUNCH_FAILED", "navigate", map[string]any{"url": site(t) + "/"})
	if !strings.Contains(msg, self+" setup") {
		t.Errorf("navigate's error does not name %s setup:\n%s", self, msg)
	}
	if !strings.Contains(s.log.String(), "first run: playwright driver is missing") {
		t.Errorf("the log does not say the driver is missing:\n%s", tail(s.log.String(), 3000))
	}
	s.stop()

	// Installed by the server itself: npm fetches playwright-core.
	settings["install_driver"] = true
	s = startBundle(t, installed, settings, env)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		st := jsonPart(resultText(s.call("chrome_status", nil)))
		if !strings.Contains(st, `"setup"`) {
			break
		}
		if strings.Contains(st, "install_error") || time.Now().After(deadline) {
			t.Fatalf("the driver was not installed:\n%s\nlog:\n%s", st, tail(s.log.String(), 3000))
		}
		time.Sleep(time.Second)
	}
	if _, err := cdp.FindDriver(noDriver); err != nil {
		t.Fatalf("after the install: %v", err)
	}
	s.call("navigate", map[string]any{"url": site(t) + "/"})
}

// startBundle starts the unpacked bundle's server with the command line
// that the mcpb package resolves for the settings, as Claude Desktop does.
func startBundle(t *testing.T, dir string, settings map[string]any, env []string) *server {
	t.Helper()
	b, _ := json.Marshal(settings)
	out, err := exec.Command("node", filepath.Join(mcpbDir, "resolve.mjs"), dir, string(b)).Output()
	if err != nil {
		t.Fatalf("resolve the bundle's command: %v", err)
	}
	var cfg struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.Args {
		if strings.Contains(a, "${") {
			t.Fatalf("an argument was left unresolved: %q", a)
		}
	}
	s := &server{t: t, log: &testkit.Buffer{}, dataDir: fmtSetting(settings["data_dir"])}
	s.cmd = exec.Command(cfg.Command, append(cfg.Args, "--log-level=debug")...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stderr = s.log
	client := sdk.NewClient(&sdk.Implementation{Name: "claude-desktop-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &sdk.CommandTransport{Command: s.cmd}, nil)
	if err != nil {
		t.Fatalf("start %s %v: %v\nlog:\n%s", cfg.Command, cfg.Args, err, s.log.String())
	}
	s.session = session
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("server log:\n%s", tail(s.log.String(), 6000))
		}
	})
	return s
}

func fmtSetting(v any) string {
	s, _ := v.(string)
	return s
}

func (s *server) toolNames() []string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.session.ListTools(ctx, nil)
	if err != nil {
		s.t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// TestReleaseArchive unpacks this machine's release archive into an empty
// directory with tar (or unzip), checks what it holds and its SHA256SUMS
// line with sha256sum -c, and runs `chromegate version` (the stamp) and
// `chromegate doctor` (a first launch) from it.
func TestReleaseArchive(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	bin := releaseBinary(t)
	repo, _ := filepath.Abs("..")
	work := t.TempDir()
	files, err := dist.ArchiveFiles(repo, hostTarget(), bin)
	if err != nil {
		t.Fatal(err)
	}
	name := dist.ArchiveName(releaseStamp.Version, hostTarget())
	archive := filepath.Join(work, name)
	if err := dist.WriteArchive(archive, files); err != nil {
		t.Fatal(err)
	}
	if err := dist.WriteSums(filepath.Join(work, "SHA256SUMS"), []string{archive}); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(work, "sha256sum", "-c", "SHA256SUMS"); err != nil {
		t.Fatalf("sha256sum -c: %v\n%s", err, out)
	}
	st, _ := os.Stat(archive)
	t.Logf("archive %s: %.1f MB", name, float64(st.Size())/1e6)

	start := time.Now()
	empty := filepath.Join(work, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(empty, "tar", "-xzf", archive); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	root := filepath.Join(empty, strings.TrimSuffix(name, ".tar.gz"))
	for _, f := range []string{"chromegate", "README.md", "extension/manifest.json", "extension/sw.js"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("the archive lacks %s: %v", f, err)
		}
	}
	exe := filepath.Join(root, "chromegate")
	out, err := runIn(empty, exe, "version")
	if err != nil {
		t.Fatalf("chromegate version: %v\n%s", err, out)
	}
	for _, want := range []string{"chromegate " + releaseStamp.Version, releaseStamp.Commit, releaseStamp.Date, cdp.DriverVersion} {
		if !strings.Contains(out, want) {
			t.Errorf("chromegate version does not print %q:\n%s", want, out)
		}
	}
	out, err = runIn(empty, exe, "doctor", "--data-dir", filepath.Join(work, "data"))
	if err != nil {
		t.Fatalf("chromegate doctor: %v\n%s", err, out)
	}
	if !strings.Contains(out, "everything looks good") {
		t.Errorf("doctor:\n%s", out)
	}
	t.Logf("archive: untar + version + doctor (a first launch): %v", time.Since(start).Round(time.Millisecond))

	// The extension folder in the archive loads with the pinned id.
	if id := extensionIDOf(t, filepath.Join(root, "extension")); id != "panapbedhlmfgppfnakffbadibcgglbb" {
		t.Errorf("the archive's extension has id %s", id)
	}
}

// TestExtensionZip packs the extension into a zip with `chromegate
// extension pack`, unzips it into an empty directory, loads that folder
// into the browser chromegate launches and pairs it; the calls then go
// through the extension.
func TestExtensionZip(t *testing.T) {
	testkit.Backends(t, testkit.Ext)
	needBrowser(t)
	work := t.TempDir()
	zipPath := filepath.Join(work, "chromegate-extension.zip")
	if out, err := runIn(work, binary, "extension", "pack", zipPath); err != nil {
		t.Fatalf("extension pack: %v\n%s", err, out)
	}
	unpacked := filepath.Join(work, "unzipped")
	unzipTo(t, zipPath, unpacked)
	dir := filepath.Join(unpacked, "chromegate-extension")
	if id := extensionIDOf(t, dir); id != "panapbedhlmfgppfnakffbadibcgglbb" {
		t.Fatalf("the unzipped extension's key gives id %s", id)
	}
	s := startServer(t, append(slices.Clone(permissive), "--with-extension", "--extension-dir="+dir)...)
	_, ext := s.status()
	if !ext.Connected || !ext.Paired {
		t.Fatalf("the unzipped extension did not pair: %+v", ext)
	}
	res := s.call("navigate", map[string]any{"url": site(t) + "/"})
	if txt := resultText(res); !strings.Contains(txt, `"tab_id":"ext:`) {
		t.Errorf("navigate did not go through the extension:\n%s", short(txt))
	}
	// A folder holding another key (another id) is refused before launch.
	other := filepath.Join(work, "other")
	unzipTo(t, zipPath, other)
	mf := filepath.Join(other, "chromegate-extension", "manifest.json")
	b, _ := os.ReadFile(mf)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["key"] = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE" + strings.Repeat("A", 88)
	b, _ = json.Marshal(m)
	_ = os.WriteFile(mf, b, 0o644)
	out, err := runIn(work, binary, "serve", "--with-extension", "--extension-dir="+filepath.Dir(mf), "--data-dir="+filepath.Join(work, "d2"))
	if err == nil || !strings.Contains(out, "not chromegate's panapbedhlmfgppfnakffbadibcgglbb") {
		t.Errorf("serve with another extension's folder: %v\n%s", err, out)
	}
}

func extensionIDOf(t *testing.T, dir string) string {
	t.Helper()
	var m struct{ Key string }
	readJSON(t, filepath.Join(dir, "manifest.json"), &m)
	return chromeExtensionID(t, m.Key)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func runIn(dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// unzipTo unpacks a zip (a bundle or the extension's zip) into dir, keeping
// the modes it records, refusing entries that leave dir.
func unzipTo(t *testing.T, file, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		dst := filepath.Join(dir, filepath.FromSlash(f.Name))
		if !strings.HasPrefix(dst, filepath.Clean(dir)+string(filepath.Separator)) {
			t.Fatalf("zip entry %q leaves the directory", f.Name)
		}
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := f.Mode().Perm()
		if mode == 0 {
			mode = 0o644
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.Copy(w, r)
		r.Close()
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// chromeExtensionID is the id Chrome gives an extension with this manifest
// key: the SHA-256 of the DER key, its first 32 hex digits written a-p.
func chromeExtensionID(t *testing.T, key string) string {
	t.Helper()
	der, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		t.Fatalf("the manifest key is not base64: %v", err)
	}
	sum := sha256.Sum256(der)
	var b strings.Builder
	for _, c := range sum[:16] {
		b.WriteByte('a' + c>>4)
		b.WriteByte('a' + c&0xf)
	}
	return b.String()
}

// TestGoInstall installs chromegate with `go install` from a clone of this
// repository, as the README's go install line gives it, and runs the
// binary: its version comes from the build info (the commit). Every
// dependency is first fetched into an empty module cache through GOPROXY
// as the environment sets it (-mod=mod, as a user outside the tree gets)
// and checked against go.sum; the build then reuses the packages the
// release build compiled (-trimpath and no cgo key them by content, not
// by the clone's path), so what it costs is the fetch and a link, not a
// second compile of everything (two minutes here).
func TestGoInstall(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git: %v", err)
	}
	work := t.TempDir()
	clone := filepath.Join(work, "src")
	repo, err := filepath.Abs("..") // the repository, or a worktree of it
	if err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(work, "git", "clone", "--quiet", "--no-hardlinks", repo, clone); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := runIn(clone, "git", "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	releaseBinary(t) // the compiled packages the install reuses
	start := time.Now()
	fetch := exec.Command("go", "list", "-deps", "./cmd/chromegate")
	fetch.Dir = clone
	fetch.Env = append(os.Environ(), "GOMODCACHE="+filepath.Join(work, "modcache"), "GOFLAGS=-mod=mod")
	if out, err := fetch.CombinedOutput(); err != nil {
		t.Fatalf("fetching the dependencies into an empty module cache: %v\n%s", err, out)
	}
	fetched := time.Since(start)
	cmd := exec.Command("go", "install", "-trimpath", "./cmd/chromegate")
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOBIN="+filepath.Join(work, "bin"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	installed := time.Since(start)
	out, err := runIn(work, filepath.Join(work, "bin", "chromegate"), "version")
	if err != nil {
		t.Fatalf("chromegate version: %v\n%s", err, out)
	}
	if !strings.Contains(out, "commit             "+strings.TrimSpace(head)) {
		t.Errorf("chromegate version does not name the commit %s:\n%s", strings.TrimSpace(head), out)
	}
	t.Logf("the dependencies fetched into an empty module cache in %v; installed in %v", fetched.Round(time.Millisecond), installed.Round(time.Millisecond))
	// The module cache is read-only by default; let t.TempDir remove it.
	_ = exec.Command("chmod", "-R", "u+w", filepath.Join(work, "modcache")).Run()
}
