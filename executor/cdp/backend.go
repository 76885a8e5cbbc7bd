package cdp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
)

// Options configures a Backend. The zero value launches headless Chromium
// with a persistent profile under DefaultDataDir().
type Options struct {
	DriverDir      string // --driver-path; default: FindDriver's search
	ExecutablePath string // --executable-path; default: FindChromium's search
	// HeadlessShell says whether a headless browser is a Chromium
	// headless shell (see launchExecutable): HeadlessShellAuto (""),
	// HeadlessShellOn or HeadlessShellOff.
	HeadlessShell string
	Headed        bool     // show a window (default headless)
	Isolated      bool     // in-memory profile, removed on close, instead of DataDir/profile
	DataDir       string   // default DefaultDataDir(); profile at DataDir/profile, downloads at DataDir/downloads
	BrowserArgs   []string // extra Chromium flags (--browser-arg, repeatable)
	// CDPEndpoint attaches to a running browser (http://host:port or
	// ws://...) instead of launching one. chromegate never closes that
	// browser nor anything in it that it did not open.
	CDPEndpoint string
	// BrowserEndpoint joins a Playwright browser server (`playwright
	// run-server`, ws://host:port/) instead of launching a browser: the
	// server launches one for this connection with the options chromegate
	// sends (executable path, flags, headless) and closes it when
	// chromegate disconnects.
	BrowserEndpoint string
	// UploadDirs are the only directories set_files may take files from
	// (default: DataDir/uploads and DataDir/downloads), so a page can never
	// be handed an arbitrary file of the server.
	UploadDirs          []string
	MaxDownloadBytes    int64 // default 100 MiB
	MaxScreenshotHeight int   // full-page cap in CSS px, default 8000
	ViewportWidth       int   // default 1280
	ViewportHeight      int   // default 720
	// ExtensionDir loads chromegate's unpacked extension into the browser
	// chromegate launches with its persistent profile; ExtensionID names
	// it, and PairExtension is called with every service worker of it
	// (at start and after the worker restarts) to hand it its pairing
	// over CDP. Pages are driven by the extension then, not by this
	// backend, unless the extension is gone.
	ExtensionDir  string
	ExtensionID   string
	PairExtension func(ctx context.Context, eval func(ctx context.Context, fn string, arg any) error) error
	// Egress decides every request the browser's pages, frames and workers
	// make (egress.go says how each kind of browser is hooked); nil lets
	// them all go.
	Egress *egress.Boundary
	// EgressVia "route" decides requests by Playwright routing even where
	// the proxy could be used (a browser that must not be given a proxy);
	// "" picks the proxy where the browser can reach it. See egress.go.
	EgressVia string
	// EgressBypass are host:port pairs the browser reaches without the
	// egress proxy: chromegate's own extension bridge.
	EgressBypass []string
	// Prestarted is a driver started ahead (Prestart): the first launch
	// uses it instead of starting one.
	Prestarted *Prestarted
	// NoSpareRenderer turns off Chromium's spare renderer (see
	// spareRendererFeatures): a server of many sessions at once sets it.
	NoSpareRenderer bool
	Logger          *slog.Logger
	// Events, if set, hears each browser start (launch or attach) and
	// each browser that ended without being closed (executor.Events).
	Events executor.Events
}

// Values of Options.HeadlessShell.
const (
	HeadlessShellAuto = "auto"
	HeadlessShellOn   = "on"
	HeadlessShellOff  = "off"
)

// CheckHeadlessShell refuses a value of Options.HeadlessShell (or of
// --headless-shell) other than auto, on, off or "".
func CheckHeadlessShell(v string) error {
	switch v {
	case "", HeadlessShellAuto, HeadlessShellOn, HeadlessShellOff:
		return nil
	}
	return fmt.Errorf("%q: want auto, on or off", v)
}

// The defaults of Options.
const (
	DefaultMaxDownloadBytes    = 100 << 20
	DefaultMaxScreenshotHeight = 8000
	DefaultViewportWidth       = 1280
	DefaultViewportHeight      = 720
)

// Backend launches (or attaches to) one Chromium through one Playwright
// driver and hands out an Executor per session: the default session ("")
// uses the persistent profile's context, every named session gets its own
// browser context in the same browser, so sessions never share cookies or
// tabs. The browser starts on the first Open, and again on the next Open
// after it died.
//
// Backend is safe for concurrent use. Close may be called more than once,
// concurrently.
type Backend struct {
	opts Options
	log  *slog.Logger
	// resolver maps names as the browser's --host-resolver-rules do, for
	// the fetches the server makes itself (downloads by URL).
	resolver *egress.Resolver

	mu       sync.Mutex
	closed   bool
	cur      *instance // the live browser, if any
	starting *startOp  // a launch in flight, if any
	wg       sync.WaitGroup
}

// startOp is one launch shared by every Open that waits for it.
type startOp struct {
	done chan struct{}
	inst *instance
	err  error
}

var (
	_ executor.Backend           = (*Backend)(nil)
	_ interface{ Close() error } = (*Backend)(nil)
)

