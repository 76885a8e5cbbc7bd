package cdp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// processTree returns pid and all its descendants.
func processTree(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, childrenOf(out[i])...)
	}
	return out
}

func waitDone(t *testing.T, ex executor.Executor, within time.Duration) {
	t.Helper()
	select {
	case <-ex.Done():
	case <-time.After(within):
		t.Fatalf("Done did not close within %s", within)
	}
}

// TestSelfHeal kills Chromium during a call and between calls, then the
// driver, and checks each time that calls fail fast with TARGET_GONE, that
// Done closes and that the next Open brings a working browser back; then
// the same through the executor.Manager; then that Close leaves no process.
// Events hears each launch and each death the server did not cause.
func TestSelfHeal(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	ev := &launchEvents{}
	b := newBackend(t, func(o *Options) { o.Isolated = true; o.Events = ev })

	// 1. During a slow wait_for.
	s1 := openSession(t, b, "")
	tab1, err := s1.TabInfo(ctxFor(t, 10*time.Second), "")
	if err != nil {
		t.Fatal(err)
	}
	pid := browserPid(t, b)
	time.AfterFunc(500*time.Millisecond, func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	start := time.Now()
	_, err = s1.WaitFor(ctxFor(t, 30*time.Second), executor.WaitParams{Target: executor.Target{Selector: "#never"}})
	wantCode(t, err, executor.CodeTargetGone)
	// The kill comes at 0.5 s of a 30 s wait: well before the deadline.
	promptly(t, "wait_for when the browser is killed", start, 500*time.Millisecond)
	waitDone(t, s1, 5*time.Second)
	if err := s1.Ping(ctxFor(t, time.Second)); executor.CodeOf(err) != executor.CodeTargetGone {
		t.Errorf("ping of a dead session: %v", err)
	}

	// 2. Between calls, on a relaunched browser.
	s2 := openSession(t, b, "")
	if s2 == s1 {
		t.Fatal("Open returned the dead executor")
	}
	if _, err := s2.Navigate(ctxFor(t, 20*time.Second), executor.NavigateParams{URL: srv.URL + "/counter"}); err != nil {
		t.Fatalf("after relaunch: %v", err)
	}
	// An id from the earlier launch is refused as stale.
	_, err = s2.TabInfo(ctxFor(t, 5*time.Second), tab1.ID)
	wantCode(t, err, executor.CodeStaleTab)
	_ = syscall.Kill(browserPid(t, b), syscall.SIGKILL)
	waitDone(t, s2, 5*time.Second)
	start = time.Now()
	_, err = s2.Text(ctxFor(t, 20*time.Second), executor.TextParams{})
	wantCode(t, err, executor.CodeTargetGone)
	promptly(t, "a call on a dead executor", start, 0)

	// 3. The driver dies.
	s3 := openSession(t, b, "")
	if _, err := s3.Navigate(ctxFor(t, 20*time.Second), executor.NavigateParams{URL: srv.URL + "/"}); err != nil {
		t.Fatal(err)
	}
	_ = syscall.Kill(b.current().driverPid, syscall.SIGKILL)
	waitDone(t, s3, 5*time.Second)
	_, err = s3.Eval(ctxFor(t, 5*time.Second), executor.EvalParams{Expression: "1"})
	wantCode(t, err, executor.CodeTargetGone)

	// 4. Through the Manager, which drops the dead executor and reopens.
	m := executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{b}})
	ctx := ctxFor(t, 60*time.Second)
	title := func() (string, error) {
		var got string
		err := m.Do(ctx, "", func(ctx context.Context, ex executor.Executor) error {
			r, err := ex.Navigate(ctx, executor.NavigateParams{URL: srv.URL + "/form"})
			got = r.Title
			return err
		})
		return got, err
	}
	if got, err := title(); err != nil || got != "Form" {
		t.Fatalf("after the driver died: %q, %v", got, err)
	}
	cur, ok := m.Current("")
	if !ok {
		t.Fatal("the Manager holds no executor after a call")
	}
	_ = syscall.Kill(browserPid(t, b), syscall.SIGKILL)
	// A call racing the death fails like a call in flight; once the death
	// is noticed, the next call relaunches.
	waitDone(t, cur, 10*time.Second)
	if got, err := title(); err != nil || got != "Form" {
		t.Fatalf("Manager call after the kill: %q, %v", got, err)
	}

	// 5. Close leaves nothing behind.
	s5 := openSession(t, b, "")
	checkCloseLeavesNothing(t, b, s5)
	_ = m.Close()

	// Five launches, four deaths (two browsers, a driver, a browser under
	// the Manager); the close was the server's own.
	if ok, failed, crashes := ev.counts(); ok != 5 || failed != 0 || crashes != 4 {
		t.Errorf("events: %d launches, %d failed, %d crashes; want 5, 0, 4", ok, failed, crashes)
	}
}

