package cdp

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// DriverVersion is the playwright-core version that playwright-go v0.6000.0
// pins: the driver must be exactly this version.
const DriverVersion = "1.60.0"

// DefaultCacheDir is $CHROMEGATE_CACHE_DIR, else the user cache directory
// plus "chromegate".
func DefaultCacheDir() string {
	if d := os.Getenv("CHROMEGATE_CACHE_DIR"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "chromegate")
}

// DefaultDataDir is $CHROMEGATE_DATA_DIR, else $XDG_DATA_HOME/chromegate,
// else ~/.local/share/chromegate. The profile and downloads live there.
func DefaultDataDir() string {
	if d := os.Getenv("CHROMEGATE_DATA_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "chromegate")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "chromegate")
	}
	return filepath.Join(home, ".local", "share", "chromegate")
}

// DefaultDriverDir is where `chromegate setup` installs playwright-core:
// it holds package/cli.js.
func DefaultDriverDir() string {
	return filepath.Join(DefaultCacheDir(), "playwright-core-"+DriverVersion)
}

// Driver is an installed Playwright driver: the directory holding
// package/cli.js, the node binary that runs it and the installed version.
type Driver struct {
	Dir     string
	Node    string
	Version string
}

// setupHint is the command that installs the driver.
var setupHint = "run `" + SetupCommand() + "`"

// FindDriver locates the Playwright driver: flagDir, else
// $PLAYWRIGHT_DRIVER_PATH, else DefaultDriverDir(). It checks that
// package/cli.js exists, that package/package.json has version
// DriverVersion (read, not run: running node costs half a second) and that a
// node binary is found ($PLAYWRIGHT_NODEJS_PATH, else <dir>/node, else node
// on PATH). A missing piece is a LAUNCH_FAILED error whose hint is the fix.
func FindDriver(flagDir string) (Driver, error) {
	dir := flagDir
	if dir == "" {
		dir = os.Getenv("PLAYWRIGHT_DRIVER_PATH")
	}
	if dir == "" {
		dir = DefaultDriverDir()
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	cli := filepath.Join(dir, "package", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return Driver{}, executor.Errorf(executor.CodeLaunchFailed,
			"the Playwright driver (playwright-core %s) is not installed: %s is missing", DriverVersion, cli).
			WithHint(setupHint).Wrap(err)
	}
	version, err := packageVersion(filepath.Join(dir, "package", "package.json"))
	if err != nil {
		return Driver{}, executor.Errorf(executor.CodeLaunchFailed,
			"cannot read the Playwright driver's version in %s", dir).WithHint(setupHint).Wrap(err)
	}
	if version != DriverVersion {
		return Driver{}, executor.Errorf(executor.CodeLaunchFailed,
			"the Playwright driver in %s is playwright-core %s; chromegate needs %s", dir, version, DriverVersion).
			WithHint(setupHint)
	}
	node, err := findNode(dir)
	if err != nil {
		return Driver{}, err
	}
	return Driver{Dir: dir, Node: node, Version: version}, nil
}

func packageVersion(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if err := json.Unmarshal(data, &pkg); err != nil {
		return "", fmt.Errorf("parse %s: %w", path, err)
	}
	if pkg.Name != "playwright-core" {
		return "", fmt.Errorf("%s describes %q, not playwright-core", path, pkg.Name)
	}
	return pkg.Version, nil
}

// findNode resolves node the way playwright-go will run it, falling back to
// PATH (Open then points playwright-go at it).
func findNode(dir string) (string, error) {
	if p := os.Getenv("PLAYWRIGHT_NODEJS_PATH"); p != "" {
		// While a driver starts, the variable briefly names this process's
		// version shim (see runDriver): see through it, or shims would wrap
		// shims.
		if real, ok := shimTargets.Load(p); ok {
			p = real.(string)
		}
		if isExecutable(p) {
			return p, nil
		}
		return "", executor.Errorf(executor.CodeLaunchFailed,
			"PLAYWRIGHT_NODEJS_PATH=%s is not an executable file", p).
			WithHint("unset PLAYWRIGHT_NODEJS_PATH or point it at node")
	}
	name := "node"
	if runtime.GOOS == "windows" {
		name = "node.exe"
	}
	if p := filepath.Join(dir, name); isExecutable(p) {
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", executor.Errorf(executor.CodeLaunchFailed,
			"Node.js is not installed (the Playwright driver needs it)").
			WithHint(NodeHint).Wrap(err)
	}
	return p, nil
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && (runtime.GOOS == "windows" || st.Mode().Perm()&0o111 != 0)
}

