package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/executor/ext"
	"github.com/chromegate/chromegate/executor/ext/bridge"
	"github.com/chromegate/chromegate/extension"
)

// extFlags choose between the extension (the user's own Chrome) and the
// CDP backend (a Chromium chromegate launches or attaches to).
type extFlags struct {
	noExtension   bool
	bridgeAddr    string
	prefer        string
	noCDPFallback bool
	withExtension bool
	useExtension  triBool
	extensionDir  string
}

func (f *extFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.noExtension, "no-extension", false, "do not run the extension bridge (only the CDP backend is used)")
	fs.StringVar(&f.bridgeAddr, "bridge-addr", defaultBridgeAddr, "loopback address the extension connects to (port 0: any free port; the extension learns it when it pairs)")
	fs.StringVar(&f.prefer, "prefer", "extension", "backend to use when both can serve: extension | cdp")
	fs.BoolVar(&f.noCDPFallback, "no-cdp-fallback", false, "never launch or attach to a browser: serve only through the paired extension")
	fs.BoolVar(&f.withExtension, "with-extension", false, "load chromegate's extension into the browser chromegate launches and pair it over CDP, so tabs are driven through it")
	fs.Var(&f.useExtension, "use-extension", "true: drive your own Chrome through the paired extension only (as --no-cdp-fallback); false: only a browser chromegate launches or attaches to (as --no-extension); auto (default): the extension when paired, else a launched browser")
	fs.StringVar(&f.extensionDir, "extension-dir", "", "with --with-extension, load this unpacked extension folder (an unzipped `chromegate extension pack`) instead of writing out the built-in one; its manifest key must give chromegate's extension id")
}

// defaultBridgeAddr lets the bridge pick a free loopback port.
const defaultBridgeAddr = "127.0.0.1:0"

// extSetup is what the extension flags set up for serve.
type extSetup struct {
	bridge   *bridge.Bridge
	extBack  *ext.Backend
	pool     *cdp.Pool
	backends []executor.Backend
}

// dataDir is the data directory the browser flags name.
func (b *browserFlags) resolvedDataDir() string {
	if b.dataDir != "" {
		return b.dataDir
	}
	return cdp.DefaultDataDir()
}

