package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// The BenchmarkDirect* functions do with playwright-go directly what the
// BenchmarkExecutor* functions do through the Executor, on the same kind of
// browser and page: the difference is this package's overhead, and the
// MCP layer is measured against both later.

var (
	directOnce sync.Once
	directPage playwright.Page
	directErr  error
	cleanups   []func()
)

// direct starts a driver and an isolated browser with one page on the
// counter page, shared by the direct benchmarks.
func direct(b *testing.B) playwright.Page {
	b.Helper()
	needBrowser(b)
	directOnce.Do(func() {
		d, err := FindDriver("")
		if err != nil {
			directErr = err
			return
		}
		exe, err := FindChromium("")
		if err != nil {
			directErr = err
			return
		}
		pw, err := playwright.Run(&playwright.RunOptions{DriverDirectory: d.Dir, Stdout: io.Discard, Stderr: io.Discard, Logger: discardLogger})
		if err != nil {
			directErr = err
			return
		}
		cleanups = append(cleanups, func() { _ = pw.Stop() })
		opts, _ := New(Options{BrowserArgs: []string{"--chromegate-test=" + filepath.Join(testRoot, "direct")}})
		br, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
			ExecutablePath: playwright.String(exe), Headless: playwright.Bool(true), Args: opts.chromiumArgs(),
		})
		if err != nil {
			directErr = err
			return
		}
		page, err := br.NewPage(playwright.BrowserNewPageOptions{Viewport: &playwright.Size{Width: 1280, Height: 720}})
		if err != nil {
			directErr = err
			return
		}
		_, directErr = page.Goto(srv.URL + "/form")
		directPage = page
	})
	if directErr != nil {
		b.Fatal(directErr)
	}
	return directPage
}

