package cdp

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"
)

// drivers lists the Playwright drivers this test process started.
func drivers() []int {
	var out []int
	for _, pid := range processTree(os.Getpid())[1:] {
		if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && bytes.Contains(cmd, []byte("run-driver")) {
			out = append(out, pid)
		}
	}
	return out
}

// TestPrestart: a Backend's first launch takes the driver started ahead
// (no second driver starts) and Close then leaves it to the Backend; a
// driver nobody took is stopped by Close; with the sequential start-up
// nothing starts ahead.
func TestPrestart(t *testing.T) {
	needBrowser(t)
	if n := drivers(); len(n) > 0 {
		t.Skipf("drivers of other tests are running: %v", n)
	}

	p := Prestart("", nil)
	if p == nil {
		t.Fatal("no driver started ahead")
	}
	b := newBackend(t, func(o *Options) { o.Isolated = true; o.Prestarted = p })
	s := openSession(t, b, "")
	if got := drivers(); len(got) != 1 || got[0] != b.current().driverPid {
		t.Errorf("drivers %v, want only the backend's %d (the one started ahead)", got, b.current().driverPid)
	}
	p.Close() // taken: a no-op
	if _, err := s.TabInfo(ctxFor(t, 30*time.Second), ""); err != nil {
		t.Fatalf("the backend's driver after Close of the prestart: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	q := Prestart("", nil)
	deadline := time.Now().Add(60 * time.Second)
	for len(drivers()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	q.Close()
	q.Close()
	deadline = time.Now().Add(30 * time.Second)
	for len(drivers()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the driver nobody took outlived Close: %v", drivers())
		}
		time.Sleep(50 * time.Millisecond)
	}

	t.Setenv(sequentialStartEnv, "1")
	if Prestart("", nil) != nil {
		t.Error("the sequential start-up started a driver ahead")
	}
	var none *Prestarted
	none.Close() // a nil Prestarted closes
}
