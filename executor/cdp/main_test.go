package cdp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// Integration tests drive a real Chromium through the real driver. TestMain
// finds the driver, installs it from the npm registry when it is missing,
// and skips the browser tests (outside CI) when neither works; in CI
// (CI=true) a missing driver or browser fails the run.

var (
	integration   string // non-empty: why the browser tests cannot run
	srv           *httptest.Server
	testRoot      string // temp dir for data dirs of this run
	sharedOnce    sync.Once
	sharedBackend *Backend
	sharedExec    *Session
	sharedErr     error
)

func TestMain(m *testing.M) {
	ci := os.Getenv("CI") == "true"
	integration = prepare()
	if integration != "" {
		if ci {
			fmt.Fprintln(os.Stderr, "cdp: CI=true and the browser tests cannot run:", integration)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "cdp: skipping browser tests:", integration)
	}
	var err error
	testRoot, err = os.MkdirTemp("", "cdp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv = httptest.NewServer(testSite())
	code := m.Run()
	for _, f := range cleanups {
		f()
	}
	if sharedBackend != nil {
		if err := sharedBackend.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the shared backend:", err)
			code = 1
		}
	}
	srv.Close()
	if left := processesWith(testRoot); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "cdp: %d browser processes outlived their backends: %v\n", len(left), left)
		code = 1
	}
	os.RemoveAll(testRoot)
	os.Exit(code)
}

// prepare makes sure the driver and a browser exist, and says why not.
func prepare() string {
	if _, err := FindDriver(""); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if ierr := InstallDriver(ctx, DefaultDriverDir(), os.Stderr); ierr != nil {
			return fmt.Sprintf("no driver (%v) and installing it failed: %v", err, ierr)
		}
		if _, err := FindDriver(""); err != nil {
			return err.Error()
		}
	}
	if _, err := FindChromium(""); err != nil {
		return err.Error()
	}
	return ""
}

func needBrowser(t testing.TB) {
	t.Helper()
	if integration != "" {
		t.Skip(integration)
	}
}

// testOptions returns options for a backend whose processes can be found by
// the data dir under testRoot in their command lines.
func testOptions(t testing.TB, mutate func(*Options)) Options {
	t.Helper()
	dir, err := os.MkdirTemp(testRoot, strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		DataDir:          dir,
		MaxDownloadBytes: 1 << 20,
		// A flag Chromium ignores, so the processes of an isolated browser
		// (whose profile is a Playwright temp dir) can be found too.
		BrowserArgs: []string{"--chromegate-test=" + dir},
	}
	if mutate != nil {
		mutate(&o)
	}
	return o
}

