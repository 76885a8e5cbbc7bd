package executor

import (
	"context"
	"errors"
	"testing"
)

// warmingBackend opens stubs that count their warm-ups.
type warmingBackend struct {
	stubBackend
	warmErr error
}

type warmingStub struct {
	*stubExec
	warms int
	err   error
}

func (s *warmingStub) Warm(context.Context) error { s.warms++; return s.err }

func (b *warmingBackend) Open(ctx context.Context, session string) (Executor, error) {
	ex, err := b.stubBackend.Open(ctx, session)
	if err != nil {
		return nil, err
	}
	return &warmingStub{stubExec: ex.(*stubExec), err: b.warmErr}, nil
}

// TestManagerWarmSession: WarmSession opens the session's executor, the
// one its first call then gets, and warms it; its error is the warm-up's.
func TestManagerWarmSession(t *testing.T) {
	t.Parallel()
	b := &warmingBackend{stubBackend: stubBackend{name: "cdp"}}
	m := NewManager(ManagerOptions{Backends: []Backend{b}})
	defer m.Close()
	if err := m.WarmSession(t.Context(), "mcp:a"); err != nil {
		t.Fatal(err)
	}
	ex, err := m.Ready(t.Context(), "mcp:a")
	if err != nil {
		t.Fatal(err)
	}
	if w := ex.(*warmingStub); w.warms != 1 {
		t.Errorf("warmed %d times, want 1", w.warms)
	}
	if n := b.opens.Load(); n != 1 {
		t.Errorf("%d opens, want 1: the first call reuses the warmed executor", n)
	}

	boom := errors.New("boom")
	bad := &warmingBackend{stubBackend: stubBackend{name: "cdp"}, warmErr: boom}
	m2 := NewManager(ManagerOptions{Backends: []Backend{bad}})
	defer m2.Close()
	if err := m2.WarmSession(t.Context(), "s"); !errors.Is(err, boom) {
		t.Errorf("WarmSession = %v, want the warm-up's error", err)
	}
}

// TestManagerWarmSessionNotAWarmer: an executor that cannot warm is just
// opened.
func TestManagerWarmSessionNotAWarmer(t *testing.T) {
	t.Parallel()
	b := &stubBackend{name: "ext"}
	m := NewManager(ManagerOptions{Backends: []Backend{b}})
	defer m.Close()
	if err := m.WarmSession(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
	if n := b.opens.Load(); n != 1 {
		t.Errorf("%d opens, want 1", n)
	}
}