// New validates opts and returns a Backend. It starts nothing: the driver
// and the browser start on the first Open.
func New(opts Options) (*Backend, error) {
	switch {
	case opts.MaxDownloadBytes < 0:
		return nil, errors.New("cdp: MaxDownloadBytes must not be negative")
	case opts.MaxScreenshotHeight < 0:
		return nil, errors.New("cdp: MaxScreenshotHeight must not be negative")
	case opts.ViewportWidth < 0 || opts.ViewportHeight < 0:
		return nil, errors.New("cdp: the viewport size must not be negative")
	case opts.CDPEndpoint != "" && opts.BrowserEndpoint != "":
		return nil, errors.New("cdp: CDPEndpoint and BrowserEndpoint exclude each other (one backend, one browser)")
	case opts.BrowserEndpoint != "" && opts.Isolated:
		return nil, errors.New("cdp: Isolated and BrowserEndpoint exclude each other (a remote browser's contexts are always fresh)")
	case opts.EgressVia != "" && opts.EgressVia != egress.ViaRoute && opts.EgressVia != egress.ViaProxy:
		return nil, fmt.Errorf("cdp: EgressVia %q: want proxy or route", opts.EgressVia)
	case opts.CDPEndpoint != "" && opts.Isolated:
		return nil, errors.New("cdp: Isolated and CDPEndpoint exclude each other (an attached browser keeps its own profile)")
	case CheckHeadlessShell(opts.HeadlessShell) != nil:
		return nil, fmt.Errorf("cdp: HeadlessShell: %w", CheckHeadlessShell(opts.HeadlessShell))
	}
	if opts.MaxDownloadBytes == 0 {
		opts.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	if opts.MaxScreenshotHeight == 0 {
		opts.MaxScreenshotHeight = DefaultMaxScreenshotHeight
	}
	if opts.ViewportWidth == 0 {
		opts.ViewportWidth = DefaultViewportWidth
	}
	if opts.ViewportHeight == 0 {
		opts.ViewportHeight = DefaultViewportHeight
	}
	if opts.DataDir == "" {
		opts.DataDir = DefaultDataDir()
	}
	if abs, err := filepath.Abs(opts.DataDir); err == nil {
		opts.DataDir = abs
	}
	opts.BrowserArgs = append([]string(nil), opts.BrowserArgs...)
	if len(opts.UploadDirs) == 0 {
		opts.UploadDirs = []string{filepath.Join(opts.DataDir, "uploads"), filepath.Join(opts.DataDir, "downloads")}
	}
	opts.UploadDirs = append([]string(nil), opts.UploadDirs...)
	// A resolver rule the proxy cannot honour is refused now, not at the
	// first page.
	res, err := egress.NewResolver(opts.BrowserArgs)
	if err != nil {
		return nil, fmt.Errorf("cdp: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = discardLogger
	}
	if opts.Events == nil {
		opts.Events = executor.NoEvents{}
	}
	return &Backend{opts: opts, log: log, resolver: res}, nil
}

// Name is "cdp".
func (b *Backend) Name() string { return "cdp" }

func (b *Backend) profileDir() string  { return filepath.Join(b.opts.DataDir, "profile") }
func (b *Backend) downloadDir() string { return filepath.Join(b.opts.DataDir, "downloads") }

// Open returns the Executor of session, starting the driver and the browser
// if none is running. The launch is shared: it is not cancelled when ctx
// ends (a later Open picks it up), but Open returns when ctx ends.
func (b *Backend) Open(ctx context.Context, session string) (executor.Executor, error) {
	for attempt := 0; ; attempt++ {
		inst, err := b.instance(ctx)
		if err != nil {
			return nil, err
		}
		s, err := inst.open(ctx, session)
		// A browser that died just now is noticed here before its
		// disconnect event: start a new one, once.
		if err != nil && inst.dead() && attempt == 0 && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return nil, err
		}
		return s, nil
	}
}

var errBackendClosed = executor.Errorf(executor.CodeNoBackend, "the CDP backend is closed")

// instance returns the live browser, starting one (single-flight) if needed.
func (b *Backend) instance(ctx context.Context) (*instance, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errBackendClosed
	}
	if b.cur != nil && !b.cur.dead() {
		inst := b.cur
		b.mu.Unlock()
		return inst, nil
	}
	op := b.starting
	if op == nil {
		op = &startOp{done: make(chan struct{})}
		b.starting = op
		b.wg.Add(1)
		go b.start(op)
	}
	b.mu.Unlock()
	select {
	case <-op.done:
		if op.err != nil {
			return nil, op.err
		}
		return op.inst, nil
	case <-ctx.Done():
		return nil, executor.AsError(ctx.Err()).WithHint("the browser is still starting; retry shortly")
	}
}

func (b *Backend) start(op *startOp) {
	defer b.wg.Done()
	inst, err := b.launch()
	b.opts.Events.Launched(b.Name(), err)
	b.mu.Lock()
	b.starting = nil
	if err == nil && b.closed {
		err = errBackendClosed
		b.mu.Unlock()
		inst.close()
	} else {
		if err == nil {
			b.cur = inst
			b.wg.Add(1)
			go func() {
				defer b.wg.Done()
				<-inst.deadCh
				if inst.deathReason() != reasonClosed {
					b.opts.Events.Crashed(b.Name())
				}
				// Tear down what is left (the driver, a half-dead browser)
				// as soon as it dies, not at the next Open.
				inst.close()
			}()
		}
		b.mu.Unlock()
	}
	op.inst, op.err = inst, err
	close(op.done)
}

// Close stops the browser (unless attached) and the driver, and waits until
// they are gone. It may be called more than once, concurrently.
func (b *Backend) Close() error {
	b.mu.Lock()
	b.closed = true
	cur, op := b.cur, b.starting
	b.cur = nil
	b.mu.Unlock()
	if op != nil {
		<-op.done // start() sees closed and closes what it launched
	}
	var err error
	if cur != nil {
		err = cur.close()
	}
	b.wg.Wait()
	return err
}

// current returns the live instance without starting one (for tests).
func (b *Backend) current() *instance {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

func ensureDir(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return os.Chmod(dir, mode)
}