// launchEvents counts the launches and crashes a Backend reports.
type launchEvents struct {
	executor.NoEvents
	mu                  sync.Mutex
	ok, failed, crashes int
}

func (e *launchEvents) Launched(_ string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.failed++
	} else {
		e.ok++
	}
}

func (e *launchEvents) Crashed(string) { e.mu.Lock(); e.crashes++; e.mu.Unlock() }

func (e *launchEvents) counts() (ok, failed, crashes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ok, e.failed, e.crashes
}

// checkCloseLeavesNothing records the driver and every browser process,
// closes the backend (twice, concurrently, as the contract allows) and
// checks that none of them is left and that the executor is done.
func checkCloseLeavesNothing(t *testing.T, b *Backend, ex *Session) {
	t.Helper()
	named := openSession(t, b, "other")
	if _, err := named.Navigate(ctxFor(t, 20*time.Second), executor.NavigateParams{URL: srv.URL + "/counter"}); err != nil {
		t.Fatal(err)
	}
	pids := processTree(b.current().driverPid)
	if len(pids) < 3 {
		t.Fatalf("expected a driver, a browser and its helpers, found %v", pids)
	}
	errs := make(chan error, 2)
	go func() { errs <- b.Close() }()
	go func() { errs <- b.Close() }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	time.Sleep(200 * time.Millisecond)
	var left []int
	for _, pid := range pids {
		if alive(pid) {
			left = append(left, pid)
		}
	}
	if len(left) > 0 {
		t.Errorf("processes outlived Close: %v of %v", left, pids)
	}
	waitDone(t, ex, time.Second)
	waitDone(t, named, time.Second)
	_, err := b.Open(ctxFor(t, 5*time.Second), "")
	wantCode(t, err, executor.CodeNoBackend)
}