func newBackend(t testing.TB, mutate func(*Options)) *Backend {
	t.Helper()
	b, err := New(testOptions(t, mutate))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func openSession(t testing.TB, b *Backend, name string) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ex, err := b.Open(ctx, name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	return ex.(*Session)
}

// shared returns the executor that most tests share: one persistent
// browser for the whole package, each test in its own tab.
func shared(t testing.TB) *Session {
	t.Helper()
	needBrowser(t)
	sharedOnce.Do(func() {
		o := Options{DataDir: filepath.Join(testRoot, "shared"), MaxDownloadBytes: 1 << 20,
			BrowserArgs: []string{"--chromegate-test=" + filepath.Join(testRoot, "shared")}}
		b, err := New(o)
		if err != nil {
			sharedErr = err
			return
		}
		sharedBackend = b
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		ex, err := b.Open(ctx, "")
		if err != nil {
			sharedErr = err
			return
		}
		sharedExec = ex.(*Session)
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedExec
}

// tabAt opens a tab on path of the test site and returns its id.
func tabAt(t testing.TB, s *Session, path string) string {
	t.Helper()
	tb, err := s.NewTab(ctxFor(t, 20*time.Second), executor.NewTabParams{URL: srv.URL + path})
	if err != nil {
		t.Fatalf("NewTab(%s): %v", path, err)
	}
	t.Cleanup(func() { _ = s.CloseTab(context.Background(), tb.ID) })
	return tb.ID
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// evalString evaluates expr in a tab and returns the JSON of its value.
func evalJSON(t testing.TB, s *Session, tab, expr string) string {
	t.Helper()
	r, err := s.Eval(ctxFor(t, 10*time.Second), executor.EvalParams{TabID: tab, Expression: expr, AwaitPromise: true})
	if err != nil {
		t.Fatalf("eval %q: %v", expr, err)
	}
	if !r.OK {
		t.Fatalf("eval %q threw: %s", expr, r.Error)
	}
	return string(r.Value)
}

func wantCode(t testing.TB, err error, code executor.Code) *executor.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("want a %s error, got nil", code)
	}
	var xe *executor.Error
	if !errors.As(err, &xe) {
		t.Fatalf("want an *executor.Error %s, got %T: %v", code, err, err)
	}
	if xe.Code != code {
		t.Fatalf("want code %s, got %s: %v", code, xe.Code, err)
	}
	return xe
}

// promptly fails when a call that should end at its deadline ran far past
// it. The bound is loose, for loaded machines: what it catches is a call
// that ignores its deadline and waits for a 30 s default, or forever.
func promptly(t testing.TB, what string, start time.Time, deadline time.Duration) {
	t.Helper()
	if d := time.Since(start); d > deadline+10*time.Second {
		t.Errorf("%s took %s with a %s deadline", what, d.Round(time.Millisecond), deadline)
	}
}

// processesWith lists pids whose command line contains s.
func processesWith(s string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), s) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if i := strings.LastIndexByte(string(st), ')'); i >= 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// browserPid is the pid of the main Chromium process of a backend: a child
// of the driver without --type=.
func browserPid(t testing.TB, b *Backend) int {
	t.Helper()
	in := b.current()
	if in == nil {
		t.Fatal("no browser running")
	}
	for _, pid := range childrenOf(in.driverPid) {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(strings.ToLower(string(cmd)), "chrom") && !strings.Contains(string(cmd), "--type=") {
			return pid
		}
	}
	t.Fatalf("no Chromium child of the driver (pid %d)", in.driverPid)
	return 0
}

func childrenOf(ppid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(st), ')')
		f := strings.Fields(string(st[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			out = append(out, pid)
		}
	}
	return out
}

// alive reports whether pid runs (zombies count as gone).
func alive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(st), ')')
	return i < 0 || i+2 >= len(st) || st[i+2] != 'Z'
}

