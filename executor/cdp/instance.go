package cdp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/playwright-community/playwright-go"
)

// launchTimeout bounds starting or attaching to a browser. A launch is
// shared by every caller waiting on it, so it has its own deadline.
const launchTimeout = 60 * time.Second

// instance is one driver process and the browser it launched or attached
// to. It dies as a whole: when the browser disconnects or the driver exits,
// every session on it is done and the next Open starts a new instance.
type instance struct {
	b           *Backend
	log         *slog.Logger
	pw          *playwright.Playwright
	driverPid   int
	browser     playwright.Browser
	defaultCtx  playwright.BrowserContext // the persistent context, the attached browser's first context, or the isolated default
	ownsDefault bool                      // defaultCtx was created by chromegate (isolated, or attached to a browser without contexts)
	attached    bool
	persistent  bool
	profile     string
	version     string
	timings     launchTimings

	deadCh   chan struct{}
	deadOnce sync.Once
	why      atomic.Pointer[string]

	// proxy is the egress proxy of a browser on this machine, nil when
	// requests are not decided or the browser cannot reach it; see
	// egress.go. defaultGuard is how the default context is guarded.
	proxy        *egress.Proxy
	defaultGuard string

	mu         sync.Mutex
	sessions   map[string]*Session
	proxyStops map[string]func() error // session → its proxy listener
	routed     map[playwright.BrowserContext]bool

	closeOnce sync.Once
	closeErr  error
}

// launchTimings records where the time of a start went, for logs and
// benchmarks. Prep and Driver overlap (see launch); the others follow one
// another.
type launchTimings struct {
	Find    time.Duration // locating the driver
	Prep    time.Duration // locating Chromium, the egress proxy and its listeners, the profile and its lock
	Driver  time.Duration // the Playwright driver, from spawn until it answered
	Browser time.Duration // launching or joining the browser, until its CDP answered
	Context time.Duration // the default browser context (isolated and remote browsers)
	Total   time.Duration // the whole start, as the first call waits for it
}

func (in *instance) dead() bool {
	select {
	case <-in.deadCh:
		return true
	default:
		return false
	}
}

// markDead records why the instance died and fails every session on it.
func (in *instance) markDead(why string) {
	in.deadOnce.Do(func() {
		in.why.Store(&why)
		close(in.deadCh)
		in.log.Info("browser instance ended", "why", why)
		in.mu.Lock()
		sessions := make([]*Session, 0, len(in.sessions))
		for _, s := range in.sessions {
			sessions = append(sessions, s)
		}
		in.mu.Unlock()
		for _, s := range sessions {
			s.markDone()
		}
	})
}

// reasonClosed is why an instance the server closed ended.
const reasonClosed = "closed"

func (in *instance) deathReason() string {
	if p := in.why.Load(); p != nil {
		return *p
	}
	return "the browser went away"
}

// sequentialStartEnv names the environment variable that makes launch
// start the driver only after everything else is ready, as chromegate did
// before the parallel start-up: for measuring one against the other
// (BenchmarkColdStart, TestPeersColdStart), not for use.
const sequentialStartEnv = "CHROMEGATE_SEQUENTIAL_START"

// launchPrep is what a launch needs besides the driver.
type launchPrep struct {
	exe     string            // the browser to launch, or to ask a browser server for
	profile string            // the persistent profile, ready and unlocked
	proxy   *playwright.Proxy // the launch's proxy setting
}

// driverStart is the outcome of starting the driver.
type driverStart struct {
	pw   *playwright.Playwright
	err  error
	took time.Duration
}

