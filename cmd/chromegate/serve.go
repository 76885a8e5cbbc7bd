package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/statefile"
	"github.com/chromegate/chromegate/mcp/vault"
)

// browserFlags are the flags that say which browser to drive and how.
type browserFlags struct {
	executablePath string
	driverPath     string
	cdpEndpoints   listFlag
	browserEndpts  listFlag
	dataDir        string
	headed         bool
	headlessShell  string
	isolated       bool
	browserArgs    listFlag
	uploadDirs     listFlag
}

func (b *browserFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.executablePath, "executable-path", "", "Chromium or Chrome binary (default: $CHROME_PATH, /usr/bin/chromium, the usual Chrome paths)")
	fs.StringVar(&b.driverPath, "driver-path", "", "Playwright driver directory holding package/cli.js (default: $PLAYWRIGHT_DRIVER_PATH, then chromegate's cache dir)")
	fs.Var(&b.cdpEndpoints, "cdp-endpoint", "attach to a running browser at this CDP endpoint (http://127.0.0.1:9222) instead of launching one; it is never closed (repeatable: sessions are spread across endpoints)")
	fs.Var(&b.browserEndpts, "browser-endpoint", "join a Playwright browser server (`playwright run-server`, ws://host:port/) instead of launching a browser (repeatable)")
	fs.StringVar(&b.dataDir, "data-dir", "", "chromegate's data dir: browser profile and downloads (default: "+cdp.DefaultDataDir()+")")
	fs.BoolVar(&b.headed, "headed", false, "show the browser window (default: headless)")
	fs.StringVar(&b.headlessShell, "headless-shell", cdp.HeadlessShellAuto, "auto | on | off: launch a headless browser as a Chromium headless shell (Debian's chromium-headless-shell; Playwright's own headless browser), a fraction of the CPU per page of Chrome's headless mode; auto when one is installed and neither --executable-path, $CHROME_PATH, --headed nor --with-extension says otherwise")
	fs.BoolVar(&b.isolated, "isolated", false, "use an in-memory profile that is thrown away on exit, instead of the persistent one in the data dir")
	fs.Var(&b.browserArgs, "browser-arg", "extra Chromium flag (repeatable), e.g. --browser-arg=--lang=de")
	fs.Var(&b.uploadDirs, "upload-dir", "directory set_files may take files from (repeatable; default: the data dir's uploads and downloads)")
}

func (b *browserFlags) options(log *slog.Logger) cdp.Options {
	return cdp.Options{
		DriverDir:      b.driverPath,
		ExecutablePath: b.executablePath,
		HeadlessShell:  strings.ToLower(b.headlessShell),
		Headed:         b.headed,
		Isolated:       b.isolated,
		DataDir:        b.dataDir,
		BrowserArgs:    b.browserArgs,
		CDPEndpoint:    b.singleCDPEndpoint(),
		UploadDirs:     b.uploadDirs,
		Logger:         log,
	}
}

// singleCDPEndpoint is the endpoint of the plain (one-browser) backend;
// several endpoints, or any browser server, make a pool instead.
func (b *browserFlags) singleCDPEndpoint() string {
	if len(b.cdpEndpoints) == 1 && len(b.browserEndpts) == 0 {
		return b.cdpEndpoints[0]
	}
	return ""
}

// pooled reports whether the CDP backend is a pool of remote endpoints.
func (b *browserFlags) pooled() bool {
	return b.singleCDPEndpoint() == "" && len(b.cdpEndpoints)+len(b.browserEndpts) > 0
}

type serveConfig struct {
	browser        browserFlags
	policy         policyFlags
	ext            extFlags
	logLevel       string
	maxResultChars int
	lazy           bool
	plugins        string
	http           httpFlags
	debugAddr      string
	metricsAddr    string
	trace          traceFlags
	noEgress       bool
	egressVia      string
	secrets        secretFlags
	vault          *vault.Vault
	storageState   string
	acceptAlerts   bool
	changes        onOff
	flow           onOff
	record         string
	installDriver  bool
	tools          toolGroups
	outputSchemas  bool
}

