package cdp

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// TestPool spreads sessions over two browsers chromegate only attached to,
// takes a dead one out of rotation and moves its sessions to the other.
func TestPool(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	epA, cmdA := bareBrowser(t)
	epB, _ := bareBrowser(t)
	p, err := NewPool(testOptions(t, nil), nil, []string{epA, epB})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	ctx := ctxFor(t, 60*time.Second)

	on := map[string]string{} // session → endpoint
	exs := map[string]executor.Executor{}
	for _, name := range []string{"s1", "s2", "s3", "s4"} {
		ex, err := p.Open(ctx, name)
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		exs[name] = ex
		if _, err := ex.Navigate(ctx, executor.NavigateParams{URL: srv.URL + "/counter"}); err != nil {
			t.Fatalf("%s navigate: %v", name, err)
		}
		p.mu.Lock()
		on[name] = p.assign[name].endpoint
		p.mu.Unlock()
	}
	for _, h := range p.Health() {
		if !h.Healthy || h.Sessions != 2 {
			t.Fatalf("sessions not spread evenly: %+v", p.Health())
		}
	}

	// Endpoint A dies: its sessions' executors end, and reopening them
	// lands on B while A waits out its backoff.
	_ = syscall.Kill(-cmdA.Process.Pid, syscall.SIGKILL)
	for name, ex := range exs {
		if on[name] == epA {
			waitDone(t, ex, 10*time.Second)
		}
	}
	// The loss shows at once, before any session tries to reopen.
	lost := func() bool {
		for _, h := range p.Health() {
			if h.Endpoint == epA && !h.Healthy && h.LastError != "" {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(5 * time.Second); !lost(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the dead endpoint still looks healthy: %+v", p.Health())
		}
	}
	for name := range exs {
		ex, err := p.Open(ctx, name)
		if err != nil {
			t.Fatalf("reopen %s after A died: %v", name, err)
		}
		if _, err := ex.Navigate(ctx, executor.NavigateParams{URL: srv.URL + "/counter"}); err != nil {
			t.Fatalf("%s on the surviving endpoint: %v", name, err)
		}
	}
	var a, b EndpointHealth
	for _, h := range p.Health() {
		if h.Endpoint == epA {
			a = h
		} else {
			b = h
		}
	}
	if a.Healthy || a.Failures == 0 || a.LastError == "" || a.Sessions != 0 {
		t.Fatalf("dead endpoint: %+v", a)
	}
	if !b.Healthy || b.Sessions != 4 {
		t.Fatalf("surviving endpoint: %+v", b)
	}
}

func TestPoolAllDead(t *testing.T) {
	t.Parallel()
	dead := closedPort(t)
	p, err := NewPool(testOptions(t, nil), nil, []string{dead})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	_, err = p.Open(ctxFor(t, 30*time.Second), "s")
	if e := wantCode(t, err, executor.CodeNoBackend); !strings.Contains(e.Message, dead) {
		t.Fatalf("error does not name the endpoint: %v", err)
	}
	// Out of rotation now: the next Open says so at once.
	_, err = p.Open(ctxFor(t, 30*time.Second), "s")
	if e := wantCode(t, err, executor.CodeNoBackend); !strings.Contains(e.Message, "out of rotation") {
		t.Fatalf("second open: %v", err)
	}
	if _, err := NewPool(testOptions(t, nil), nil, nil); err == nil {
		t.Fatal("a pool without endpoints was accepted")
	}
}