// launch starts the driver and, while it starts (about half of a cold
// start), gets ready everything else the browser needs: Chromium's path,
// the egress proxy and its listener, the profile directory and its stale
// lock. Then it launches or attaches to the browser. When any part fails,
// every part that started is stopped before launch returns: no driver,
// browser or listener outlives a failed start.
func (b *Backend) launch() (*instance, error) {
	start := time.Now()
	d, err := FindDriver(b.opts.DriverDir)
	if err != nil {
		return nil, err
	}
	remote := b.opts.CDPEndpoint != "" || b.opts.BrowserEndpoint != ""
	in := &instance{
		b:          b,
		log:        b.log,
		deadCh:     make(chan struct{}),
		sessions:   map[string]*Session{},
		proxyStops: map[string]func() error{},
		routed:     map[playwright.BrowserContext]bool{},
		attached:   remote,
	}
	in.timings.Find = time.Since(start)
	parallel := os.Getenv(sequentialStartEnv) == ""
	out := make(chan driverStart, 1)
	runIt := func() {
		t0 := time.Now()
		pw, err := runDriver(d, b.log)
		out <- driverStart{pw: pw, err: err, took: time.Since(t0)}
	}
	var drv <-chan driverStart = out
	if parallel {
		// A driver serve started ahead, or one started now.
		if pre := b.opts.Prestarted.take(d.Dir); pre != nil {
			drv = pre
		} else {
			go runIt()
		}
	}
	t0 := time.Now()
	prep, perr := in.prepare()
	in.timings.Prep = time.Since(t0)
	if !parallel && perr == nil {
		runIt()
	} else if !parallel {
		out <- driverStart{}
	}
	ds := <-drv
	in.timings.Driver = ds.took
	if ds.pw != nil {
		in.pw = ds.pw
		in.driverPid = ds.pw.Pid()
	}
	if perr == nil && ds.err != nil {
		perr = executor.Errorf(executor.CodeLaunchFailed, "the Playwright driver in %s did not start: %v", d.Dir, ds.err).
			WithHint(setupHint).Wrap(ds.err)
	}
	if perr != nil {
		in.abort()
		return nil, perr
	}
	if in.driverPid > 0 {
		go func() {
			waitExit(in.driverPid)
			in.markDead("the Playwright driver exited")
		}()
	}

	t0 = time.Now()
	switch {
	case b.opts.BrowserEndpoint != "":
		err = in.connect(b.opts.BrowserEndpoint, prep.exe)
	case in.attached:
		err = in.attach(b.opts.CDPEndpoint)
	case b.opts.Isolated:
		err = in.launchIsolated(prep)
	default:
		err = in.launchPersistent(prep)
	}
	if err != nil {
		in.abort()
		return nil, err
	}
	in.timings.Browser = time.Since(t0) - in.timings.Context
	in.timings.Total = time.Since(start)
	if in.browser != nil {
		in.version = in.browser.Version()
		in.browser.OnDisconnected(func(playwright.Browser) { in.markDead("the browser disconnected") })
	}
	if !in.attached {
		// chromegate closes the default context only with the browser, so
		// its closing means the browser is going (the persistent context
		// is the browser).
		in.defaultCtx.OnClose(func(playwright.BrowserContext) { in.markDead("the browser closed") })
	}
	tm := in.timings
	b.log.Info("browser started", "attached", in.attached, "persistent", in.persistent, "version", in.version, "exe", prep.exe,
		"parallel", parallel, "total_ms", tm.Total.Milliseconds(), "find_ms", tm.Find.Milliseconds(), "prep_ms", tm.Prep.Milliseconds(),
		"driver_ms", tm.Driver.Milliseconds(), "browser_ms", tm.Browser.Milliseconds(), "context_ms", tm.Context.Milliseconds())
	return in, nil
}

// abort stops what a failed launch started: the driver (which takes a
// browser it launched with it) and the egress proxy's listeners.
func (in *instance) abort() {
	in.markDead("launch failed")
	_ = in.stopDriver()
	in.closeProxy()
}

// LaunchExecutable is the browser a Backend with o launches (see
// launchExecutable), for `chromegate doctor` to say which; options New
// refuses are refused.
func LaunchExecutable(o Options) (string, error) {
	b, err := New(o)
	if err != nil {
		return "", executor.Errorf(executor.CodeBadArgs, "%v", err)
	}
	return b.launchExecutable()
}

// launchExecutable is the browser to launch. An executable named by
// --executable-path or $CHROME_PATH is launched as named. Otherwise a
// headless browser that loads no extension is a Chromium headless shell
// when one is installed (HeadlessShell auto, the default; on requires
// one): the browser Playwright itself runs for headless pages, which
// spends a third to a quarter of the CPU a page costs Chrome's own
// headless mode, so a machine serves several times the sessions. Anything
// else, or no shell, is FindChromium's search.
func (b *Backend) launchExecutable() (string, error) {
	o := b.opts
	named := o.ExecutablePath != "" || os.Getenv("CHROME_PATH") != ""
	fits := !o.Headed && o.ExtensionDir == ""
	switch o.HeadlessShell {
	case HeadlessShellOff:
	case HeadlessShellOn:
		if !fits {
			return "", executor.Errorf(executor.CodeBadArgs, "a headless shell cannot show a window or load the extension").
				WithHint("drop --headless-shell=on, or --headed and --with-extension")
		}
		if named {
			break
		}
		if sh := FindHeadlessShell(); sh != "" {
			return sh, nil
		}
		return "", executor.Errorf(executor.CodeLaunchFailed, "no Chromium headless shell found (looked in %s)",
			strings.Join(headlessShellCandidates, ", ")).
			WithHint("apt-get install -y chromium-headless-shell, or --headless-shell=auto")
	default:
		if sh := FindHeadlessShell(); sh != "" && fits && !named {
			return sh, nil
		}
	}
	return FindChromium(o.ExecutablePath)
}