// TestPersistentProfile: cookies survive a restart, Close leaves no process,
// a stale profile lock is cleared and a live one is refused.
func TestPersistentProfile(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	opts := testOptions(t, nil)
	profile := filepath.Join(opts.DataDir, "profile")

	b1, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	s := openSession(t, b1, "")
	expires := float64(time.Now().Add(24 * time.Hour).Unix())
	if err := s.SetCookies(ctxFor(t, 10*time.Second), executor.SetCookiesParams{Cookies: []executor.Cookie{
		{Name: "keep", Value: "me", URL: srv.URL, Expires: expires}}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := s.Status(ctxFor(t, time.Second)); st.Profile != profile {
		t.Errorf("profile %q, want %q", st.Profile, profile)
	}
	checkCloseLeavesNothing(t, b1, s)

	// A lock left by a Chromium on another host (a profile on a shared
	// home) is stale; clearStaleLock's other cases are unit-tested.
	plantLock(t, profile, "otherhost-99999")
	b2 := newBackend(t, func(o *Options) { o.DataDir = opts.DataDir; o.BrowserArgs = opts.BrowserArgs })
	s2 := openSession(t, b2, "")
	cs, err := s2.Cookies(ctxFor(t, 10*time.Second), executor.CookiesParams{URLs: []string{srv.URL}})
	if err != nil || len(cs) != 1 || cs[0].Value != "me" {
		t.Errorf("cookies after a restart: %v, %v", cs, err)
	}
	// Closing the default executor closes the browser it owns.
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	waitDone(t, s2, time.Second)
	if in := b2.current(); in != nil && !in.dead() {
		t.Error("closing the default executor left its browser running")
	}
	if err := b2.Close(); err != nil {
		t.Fatal(err)
	}

	// A lock held by a live Chromium-looking process.
	host, _ := os.Hostname()
	holder := exec.Command("/bin/sleep", "30")
	holder.Args[0] = "chromium-holding-the-profile"
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	plantLock(t, profile, fmt.Sprintf("%s-%d", host, holder.Process.Pid))
	b := newBackend(t, func(o *Options) { o.DataDir = opts.DataDir; o.BrowserArgs = opts.BrowserArgs })
	_, err = b.Open(ctxFor(t, 30*time.Second), "")
	if e := wantCode(t, err, executor.CodeLaunchFailed); !strings.Contains(e.Message, "in use") || !strings.Contains(e.Hint, "--isolated") {
		t.Errorf("live lock: %v", e)
	}
}

func TestClearStaleLock(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	notChrome := exec.Command("/bin/sleep", "30") // a recycled pid
	if err := notChrome.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = notChrome.Process.Kill(); _ = notChrome.Wait() }()
	chrome := exec.Command("/bin/sleep", "30")
	chrome.Args[0] = "/usr/lib/chromium/chromium"
	if err := chrome.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = chrome.Process.Kill(); _ = chrome.Wait() }()

	tests := []struct {
		name     string
		lock     string // "" = no lock
		removed  bool
		inUseErr bool
	}{
		{"no lock", "", false, false},
		{"other host", "otherhost-99999", true, false},
		{"dead pid", fmt.Sprintf("%s-%d", host, dead.Process.Pid), true, false},
		{"recycled pid", fmt.Sprintf("%s-%d", host, notChrome.Process.Pid), true, false},
		{"hyphenated host", "my-other-host-1", true, false},
		{"garbage", "garbage", true, false},
		{"live chromium", fmt.Sprintf("%s-%d", host, chrome.Process.Pid), false, true},
	}
	for _, tc := range tests {
		profile := t.TempDir()
		if tc.lock != "" {
			plantLock(t, profile, tc.lock)
		}
		removed, err := clearStaleLock(profile, discardLogger)
		if tc.inUseErr {
			wantCode(t, err, executor.CodeLaunchFailed)
		} else if err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if removed != tc.removed {
			t.Errorf("%s: removed = %v", tc.name, removed)
		}
		_, lerr := os.Lstat(filepath.Join(profile, "SingletonLock"))
		if gone := os.IsNotExist(lerr); gone != (tc.lock == "" || tc.removed) {
			t.Errorf("%s: lock still there = %v", tc.name, !gone)
		}
	}
}