func cmdServe(ctx context.Context, args []string, stderr io.Writer) error {
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs, "chromegate serve [flags]")
	cfg.browser.register(fs)
	cfg.policy.register(fs)
	cfg.policy.registerOPA(fs)
	cfg.http.register(fs)
	cfg.ext.register(fs)
	cfg.secrets.register(fs)
	fs.StringVar(&cfg.logLevel, "log-level", "info", "debug | info | warn | error (logs go to stderr)")
	fs.IntVar(&cfg.maxResultChars, "max-result-chars", 100_000, "cap on the text of one tool result; longer results end with a truncation marker")
	fs.BoolVar(&cfg.lazy, "lazy", false, "start the browser on the first call instead of at once (saves resources when the client may never call)")
	fs.StringVar(&cfg.plugins, "plugins", "", "directory of plugin tools (*.json), each a recipe of steps of the built-in tools, gated step by step (chromegate plugins init DIR writes examples)")
	fs.BoolVar(&cfg.noEgress, "unsafe-no-egress-boundary", false, "do not decide the requests pages make (subresources, fetch, frames, popups, WebSocket): only the model's calls are decided; for comparison and for browsers that cannot be given a proxy")
	fs.StringVar(&cfg.egressVia, "egress-via", "", "how a launched or local browser's requests reach the policy: proxy (default: chromegate's egress proxy, decided on the address dialled) or route (Playwright routing, for a browser that must not be given a proxy; weaker: redirect hops and DNS are not seen, see the README)")
	fs.StringVar(&cfg.storageState, "storage-state", "", "restore this storage state (Playwright's storageState JSON, e.g. one state_save wrote under DATA/state/) into every new browser context before its first call; each origin is decided by the policy like a navigation to it, and denied ones are skipped")
	fs.BoolVar(&cfg.acceptAlerts, "accept-alerts", false, "accept every alert of an allowed page as it opens (an alert asks nothing); confirm, prompt and beforeunload still wait for the model's dialog_answer")
	cfg.changes = true
	cfg.flow = true
	fs.Var(&cfg.flow, "flow", "on | off: remember which origins' content each session's model was shown, and decide every call and request with what of it they carry (input.flow, input.read_origins); off for measurement")
	fs.Var(&cfg.changes, "changes", "on | off: acting calls (click, type, fill, ...) return what they changed in the tab's outline since the caller last saw it, or the new outline after a navigation (a call's changes argument overrides it)")
	fs.StringVar(&cfg.record, "record", "", "keep a record of every call under this directory (0700), one per key and session (DIR/KEY/SESSION; stdio: DIR/local/default): arguments redacted, decisions, result summaries, a small screenshot after each acting call; capped at 64 MiB each; see chromegate report and chromegate recipe export")
	fs.BoolVar(&cfg.installDriver, "install-driver", false, "when the Playwright driver is missing, install it on start in the background, as `chromegate setup` does (needs node and npm; never downloads a browser); chrome_status shows the progress")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at /metrics, and /healthz and /readyz, on this address, e.g. 127.0.0.1:9464 (off by default; non-loopback needs --allow-remote)")
	fs.Var(&cfg.tools, "tools", toolsUsage())
	fs.BoolVar(&cfg.outputSchemas, "output-schemas", false, "declare each tool's output schema in tools/list (about 29,000 characters more; results carry their structured content either way)")
	cfg.trace.register(fs)
	fs.StringVar(&cfg.debugAddr, "debug-addr", "", "serve Go's pprof handlers (goroutines, heap) at /debug/pprof/ on this loopback address, e.g. 127.0.0.1:6060 (off by default)")
	if err := parseArgs(fs, joinHTTPArg(args)); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "serve takes no arguments, got %q\n", fs.Args())
		return errUsage
	}
	if err := unfilledSetting(fs); err != nil {
		return err
	}
	log, err := newLogger(stderr, cfg.logLevel)
	if err != nil {
		return err
	}
	if cfg.vault, err = cfg.secrets.load(); err != nil {
		return err
	}
	return serve(ctx, cfg, log, &sdk.StdioTransport{})
}

// processStart is about when the process started (package variables are
// set before main runs), for the start-up log line.
var processStart = time.Now()

