package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// DefaultSession names the session of a transport without session ids
// (stdio). Backends give it their default browser context: on the CDP
// backend, the persistent profile.
const DefaultSession = ""

// Backend is a source of Executors of one kind (the extension, a launched or
// attached Chromium). Open returns a ready Executor for a session, launching
// or connecting as needed; the Manager never runs two Opens for the same
// backend and session at once. A Backend may also implement io.Closer to
// release what it shares between sessions (a driver process).
type Backend interface {
	Name() string
	Open(ctx context.Context, session string) (Executor, error)
}

// ManagerOptions configures a Manager.
type ManagerOptions struct {
	// Backends in order of preference: the first that is ready wins.
	Backends []Backend
	// PingTimeout bounds the readiness check of a cached executor (~800 ms).
	PingTimeout time.Duration
	// OpenTimeout bounds a launch or connect, independent of the caller that
	// triggered it (it may be shared by several callers).
	OpenTimeout time.Duration
	Logger      *slog.Logger
	// Events, if set, hears each executor opened and let go (events.go).
	Events Events
}

// Manager picks an Executor for every call: the first backend in preference
// order whose executor answers a ping, opening one (single-flight) when none
// is cached. An executor whose Done channel closes is dropped, so the next
// call relaunches or reconnects: a crashed browser heals itself.
//
// Manager is safe for concurrent use.
type Manager struct {
	opts  ManagerOptions
	log   *slog.Logger
	group singleflight.Group

	mu     sync.Mutex
	live   map[string]Executor  // key: backend + "\x00" + session
	gone   map[Executor]doneCtx // cancelled by watch when the executor dies
	closed bool
	subs   map[int]func(session string, ex Executor)
	nsub   int
}

type doneCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// NewManager returns a Manager over the given backends.
func NewManager(opts ManagerOptions) *Manager {
	if opts.PingTimeout <= 0 {
		opts.PingTimeout = 800 * time.Millisecond
	}
	if opts.OpenTimeout <= 0 {
		opts.OpenTimeout = 60 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Events == nil {
		opts.Events = NoEvents{}
	}
	return &Manager{opts: opts, log: log, live: map[string]Executor{}, gone: map[Executor]doneCtx{}}
}

// ErrManagerClosed is returned by calls after Close.
var ErrManagerClosed = Errorf(CodeNoBackend, "the server is shutting down")

// Ready returns a ready Executor for session.
func (m *Manager) Ready(ctx context.Context, session string) (Executor, error) {
	if len(m.opts.Backends) == 0 {
		return nil, Errorf(CodeNoBackend, "no browser backend is enabled").
			WithHint("enable the CDP fallback or pair the extension; run `chromegate doctor`")
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return nil, ErrManagerClosed
	}
	var fails, absent []string
	var errs []error
	var last error
	for _, b := range m.opts.Backends {
		ex, err := m.ready(ctx, b, session)
		if err == nil {
			return ex, nil
		}
		if ctx.Err() != nil {
			return nil, AsError(ctx.Err())
		}
		last = err
		errs = append(errs, err)
		fails = append(fails, b.Name()+": "+AsError(err).Message)
		if CodeOf(err) == CodeNoBackend {
			absent = append(absent, b.Name()+": "+AsError(err).Message)
		}
	}
	if len(m.opts.Backends) == 1 {
		return nil, last
	}
	// A backend that is merely absent (no extension connected) says
	// NO_BACKEND; when exactly one backend failed for a real reason (a
	// launch that failed), that failure and its fix are the answer.
	var real []error
	for _, err := range errs {
		if CodeOf(err) != CodeNoBackend {
			real = append(real, err)
		}
	}
	if len(real) == 1 {
		e := AsError(real[0])
		return nil, Errorf(e.Code, "%s (and %s)", e.Message, strings.Join(absent, "; ")).WithHint(e.Hint).Wrap(real[0])
	}
	return nil, Errorf(CodeNoBackend, "no backend is ready (%s)", strings.Join(fails, "; ")).
		WithHint("run `chromegate doctor` to see what is missing").Wrap(last)
}

func (m *Manager) ready(ctx context.Context, b Backend, session string) (Executor, error) {
	key := b.Name() + "\x00" + session
	if ex := m.cached(key); ex != nil {
		pctx, cancel := context.WithTimeout(ctx, m.opts.PingTimeout)
		err := ex.Ping(pctx)
		cancel()
		if err == nil {
			return ex, nil
		}
		m.log.Info("executor failed its ping; reopening", "backend", b.Name(), "err", err)
		m.drop(key, ex, LostUnresponsive)
		// Close what the unresponsive executor holds, or a browser that only
		// missed one ping would live on beside its replacement.
		go func() { _ = ex.Close() }()
	}
	ch := m.group.DoChan(key, func() (any, error) {
		if ex := m.cached(key); ex != nil {
			return ex, nil
		}
		// The open is shared by every caller waiting on it, so it must not
		// die with the first caller's context.
		octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.opts.OpenTimeout)
		defer cancel()
		start := time.Now()
		ex, err := b.Open(octx, session)
		if err != nil {
			return nil, err
		}
		if !m.store(key, ex) {
			_ = ex.Close()
			return nil, ErrManagerClosed
		}
		m.log.Info("backend ready", "backend", b.Name(), "session", session, "ms", time.Since(start).Milliseconds())
		m.opts.Events.SessionOpened(b.Name(), session)
		go m.watch(key, ex)
		m.announce(session, ex)
		return ex, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(Executor), nil
	case <-ctx.Done():
		return nil, AsError(ctx.Err())
	}
}

// Warm starts the most preferred backend that can be opened for session in
// the background, so the first call finds it ready.
func (m *Manager) Warm(session string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), m.opts.OpenTimeout)
		defer cancel()
		if _, err := m.Ready(ctx, session); err != nil {
			m.log.Debug("warm-up did not open a backend", "err", err)
		}
	}()
}