func plantLock(t *testing.T, profile, target string) {
	t.Helper()
	for name, to := range map[string]string{"SingletonLock": target, "SingletonSocket": "/tmp/nonexistent-socket", "SingletonCookie": "12345"} {
		p := filepath.Join(profile, name)
		_ = os.Remove(p)
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAttach attaches to a Chromium started outside chromegate and checks
// that Close leaves it, and its own tab, alone.
func TestAttach(t *testing.T) {
	needBrowser(t)
	t.Parallel()
	endpoint, cmd := bareBrowser(t)

	b := newBackend(t, func(o *Options) { o.CDPEndpoint = endpoint })
	s := openSession(t, b, "")
	ctx := ctxFor(t, 30*time.Second)
	st, err := s.Status(ctx)
	if err != nil || !st.Attached || st.Tabs != 1 || st.Profile != "" {
		t.Errorf("status: %+v, %v", st, err)
	}
	mine, err := s.NewTab(ctx, executor.NewTabParams{URL: srv.URL + "/counter"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Click(ctx, executor.ClickParams{TargetParams: executor.TargetParams{TabID: mine.ID, Target: executor.Target{Selector: "#inc"}}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	waitDone(t, s, time.Second)
	time.Sleep(300 * time.Millisecond)
	if !alive(cmd.Process.Pid) {
		t.Fatal("Close killed a browser chromegate only attached to")
	}
	urls := targets(t, endpoint)
	if !slices.Contains(urls, "about:blank") || slices.Contains(urls, srv.URL+"/counter") {
		t.Errorf("after Close the browser has %v; want the user's about:blank and not chromegate's tab", urls)
	}
}

// bareBrowser starts a Chromium with a CDP endpoint that chromegate did not
// launch, killed when the test ends, and returns its endpoint.
func bareBrowser(t *testing.T) (string, *exec.Cmd) {
	t.Helper()
	exe, err := FindChromium("")
	if err != nil {
		t.Fatal(err)
	}
	userDir := testOptions(t, nil).DataDir // under testRoot: TestMain sees leftovers
	cmd := exec.Command(exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-port=0", "--user-data-dir="+userDir, "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the browser and its helpers
		_ = cmd.Wait()
	})
	var port string
	deadline := time.Now().Add(20 * time.Second)
	for port == "" {
		if f, err := os.Open(filepath.Join(userDir, "DevToolsActivePort")); err == nil {
			sc := bufio.NewScanner(f)
			if sc.Scan() {
				port = strings.TrimSpace(sc.Text())
			}
			f.Close()
		}
		if time.Now().After(deadline) {
			t.Fatal("the browser never wrote DevToolsActivePort")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://127.0.0.1:" + port, cmd
}

// targets lists the page URLs of a browser through its /json endpoint.
func targets(t *testing.T, endpoint string) []string {
	t.Helper()
	resp, err := http.Get(endpoint + "/json/list")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list []struct{ Type, URL string }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range list {
		if x.Type == "page" {
			out = append(out, x.URL)
		}
	}
	return out
}

func TestOpenFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts Options
		hint string
	}{
		{"no driver", Options{DriverDir: t.TempDir()}, "chromegate setup"},
		{"no browser", Options{ExecutablePath: "/nonexistent/chrome"}, "apt-get install -y chromium"},
	}
	for _, tc := range tests {
		tc.opts.DataDir = t.TempDir()
		b, err := New(tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Open(ctxFor(t, 10*time.Second), "")
		if e := wantCode(t, err, executor.CodeLaunchFailed); !strings.Contains(e.Hint, tc.hint) {
			t.Errorf("%s: hint %q lacks %q", tc.name, e.Hint, tc.hint)
		}
		_ = b.Close()
	}
	// A browser that exits at once: its own words reach the message.
	if integration == "" {
		fake := filepath.Join(t.TempDir(), "chromium")
		script := "#!/bin/sh\necho 'Missing X server or $DISPLAY' >&2\nexit 1\n"
		if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		b := newBackend(t, func(o *Options) { o.ExecutablePath = fake })
		_, err := b.Open(ctxFor(t, 30*time.Second), "")
		if e := wantCode(t, err, executor.CodeLaunchFailed); !strings.Contains(e.Message, "Missing X server") || !strings.Contains(e.Hint, "xvfb-run") {
			t.Errorf("browser that exits: %v", e)
		}
	}
	for _, bad := range []Options{
		{MaxDownloadBytes: -1},
		{MaxScreenshotHeight: -1},
		{ViewportWidth: -5},
		{CDPEndpoint: "http://127.0.0.1:9222", Isolated: true},
	} {
		if _, err := New(bad); err == nil {
			t.Errorf("New(%+v) accepted bad options", bad)
		}
	}
}
