package executortest

import (
	"context"
	"strconv"
	"sync"

	"github.com/chromegate/chromegate/executor"
)

// Backend is an executor.Backend that opens a new Fake for each Open, with
// tab ids stamped by a fresh per-open session ("s1", "s2", ...), so ids from
// before a relaunch are STALE_TAB as they are with a real browser.
type Backend struct {
	name string

	mu      sync.Mutex
	setup   func(*Fake)
	openErr error
	fakes   []*Fake
}

var _ executor.Backend = (*Backend)(nil)

// NewBackend returns a Backend named name (also the tab-id prefix).
func NewBackend(name string) *Backend { return &Backend{name: name} }

// Name implements executor.Backend.
func (b *Backend) Name() string { return b.name }

// Setup runs fn on every Fake this backend opens from now on, before Open
// returns it: the place to script handlers that must be in place for the
// first call.
func (b *Backend) Setup(fn func(*Fake)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.setup = fn
}

// FailOpen makes every later Open fail with err (nil: succeed again).
func (b *Backend) FailOpen(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.openErr = err
}

// Open implements executor.Backend.
func (b *Backend) Open(ctx context.Context, session string) (executor.Executor, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openErr != nil {
		return nil, b.openErr
	}
	if err := ctx.Err(); err != nil {
		return nil, executor.AsError(err)
	}
	f := New(b.name, "s"+strconv.Itoa(len(b.fakes)+1))
	if b.setup != nil {
		b.setup(f)
	}
	b.fakes = append(b.fakes, f)
	return f, nil
}

// Opens reports how many Fakes Open has returned.
func (b *Backend) Opens() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.fakes)
}

// Last returns the Fake most recently opened, or nil.
func (b *Backend) Last() *Fake {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.fakes) == 0 {
		return nil
	}
	return b.fakes[len(b.fakes)-1]
}