// Do runs fn with a ready Executor. When the executor dies during the call,
// fn's context is cancelled and the error becomes TARGET_GONE, so the call
// fails fast and the next call re-selects.
func (m *Manager) Do(ctx context.Context, session string, fn func(context.Context, Executor) error) error {
	ex, err := m.Ready(ctx, session)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The watcher of ex cancels gone when ex dies; AfterFunc costs no
	// goroutine per call until then.
	m.mu.Lock()
	gone := m.gone[ex].ctx
	m.mu.Unlock()
	if gone == nil {
		return Errorf(CodeTargetGone, "the browser went away before the call started").
			WithHint("retry: the next call relaunches or reconnects it")
	}
	stop := context.AfterFunc(gone, func() { cancel(errExecutorGone) })
	defer stop()
	err = fn(cctx, ex)
	if err != nil && (context.Cause(cctx) == errExecutorGone || isDone(ex)) {
		// An executor that knows why it ended (the extension's socket was
		// dropped, the pairing reset) says so: TARGET_GONE would send the
		// model looking for a dead browser.
		if c, ok := ex.(Ender); ok {
			if why := c.EndCause(); why != nil {
				return why
			}
		}
		return &Error{Code: CodeTargetGone, Message: "the browser went away during the call",
			Hint: "retry: the next call relaunches or reconnects it", Err: err}
	}
	return err
}

// Ender is the optional interface of an Executor that knows why it ended.
type Ender interface {
	// EndCause is the error that ended the executor, once Done is
	// closed; nil while it lives or when the cause is unknown.
	EndCause() *Error
}

var errExecutorGone = errors.New("executor gone")

func isDone(ex Executor) bool {
	select {
	case <-ex.Done():
		return true
	default:
		return false
	}
}

// Current returns the live executor of the most preferred backend for
// session without opening one.
func (m *Manager) Current(session string) (Executor, bool) {
	for _, b := range m.opts.Backends {
		if ex := m.cached(b.Name() + "\x00" + session); ex != nil {
			return ex, true
		}
	}
	return nil, false
}