// prepare gets ready what the browser needs besides the driver; it runs
// while the driver starts.
func (in *instance) prepare() (launchPrep, error) {
	b := in.b
	var p launchPrep
	var err error
	switch {
	case b.opts.BrowserEndpoint != "":
		p.exe = b.remoteExecutable()
	case b.opts.CDPEndpoint != "":
	default:
		if p.exe, err = b.launchExecutable(); err != nil {
			return p, err
		}
	}
	if err := in.startProxy(); err != nil {
		return p, executor.Errorf(executor.CodeLaunchFailed, "the egress proxy did not start: %v", err).Wrap(err)
	}
	switch {
	case in.attached:
		return p, nil
	case b.opts.Isolated:
		if p.proxy, err = in.browserProxy(); err != nil {
			return p, executor.Errorf(executor.CodeLaunchFailed, "the egress proxy did not start: %v", err).Wrap(err)
		}
		return p, nil
	}
	p.profile = b.profileDir()
	if err := ensureDir(p.profile, 0o700); err != nil {
		return p, executor.Errorf(executor.CodeLaunchFailed, "cannot create the profile directory: %v", err).
			WithHint("check the permissions of the data directory, or pass --isolated").Wrap(err)
	}
	if _, err := clearStaleLock(p.profile, b.log); err != nil {
		return p, err
	}
	if p.proxy, err = in.proxyFor(""); err != nil {
		return p, executor.Errorf(executor.CodeLaunchFailed, "the egress proxy did not start: %v", err).Wrap(err)
	}
	return p, nil
}

// chromiumArgs are the flags every launch gets: site isolation, the quiet
// switches (the browser makes no call of its own, quiet.go), then the
// caller's. --site-per-process gives every site its own renderer, as
// desktop Chrome does by default and the headless shell does not: a frame
// of another origin cannot share a process with the page that frames it,
// and the shell no longer stalls a page's load event when the page opens
// an about:blank popup while a cross-site frame of it is loading
// (TestFramesAreNotPierced hung on it). Playwright
// adds its own --enable-features and --disable-features; Chromium honours
// only the last of each, so every feature (Playwright's, ours, the user's)
// is merged into one switch of each kind at the end.
func (b *Backend) chromiumArgs() []string {
	var args []string
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	args = append(args, "--disable-gpu", "--disable-dev-shm-usage", "--site-per-process")
	args = append(args, quietSwitches...)
	args = append(args, b.egressArgs()...)
	args = append(args, b.opts.BrowserArgs...)
	disabled := append(slices.Clone(playwrightDisabledFeatures), quietFeatures...)
	if b.opts.NoSpareRenderer {
		disabled = append(disabled, spareRendererFeatures...)
	}
	args = mergeFeatureSwitch(args, "disable-features", disabled)
	return mergeFeatureSwitch(args, "enable-features", []string{"CDPScreenshotNewSurface", "WebMCP", "DevToolsWebMCPSupport"})
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0:0]
	for _, s := range in {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (b *Backend) viewport() *playwright.Size {
	return &playwright.Size{Width: b.opts.ViewportWidth, Height: b.opts.ViewportHeight}
}

func (in *instance) launchPersistent(prep launchPrep) error {
	b := in.b
	exe, profile, proxy := prep.exe, prep.profile, prep.proxy
	launch := func() (playwright.BrowserContext, error) {
		// Options are built afresh for each call: playwright-go clears some
		// fields of the struct it is given.
		return in.pw.Chromium.LaunchPersistentContext(profile, playwright.BrowserTypeLaunchPersistentContextOptions{
			ExecutablePath:    playwright.String(exe),
			Headless:          playwright.Bool(!b.opts.Headed),
			ChromiumSandbox:   playwright.Bool(os.Geteuid() != 0),
			Proxy:             proxy,
			Args:              append(b.chromiumArgs(), b.extensionArgs()...),
			IgnoreDefaultArgs: b.ignoredArgs(),
			AcceptDownloads:   playwright.Bool(true),
			Viewport:          b.viewport(),
			Timeout:           playwright.Float(float64(launchTimeout.Milliseconds())),
		})
	}
	c, err := launch()
	if err != nil {
		// The lock may have appeared (or gone stale) between the check and the launch.
		removed, lerr := clearStaleLock(profile, b.log)
		if lerr != nil {
			return lerr
		}
		if removed {
			c, err = launch()
		}
	}
	if err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "Chromium (%s) did not start with the profile %s: %s", exe, profile, launchReason(err)).
			WithHint(launchHint(err, "run `chromegate doctor`; pass --isolated to use a throw-away profile")).Wrap(err)
	}
	in.defaultCtx = c
	in.defaultGuard = in.guardOf(proxy != nil)
	in.browser = c.Browser()
	in.persistent = true
	in.profile = profile
	in.watchExtension(c)
	return nil
}

