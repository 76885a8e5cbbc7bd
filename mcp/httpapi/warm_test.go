package httpapi

import (
	"context"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/mcp"
)

// warmBackend opens Fakes that are executor.Warmers: each warm-up says
// which session it is for, then waits until release is closed.
type warmBackend struct {
	*executortest.Backend
	started chan string
	release chan struct{}
}

type warmFake struct {
	*executortest.Fake
	b       *warmBackend
	session string
}

var _ executor.Warmer = (*warmFake)(nil)

func (b *warmBackend) Open(ctx context.Context, session string) (executor.Executor, error) {
	ex, err := b.Backend.Open(ctx, session)
	if err != nil {
		return nil, err
	}
	return &warmFake{Fake: ex.(*executortest.Fake), b: b, session: session}, nil
}

func (f *warmFake) Warm(ctx context.Context) error {
	f.b.started <- f.session
	select {
	case <-f.b.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newWarmEnv(t *testing.T, configure func(*Options)) (*httpEnv, *warmBackend) {
	t.Helper()
	wb := &warmBackend{Backend: executortest.NewBackend("fake"), started: make(chan string, 8), release: make(chan struct{})}
	e := newHTTPEnvWith(t, func(o *mcp.Options) {
		o.Manager = executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{wb}})
		t.Cleanup(func() { _ = o.Manager.Close() })
	}, configure)
	t.Cleanup(func() {
		select {
		case <-wb.release:
		default:
			close(wb.release)
		}
	})
	return e, wb
}

// TestHTTPWarmSession: a new MCP session's browser context is opened and
// warmed as soon as the session has initialised, before any call; the
// first call uses that context; and a session that ends while its warm-up
// runs has its context closed once the warm-up is done, not before (a
// context closed under a warm-up would be reopened by it and leak).
func TestHTTPWarmSession(t *testing.T) {
	e, wb := newWarmEnv(t, nil)
	cs := e.mustConnect("", nil)
	var got string
	select {
	case got = <-wb.started:
	case <-time.After(30 * time.Second):
		t.Fatal("no warm-up started after initialize")
	}
	if want := "mcp:" + cs.ID(); got != want {
		t.Fatalf("warmed %q, want %q", got, want)
	}
	fake := wb.Last()
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	// Wait until the handler has seen the session end, with its warm-up
	// still counted in flight.
	waitFor(t, "the session to end", func() bool {
		e.handler.mu.Lock()
		defer e.handler.mu.Unlock()
		ms := e.handler.mcp[cs.ID()]
		return ms != nil && ms.ended && ms.inflight == 1
	})
	select {
	case <-fake.Done():
		t.Fatal("the context was closed while its warm-up ran")
	default:
	}
	close(wb.release)
	select {
	case <-fake.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the ended session's context was not closed after its warm-up")
	}
}

// TestHTTPWarmedSessionFirstCall: the first call runs on the warmed
// context: nothing else is opened for it.
func TestHTTPWarmedSessionFirstCall(t *testing.T) {
	e, wb := newWarmEnv(t, nil)
	close(wb.release)
	cs := e.mustConnect("", nil)
	<-wb.started
	if res := callTool(t, cs, "get_text", nil); res.IsError {
		t.Fatalf("get_text: %s", textOf(res))
	}
	if n := wb.Opens(); n != 1 {
		t.Errorf("%d contexts opened for one session, want 1", n)
	}
}

// TestHTTPNoWarm: with NoWarm, and for a request naming a context, nothing
// is warmed: the first call opens the context, as before.
func TestHTTPNoWarm(t *testing.T) {
	for name, tc := range map[string]struct {
		configure func(*Options)
		header    map[string]string
	}{
		"NoWarm":        {configure: func(o *Options) { o.NoWarm = true }},
		"named context": {header: map[string]string{SessionHeader: "work"}},
	} {
		t.Run(name, func(t *testing.T) {
			e, wb := newWarmEnv(t, tc.configure)
			close(wb.release)
			cs := e.mustConnect("", tc.header)
			if res := callTool(t, cs, "get_text", nil); res.IsError {
				t.Fatalf("get_text: %s", textOf(res))
			}
			if n := wb.Opens(); n != 1 {
				t.Errorf("%d contexts opened, want 1 (the call's)", n)
			}
			select {
			case s := <-wb.started:
				t.Errorf("warmed %q", s)
			default:
			}
		})
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