// testSite serves the pages the tests drive.
func testSite() http.Handler {
	mux := http.NewServeMux()
	page := func(path, title, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
		})
	}
	page("/{$}", "Home", `<h1>Home</h1><a id="form" href="/form">form</a>`)
	// A page that lies about its origin in its own world, and moves focus
	// away from #steal as it is focused.
	page("/guard", "Guard", `<input id="pw" type="password" aria-label="Password"><input id="steal"><input id="other">
<script>
Object.defineProperty(window, 'origin', {get: () => 'https://login.test'});
steal.addEventListener('focus', () => other.focus());
</script>`)
	page("/form", "Form", `
<form id="f" onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'submitted:' + this.name.value">
  <input id="name" name="name" value="old">
  <textarea id="bio"></textarea>
  <select id="color"><option value="r">Red</option><option value="g">Green</option><option value="b">Blue</option></select>
  <input id="file" type="file">
  <button id="submit">Send</button>
</form>
<div id="keys"></div><div id="out"></div>
<script>
  document.getElementById('name').addEventListener('keydown', (e) => {
    document.getElementById('keys').textContent += e.key + (e.isTrusted ? '' : '(untrusted)') + ' ';
  });
</script>`)
	page("/counter", "Counter", `
<button id="inc">+1</button><span id="count">0</span>
<div id="dbl">0</div><div id="right">0</div><div id="trusted"></div>
<div id="hoverme" style="width:100px;height:40px;background:#ccc">hover me</div><div id="hovered"></div>
<button id="hidden" style="display:none">hidden</button>
<script>
  const inc = document.getElementById('inc');
  inc.addEventListener('click', (e) => {
    const c = document.getElementById('count'); c.textContent = String(Number(c.textContent) + 1);
    document.getElementById('trusted').textContent = e.isTrusted ? 'trusted' : 'untrusted';
  });
  inc.addEventListener('dblclick', () => { const d = document.getElementById('dbl'); d.textContent = String(Number(d.textContent) + 1); });
  inc.addEventListener('contextmenu', (e) => { e.preventDefault(); const d = document.getElementById('right'); d.textContent = String(Number(d.textContent) + 1); });
  document.getElementById('hoverme').addEventListener('mouseover', () => { document.getElementById('hovered').textContent = 'hovered'; });
</script>`)
	page("/dialogs", "Dialogs", `
<button id="go" onclick="alert('hello'); const ok = confirm('sure?'); const name = prompt('name?', 'anon'); document.getElementById('out').textContent = ok + ' ' + name;">go</button>
<div id="out"></div>`)
	page("/alertonload", "Alerting", `<script>alert('loading')</script><p>after</p>`)
	page("/leave", "Leave", `<input id="i"><script>addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = ''; });</script>`)
	page("/late", "Late", `
<div id="gone">going</div><div id="shy" style="display:none">shy</div>
<script>
  // Called by the test right before it waits, so the wait is never late.
  window.later = () => setTimeout(() => {
    const d = document.createElement('div'); d.id = 'late'; d.textContent = 'arrived late'; document.body.appendChild(d);
    document.getElementById('gone').remove(); document.getElementById('shy').style.display = 'block';
  }, 400);
</script>`)
	page("/tall", "Tall", `<div id="top">top</div><div style="height:20000px;background:linear-gradient(#fff,#000)"></div><div id="bottom">bottom</div>`)
	page("/drag", "Drag", `
<div id="src" draggable="true" style="width:80px;height:40px;background:#aaf">drag me</div>
<div id="dst" style="width:200px;height:100px;margin-top:50px;background:#afa">drop here</div>
<script>
  const dst = document.getElementById('dst');
  dst.addEventListener('dragover', (e) => e.preventDefault());
  dst.addEventListener('drop', (e) => { e.preventDefault(); dst.textContent = 'dropped'; });
</script>`)
	page("/popup", "Popup", `<a id="blank" href="/" target="_blank">new window</a>`)
	page("/webmcp", "WebMCP", `<p>webmcp</p>`)
	// A frame of another site (localhost under 127.0.0.1: out of process).
	page("/xframe", "Xframe", `<p>top</p><script>document.write('<iframe id="x" style="margin-left:30px;border:5px solid;padding:0" width="300" height="200" src="http://localhost:' + location.port + '/xinner"></iframe>')</script>`)
	page("/xinner", "Xinner", `<button id="b" onclick="document.getElementById('out').textContent = 'clicked ' + event.isTrusted">b</button><div id="out"></div>`)
	page("/refs", "Refs", `
<button id="go" onclick="document.getElementById('out').textContent = 'go ' + event.isTrusted">go</button><div id="out"></div>
<div style="position:relative;width:200px"><button id="under">under</button><div style="position:absolute;inset:0;background:rgba(0,0,0,.1)"></div></div>
<button id="dis" disabled>disabled</button>
<input id="d" type="date"><input id="num" type="number">
<div id="gone">will go</div>
<div id="ce" contenteditable="true">old text</div>
<p id="para">Hello <b>world</b></p>
<iframe id="fr" style="margin-top:1500px" srcdoc="<button id=inner onclick=&quot;parent.document.getElementById('out').textContent='inner ' + event.isTrusted&quot;>inner</button>"></iframe>`)
	page("/dlpage", "Downloads", `<a id="dl" href="/dl/report" download>report</a><a id="nodl" href="#">nothing</a>`)
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "<title>Slow</title>slow")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/form", http.StatusFound)
	})
	mux.HandleFunc("/cookies", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<title>Cookies</title><pre id=c>%s</pre>", r.Header.Get("Cookie"))
	})
	mux.HandleFunc("/dl/report", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Disposition", `attachment; filename="../../etc/pa:ss?wd.txt"`)
		fmt.Fprint(w, "hello report")
	})
	mux.HandleFunc("/dl/utf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`)
		fmt.Fprint(w, "%PDF-1.4")
	})
	mux.HandleFunc("/dl/plain/data.csv", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "a,b\n1,2\n")
	})
	mux.HandleFunc("/dl/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(2<<20))
		_, _ = io.CopyN(w, zeros{}, 2<<20)
	})
	mux.HandleFunc("/dl/chunked", func(w http.ResponseWriter, r *http.Request) {
		// No Content-Length: the cap must hold while streaming.
		for i := 0; i < 64; i++ {
			if _, err := io.CopyN(w, zeros{}, 64<<10); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/dl/secret", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sess"); err != nil || c.Value != "abc" {
			http.Error(w, "no session", http.StatusForbidden)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "seen", Value: "1", Path: "/"})
		fmt.Fprint(w, "secret data")
	})
	mux.HandleFunc("/dl/missing", http.NotFound)
	return mux
}

// closedPort returns a loopback URL nothing listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/"
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