func (in *instance) launchIsolated(prep launchPrep) error {
	b := in.b
	exe, own := prep.exe, prep.proxy
	br, err := in.pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath:  playwright.String(exe),
		Headless:        playwright.Bool(!b.opts.Headed),
		ChromiumSandbox: playwright.Bool(os.Geteuid() != 0),
		Proxy:           own,
		Args:            b.chromiumArgs(),
		Timeout:         playwright.Float(float64(launchTimeout.Milliseconds())),
	})
	if err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "Chromium (%s) did not start: %s", exe, launchReason(err)).
			WithHint(launchHint(err, "run `chromegate doctor`")).Wrap(err)
	}
	in.browser = br
	c, err := in.timedDefaultContext()
	if err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "cannot create a browser context: %s", firstLine(err)).Wrap(err)
	}
	in.defaultCtx = c
	in.ownsDefault = true
	return nil
}

func (in *instance) attach(endpoint string) error {
	br, err := in.pw.Chromium.ConnectOverCDP(endpoint, playwright.BrowserTypeConnectOverCDPOptions{
		Timeout: playwright.Float(float64(launchTimeout.Milliseconds())),
	})
	if err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "cannot attach to the browser at %s: %s", endpoint, firstLine(err)).
			WithHint("start the browser with --remote-debugging-port and pass that endpoint").Wrap(err)
	}
	in.browser = br
	if cs := br.Contexts(); len(cs) > 0 && in.proxy == nil {
		// The browser's own context, which cannot be given a proxy: used
		// only when the proxy cannot be (a browser on another machine, or
		// routing chosen); with the proxy, chromegate makes its own
		// context so that every request of its session is decided on the
		// address it goes to.
		in.defaultCtx = cs[0]
		in.defaultGuard = in.guardOf(false)
		return nil
	}
	c, err := in.timedDefaultContext()
	if err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "cannot create a browser context in the attached browser: %s", firstLine(err)).Wrap(err)
	}
	in.defaultCtx = c
	in.ownsDefault = true
	return nil
}

// connect joins a Playwright browser server, which launches a browser for
// this connection with the options sent in x-playwright-launch-options
// (honoured for the executable path and flags when the server runs with
// --unsafe). The browser lives as long as the connection.
func (in *instance) connect(endpoint, exe string) error {
	b := in.b
	launch := map[string]any{"headless": !b.opts.Headed, "args": b.chromiumArgs()}
	if exe != "" {
		launch["executablePath"] = exe
	}
	hdr, _ := json.Marshal(launch)
	br, err := in.pw.Chromium.Connect(endpoint, playwright.BrowserTypeConnectOptions{
		Headers: map[string]string{"x-playwright-launch-options": string(hdr)},
		Timeout: playwright.Float(float64(launchTimeout.Milliseconds())),
	})
	if err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "cannot join the Playwright browser server at %s: %s", endpoint, firstLine(err)).
			WithHint("start it with `npx playwright@" + DriverVersion + " run-server --port N` (add --unsafe to let chromegate pass the browser path and flags) and pass ws://host:N/").Wrap(err)
	}
	in.browser = br
	c, err := in.timedDefaultContext()
	if err != nil {
		return executor.Errorf(executor.CodeLaunchFailed, "cannot create a browser context on the browser server: %s", firstLine(err)).Wrap(err)
	}
	in.defaultCtx = c
	in.ownsDefault = true
	return nil
}

// timedDefaultContext creates the default session's context at launch and
// records how long it took.
func (in *instance) timedDefaultContext() (playwright.BrowserContext, error) {
	t0 := time.Now()
	defer func() { in.timings.Context = time.Since(t0) }()
	return in.createContext("")
}

