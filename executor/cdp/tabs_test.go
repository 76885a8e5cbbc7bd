package cdp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// TestTabs runs in a session of its own, so the tabs it counts are its own.
func TestTabs(t *testing.T) {
	shared(t)
	t.Parallel()
	ctx := ctxFor(t, 60*time.Second)
	ex, err := sharedBackend.Open(ctx, "tabs")
	if err != nil {
		t.Fatal(err)
	}
	s := ex.(*Session)
	defer s.Close()

	// A fresh session has no tab until a call needs one.
	if tabs, err := s.Tabs(ctx); err != nil || len(tabs) != 0 {
		t.Fatalf("fresh session: %v, %v", tabs, err)
	}
	first, err := s.TabInfo(ctx, "")
	if err != nil || !first.Selected || first.URL != "about:blank" {
		t.Fatalf("implicit tab: %+v, %v", first, err)
	}
	if !strings.HasPrefix(first.ID, "cdp:"+s.ids.Session+":") {
		t.Errorf("tab id %q is not stamped cdp:<session>:<raw>", first.ID)
	}
	a, err := s.NewTab(ctx, executor.NewTabParams{URL: srv.URL + "/counter"})
	if err != nil || !a.Selected || a.Title != "Counter" {
		t.Fatalf("new tab: %+v, %v", a, err)
	}
	b, err := s.NewTab(ctx, executor.NewTabParams{URL: srv.URL + "/form"})
	if err != nil {
		t.Fatal(err)
	}
	// Calls without a tab id act on the selected tab.
	if r, err := s.Text(ctx, executor.TextParams{}); err != nil || r.TabID != b.ID {
		t.Errorf("selected tab: %+v, %v", r.PageState, err)
	}
	if _, err := s.SelectTab(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Eval(ctx, executor.EvalParams{Expression: "document.title"}); err != nil || string(r.Value) != `"Counter"` {
		t.Errorf("after select: %s, %v", r.Value, err)
	}
	tabs, err := s.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids, titles []string
	for _, tb := range tabs {
		ids = append(ids, tb.ID)
		titles = append(titles, tb.Title)
		if tb.Selected != (tb.ID == a.ID) {
			t.Errorf("tab %s selected = %v", tb.ID, tb.Selected)
		}
	}
	if strings.Join(ids, ",") != strings.Join([]string{first.ID, a.ID, b.ID}, ",") || titles[1] != "Counter" || titles[2] != "Form" {
		t.Errorf("tabs in order: %v %q", ids, titles)
	}

	// Closing the selected tab selects the most recently selected other one.
	if _, err := s.SelectTab(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseTab(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if cur, err := s.TabInfo(ctx, ""); err != nil || cur.ID != a.ID {
		t.Errorf("after closing the selected tab: %+v, %v", cur, err)
	}
	_, err = s.TabInfo(ctx, b.ID)
	wantCode(t, err, executor.CodeTabNotFound)
	err = s.CloseTab(ctx, b.ID)
	wantCode(t, err, executor.CodeTabNotFound)
	_, err = s.SelectTab(ctx, "cdp:00000000:2")
	wantCode(t, err, executor.CodeStaleTab)

	// A page's popup is a tab too.
	pop, err := s.NewTab(ctx, executor.NewTabParams{URL: srv.URL + "/popup"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Click(ctx, executor.ClickParams{TargetParams: executor.TargetParams{TabID: pop.ID, Target: executor.Target{Selector: "#blank"}}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		tabs, _ := s.Tabs(ctx)
		if len(tabs) == 4 {
			if got := tabs[3].URL; got != srv.URL+"/" {
				t.Errorf("popup tab at %s", got)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the popup never became a tab: %v", tabs)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Close every tab: the next call opens one.
	tabs, _ = s.Tabs(ctx)
	for _, tb := range tabs {
		if err := s.CloseTab(ctx, tb.ID); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.Navigate(ctx, executor.NavigateParams{URL: srv.URL + "/"})
	if err != nil || r.Title != "Home" {
		t.Fatalf("navigate with no tab left: %+v, %v", r, err)
	}
	st, err := s.Status(ctx)
	if err != nil || st.Tabs != 1 || st.SelectedTab != r.TabID || st.Session != "tabs" {
		t.Errorf("status: %+v, %v", st, err)
	}
}

// TestSessionsAreIsolated: named sessions have their own cookies and tabs.
func TestSessionsAreIsolated(t *testing.T) {
	shared(t)
	t.Parallel()
	ctx := ctxFor(t, 60*time.Second)
	alice := openSession(t, sharedBackend, "alice")
	bob := openSession(t, sharedBackend, "bob")
	defer alice.Close()
	defer bob.Close()
	if again := openSession(t, sharedBackend, "alice"); again != alice {
		t.Error("a second Open of a live session returned a new executor")
	}
	if err := alice.SetCookies(ctx, executor.SetCookiesParams{Cookies: []executor.Cookie{{Name: "who", Value: "alice", URL: srv.URL}}}); err != nil {
		t.Fatal(err)
	}
	if cs, err := bob.Cookies(ctx, executor.CookiesParams{URLs: []string{srv.URL}}); err != nil || len(cs) != 0 {
		t.Errorf("bob sees %v, %v", cs, err)
	}
	if _, err := alice.NewTab(ctx, executor.NewTabParams{URL: srv.URL + "/counter"}); err != nil {
		t.Fatal(err)
	}
	if tabs, _ := bob.Tabs(ctx); len(tabs) != 0 {
		t.Errorf("bob sees alice's tabs: %v", tabs)
	}
	if err := bob.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-bob.Done():
	default:
		t.Error("Done is open after Close")
	}
	_, err := bob.Tabs(ctx)
	wantCode(t, err, executor.CodeTargetGone)
	if err := alice.Ping(ctx); err != nil {
		t.Errorf("closing bob hurt alice: %v", err)
	}
}

func TestStatusAndPing(t *testing.T) {
	s := shared(t)
	t.Parallel()
	ctx := ctxFor(t, 5*time.Second)
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Backend != "cdp" || st.Browser != "chromium" || st.Version == "" || !st.Headless || st.Attached ||
		st.Profile != filepath.Join(testRoot, "shared", "profile") || st.DownloadDir != filepath.Join(testRoot, "shared", "downloads") {
		t.Errorf("status: %+v", st)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	if s.Backend() != "cdp" || sharedBackend.Name() != "cdp" {
		t.Error("backend name")
	}
}

func TestDownload(t *testing.T) {
	s := shared(t)
	t.Parallel()
	ctx := ctxFor(t, 60*time.Second)
	dir := filepath.Join(testRoot, "shared", "downloads")
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

	tests := []struct {
		name     string
		p        executor.DownloadParams
		filename string
		body     string
		mime     string
	}{
		{"content-disposition, sanitised", executor.DownloadParams{URL: srv.URL + "/dl/report"}, "pa_ss_wd.txt", "hello report", "text/plain"},
		{"same name again", executor.DownloadParams{URL: srv.URL + "/dl/report"}, "pa_ss_wd (1).txt", "hello report", "text/plain"},
		{"RFC 5987 name", executor.DownloadParams{URL: srv.URL + "/dl/utf"}, "résumé.pdf", "%PDF-1.4", "application/pdf"},
		{"URL path name", executor.DownloadParams{URL: srv.URL + "/dl/plain/data.csv"}, "data.csv", "a,b\n1,2\n", "text/plain"},
		{"suggested name wins", executor.DownloadParams{URL: srv.URL + "/dl/report", Filename: "../../.hidden/x.txt"}, "x.txt", "hello report", "text/plain"},
	}
	for _, tc := range tests {
		r, err := s.Download(ctx, tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		data, err := os.ReadFile(r.Path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Filename != tc.filename || filepath.Dir(r.Path) != dir || string(data) != tc.body ||
			r.Size != int64(len(tc.body)) || r.SHA256 != sum(tc.body) || r.MIMEType != tc.mime {
			t.Errorf("%s: %+v (body %q)", tc.name, r, data)
		}
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("download dir mode: %v, %v", st.Mode(), err)
	}

	// By click, in the page.
	tab := tabAt(t, s, "/dlpage")
	r, err := s.Download(ctx, executor.DownloadParams{TabID: tab, Target: executor.Target{Selector: "#dl"}})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(r.Path); string(data) != "hello report" || !strings.HasSuffix(r.Filename, "pa_ss_wd.txt") || strings.ContainsAny(r.Filename, `/\`) || r.SHA256 != sum("hello report") {
		t.Errorf("click download: %+v", r)
	}
	_, err = s.Download(ctxFor(t, 3*time.Second), executor.DownloadParams{TabID: tab, Target: executor.Target{Selector: "#nodl"}})
	wantCode(t, err, executor.CodeDownloadFailed)

	// Cookies of the session go with the request, and come back.
	if err := s.SetCookies(ctx, executor.SetCookiesParams{Cookies: []executor.Cookie{{Name: "sess", Value: "abc", URL: srv.URL}}}); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Download(ctx, executor.DownloadParams{URL: srv.URL + "/dl/secret"}); err != nil || r.Size != int64(len("secret data")) {
		t.Errorf("download with the session's cookie: %+v, %v", r, err)
	}
	cs, _ := s.Cookies(ctx, executor.CookiesParams{URLs: []string{srv.URL}})
	seen := false
	for _, c := range cs {
		seen = seen || (c.Name == "seen" && c.Value == "1")
	}
	if !seen {
		t.Errorf("the cookie the download set is not in the browser: %v", cs)
	}

	errs := []struct {
		name string
		p    executor.DownloadParams
		code executor.Code
		msg  string
	}{
		{"over the cap (Content-Length)", executor.DownloadParams{URL: srv.URL + "/dl/big"}, executor.CodeDownloadFailed, "limit"},
		{"over the cap (streamed)", executor.DownloadParams{URL: srv.URL + "/dl/chunked"}, executor.CodeDownloadFailed, "limit"},
		{"404", executor.DownloadParams{URL: srv.URL + "/dl/missing"}, executor.CodeDownloadFailed, "404"},
		{"both", executor.DownloadParams{URL: srv.URL, Target: executor.Target{Selector: "a"}}, executor.CodeBadArgs, "exactly one"},
		{"neither", executor.DownloadParams{}, executor.CodeBadArgs, "exactly one"},
		{"not http", executor.DownloadParams{URL: "file:///etc/passwd"}, executor.CodeBadArgs, "http"},
	}
	for _, tc := range errs {
		_, err := s.Download(ctx, tc.p)
		if e := wantCode(t, err, tc.code); !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: %q lacks %q", tc.name, e.Message, tc.msg)
		}
	}
	// Nothing half-written is left behind.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".part") {
			t.Errorf("partial file left: %s", e.Name())
		}
		if info, _ := e.Info(); info != nil && info.Size() > 1<<20 {
			t.Errorf("file over the cap kept: %s", e.Name())
		}
	}
}

// TestContextDeadlines: a cancelled context stops a call at once.
func TestContextDeadlines(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/counter")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Click(ctx, executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#inc"}}})
	wantCode(t, err, executor.CodeTimeout)

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	_, err = s.WaitFor(ctx, executor.WaitParams{TabID: tab, Target: executor.Target{Selector: "#never"}})
	wantCode(t, err, executor.CodeTimeout)
	promptly(t, "wait_for after cancel", start, 300*time.Millisecond)
}
