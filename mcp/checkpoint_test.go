package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// memCheckpoints keeps checkpoints in memory, as a fleet's Redis would.
type memCheckpoints struct {
	mu    sync.Mutex
	saved map[string][]byte
	saves int
	loads int
}

func (m *memCheckpoints) Keeps(string) bool { return true }

func (m *memCheckpoints) SaveCheckpoint(_ context.Context, session string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saved[session] = data
	m.saves++
	return nil
}

func (m *memCheckpoints) LoadCheckpoint(_ context.Context, session string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.loads++
	d, ok := m.saved[session]
	return d, ok, nil
}

// An acting call stores the session's checkpoint, a read or a call that
// changed nothing it holds does not; a new context of the session (its
// browser gone, or a replica taking it over) starts from it, once.
func TestCheckpoints(t *testing.T) {
	cp := &memCheckpoints{saved: map[string][]byte{}}
	h := newHarness(t, func(o *Options) { o.Checkpoints = cp })
	if res := h.call("navigate", map[string]any{"url": "https://app.example/inbox"}); res.IsError {
		t.Fatalf("navigate: %s", textOf(res))
	}
	if cp.saves != 1 {
		t.Fatalf("after a navigate, %d checkpoints stored", cp.saves)
	}
	var ck checkpoint
	if err := json.Unmarshal(cp.saved[DefaultSession], &ck); err != nil {
		t.Fatal(err)
	}
	if len(ck.Tabs) != 1 || ck.Tabs[0] != "https://app.example/inbox" || ck.Saved.IsZero() {
		t.Fatalf("the checkpoint: %+v", ck)
	}
	h.call("get_text", nil)
	h.call("navigate", map[string]any{"url": "https://app.example/inbox"})
	if cp.saves != 1 {
		t.Fatalf("a read and a call that changed nothing stored %d checkpoints in all", cp.saves)
	}
	// The browser goes; the next call's new context starts where the
	// session was.
	if err := h.manager.CloseSession(DefaultSession); err != nil {
		t.Fatal(err)
	}
	loads := cp.loads
	res := h.call("tabs_list", nil)
	if !strings.Contains(textOf(res), "https://app.example/inbox") {
		t.Fatalf("the new context is not on the checkpoint's page: %s", textOf(res))
	}
	h.call("tabs_list", nil)
	if cp.loads != loads+1 {
		t.Fatalf("a context restored %d times", cp.loads-loads)
	}
}
