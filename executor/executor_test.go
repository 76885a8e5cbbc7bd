package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTabIDs(t *testing.T) {
	t.Parallel()
	ids := TabIDs{Backend: "cdp", Session: "1a2b3c4d"}
	if got := ids.Stamp("7"); got != "cdp:1a2b3c4d:7" {
		t.Fatalf("Stamp = %q", got)
	}
	cases := []struct {
		id   string
		raw  string
		code Code
	}{
		{"", "", ""},
		{"cdp:1a2b3c4d:7", "7", ""},
		{"cdp:1a2b3c4d:page:with:colons", "page:with:colons", ""},
		{"cdp:deadbeef:7", "", CodeStaleTab},
		{"ext:1a2b3c4d:7", "", CodeStaleTab},
		{"7", "", CodeTabNotFound},
		{"cdp:1a2b3c4d:", "", CodeTabNotFound},
		{"::7", "", CodeTabNotFound},
		{"cdp::7", "", CodeTabNotFound},
	}
	for _, c := range cases {
		raw, err := ids.Raw(c.id)
		if CodeOf(err) != c.code || raw != c.raw {
			t.Errorf("Raw(%q) = %q, %v; want %q, code %q", c.id, raw, err, c.raw, c.code)
		}
		if err != nil && AsError(err).Hint == "" {
			t.Errorf("Raw(%q): error without a hint", c.id)
		}
	}
	if a, b := NewTabIDs("cdp"), NewTabIDs("cdp"); a.Session == b.Session {
		t.Fatal("two launches share a session id")
	}
}

func TestTargetValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		t    Target
		code Code
	}{
		{Target{Selector: "#a"}, ""},
		{Target{Ref: "e1"}, ""},
		{Target{}, CodeBadArgs},
		{Target{Selector: "#a", Ref: "e1"}, CodeBadArgs},
	} {
		if got := CodeOf(c.t.Validate()); got != c.code {
			t.Errorf("%+v: code %q, want %q", c.t, got, c.code)
		}
	}
}

func TestAsError(t *testing.T) {
	t.Parallel()
	e := Errorf(CodeSelectorNotFound, "no %s", "#x").WithHint("look again")
	wrapped := fmt.Errorf("click: %w", e)
	if got := AsError(wrapped); got.Code != CodeSelectorNotFound || got.Hint != "look again" {
		t.Fatalf("AsError(wrapped) = %+v", got)
	}
	if !errors.Is(wrapped, &Error{Code: CodeSelectorNotFound}) {
		t.Fatal("errors.Is does not match on code")
	}
	if errors.Is(wrapped, &Error{Code: CodeTimeout}) {
		t.Fatal("errors.Is matches another code")
	}
	if got := AsError(fmt.Errorf("x: %w", context.DeadlineExceeded)); got.Code != CodeTimeout {
		t.Fatalf("deadline → %s", got.Code)
	}
	if got := AsError(errors.New("boom")); got.Code != CodeInternal {
		t.Fatalf("plain error → %s", got.Code)
	}
	for _, c := range AllCodes {
		if DefaultHint(c) == "" {
			t.Errorf("no default hint for %s", c)
		}
	}
}