// OnOpen calls fn, on a goroutine of its own, with every executor the
// Manager opens from now on and with those already open, so a caller can
// follow what lives in each executor (the page tools of its tabs) without
// opening one. stop ends the subscription; it may be called more than once.
func (m *Manager) OnOpen(fn func(session string, ex Executor)) (stop func()) {
	m.mu.Lock()
	if m.subs == nil {
		m.subs = map[int]func(string, Executor){}
	}
	m.nsub++
	id := m.nsub
	m.subs[id] = fn
	type open struct {
		session string
		ex      Executor
	}
	var now []open
	for key, ex := range m.live {
		_, session, _ := strings.Cut(key, "\x00")
		now = append(now, open{session, ex})
	}
	m.mu.Unlock()
	for _, o := range now {
		go fn(o.session, o.ex)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			m.mu.Lock()
			delete(m.subs, id)
			m.mu.Unlock()
		})
	}
}

func (m *Manager) announce(session string, ex Executor) {
	m.mu.Lock()
	fns := make([]func(string, Executor), 0, len(m.subs))
	for _, fn := range m.subs {
		fns = append(fns, fn)
	}
	m.mu.Unlock()
	for _, fn := range fns {
		go fn(session, ex)
	}
}

// Backends names the configured backends in preference order.
func (m *Manager) Backends() []string {
	out := make([]string, len(m.opts.Backends))
	for i, b := range m.opts.Backends {
		out[i] = b.Name()
	}
	return out
}

// CloseSession closes the executors of one session.
func (m *Manager) CloseSession(session string) error {
	var errs []error
	for _, b := range m.opts.Backends {
		key := b.Name() + "\x00" + session
		if ex := m.cached(key); ex != nil {
			m.drop(key, ex, "")
			errs = append(errs, ex.Close())
		}
	}
	return errors.Join(errs...)
}

// Close closes every executor and every backend that is an io.Closer. Close
// may be called more than once.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	live := m.live
	m.live = map[string]Executor{}
	m.mu.Unlock()
	var errs []error
	for key, ex := range live {
		m.letGo(key, "")
		if err := ex.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, b := range m.opts.Backends {
		if c, ok := b.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close %s: %w", b.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) cached(key string) Executor {
	m.mu.Lock()
	ex := m.live[key]
	m.mu.Unlock()
	if ex != nil && isDone(ex) {
		m.drop(key, ex, LostGone)
		return nil
	}
	return ex
}

func (m *Manager) store(key string, ex Executor) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.live[key] = ex
	if _, ok := m.gone[ex]; !ok {
		ctx, cancel := context.WithCancel(context.Background())
		m.gone[ex] = doneCtx{ctx, cancel}
	}
	return true
}

// drop forgets ex if it is still the executor stored under key; lost
// says why when the server did not choose to ("" when it did).
func (m *Manager) drop(key string, ex Executor, lost string) {
	m.mu.Lock()
	gone := m.live[key] == ex
	if gone {
		delete(m.live, key)
	}
	m.mu.Unlock()
	if gone {
		m.letGo(key, lost)
	}
}

// letGo tells Events that the executor under key was let go, and lost
// when it died or stopped answering under the session; called once for
// each executor it was told of, by whoever removed it from live.
func (m *Manager) letGo(key, lost string) {
	backend, session, _ := strings.Cut(key, "\x00")
	if lost != "" {
		m.opts.Events.SessionLost(backend, session, lost)
	}
	m.opts.Events.SessionClosed(backend, session)
}

func (m *Manager) watch(key string, ex Executor) {
	<-ex.Done()
	m.mu.Lock()
	if d, ok := m.gone[ex]; ok {
		d.cancel() // fails the calls in flight on ex
		delete(m.gone, ex)
	}
	gone := m.live[key] == ex
	if gone {
		delete(m.live, key)
	}
	closed := m.closed
	m.mu.Unlock()
	if gone {
		lost := LostGone
		if closed {
			lost = ""
		}
		m.letGo(key, lost)
	}
	if gone && !closed {
		m.log.Warn("browser went away; the next call reopens it", "backend", ex.Backend())
	}
}