// chromiumCandidates are the places a Chromium or Chrome usually lives.
var chromiumCandidates = []string{
	"/usr/bin/chromium",
	"/usr/bin/chromium-browser",
	"/usr/bin/google-chrome",
	"/usr/bin/google-chrome-stable",
	"/opt/google/chrome/chrome",
	"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
	"/Applications/Chromium.app/Contents/MacOS/Chromium",
	`C:\Program Files\Google\Chrome\Application\chrome.exe`,
	`C:\Program Files (x86)\Google\Chrome\Application\chrome.exe`,
}

// headlessShellCandidates are the places a Chromium headless shell usually
// lives: the browser Playwright itself runs for headless pages, without
// the windowing layers of Chrome's own headless mode. Debian's binary
// comes first: its /usr/bin wrapper runs the browser as a child of a
// shell that outlives it, not in its place.
var headlessShellCandidates = []string{
	"/usr/lib/chromium/chromium-headless-shell",
	"/usr/bin/chromium-headless-shell",
	"/usr/bin/chrome-headless-shell",
	"/opt/google/chrome-headless-shell/chrome-headless-shell",
}

// FindHeadlessShell returns an installed Chromium headless shell, or "".
func FindHeadlessShell() string {
	for _, p := range headlessShellCandidates {
		if isExecutable(p) {
			return p
		}
	}
	return ""
}

// FindChromium returns the browser executable: flagPath, else $CHROME_PATH,
// else the first of the usual install locations that exists.
func FindChromium(flagPath string) (string, error) {
	for _, p := range []string{flagPath, os.Getenv("CHROME_PATH")} {
		if p == "" {
			continue
		}
		if isExecutable(p) {
			return p, nil
		}
		return "", executor.Errorf(executor.CodeLaunchFailed, "the browser %s does not exist or is not executable", p).
			WithHint(chromiumHint)
	}
	for _, p := range chromiumCandidates {
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", executor.Errorf(executor.CodeLaunchFailed, "no Chromium or Chrome found (looked in %s)",
		strings.Join(chromiumCandidates, ", ")).WithHint(chromiumHint)
}

