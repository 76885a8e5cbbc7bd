package executor

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

// recEvents counts what an Events hears, per session.
type recEvents struct {
	NoEvents
	mu             sync.Mutex
	opened, closed map[string]int
	lost           []string
}

func (r *recEvents) SessionLost(_, session, why string) {
	r.mu.Lock()
	r.lost = append(r.lost, session+" "+why)
	r.mu.Unlock()
}

func (r *recEvents) SessionOpened(_, session string) {
	r.mu.Lock()
	r.opened[session]++
	r.mu.Unlock()
}

func (r *recEvents) SessionClosed(_, session string) {
	r.mu.Lock()
	r.closed[session]++
	r.mu.Unlock()
}

// Every executor the Manager opens is let go exactly once, whichever
// way it goes — its browser dies, its session is closed, the Manager
// closes — so a gauge of live sessions kept from the events is exact;
// and it is lost only when it died under its session.
func TestManagerEventsPairOpenAndClose(t *testing.T) {
	t.Parallel()
	ev := &recEvents{opened: map[string]int{}, closed: map[string]int{}}
	b := &stubBackend{name: "cdp"}
	m := NewManager(ManagerOptions{Backends: []Backend{b}, Events: ev})
	for _, s := range []string{"", "named:k:a"} {
		if _, err := m.Ready(t.Context(), s); err != nil {
			t.Fatal(err)
		}
	}
	b.current().kill() // the browser of "named:k:a" crashed: the next call reopens it
	if _, err := m.Ready(t.Context(), "named:k:a"); err != nil {
		t.Fatal(err)
	}
	b.current().pingErr = errors.New("no pong") // then it hangs: the next call replaces it
	if _, err := m.Ready(t.Context(), "named:k:a"); err != nil {
		t.Fatal(err)
	}
	if err := m.CloseSession(""); err != nil {
		t.Fatal(err)
	}
	_ = m.Close()
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.opened[""] != 1 || ev.opened["named:k:a"] != 3 {
		t.Errorf("opened %v", ev.opened)
	}
	if want := []string{"named:k:a " + LostGone, "named:k:a " + LostUnresponsive}; !slices.Equal(ev.lost, want) {
		t.Errorf("lost %q, want %q: the crashed and the hung one only", ev.lost, want)
	}
	for s, n := range ev.opened {
		if ev.closed[s] != n {
			t.Errorf("session %q: opened %d, closed %d", s, n, ev.closed[s])
		}
	}
}