// setup starts the bridge (unless disabled) and orders the backends. copts
// are the CDP backend's options; --with-extension adds the extension to them.
// boundary decides every request of the tabs the extension drives (nil:
// none is decided).
func (f *extFlags) setup(log *slog.Logger, bf *browserFlags, copts cdp.Options, version string, boundary *egress.Boundary) (*extSetup, error) {
	dataDir := bf.resolvedDataDir()
	if err := f.applyUseExtension(); err != nil {
		return nil, err
	}
	if f.extensionDir != "" && !f.withExtension {
		return nil, fmt.Errorf("--extension-dir needs --with-extension")
	}
	if f.prefer != "extension" && f.prefer != "cdp" {
		return nil, fmt.Errorf("--prefer %q: want extension or cdp", f.prefer)
	}
	if f.noExtension && f.noCDPFallback {
		return nil, fmt.Errorf("--no-extension with --no-cdp-fallback leaves no backend")
	}
	if f.withExtension && (f.noExtension || f.noCDPFallback) {
		return nil, fmt.Errorf("--with-extension needs both the bridge and the CDP backend (it loads the extension into the browser chromegate launches)")
	}
	s := &extSetup{}
	var extBackend executor.Backend
	needBridge := f.noCDPFallback || f.withExtension || f.bridgeAddr != defaultBridgeAddr
	// The server's own fetches for the extension (download_file) see the
	// names as the browser does: the host mapping of a browser chromegate
	// launches with the extension; the user's own Chrome resolves as the
	// system does.
	var resolver *egress.Resolver
	if f.withExtension {
		r, err := egress.NewResolver(copts.BrowserArgs)
		if err != nil {
			return nil, err
		}
		resolver = r
	}
	if !f.noExtension {
		b, err := bridge.Start(bridge.Options{DataDir: dataDir, Addr: f.bridgeAddr, Logger: log, Version: version,
			Scripts: executor.ExtensionScripts()})
		switch {
		case err == nil:
			s.bridge = b
			s.extBack = ext.NewBackend(b, ext.BackendOptions{DataDir: dataDir, UploadDirs: uploadDirs(copts, dataDir),
				MaxDownloadBytes: copts.MaxDownloadBytes, Boundary: boundary, Resolver: resolver})
			extBackend = s.extBack
		case needBridge:
			return nil, err
		default:
			// The extension is optional: without its bridge the CDP
			// backend still serves, and the extension cannot pair.
			log.Warn("the extension bridge did not start; serving without it", "err", err)
		}
	}
	if f.withExtension {
		if copts.CDPEndpoint != "" || bf.pooled() || copts.Isolated {
			s.Close()
			return nil, fmt.Errorf("--with-extension needs the persistent profile of a browser chromegate launches (not --cdp-endpoint or --isolated)")
		}
		dir := filepath.Join(dataDir, "extension")
		if f.extensionDir != "" {
			var err error
			if dir, err = unpackedExtension(f.extensionDir); err != nil {
				s.Close()
				return nil, err
			}
		} else if err := extension.Install(dir); err != nil {
			s.Close()
			return nil, fmt.Errorf("write the extension to %s: %w", dir, err)
		}
		copts.ExtensionDir, copts.ExtensionID = dir, extension.ID()
		copts.PairExtension = s.bridge.PairOverCDP
		// The extension's service worker dials the bridge on loopback;
		// the bridge checks its Origin and token itself.
		copts.EgressBypass = append(copts.EgressBypass, fmt.Sprintf("127.0.0.1:%d", s.bridge.Port()))
	}
	var cdpBackend executor.Backend
	if !f.noCDPFallback {
		if bf.pooled() {
			p, err := cdp.NewPool(copts, bf.browserEndpts, bf.cdpEndpoints)
			if err != nil {
				s.Close()
				return nil, err
			}
			s.pool, cdpBackend = p, p
		} else {
			b, err := cdp.New(copts)
			if err != nil {
				s.Close()
				return nil, err
			}
			cdpBackend = b
		}
	}
	order := []executor.Backend{extBackend, cdpBackend}
	if f.prefer == "cdp" {
		order = []executor.Backend{cdpBackend, extBackend}
	}
	for _, b := range order {
		if b != nil {
			s.backends = append(s.backends, b)
		}
	}
	return s, nil
}

// uploadDirs are the directories set_files may read, as the CDP backend
// defaults them.
func uploadDirs(copts cdp.Options, dataDir string) []string {
	if len(copts.UploadDirs) > 0 {
		return copts.UploadDirs
	}
	return []string{filepath.Join(dataDir, "uploads"), filepath.Join(dataDir, "downloads")}
}

// watchHangup rotates the token on SIGHUP: the kill switch a user (or
// `chromegate pair reset`) pulls to cut the extension off.
func (s *extSetup) watchHangup(ctx context.Context, log *slog.Logger) {
	if s.bridge == nil {
		return
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ch:
				if err := s.bridge.Rotate(); err != nil {
					log.Error("SIGHUP: could not rotate the extension token", "err", err)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
}

// status is the extension's part of chrome_status.
func (s *extSetup) status(context.Context) map[string]any {
	out := map[string]any{"extension": map[string]any{"enabled": false}}
	if s.bridge != nil {
		st := s.bridge.Status()
		st.AttachedTabs = s.extBack.StampTabs(st.AttachedTabs)
		out["extension"] = st
	}
	if s.pool != nil {
		out["endpoints"] = s.pool.Health()
	}
	return out
}

// Close stops the bridge.
func (s *extSetup) Close() {
	if s.bridge != nil {
		_ = s.bridge.Close()
	}
}