// serve runs the MCP server on transport until ctx is done or the client
// goes away, then closes everything it launched.
func serve(ctx context.Context, cfg serveConfig, log *slog.Logger, transport sdk.Transport) error {
	// No log line, at any level, carries a secret's value.
	log = slog.New(cfg.vault.Handler(log.Handler()))
	if n := cfg.vault.Len(); n > 0 {
		log.Info("secrets declared", "names", cfg.vault.Names(), "origins", cfg.vault.Origins())
		if cfg.policy.dir != "" {
			log.Warn("--secrets with your own --policy: it must decide input.secrets (policies/README.md, Secrets); one that ignores it lets every secret go wherever it lets the model type")
		}
	}
	cfg.policy.vault = cfg.vault
	cfg.policy.replica = cmp.Or(cfg.http.fleet.replica, os.Getenv(envReplica))
	if err := startDebug(ctx, cfg.debugAddr, log); err != nil {
		return err
	}
	// The driver starts first, while the policy compiles and the server
	// is set up; the backend's first launch takes it, and it is stopped
	// when the server stops without one having taken it (a policy that
	// does not compile, a bad flag below).
	var pre *cdp.Prestarted
	if !cfg.lazy && !cfg.ext.noCDPFallback && !cfg.browser.pooled() {
		pre = cdp.Prestart(cfg.browser.driverPath, log)
		defer pre.Close()
	}
	// The policy comes first for the backends: they decide every request
	// their pages make through it.
	t0 := time.Now()
	gate, closeGate, err := cfg.policy.gate(ctx, log)
	if err != nil {
		return err
	}
	policyTook := time.Since(t0)
	defer closeGate()
	mx, err := newMetrics(cfg.metricsAddr, cfg.http.allowRemote)
	if err != nil {
		return err
	}
	tr, stopTracing, err := startTracing(ctx, cfg.trace, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	if mx != nil && cfg.policy.opa != nil {
		mx.WatchBundles(gate.Engine.Status)
	}
	boundary := egress.NewBoundary(egressObserved(mx, gate))
	if cfg.noEgress {
		log.Warn("--unsafe-no-egress-boundary: pages may request any address, internal ones included; only the model's calls are decided")
		boundary = nil
	}
	// What can refuse to start the server is read before any browser is.
	plugins, err := loadPlugins(cfg.plugins, log)
	if err != nil {
		return err
	}
	initial, err := loadStorageState(cfg.storageState, log)
	if err != nil {
		return err
	}
	copts := cfg.browser.options(log)
	if err := cdp.CheckHeadlessShell(copts.HeadlessShell); err != nil {
		return fmt.Errorf("--headless-shell %w", err)
	}
	copts.Prestarted = pre
	events := browserEvents(mx)
	copts.Events = events
	if err := cfg.http.load.browser(&copts, cfg.http.addr.v != ""); err != nil {
		return err
	}
	copts.Egress = boundary
	if cfg.egressVia == egress.ViaProxy {
		cfg.egressVia = ""
	}
	copts.EgressVia = cfg.egressVia
	backends, err := cfg.ext.setup(log, &cfg.browser, copts, chromegateVersion(), boundary)
	if err != nil {
		return err
	}
	defer backends.Close()
	if cfg.ext.noCDPFallback {
		// --use-extension chose the extension alone: nothing launches.
		pre.Close()
	}
	backends.watchHangup(ctx, log)
	ready := checkReadiness(ctx, &cfg, log)
	mgr := executor.NewManager(executor.ManagerOptions{Backends: backends.backends, Logger: log, Events: events})
	defer func() {
		if err := mgr.Close(); err != nil {
			log.Warn("closing the browser", "err", err)
		}
	}()
	if !cfg.lazy {
		// Start the driver and the browser now, while the rest of the
		// server is set up and the client initialises: the first navigate
		// then finds them ready. A set-up step that fails below closes the
		// manager, which stops whatever this started.
		mgr.Warm(mcp.DefaultSession)
	}
	log.Debug("start-up", "since_exec_ms", time.Since(processStart).Milliseconds(), "policy_ms", policyTook.Milliseconds())

	var recorder *mcp.Recorder
	if cfg.record != "" {
		recorder = &mcp.Recorder{Root: cfg.record}
		defer recorder.Close()
		log.Info("recording every call", "dir", cfg.record)
	}
	if err := startMetrics(ctx, mx, cfg.metricsAddr, mgr, gate.Engine.Status, log); err != nil {
		return err
	}
	observer, decider := observed(mx, gate)
	tracer, decider := traced(tr, decider)
	srv, err := mcp.NewServer(mcp.Options{
		Manager:          mgr,
		Gate:             decider,
		Observer:         observer,
		Tracer:           tracer,
		Sessions:         gate.Sessions,
		Egress:           boundary,
		Logger:           log,
		MaxResultChars:   cfg.maxResultChars,
		Version:          chromegateVersion(),
		Status:           mergeStatus(gate.Status, backends.status, ready.status),
		Plugins:          plugins,
		Secrets:          cfg.vault,
		StateDir:         filepath.Join(cfg.browser.resolvedDataDir(), "state"),
		StorageState:     initial,
		StorageStatePath: cfg.storageState,
		AcceptAlerts:     cfg.acceptAlerts,
		Record:           recorder,
		Changes:          bool(cfg.changes),
		NoFlow:           !bool(cfg.flow),
		Tools:            cfg.tools,
		OutputSchemas:    cfg.outputSchemas,
	})
	if err != nil {
		return err
	}
	if cfg.http.addr.v != "" {
		return serveHTTP(ctx, cfg, log, srv, mx)
	}
	log.Info("chromegate serving MCP on stdio", "version", chromegateVersion(), "backends", mgr.Backends())
	err = srv.Run(ctx, transport)
	if ctx.Err() != nil {
		log.Info("shutting down", "cause", context.Cause(ctx))
		return nil
	}
	return err
}

// loadStorageState reads serve --storage-state's file, once, at start: a
// file that is missing, too large or not a storage state stops the server
// with why (never with what it holds).
func loadStorageState(path string, log *slog.Logger) (*executor.StorageState, error) {
	if path == "" {
		return nil, nil
	}
	st, err := statefile.ReadFile(path)
	if err != nil {
		if e := executor.AsError(err); e != nil && e.Code != "" {
			return nil, fmt.Errorf("--storage-state %s: %s", path, e.Message)
		}
		return nil, fmt.Errorf("--storage-state: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		// It holds logins: the operator should know others can read it.
		log.Warn("--storage-state file is readable by other users of this machine; chmod 600 it", "file", path, "mode", fi.Mode().Perm().String())
	}
	log.Info("storage state to restore into every new context", "file", path, "cookies", len(st.Cookies), "origins", len(st.Origins))
	return &st, nil
}

// loadPlugins loads the plugin directory, if one is given. A file that does
// not load is logged with its reason (and shown by chrome_status); the
// others are served.
func loadPlugins(dir string, log *slog.Logger) (*mcp.Plugins, error) {
	if dir == "" {
		return nil, nil
	}
	ps, err := mcp.LoadPlugins(dir)
	if err != nil {
		return nil, err
	}
	for _, r := range ps.Rejected {
		log.Warn("plugin rejected", "file", r.File, "reason", r.Reason)
	}
	names := make([]string, len(ps.Loaded))
	for i, p := range ps.Loaded {
		names[i] = p.Name()
	}
	log.Info("plugins loaded", "dir", dir, "tools", names, "rejected", len(ps.Rejected))
	return ps, nil
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// mergeStatus joins the parts of chrome_status that live outside mcp.
func mergeStatus(parts ...func(context.Context) map[string]any) func(context.Context) map[string]any {
	return func(ctx context.Context) map[string]any {
		out := map[string]any{}
		for _, p := range parts {
			for k, v := range p(ctx) {
				out[k] = v
			}
		}
		return out
	}
}

// onOff is a flag.Value of "on" or "off" (and Go's boolean spellings).
type onOff bool

func (o *onOff) String() string {
	if o != nil && bool(*o) {
		return "on"
	}
	return "off"
}

func (o *onOff) Set(s string) error {
	switch strings.ToLower(s) {
	case "on", "true", "1", "yes":
		*o = true
	case "off", "false", "0", "no":
		*o = false
	default:
		return fmt.Errorf("want on or off, got %q", s)
	}
	return nil
}