// InstallDriver installs playwright-core@DriverVersion from the npm registry
// into dir so that dir/package/cli.js exists, links dir/node to the system
// node, and lets playwright-go apply its patch to the bundle. It is
// idempotent and never downloads a browser: playwright-core has no install
// script, `npm pack` runs none, and playwright.Install with
// SkipInstallBrowsers downloads nothing once cli.js is in place (it only
// checks `cli.js --version` and patches one file).
func InstallDriver(ctx context.Context, dir string, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("install driver: %w", err)
	}
	dir = abs
	node, err := exec.LookPath("node")
	if err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "Node.js is not installed (the Playwright driver needs it)").
			WithHint(NodeHint).Wrap(err)
	}
	if v, err := packageVersion(filepath.Join(dir, "package", "package.json")); err == nil && v == DriverVersion {
		fmt.Fprintf(progress, "playwright-core %s is already installed in %s\n", DriverVersion, dir)
		if err := linkNode(dir, node); err != nil {
			return err
		}
		return patchDriver(dir)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "npm is not installed (it fetches the Playwright driver)").
			WithHint("apt-get install -y npm").Wrap(err)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("install driver: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".playwright-core-install-")
	if err != nil {
		return fmt.Errorf("install driver: %w", err)
	}
	defer os.RemoveAll(tmp)

	spec := "playwright-core@" + DriverVersion
	fmt.Fprintf(progress, "fetching %s from the npm registry\n", spec)
	packDir := filepath.Join(tmp, "pack")
	if err := os.Mkdir(packDir, 0o755); err != nil {
		return fmt.Errorf("install driver: %w", err)
	}
	cmd := exec.CommandContext(ctx, npm, "pack", spec, "--pack-destination", packDir, "--ignore-scripts")
	cmd.Dir = tmp
	var out strings.Builder
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "npm pack %s failed: %s", spec, lastLine(out.String())).
			WithHint("check access to the npm registry (npm config get registry), then run `chromegate setup` again").Wrap(err)
	}
	tgzs, _ := filepath.Glob(filepath.Join(packDir, "*.tgz"))
	if len(tgzs) != 1 {
		return executor.Errorf(executor.CodeLaunchFailed, "npm pack %s produced %d archives, want 1", spec, len(tgzs)).
			WithHint("run `chromegate setup` again")
	}
	stage := filepath.Join(tmp, "driver")
	fmt.Fprintf(progress, "unpacking %s\n", filepath.Base(tgzs[0]))
	if err := extractTarGz(tgzs[0], stage); err != nil {
		return fmt.Errorf("install driver: unpack %s: %w", tgzs[0], err)
	}
	if v, err := packageVersion(filepath.Join(stage, "package", "package.json")); err != nil || v != DriverVersion {
		return fmt.Errorf("install driver: the archive holds %q, want playwright-core %s (%v)", v, DriverVersion, err)
	}
	if err := linkNode(stage, node); err != nil {
		return err
	}
	// Swap atomically: a concurrent FindDriver sees the old tree or the new
	// one, never half of one.
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = filepath.Join(tmp, "old")
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("install driver: move the old driver aside: %w", err)
		}
	}
	if err := os.Rename(stage, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir)
		}
		return fmt.Errorf("install driver: %w", err)
	}
	fmt.Fprintf(progress, "installed playwright-core %s in %s (node: %s)\n", DriverVersion, dir, node)
	return patchDriver(dir)
}

// patchDriver lets playwright-go check the driver and patch its bundle.
// With cli.js present this runs `node cli.js --version` and rewrites one
// file; it never downloads (a missing cli.js would make it download, which
// the callers rule out first).
func patchDriver(dir string) error {
	runMu.Lock() // playwright.Install sets playwright-go's package logger
	defer runMu.Unlock()
	return patchDriverLocked(dir)
}

// needsPatch reports whether the driver's bundle still has the code
// playwright-go patches (a page error without a location crashes it).
func needsPatch(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "package", "lib", "coreBundle.js"))
	return err == nil && bytes.Contains(data, []byte("pageError.location.url"))
}

func patchDriverLocked(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "package", "cli.js")); err != nil {
		return fmt.Errorf("install driver: refusing to let playwright-go download a driver: %w", err)
	}
	err := playwright.Install(&playwright.RunOptions{
		DriverDirectory:     dir,
		SkipInstallBrowsers: true,
		Verbose:             false,
		Stdout:              io.Discard,
		Stderr:              io.Discard,
		Logger:              discardLogger,
	})
	if err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "the Playwright driver in %s does not run: %v", dir, err).
			WithHint(setupHint).Wrap(err)
	}
	return nil
}

// linkNode points dir/node at the system node, so playwright-go finds it
// without PLAYWRIGHT_NODEJS_PATH.
func linkNode(dir, node string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	link := filepath.Join(dir, "node")
	if cur, err := os.Readlink(link); err == nil && cur == node {
		return nil
	}
	_ = os.Remove(link)
	if err := os.Symlink(node, link); err != nil {
		return fmt.Errorf("install driver: link node: %w", err)
	}
	return nil
}

// extractTarGz unpacks an npm tarball into dest, refusing entries that would
// land outside it and anything but plain files and directories.
func extractTarGz(archive, dest string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	defer gz.Close()
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target, err := safeJoin(dest, h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			mode := fs.FileMode(0o644)
			if h.FileInfo().Mode().Perm()&0o111 != 0 {
				mode = 0o755
			}
			out, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			// npm tarballs are small; cap anyway so a hostile archive can't fill the disk.
			_, cerr := io.Copy(out, io.LimitReader(tr, 256<<20))
			if err := errors.Join(cerr, out.Close()); err != nil {
				return err
			}
		default:
			// Links and devices have no place in an npm package.
			continue
		}
	}
}

