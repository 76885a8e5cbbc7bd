package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/executor/ext/pairing"
)

func cmdSetup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("setup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs, "chromegate setup [flags]")
	dir := fs.String("driver-path", "", "where to install the driver (default: $PLAYWRIGHT_DRIVER_PATH, then "+cdp.DefaultDriverDir()+")")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	target := *dir
	if target == "" {
		target = os.Getenv("PLAYWRIGHT_DRIVER_PATH")
	}
	if target == "" {
		target = cdp.DefaultDriverDir()
	}
	fmt.Fprintf(stdout, "installing playwright-core %s (the Playwright driver) into %s\n", cdp.DriverVersion, target)
	if err := cdp.InstallDriver(ctx, target, stdout); err != nil {
		return err
	}
	if _, err := cdp.FindChromium(""); err != nil {
		fmt.Fprintf(stdout, "note: %s\n", explain(err))
	}
	fmt.Fprintln(stdout, "setup done; `chromegate doctor` checks everything")
	return nil
}

// check is one line of the doctor's report.
type check struct {
	name string
	ok   bool
	info string
	fix  string
}

// checkHeadlessShell says which browser a headless serve with these flags
// launches (cdp.LaunchExecutable decides, as serve does): a Chromium
// headless shell when one is installed; advice, not a failure, when none
// is.
func checkHeadlessShell(ctx context.Context, bf browserFlags) check {
	c := check{name: "headless shell", ok: true}
	exe, err := cdp.LaunchExecutable(bf.options(nil))
	sh := cdp.FindHeadlessShell()
	switch {
	case err != nil:
		return failed("headless shell", err)
	case sh == "":
		c.info = "not installed: a headless serve launches Chromium; apt-get install -y chromium-headless-shell for a fraction of its CPU per page (several times the sessions per machine)"
	case exe != sh:
		c.info = "installed, not used: the browser is named (--executable-path, $CHROME_PATH), or --headed or --headless-shell=off"
	default:
		vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out, err := exec.CommandContext(vctx, sh, "--version").Output()
		cancel()
		c.ok = err == nil
		c.info = sh + " " + strings.TrimSpace(string(out)) + " (a headless serve launches it; --headed, --with-extension or --headless-shell=off launch Chromium)"
		c.fix = "the binary does not run; reinstall it (apt-get install -y --reinstall chromium-headless-shell), or pass --headless-shell=off"
	}
	return c
}

func cmdDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var bf browserFlags
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs, "chromegate doctor [flags]")
	bf.register(fs)
	launch := fs.Bool("launch", true, "also launch the browser once and open a page")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	var checks []check

	if node, err := exec.LookPath("node"); err != nil {
		checks = append(checks, check{name: "node", info: "not found on PATH", fix: "apt-get install -y nodejs"})
	} else {
		out, err := exec.CommandContext(ctx, node, "--version").Output()
		checks = append(checks, check{name: "node", ok: err == nil, info: node + " " + strings.TrimSpace(string(out)), fix: "reinstall Node.js: apt-get install -y nodejs"})
	}

	driverOK := false
	if d, err := cdp.FindDriver(bf.driverPath); err != nil {
		checks = append(checks, failed("playwright driver", err))
	} else {
		driverOK = true
		checks = append(checks, check{name: "playwright driver", ok: true, info: fmt.Sprintf("playwright-core %s in %s (node %s)", d.Version, d.Dir, d.Node)})
	}

	chromeOK := false
	if path, err := cdp.FindChromium(bf.executablePath); err != nil {
		if exe, lerr := cdp.LaunchExecutable(bf.options(nil)); lerr == nil && exe != "" && exe == cdp.FindHeadlessShell() {
			// What a headless serve launches is the shell (checked
			// below); Chromium itself only serves --headed and
			// --with-extension. The container image has the shell alone.
			chromeOK = true
			checks = append(checks, check{name: "chromium", ok: true,
				info: "not installed: a headless serve launches the headless shell; --headed and --with-extension need it (apt-get install -y chromium)"})
		} else {
			checks = append(checks, failed("chromium", err))
		}
	} else {
		vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		out, err := exec.CommandContext(vctx, path, "--version").Output()
		cancel()
		chromeOK = err == nil
		checks = append(checks, check{name: "chromium", ok: chromeOK, info: path + " " + strings.TrimSpace(string(out)),
			fix: "the binary does not run; reinstall it: apt-get install -y --reinstall chromium"})
	}

	checks = append(checks, checkHeadlessShell(ctx, bf))

	dataDir := bf.dataDir
	if dataDir == "" {
		dataDir = cdp.DefaultDataDir()
	}
	checks = append(checks, checkWritable(dataDir))
	checks = append(checks, checkExtension(dataDir, nil))

	if *launch && driverOK && chromeOK {
		checks = append(checks, checkLaunch(ctx, bf))
	}

	bad := 0
	for _, c := range checks {
		mark := "ok  "
		if !c.ok {
			mark = "FAIL"
			bad++
		}
		fmt.Fprintf(stdout, "%s %-18s %s\n", mark, c.name, c.info)
		if !c.ok && c.fix != "" {
			fmt.Fprintf(stdout, "     %-18s fix: %s\n", "", c.fix)
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d problem(s) found", bad)
	}
	fmt.Fprintln(stdout, "everything looks good")
	return nil
}