// remoteExecutable is the browser path sent to a browser server: the one
// given, or, for a server on this machine, the local Chromium; "" lets the
// server pick its own.
func (b *Backend) remoteExecutable() string {
	if b.opts.ExecutablePath != "" {
		return b.opts.ExecutablePath
	}
	if u, err := url.Parse(b.opts.BrowserEndpoint); err == nil {
		if ip := net.ParseIP(u.Hostname()); u.Hostname() == "localhost" || (ip != nil && ip.IsLoopback()) {
			if exe, err := FindChromium(""); err == nil {
				return exe
			}
		}
	}
	return ""
}

// close ends the instance: an attached browser only loses what chromegate
// opened in it and the connection; a launched one is closed with its
// driver. It waits until the driver has exited. Safe to call repeatedly.
func (in *instance) close() error {
	in.closeOnce.Do(func() {
		if in.attached && !in.dead() {
			in.mu.Lock()
			sessions := make([]*Session, 0, len(in.sessions))
			for _, s := range in.sessions {
				sessions = append(sessions, s)
			}
			in.mu.Unlock()
			for _, s := range sessions {
				s.closeOwned()
			}
		}
		in.markDead(reasonClosed)
		in.closeErr = in.stopDriver()
		in.closeProxy()
	})
	return in.closeErr
}

// stopDriver stops the driver, which closes a browser it launched (the
// persistent profile is flushed on the way) and disconnects from an attached
// one. A driver that does not exit in time is killed; Chromium then exits
// too, because its DevTools pipe closes.
func (in *instance) stopDriver() error {
	if in.pw == nil {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- in.pw.Stop() }()
	select {
	case err := <-done:
		if err != nil {
			in.log.Debug("driver stop", "err", err)
		}
		return nil
	case <-time.After(15 * time.Second):
		if in.driverPid > 0 {
			_ = killPID(in.driverPid)
		}
		<-done
		return errors.New("cdp: the Playwright driver did not exit in time and was killed")
	}
}

// clearStaleLock removes Chromium's Singleton* links from profile when the
// process that holds them is gone (or ran on another host). A lock held by
// a live Chromium is a LAUNCH_FAILED: two browsers cannot share a profile.
func clearStaleLock(profile string, log *slog.Logger) (removed bool, err error) {
	lock := filepath.Join(profile, "SingletonLock")
	target, rerr := os.Readlink(lock)
	if rerr != nil {
		if _, serr := os.Lstat(lock); serr != nil {
			return false, nil // no lock
		}
		target = "" // not a symlink: unreadable, treat as stale
	}
	host, pidStr, _ := cutLast(target, "-")
	var pid int
	_, _ = fmt.Sscanf(pidStr, "%d", &pid)
	me, _ := os.Hostname()
	if target != "" && host == me && pid > 0 && chromiumAlive(pid) {
		return false, executor.Errorf(executor.CodeLaunchFailed,
			"the profile %s is in use by another Chromium (pid %d), probably another chromegate", profile, pid).
			WithHint("stop the other chromegate or Chromium using that profile, or pass --isolated (or another --data-dir)")
	}
	for _, name := range []string{"SingletonLock", "SingletonSocket", "SingletonCookie"} {
		if err := os.Remove(filepath.Join(profile, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, executor.Errorf(executor.CodeLaunchFailed, "cannot remove the stale profile lock %s: %v", name, err).Wrap(err)
		}
	}
	log.Info("removed a stale profile lock", "profile", profile, "lock", target)
	return true, nil
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

func firstLine(err error) string {
	s := err.Error()
	for _, p := range []string{"playwright: ", "timeout: ", "target closed: "} {
		s = strings.TrimPrefix(s, p)
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// launchReason is Playwright's error with what the browser said on stderr
// before it exited (Playwright keeps that in its call log).
func launchReason(err error) string {
	reason := firstLine(err)
	var said []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if _, msg, ok := strings.Cut(l, "][err] "); ok && strings.TrimSpace(msg) != "" {
			said = append(said, strings.TrimSpace(msg))
		}
	}
	if len(said) > 3 {
		said = said[len(said)-3:]
	}
	if len(said) > 0 {
		reason += "; the browser said: " + strings.Join(said, " / ")
	}
	return reason
}

func launchHint(err error, fallback string) string {
	if strings.Contains(err.Error(), "Missing X server") || strings.Contains(err.Error(), "without having a XServer") {
		return "there is no display: drop --headed, or run chromegate under xvfb-run"
	}
	return fallback
}