// safeJoin joins an archive entry name to dest, refusing absolute names and
// names that climb out of dest.
func safeJoin(dest, name string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(name))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) || filepath.VolumeName(clean) != "" {
		return "", fmt.Errorf("archive entry %q escapes the destination", name)
	}
	return filepath.Join(dest, clean), nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "npm warn") {
			return l
		}
	}
	return strings.TrimSpace(s)
}

// runMu serialises starting drivers: playwright.Run reads the environment
// and sets a package-level logger.
var runMu sync.Mutex

// runDriver starts the Playwright driver. playwright.Run first runs `node
// cli.js --version` (about half a second) to check the version that
// FindDriver has already read from package.json; when it can, runDriver
// points playwright-go at a tiny shell shim that answers that one probe
// itself and execs node for everything else, with the driver's code cache
// preloaded (codecache.go).
func runDriver(d Driver, log *slog.Logger) (*playwright.Playwright, error) {
	runMu.Lock()
	defer runMu.Unlock()
	node := d.Node
	if shim, err := versionShim(d); err == nil {
		node = shim
	} else {
		log.Debug("starting the driver without the version shim", "err", err)
	}
	restore := setenv("PLAYWRIGHT_NODEJS_PATH", node)
	defer restore()
	if needsPatch(d.Dir) {
		// A driver installed by other means than InstallDriver lacks
		// playwright-go's fix to the bundle; apply it (best effort: the
		// directory may be read-only).
		if err := patchDriverLocked(d.Dir); err != nil {
			log.Warn("could not patch the Playwright driver bundle", "dir", d.Dir, "err", err)
		}
	}
	return playwright.Run(&playwright.RunOptions{
		DriverDirectory:     d.Dir,
		SkipInstallBrowsers: true,
		Verbose:             false,
		// stdout carries MCP in stdio mode: the driver never writes there.
		Stdout: io.Discard,
		Stderr: &logWriter{log: log},
		Logger: log,
	})
}

func setenv(key, value string) (restore func()) {
	old, had := os.LookupEnv(key)
	_ = os.Setenv(key, value)
	return func() {
		if had {
			_ = os.Setenv(key, old)
		} else {
			_ = os.Unsetenv(key)
		}
	}
}

const shimScript = `#!/bin/sh
# Written by chromegate. playwright-go runs "node cli.js --version" before it
# starts the driver; chromegate has already checked the version in
# package.json, so this answers that one probe and execs node for the rest,
# with V8's code cache of the driver's bundles preloaded.
if [ "$#" -eq 2 ] && [ "$1" = %s ] && [ "$2" = --version ]; then
	echo 'Version %s'
	exit 0
fi
%sexec %s "$@"
`

// shimTargets maps the shims this process wrote to the node each execs.
var shimTargets sync.Map

// versionShim writes (once) the shim for d under the cache directory and
// returns its path.
func versionShim(d Driver) (string, error) {
	if runtime.GOOS == "windows" {
		return "", errors.New("no shim on windows")
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		return "", err
	}
	script := fmt.Sprintf(shimScript, shQuote(filepath.Join(d.Dir, "package", "cli.js")), DriverVersion,
		codeCacheExec(d, shQuote(d.Node)), shQuote(d.Node))
	sum := sha256.Sum256([]byte(script))
	dir := filepath.Join(DefaultCacheDir(), "bin")
	path := filepath.Join(dir, "node-"+hex.EncodeToString(sum[:8]))
	shimTargets.Store(path, d.Node)
	if cur, err := os.ReadFile(path); err == nil && string(cur) == script && isExecutable(path) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".node-shim-")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(script)
	if err := errors.Join(werr, f.Chmod(0o755), f.Close()); err != nil {
		return "", err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}

func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// logWriter turns the driver's stderr into debug log lines.
type logWriter struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(w.buf[:i])); line != "" {
			w.log.Debug("driver", "line", line)
		}
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 {
		w.buf = w.buf[:0]
	}
	return len(p), nil
}