// checkExtension reports how the extension would pair: the native host's
// registration (a broken one is a problem; none is only a note, since the
// extension is optional), the pinned extension, and a running server.
func checkExtension(dataDir string, hostDirs []string) check {
	c := check{name: "extension", ok: true}
	var parts []string
	hosts := pairing.FindNativeHosts(hostDirs)
	for _, h := range hosts {
		if !h.OK {
			c.ok = false
			c.fix = "register it again: chromegate pair install"
			parts = append(parts, fmt.Sprintf("native host %s names %s, which is missing or not executable", h.Manifest, h.Launcher))
		}
	}
	switch {
	case len(hosts) == 0:
		parts = append(parts, "native host not registered (optional: `chromegate pair install` lets your Chrome pair itself)")
	case c.ok:
		parts = append(parts, fmt.Sprintf("native host registered (%d browser(s))", len(hosts)))
	}
	if id := pairing.PairedExtension(dataDir); id != "" {
		parts = append(parts, "paired with "+id)
	} else {
		parts = append(parts, "not paired yet")
	}
	if h, err := pairing.ReadHandshake(dataDir); err == nil && isChromegate(h.PID) {
		parts = append(parts, fmt.Sprintf("a server is running (pid %d, bridge port %d)", h.PID, h.Port))
	}
	c.info = strings.Join(parts, "; ")
	return c
}

func failed(name string, err error) check {
	e := executor.AsError(err)
	return check{name: name, info: e.Message, fix: e.Hint}
}

func checkWritable(dir string) check {
	c := check{name: "data dir", info: dir, fix: fmt.Sprintf("make it writable: mkdir -p %q && chmod 700 %q, or pass --data-dir", dir, dir)}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		c.info = err.Error()
		return c
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		c.info = err.Error()
		return c
	}
	f.Close()
	os.Remove(f.Name())
	c.ok = true
	return c
}

// checkLaunch starts the browser as serve would (isolated, so it never
// touches the persistent profile) and opens a page.
func checkLaunch(ctx context.Context, bf browserFlags) check {
	if len(bf.browserEndpts) > 0 && len(bf.cdpEndpoints) == 0 {
		bf.cdpEndpoints = nil
		opts := bf.options(nil)
		opts.BrowserEndpoint = bf.browserEndpts[0] // the first server stands for the rest
		return launchCheck(ctx, opts)
	}
	if len(bf.cdpEndpoints) > 1 {
		bf.cdpEndpoints = bf.cdpEndpoints[:1]
	}
	bf.browserEndpts = nil
	bf.isolated = len(bf.cdpEndpoints) == 0
	return launchCheck(ctx, bf.options(nil))
}

func launchCheck(ctx context.Context, opts cdp.Options) check {
	c := check{name: "launch", fix: "run with --log-level=debug for details, or pass --browser-arg flags your system needs"}
	b, err := cdp.New(opts)
	if err != nil {
		return failed("launch", err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	start := time.Now()
	ex, err := b.Open(ctx, "")
	if err != nil {
		return failed("launch", err)
	}
	defer ex.Close()
	if _, err := ex.Navigate(ctx, executor.NavigateParams{URL: "about:blank"}); err != nil {
		return failed("launch", err)
	}
	st, _ := ex.Status(ctx)
	c.ok = true
	c.info = fmt.Sprintf("%s %s opened a page in %v", st.Browser, st.Version, time.Since(start).Round(time.Millisecond))
	return c
}

// explain renders an error with its fix, for messages printed to a person.
func explain(err error) string {
	e := executor.AsError(err)
	if e.Hint != "" {
		return e.Message + "; fix: " + e.Hint
	}
	return e.Message
}