func BenchmarkDirectNavigate(b *testing.B) {
	page := direct(b)
	for b.Loop() {
		if _, err := page.Goto(srv.URL + "/counter"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirectClick(b *testing.B) {
	page := direct(b)
	if _, err := page.Goto(srv.URL + "/counter"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := page.Locator("#inc").Click(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirectType(b *testing.B) {
	page := direct(b)
	if _, err := page.Goto(srv.URL + "/form"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := page.Locator("#bio").PressSequentially("hello"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirectInnerText(b *testing.B) {
	page := direct(b)
	if _, err := page.Goto(srv.URL + "/counter"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := page.Locator("#count").InnerText(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirectScreenshot(b *testing.B) {
	page := direct(b)
	if _, err := page.Goto(srv.URL + "/counter"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := page.Screenshot(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirectEvaluate(b *testing.B) {
	page := direct(b)
	for b.Loop() {
		if _, err := page.Evaluate("1 + 1"); err != nil {
			b.Fatal(err)
		}
	}
}

var (
	benchOnce sync.Once
	benchExec *Session
	benchErr  error
)

// benchTab returns an executor on an isolated browser of its own, like the
// direct benchmarks' one, with its one tab on path.
func benchTab(b *testing.B, path string) (*Session, string) {
	b.Helper()
	needBrowser(b)
	benchOnce.Do(func() {
		be, err := New(Options{Isolated: true, DataDir: filepath.Join(testRoot, "bench"),
			BrowserArgs: []string{"--chromegate-test=" + filepath.Join(testRoot, "bench")}})
		if err != nil {
			benchErr = err
			return
		}
		cleanups = append(cleanups, func() { _ = be.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ex, err := be.Open(ctx, "")
		if err != nil {
			benchErr = err
			return
		}
		benchExec = ex.(*Session)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	r, err := benchExec.Navigate(benchCtx(b), executor.NavigateParams{URL: srv.URL + path})
	if err != nil {
		b.Fatal(err)
	}
	return benchExec, r.TabID
}

func benchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	b.Cleanup(cancel)
	return ctx
}

func BenchmarkExecutorNavigate(b *testing.B) {
	s, tab := benchTab(b, "/")
	ctx := benchCtx(b)
	for b.Loop() {
		if _, err := s.Navigate(ctx, executor.NavigateParams{TabID: tab, URL: srv.URL + "/counter"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecutorClick(b *testing.B) {
	s, tab := benchTab(b, "/counter")
	ctx := benchCtx(b)
	p := executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#inc"}}}
	for b.Loop() {
		if _, err := s.Click(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecutorClickRef is BenchmarkExecutorClick by ref: the
// isolated world checks the element and gives its point, and the click is
// trusted mouse input there, instead of a Locator's actionability round
// trips.
func BenchmarkExecutorClickRef(b *testing.B) {
	s, tab := benchTab(b, "/counter")
	ctx := benchCtx(b)
	p := executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Ref: refFor(b, s, tab, "#inc")}}}
	for b.Loop() {
		if _, err := s.Click(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecutorRunScript is one round trip into the isolated world.
func BenchmarkExecutorRunScript(b *testing.B) {
	s, tab := benchTab(b, "/counter")
	ctx := benchCtx(b)
	p := executor.ScriptParams{TabID: tab, Source: "() => 1"}
	for b.Loop() {
		if _, err := s.RunScript(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecutorType(b *testing.B) {
	s, tab := benchTab(b, "/form")
	ctx := benchCtx(b)
	p := executor.TypeParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#bio"}}, Text: "hello"}
	for b.Loop() {
		if _, err := s.Type(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecutorText(b *testing.B) {
	s, tab := benchTab(b, "/counter")
	ctx := benchCtx(b)
	p := executor.TextParams{TabID: tab, Target: executor.Target{Selector: "#count"}}
	for b.Loop() {
		if _, err := s.Text(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecutorScreenshot(b *testing.B) {
	s, tab := benchTab(b, "/counter")
	ctx := benchCtx(b)
	for b.Loop() {
		if _, err := s.Screenshot(ctx, executor.ScreenshotParams{TabID: tab}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecutorEval(b *testing.B) {
	s, tab := benchTab(b, "/counter")
	ctx := benchCtx(b)
	for b.Loop() {
		if _, err := s.Eval(ctx, executor.EvalParams{TabID: tab, Expression: "1 + 1"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpen measures a cold start: driver, browser, first page. It
// reports where the time went.
func BenchmarkOpen(b *testing.B) {
	needBrowser(b)
	for _, isolated := range []bool{false, true} {
		name := "persistent"
		if isolated {
			name = "isolated"
		}
		b.Run(name, func(b *testing.B) {
			var driver, browser, first time.Duration
			for b.Loop() {
				be := newBackend(b, func(o *Options) { o.Isolated = isolated })
				s := openSession(b, be, "")
				t0 := time.Now()
				if _, err := s.Navigate(benchCtx(b), executor.NavigateParams{URL: srv.URL + "/counter"}); err != nil {
					b.Fatal(err)
				}
				first += time.Since(t0)
				driver += be.current().timings.Driver
				browser += be.current().timings.Browser
				if err := be.Close(); err != nil {
					b.Fatal(err)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(driver.Milliseconds())/n, "driver-ms/op")
			b.ReportMetric(float64(browser.Milliseconds())/n, "browser-ms/op")
			b.ReportMetric(float64(first.Milliseconds())/n, "first-page-ms/op")
		})
	}
}

// BenchmarkNetlog is the network log's cost on a page's requests: a burst
// of netlogBurst same-origin fetches, on a page without the log's
// listeners (off: Playwright sends no request events at all) and on one
// with them (on: four events a request, recorded). ns/request is the
// wall time of a burst divided by its requests; the difference is the
// recording's overhead per request.
func BenchmarkNetlog(b *testing.B) {
	base := direct(b)
	burst := fmt.Sprintf(`Promise.all(Array.from({length: %d}, (_, i) => fetch('/cookies?n=' + i).then(r => r.text()))).then(() => 1)`, netlogBurst)
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			page, err := base.Context().Browser().NewPage()
			if err != nil {
				b.Fatal(err)
			}
			defer page.Close()
			var l *netLog
			if on {
				l = newNetLog(executor.MaxNetworkEntries)
				l.watch(page)
			}
			if _, err := page.Goto(srv.URL + "/form"); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := page.Evaluate(burst); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*netlogBurst), "ns/request")
			if on {
				if _, rs, _, _ := l.list(1); len(rs) == 0 {
					b.Fatal("nothing was recorded")
				}
			}
		})
	}
}

const netlogBurst = 100

// BenchmarkNetlogList is a listing of a full log (1000 entries, sizes
// known) without the browser: the recording's data structure only.
func BenchmarkNetlogList(b *testing.B) {
	l := newNetLog(executor.MaxNetworkEntries)
	for i := range executor.MaxNetworkEntries {
		l.onRequest(&fakeReq{url: fmt.Sprintf("https://a.test/%d", i), resource: "fetch"})
	}
	for b.Loop() {
		if _, rs, _, _ := l.list(1); len(rs) != executor.MaxNetworkEntries {
			b.Fatal(len(rs))
		}
	}
}

// benchState is a realistic logged-in state: 60 cookies over 6 origins,
// 200 localStorage keys of about 100 bytes per origin, and an IndexedDB
// database of 5 records on 3 of them.
func benchState() executor.StorageState {
	st := executor.StorageState{Cookies: []executor.StateCookie{}, Origins: []executor.OriginState{}}
	value := fmt.Sprintf("%0100d", 7)
	for o := range 6 {
		host := fmt.Sprintf("app%d.bench.test", o)
		for c := range 10 {
			st.Cookies = append(st.Cookies, executor.StateCookie{Name: fmt.Sprintf("c%d", c), Value: value[:40], Domain: host,
				Path: "/", Expires: float64(time.Now().Add(time.Hour).Unix()), HTTPOnly: c%2 == 0, SameSite: "Lax"})
		}
		os := executor.OriginState{Origin: "http://" + host}
		for k := range 200 {
			os.LocalStorage = append(os.LocalStorage, executor.NameValue{Name: fmt.Sprintf("key-%03d", k), Value: value})
		}
		if o%2 == 0 {
			var recs []string
			for r := range 5 {
				recs = append(recs, fmt.Sprintf(`{"value":{"id":%d,"body":%q}}`, r, value))
			}
			os.IndexedDB = []byte(`[{"name":"db","version":1,"stores":[{"name":"items","autoIncrement":false,"keyPath":"id","indexes":[],"records":[` +
				strings.Join(recs, ",") + `]}]}]`)
		}
		st.Origins = append(st.Origins, os)
	}
	return st
}

// BenchmarkStateRestore restores benchState into the session's context
// (Playwright's setStorageState: each origin in a routed page of its own).
func BenchmarkStateRestore(b *testing.B) {
	s, _ := benchTab(b, "/")
	ctx := benchCtx(b)
	st := benchState()
	for b.Loop() {
		if err := s.SetStorageState(ctx, st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStateSave reads it back, with IndexedDB.
func BenchmarkStateSave(b *testing.B) {
	s, _ := benchTab(b, "/")
	ctx := benchCtx(b)
	if err := s.SetStorageState(ctx, benchState()); err != nil {
		b.Fatal(err)
	}
	var size int
	for b.Loop() {
		st, err := s.StorageState(ctx, executor.StorageStateParams{IndexedDB: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(st.Cookies) != 60 || len(st.Origins) != 6 {
			b.Fatalf("saved %d cookies, %d origins", len(st.Cookies), len(st.Origins))
		}
		raw, _ := json.Marshal(st)
		size = len(raw)
	}
	b.ReportMetric(float64(size), "bytes/state")
}

// BenchmarkDirectNewContextWithState and BenchmarkDirectNewContextThenSet
// compare the two ways to start a context from benchState: Playwright's
// NewContext option (mode "initial": no cookies to clear, no visited
// origins) against a new context followed by setStorageState, which is
// what a restore into a context chromegate already created costs.
func BenchmarkDirectNewContextWithState(b *testing.B) {
	br := direct(b).Context().Browser()
	path := benchStateFile(b)
	for b.Loop() {
		c, err := br.NewContext(playwright.BrowserNewContextOptions{StorageStatePath: playwright.String(path)})
		if err != nil {
			b.Fatal(err)
		}
		_ = c.Close()
	}
}

func BenchmarkDirectNewContextThenSet(b *testing.B) {
	br := direct(b).Context().Browser()
	path := benchStateFile(b)
	for b.Loop() {
		c, err := br.NewContext()
		if err != nil {
			b.Fatal(err)
		}
		if err := c.SetStorageState(path); err != nil {
			b.Fatal(err)
		}
		_ = c.Close()
	}
}

func benchStateFile(b *testing.B) string {
	raw, err := json.Marshal(benchState())
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "state.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}