func TestSanitizeFilename(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"report.pdf":                      "report.pdf",
		"../../etc/passwd":                "passwd",
		`..\..\windows\system.ini`:        "system.ini",
		".hidden":                         "hidden",
		"a\x00b\nc.txt":                   "abc.txt",
		`what?:*<>|".txt`:                 "what_______.txt",
		"":                                "download",
		"...":                             "download",
		"  spaced name.zip  ":             "spaced name.zip",
		strings.Repeat("é", 200) + ".tar": strings.Repeat("é", 58) + ".tar",
	}
	for in, want := range cases {
		if got := SanitizeFilename(in); got != want {
			t.Errorf("SanitizeFilename(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSanitizeFilename(f *testing.F) {
	for _, s := range []string{"a.txt", "../x", "", "é.tar.gz", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := SanitizeFilename(s)
		if got == "" || strings.ContainsAny(got, `/\`) || strings.HasPrefix(got, ".") || len(got) > 120 {
			t.Fatalf("SanitizeFilename(%q) = %q", s, got)
		}
	})
}

// stubExec is the smallest Executor the Manager tests need: only the
// lifecycle methods are implemented; the rest panic if called.
type stubExec struct {
	Executor
	name    string
	done    chan struct{}
	pingErr error
	closed  atomic.Int32
	once    sync.Once
}

func newStub(name string) *stubExec { return &stubExec{name: name, done: make(chan struct{})} }

func (s *stubExec) Backend() string                { return s.name }
func (s *stubExec) Done() <-chan struct{}          { return s.done }
func (s *stubExec) Ping(ctx context.Context) error { return s.pingErr }
func (s *stubExec) kill()                          { s.once.Do(func() { close(s.done) }) }
func (s *stubExec) Close() error                   { s.closed.Add(1); s.kill(); return nil }

type stubBackend struct {
	name  string
	opens atomic.Int32
	delay time.Duration
	err   error
	mu    sync.Mutex
	last  *stubExec
}

func (b *stubBackend) Name() string { return b.name }

func (b *stubBackend) Open(ctx context.Context, session string) (Executor, error) {
	b.opens.Add(1)
	select {
	case <-time.After(b.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if b.err != nil {
		return nil, b.err
	}
	ex := newStub(b.name)
	b.mu.Lock()
	b.last = ex
	b.mu.Unlock()
	return ex, nil
}

func (b *stubBackend) current() *stubExec {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

func TestManagerSingleFlight(t *testing.T) {
	t.Parallel()
	b := &stubBackend{name: "cdp", delay: 50 * time.Millisecond}
	m := NewManager(ManagerOptions{Backends: []Backend{b}})
	defer m.Close()
	var wg sync.WaitGroup
	got := make([]Executor, 20)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ex, err := m.Ready(t.Context(), "")
			if err != nil {
				t.Error(err)
			}
			got[i] = ex
		}()
	}
	wg.Wait()
	if n := b.opens.Load(); n != 1 {
		t.Fatalf("%d opens for 20 concurrent first calls, want 1", n)
	}
	for _, ex := range got {
		if ex != got[0] {
			t.Fatal("callers got different executors")
		}
	}
}

func TestManagerSelfHeals(t *testing.T) {
	t.Parallel()
	b := &stubBackend{name: "cdp"}
	m := NewManager(ManagerOptions{Backends: []Backend{b}})
	defer m.Close()
	first, err := m.Ready(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	b.current().kill() // the browser crashed
	second, err := m.Ready(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if first == second || b.opens.Load() != 2 {
		t.Fatalf("no relaunch after a crash (opens=%d)", b.opens.Load())
	}
}

func TestManagerDoFailsFastWhenExecutorDies(t *testing.T) {
	t.Parallel()
	b := &stubBackend{name: "cdp"}
	m := NewManager(ManagerOptions{Backends: []Backend{b}})
	defer m.Close()
	errc := make(chan error, 1)
	go func() {
		errc <- m.Do(t.Context(), "", func(ctx context.Context, ex Executor) error {
			<-ctx.Done() // a call that would otherwise wait a long time
			return ctx.Err()
		})
	}()
	for b.current() == nil {
		time.Sleep(time.Millisecond)
	}
	b.current().kill()
	select {
	case err := <-errc:
		if CodeOf(err) != CodeTargetGone {
			t.Fatalf("Do returned %v, want TARGET_GONE", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight did not fail when its executor died")
	}
}

// endingExec is a stub that knows why it ended, as the extension's
// executor does when its socket is dropped.
type endingExec struct{ *stubExec }

func (e endingExec) EndCause() *Error {
	if !isDone(e.stubExec) {
		return nil
	}
	return Errorf(CodeExtensionDisconnected, "the pairing was reset")
}

type endingBackend struct{ stubBackend }

func (b *endingBackend) Open(ctx context.Context, session string) (Executor, error) {
	ex, err := b.stubBackend.Open(ctx, session)
	if err != nil {
		return nil, err
	}
	return endingExec{ex.(*stubExec)}, nil
}

func TestManagerDoKeepsTheCauseAnExecutorEndedWith(t *testing.T) {
	t.Parallel()
	b := &endingBackend{stubBackend{name: "ext"}}
	m := NewManager(ManagerOptions{Backends: []Backend{b}})
	defer m.Close()
	errc := make(chan error, 1)
	go func() {
		errc <- m.Do(t.Context(), "", func(ctx context.Context, ex Executor) error {
			<-ctx.Done()
			return ctx.Err()
		})
	}()
	for b.current() == nil {
		time.Sleep(time.Millisecond)
	}
	b.current().kill()
	select {
	case err := <-errc:
		if CodeOf(err) != CodeExtensionDisconnected {
			t.Fatalf("Do returned %v, want the executor's own EXTENSION_DISCONNECTED", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight did not fail when its executor ended")
	}
}

func TestManagerPreferenceAndFallback(t *testing.T) {
	t.Parallel()
	ext := &stubBackend{name: "ext", err: Errorf(CodeExtensionDisconnected, "no extension connected")}
	cdp := &stubBackend{name: "cdp"}
	m := NewManager(ManagerOptions{Backends: []Backend{ext, cdp}})
	defer m.Close()
	ex, err := m.Ready(t.Context(), "")
	if err != nil || ex.Backend() != "cdp" {
		t.Fatalf("Ready = %v, %v; want the cdp fallback", ex, err)
	}
	// The preferred backend is tried again on every call.
	ext.err = nil
	if ex, _ = m.Ready(t.Context(), ""); ex.Backend() != "ext" {
		t.Fatalf("the extension came back but %s was chosen", ex.Backend())
	}
	// A cached executor that fails its ping is dropped and reopened.
	stale := ext.current()
	stale.pingErr = errors.New("no pong")
	if ex, _ = m.Ready(t.Context(), ""); ex.Backend() != "ext" || ext.opens.Load() != 3 {
		t.Fatalf("after a failed ping: backend %s, ext opens %d", ex.Backend(), ext.opens.Load())
	}
	waitUntil(t, func() bool { return stale.closed.Load() == 1 })

	both := NewManager(ManagerOptions{Backends: []Backend{
		&stubBackend{name: "ext", err: Errorf(CodeExtensionDisconnected, "not paired")},
		&stubBackend{name: "cdp", err: Errorf(CodeLaunchFailed, "no chromium")},
	}})
	_, err = both.Ready(t.Context(), "")
	if CodeOf(err) != CodeNoBackend || !strings.Contains(err.Error(), "not paired") || !strings.Contains(err.Error(), "no chromium") {
		t.Fatalf("all backends failing: %v", err)
	}
	// An absent extension is no reason: the launch failure and its fix are.
	absent := NewManager(ManagerOptions{Backends: []Backend{
		&stubBackend{name: "ext", err: Errorf(CodeNoBackend, "no extension is connected")},
		&stubBackend{name: "cdp", err: Errorf(CodeLaunchFailed, "no chromium").WithHint("apt-get install chromium")},
	}})
	_, err = absent.Ready(t.Context(), "")
	if e := AsError(err); e.Code != CodeLaunchFailed || e.Hint != "apt-get install chromium" || !strings.Contains(e.Message, "no extension") {
		t.Fatalf("launch failure beside an absent extension: %v", err)
	}
	if _, err := NewManager(ManagerOptions{}).Ready(t.Context(), ""); CodeOf(err) != CodeNoBackend {
		t.Fatalf("no backends: %v", err)
	}
}

func TestManagerCallerCancelDoesNotAbortSharedOpen(t *testing.T) {
	t.Parallel()
	b := &stubBackend{name: "cdp", delay: 100 * time.Millisecond}
	m := NewManager(ManagerOptions{Backends: []Backend{b}})
	defer m.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := m.Ready(ctx, ""); CodeOf(err) != CodeTimeout {
		t.Fatalf("impatient caller: %v", err)
	}
	if _, err := m.Ready(t.Context(), ""); err != nil {
		t.Fatalf("patient caller: %v", err)
	}
	if n := b.opens.Load(); n != 1 {
		t.Fatalf("%d opens, want the first open to finish and be reused", n)
	}
}

func TestManagerCloseClosesEverything(t *testing.T) {
	t.Parallel()
	b := &stubBackend{name: "cdp"}
	m := NewManager(ManagerOptions{Backends: []Backend{b}})
	if _, err := m.Ready(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	ex := b.current()
	if _, err := m.Ready(t.Context(), "b"); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if ex.closed.Load() != 1 || b.current().closed.Load() != 1 {
		t.Fatal("Close left an executor open")
	}
	if _, err := m.Ready(t.Context(), "c"); err == nil {
		t.Fatal("Ready after Close succeeded")
	}
	_ = m.Close() // twice is fine
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
