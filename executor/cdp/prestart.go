package cdp

import (
	"log/slog"
	"os"
	"sync"
	"time"
)

// Prestarted is a Playwright driver started before the Backend that will
// use it exists: `chromegate serve` starts it first thing, so that the
// driver (about half of a cold start) starts while the policy compiles and
// the server is set up. The first launch of a Backend given it in
// Options.Prestarted takes it; a driver nobody took is stopped by Close.
//
// Prestarted is safe for concurrent use; Close may be called more than
// once, concurrently, and on a nil *Prestarted.
type Prestarted struct {
	dir string
	ch  chan driverStart

	mu    sync.Mutex
	taken bool
}

// Prestart starts the driver FindDriver(driverDir) finds, in the
// background. It returns nil (start on the first launch, as without it)
// when no driver is found — the launch then reports why — or when
// CHROMEGATE_SEQUENTIAL_START asks for the start-up as before.
func Prestart(driverDir string, log *slog.Logger) *Prestarted {
	if os.Getenv(sequentialStartEnv) != "" {
		return nil
	}
	d, err := FindDriver(driverDir)
	if err != nil {
		return nil
	}
	if log == nil {
		log = discardLogger
	}
	p := &Prestarted{dir: d.Dir, ch: make(chan driverStart, 1)}
	go func() {
		t0 := time.Now()
		pw, err := runDriver(d, log)
		p.ch <- driverStart{pw: pw, err: err, took: time.Since(t0)}
	}()
	return p
}

// take hands the driver to the launch of a driver in dir, once; nil when
// it is taken, closed, or of another directory.
func (p *Prestarted) take(dir string) <-chan driverStart {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.taken || p.dir != dir {
		return nil
	}
	p.taken = true
	return p.ch
}

// Close stops the driver unless a launch took it, and waits until it has
// exited.
func (p *Prestarted) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	mine := !p.taken
	p.taken = true
	p.mu.Unlock()
	if !mine {
		return
	}
	if r := <-p.ch; r.pw != nil {
		in := &instance{pw: r.pw, driverPid: r.pw.Pid(), log: discardLogger}
		_ = in.stopDriver()
	}
}
