package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/cdp"
)

// hostList is a repeatable flag of host names, where one value may also
// hold several separated by commas or spaces (a host has neither): a
// Claude Desktop bundle passes its "Allowed domains" field as one
// --allow-domain=VALUE, and an empty value adds nothing.
type hostList []string

func (l *hostList) String() string { return strings.Join(*l, ",") }

func (l *hostList) Set(v string) error {
	hosts := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	for _, h := range hosts {
		// A form field is one argument and can never become a flag; a
		// value that reads like one is a mistake to point out, not a host.
		if strings.HasPrefix(h, "-") {
			return fmt.Errorf("%q is not a host name (flags cannot be given in a list of hosts)", h)
		}
	}
	*l = append(*l, hosts...)
	return nil
}

// triBool is a boolean flag that also knows it was not given: --use-extension
// alone or =true, =false, or absent (auto).
type triBool struct {
	set, v bool
}

func (b *triBool) String() string {
	if !b.set {
		return "auto"
	}
	return strconv.FormatBool(b.v)
}

func (b *triBool) Set(s string) error {
	if s == "auto" {
		*b = triBool{}
		return nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true, false or auto")
	}
	*b = triBool{set: true, v: v}
	return nil
}

func (b *triBool) IsBoolFlag() bool { return true }

// applyUseExtension turns --use-extension into the backend flags: true
// serves only through the paired extension (the user's own Chrome, never a
// launched browser), false only through a browser chromegate launches or
// attaches to. Flags that say the opposite are refused rather than one
// silently winning.
func (f *extFlags) applyUseExtension() error {
	if !f.useExtension.set {
		return nil
	}
	if f.useExtension.v {
		if f.noExtension || f.withExtension {
			return fmt.Errorf("--use-extension=true drives your own Chrome through the paired extension: drop --no-extension and --with-extension")
		}
		f.noCDPFallback = true
		return nil
	}
	if f.noCDPFallback {
		return fmt.Errorf("--use-extension=false drives a browser chromegate launches: drop --no-cdp-fallback")
	}
	if !f.withExtension {
		f.noExtension = true
	}
	return nil
}

// unfilledSetting finds a flag whose value still holds a bundle variable
// (${user_config.KEY}, ${__dirname}) that the client did not replace: the
// server stops with which setting, rather than run with a literal
// "${user_config.data_dir}" directory or host.
func unfilledSetting(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		if err == nil && (strings.Contains(v, "${user_config.") || strings.Contains(v, "${__dirname}")) {
			err = fmt.Errorf("--%s=%s: a bundle setting was not filled in; set it in the extension's settings (Claude Desktop → Settings → Extensions → chromegate), or pass a value", f.Name, v)
		}
	})
	return err
}

// readiness is what the CDP backend needs on this machine (the driver,
// Node.js, a browser) and, when something is missing, what to do: checked
// once at start so that a first run (a fresh Claude Desktop bundle, an
// unpacked archive) says so in the log and in chrome_status instead of at
// the first failed call. The server serves either way: its tools answer
// with the same fix.
type readiness struct {
	mu         sync.Mutex
	missing    []missingPart
	installing bool
	installErr string
}

type missingPart struct {
	What string `json:"what"`
	Why  string `json:"why"`
	Fix  string `json:"fix"`
}

// checkReadiness checks the launched browser's parts (nothing when no
// browser is launched: the extension only, or remote browsers) and, with
// install, installs a missing driver in the background as `chromegate
// setup` does.
func checkReadiness(ctx context.Context, cfg *serveConfig, log *slog.Logger) *readiness {
	r := &readiness{}
	bf := cfg.browser
	if cfg.ext.noCDPFallback || len(bf.cdpEndpoints) > 0 || len(bf.browserEndpts) > 0 {
		return r
	}
	driverMissing := false
	if _, err := cdp.FindDriver(bf.driverPath); err != nil {
		driverMissing = true
		r.add("playwright driver", err)
	}
	// The browser serve would launch: a headless shell alone (the
	// container image) is a browser.
	if _, err := cdp.LaunchExecutable(bf.options(nil)); err != nil {
		r.add("browser", err)
	}
	if driverMissing && cfg.installDriver {
		_, nodeErr := exec.LookPath("node")
		_, npmErr := exec.LookPath("npm")
		if nodeErr == nil && npmErr == nil {
			r.installing = true
			go r.install(ctx, bf.driverPath, log)
		}
	}
	for _, m := range r.snapshot() {
		log.Warn("first run: "+m.What+" is missing; tool calls that need a browser fail until it is installed",
			"why", m.Why, "fix", m.Fix)
	}
	return r
}

func (r *readiness) add(what string, err error) {
	e := executor.AsError(err)
	r.missing = append(r.missing, missingPart{What: what, Why: e.Message, Fix: e.Hint})
}

func (r *readiness) snapshot() []missingPart {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]missingPart(nil), r.missing...)
}

// install runs the driver's installation (npm, a minute or so) and, when it
// worked, drops the driver from what is missing.
func (r *readiness) install(ctx context.Context, dir string, log *slog.Logger) {
	target := dir // where FindDriver looks, as `chromegate setup` installs
	if target == "" {
		target = os.Getenv("PLAYWRIGHT_DRIVER_PATH")
	}
	if target == "" {
		target = cdp.DefaultDriverDir()
	}
	log.Info("installing the Playwright driver (--install-driver), as `chromegate setup` does", "dir", target)
	err := cdp.InstallDriver(ctx, target, logWriter{log})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.installing = false
	if err != nil {
		r.installErr = executor.AsError(err).Message
		log.Error("installing the Playwright driver failed", "err", err, "fix", cdp.SetupCommand())
		return
	}
	kept := r.missing[:0]
	for _, m := range r.missing {
		if m.What != "playwright driver" {
			kept = append(kept, m)
		}
	}
	r.missing = kept
	log.Info("the Playwright driver is installed", "dir", target)
}

// status is the readiness part of chrome_status: present only when
// something is or was missing.
func (r *readiness) status(context.Context) map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.missing) == 0 && !r.installing && r.installErr == "" {
		return nil
	}
	s := map[string]any{"ready": len(r.missing) == 0 && !r.installing, "missing": append([]missingPart(nil), r.missing...)}
	if r.installing {
		s["installing_driver"] = true
	}
	if r.installErr != "" {
		s["install_error"] = r.installErr
	}
	return map[string]any{"setup": s}
}

// logWriter turns the installer's progress lines into log lines.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if line != "" {
			w.log.Info("driver install: " + line)
		}
	}
	return len(p), nil
}

var _ io.Writer = logWriter{}
