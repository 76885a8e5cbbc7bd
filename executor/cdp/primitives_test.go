package cdp

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/google/go-cmp/cmp"
)

func TestNavigate(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/")
	refused := closedPort(t)
	tests := []struct {
		name       string
		url        string
		wait       executor.WaitUntil
		wantStatus int
		wantURL    string
		wantTitle  string
	}{
		{"ok", srv.URL + "/counter", "", 200, srv.URL + "/counter", "Counter"},
		{"domcontentloaded", srv.URL + "/form", executor.WaitDOMContentLoaded, 200, srv.URL + "/form", "Form"},
		{"networkidle", srv.URL + "/", executor.WaitNetworkIdle, 200, srv.URL + "/", "Home"},
		{"not found is a page", srv.URL + "/nope", "", 404, srv.URL + "/nope", ""},
		{"redirect lands", srv.URL + "/redirect", "", 200, srv.URL + "/form", "Form"},
	}
	for _, tc := range tests {
		r, err := s.Navigate(ctxFor(t, 15*time.Second), executor.NavigateParams{TabID: tab, URL: tc.url, WaitUntil: tc.wait})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Status != tc.wantStatus || r.URL != tc.wantURL || r.Title != tc.wantTitle || r.TabID != tab {
			t.Errorf("%s: got status %d url %s title %q tab %s", tc.name, r.Status, r.URL, r.Title, r.TabID)
		}
	}

	t.Run("errors", func(t *testing.T) {
		cases := []struct {
			name string
			p    executor.NavigateParams
			code executor.Code
			msg  string
		}{
			{"relative URL", executor.NavigateParams{TabID: tab, URL: "example.com"}, executor.CodeBadArgs, "absolute URL"},
			{"bad waitUntil", executor.NavigateParams{TabID: tab, URL: srv.URL, WaitUntil: "never"}, executor.CodeBadArgs, "waitUntil"},
			{"refused", executor.NavigateParams{TabID: tab, URL: refused}, executor.CodeBadArgs, "net::ERR_CONNECTION_REFUSED"},
			{"stale tab", executor.NavigateParams{TabID: "cdp:00000000:1", URL: srv.URL}, executor.CodeStaleTab, "earlier or different"},
			{"unknown tab", executor.NavigateParams{TabID: s.ids.Stamp("999"), URL: srv.URL}, executor.CodeTabNotFound, "999"},
			{"garbage tab", executor.NavigateParams{TabID: "seven", URL: srv.URL}, executor.CodeTabNotFound, "not a tab id"},
		}
		for _, tc := range cases {
			_, err := s.Navigate(ctxFor(t, 10*time.Second), tc.p)
			e := wantCode(t, err, tc.code)
			if !strings.Contains(e.Message, tc.msg) {
				t.Errorf("%s: message %q lacks %q", tc.name, e.Message, tc.msg)
			}
		}
	})

	t.Run("timeout", func(t *testing.T) {
		start := time.Now()
		_, err := s.Navigate(ctxFor(t, time.Second), executor.NavigateParams{TabID: tab, URL: srv.URL + "/slow"})
		wantCode(t, err, executor.CodeTimeout)
		promptly(t, "navigate to a slow page", start, time.Second)
	})

	t.Run("history", func(t *testing.T) {
		ctx := ctxFor(t, 20*time.Second)
		fresh, err := s.NewTab(ctx, executor.NewTabParams{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.CloseTab(ctx, fresh.ID)
		// No history yet: the current page, not an error.
		r, err := s.Back(ctx, executor.HistoryParams{TabID: fresh.ID})
		if err != nil || r.URL != "about:blank" {
			t.Fatalf("back with no history: %+v, %v", r, err)
		}
		for _, p := range []string{"/", "/counter"} {
			if _, err := s.Navigate(ctx, executor.NavigateParams{TabID: fresh.ID, URL: srv.URL + p}); err != nil {
				t.Fatal(err)
			}
		}
		steps := []struct {
			name string
			fn   func() (executor.NavResult, error)
			want string
		}{
			{"back", func() (executor.NavResult, error) { return s.Back(ctx, executor.HistoryParams{TabID: fresh.ID}) }, "/"},
			{"forward", func() (executor.NavResult, error) { return s.Forward(ctx, executor.HistoryParams{TabID: fresh.ID}) }, "/counter"},
			{"reload", func() (executor.NavResult, error) { return s.Reload(ctx, executor.HistoryParams{TabID: fresh.ID}) }, "/counter"},
		}
		for _, st := range steps {
			r, err := st.fn()
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if r.URL != srv.URL+st.want {
				t.Errorf("%s: at %s, want %s", st.name, r.URL, st.want)
			}
		}
	})
}

func TestClick(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/counter")
	ctx := ctxFor(t, 30*time.Second)
	target := executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#inc"}}
	steps := []executor.ClickParams{
		{TargetParams: target},
		{TargetParams: target, Count: 2},
		{TargetParams: target, Button: "right"},
	}
	for _, p := range steps {
		r, err := s.Click(ctx, p)
		if err != nil {
			t.Fatalf("click %+v: %v", p, err)
		}
		if r.Title != "Counter" || r.TabID != tab {
			t.Errorf("page state: %+v", r.PageState)
		}
	}
	got := evalJSON(t, s, tab, `[count.textContent, dbl.textContent, right.textContent, trusted.textContent]`)
	if want := `["3","1","1","trusted"]`; got != want {
		t.Errorf("counters = %s, want %s (click, double click, right click; trusted events)", got, want)
	}

	t.Run("errors", func(t *testing.T) {
		cases := []struct {
			name string
			p    executor.ClickParams
			code executor.Code
			msg  string
		}{
			{"not found", executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#nope"}}}, executor.CodeSelectorNotFound, "#nope"},
			{"hidden", executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#hidden"}}}, executor.CodeTimeout, "actionable"},
			{"bad selector", executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "##x["}}}, executor.CodeBadArgs, "selector"},
			{"both", executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#inc", Ref: "e1"}}}, executor.CodeBadArgs, "both"},
			{"neither", executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab}}, executor.CodeBadArgs, "neither"},
			{"ref", executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Ref: "e1"}}}, executor.CodeBadArgs, "never issued"},
			{"button", executor.ClickParams{TargetParams: target, Button: "fourth"}, executor.CodeBadArgs, "button"},
		}
		for _, tc := range cases {
			start := time.Now()
			_, err := s.Click(ctxFor(t, 3*time.Second), tc.p)
			e := wantCode(t, err, tc.code)
			if !strings.Contains(e.Message, tc.msg) {
				t.Errorf("%s: message %q lacks %q", tc.name, e.Message, tc.msg)
			}
			promptly(t, tc.name, start, 3*time.Second)
		}
	})
}

func TestKeyboard(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/form")
	ctx := ctxFor(t, 30*time.Second)
	name := executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#name"}}

	if _, err := s.Type(ctx, executor.TypeParams{TargetParams: name, Text: "Ada", Clear: true}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tab, "document.querySelector('#name').value"); got != `"Ada"` {
		t.Errorf("after type with clear: %s", got)
	}
	if _, err := s.Type(ctx, executor.TypeParams{TargetParams: name, Text: "!", PressEnter: true}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tab, "out.textContent"); got != `"submitted:Ada!"` {
		t.Errorf("Enter did not submit: %s", got)
	}
	// Press on the focused element, with a modifier: select all, then replace.
	if _, err := s.Press(ctx, executor.PressParams{TabID: tab, Key: "a", Modifiers: []string{"ctrl"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Press(ctx, executor.PressParams{TabID: tab, Key: "z", Modifiers: []string{"Shift"}}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tab, "document.querySelector('#name').value"); got != `"Z"` {
		t.Errorf("after Control+A, Shift+Z: %s", got)
	}
	if _, err := s.Press(ctx, executor.PressParams{TabID: tab, Target: executor.Target{Selector: "#name"}, Key: "Backspace"}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tab, "[document.querySelector('#name').value, keys.textContent.includes('untrusted')]"); got != `["",false]` {
		t.Errorf("after Backspace on the target: %s", got)
	}
	if _, err := s.Fill(ctx, executor.FillParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#bio"}}, Value: "line 1\nline 2"}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tab, "bio.value"); got != `"line 1\nline 2"` {
		t.Errorf("fill: %s", got)
	}

	for _, tc := range []struct {
		p   executor.PressParams
		msg string
	}{
		{executor.PressParams{TabID: tab}, "key is empty"},
		{executor.PressParams{TabID: tab, Key: "a", Modifiers: []string{"Hyper"}}, "modifier"},
		{executor.PressParams{TabID: tab, Key: "NoSuchKey"}, "NoSuchKey"},
	} {
		_, err := s.Press(ctx, tc.p)
		if e := wantCode(t, err, executor.CodeBadArgs); !strings.Contains(e.Message, tc.msg) {
			t.Errorf("press %+v: %q lacks %q", tc.p, e.Message, tc.msg)
		}
	}
	_, err := s.Fill(ctxFor(t, 5*time.Second), executor.FillParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#submit"}}, Value: "x"})
	wantCode(t, err, executor.CodeBadArgs)
}

func TestHoverScrollDrag(t *testing.T) {
	s := shared(t)
	t.Parallel()
	ctx := ctxFor(t, 30*time.Second)
	counter := tabAt(t, s, "/counter")
	if _, err := s.Hover(ctx, executor.TargetParams{TabID: counter, Target: executor.Target{Selector: "#hoverme"}}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, counter, "hovered.textContent"); got != `"hovered"` {
		t.Errorf("hover: %s", got)
	}

	tall := tabAt(t, s, "/tall")
	if _, err := s.Scroll(ctx, executor.ScrollParams{TabID: tall, DY: 600}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Scroll(ctx, executor.ScrollParams{TabID: tall, DY: 600}); err != nil {
		t.Fatal(err)
	}
	// The scroll has landed when Scroll returns.
	if got := evalJSON(t, s, tall, "window.scrollY"); got != "1200" {
		t.Errorf("after two wheel turns of 600 px, scrollY = %s", got)
	}
	if _, err := s.Scroll(ctx, executor.ScrollParams{TabID: tall, Target: executor.Target{Selector: "#bottom"}}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tall, "(() => { const r = bottom.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()"); got != "true" {
		t.Errorf("#bottom is not in view after scrolling to it")
	}
	_, err := s.Scroll(ctx, executor.ScrollParams{TabID: tall})
	wantCode(t, err, executor.CodeBadArgs)

	drag := tabAt(t, s, "/drag")
	if _, err := s.Drag(ctx, executor.DragParams{TabID: drag, From: executor.Target{Selector: "#src"}, To: executor.Target{Selector: "#dst"}}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, drag, "dst.textContent"); got != `"dropped"` {
		t.Errorf("drag: %s", got)
	}
	_, err = s.Drag(ctxFor(t, 3*time.Second), executor.DragParams{TabID: drag, From: executor.Target{Selector: "#src"}, To: executor.Target{Selector: "#nowhere"}})
	if e := wantCode(t, err, executor.CodeSelectorNotFound); !strings.Contains(e.Message, "#nowhere") {
		t.Errorf("drag to nowhere: %v", e)
	}
	_, err = s.Drag(ctxFor(t, 3*time.Second), executor.DragParams{TabID: drag, From: executor.Target{Selector: "#nothing"}, To: executor.Target{Selector: "#dst"}})
	if e := wantCode(t, err, executor.CodeSelectorNotFound); !strings.Contains(e.Message, "#nothing") {
		t.Errorf("drag from nothing: %v", e)
	}
	_, err = s.Drag(ctx, executor.DragParams{TabID: drag, From: executor.Target{Selector: "#src"}})
	wantCode(t, err, executor.CodeBadArgs)
}

func TestSelectAndFiles(t *testing.T) {
	s := shared(t)
	t.Parallel()
	ctx := ctxFor(t, 30*time.Second)
	tab := tabAt(t, s, "/form")
	color := executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#color"}}
	for _, tc := range []struct{ in, want string }{{"g", "g"}, {"Blue", "b"}} {
		r, err := s.SelectOption(ctx, executor.SelectParams{TargetParams: color, Values: []string{tc.in}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{tc.want}, r.Selected); diff != "" {
			t.Errorf("select %q (-want +got):\n%s", tc.in, diff)
		}
		if got := evalJSON(t, s, tab, "color.value"); got != `"`+tc.want+`"` {
			t.Errorf("select %q: the page has %s", tc.in, got)
		}
	}
	_, err := s.SelectOption(ctx, executor.SelectParams{TargetParams: color, Values: []string{"purple"}})
	if e := wantCode(t, err, executor.CodeBadArgs); !strings.Contains(e.Page, `"Green" (value "g")`) || strings.Contains(e.Hint, "Green") {
		t.Errorf("missing option: the options (the page's words) should be in Page, not the hint: %#v", e)
	}
	_, err = s.SelectOption(ctx, executor.SelectParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#name"}}, Values: []string{"x"}})
	if e := wantCode(t, err, executor.CodeBadArgs); !strings.Contains(e.Message, "not a <select>") {
		t.Errorf("select on an input: %v", e)
	}

	uploads := s.b.opts.UploadDirs[0]
	if err := os.MkdirAll(uploads, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(uploads, "upload.txt")
	if err := os.WriteFile(file, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileInput := executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#file"}}
	if _, err := s.SetFiles(ctx, executor.SetFilesParams{TargetParams: fileInput, Paths: []string{file}}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tab, "[...document.querySelector('#file').files].map(f => f.name + ':' + f.size)"); got != `["upload.txt:4"]` {
		t.Errorf("files: %s", got)
	}
	_, err = s.SetFiles(ctx, executor.SetFilesParams{TargetParams: fileInput, Paths: []string{file + ".missing"}})
	wantCode(t, err, executor.CodeBadArgs)
	// Files outside the upload directories never reach a page.
	_, err = s.SetFiles(ctx, executor.SetFilesParams{TargetParams: fileInput, Paths: []string{"/etc/passwd"}})
	if e := wantCode(t, err, executor.CodeBadArgs); !strings.Contains(e.Message, "outside the upload directories") {
		t.Errorf("/etc/passwd: %v", e)
	}
}

func TestReads(t *testing.T) {
	s := shared(t)
	t.Parallel()
	ctx := ctxFor(t, 30*time.Second)
	tab := tabAt(t, s, "/counter")
	r, err := s.Text(ctx, executor.TextParams{TabID: tab})
	if err != nil || !strings.Contains(r.Text, "hover me") || r.Title != "Counter" {
		t.Errorf("page text: %q, title %q, %v", r.Text, r.Title, err)
	}
	r, err = s.Text(ctx, executor.TextParams{TabID: tab, Target: executor.Target{Selector: "#inc"}})
	if err != nil || r.Text != "+1" {
		t.Errorf("element text: %q, %v", r.Text, err)
	}
	_, err = s.Text(ctxFor(t, 3*time.Second), executor.TextParams{TabID: tab, Target: executor.Target{Selector: "#nope"}})
	wantCode(t, err, executor.CodeSelectorNotFound)

	for _, tc := range []struct {
		p    executor.HTMLParams
		want string
	}{
		{executor.HTMLParams{TabID: tab, Target: executor.Target{Selector: "#count"}}, "0"},
		{executor.HTMLParams{TabID: tab, Target: executor.Target{Selector: "#count"}, Outer: true}, `<span id="count">0</span>`},
	} {
		r, err := s.HTML(ctx, tc.p)
		if err != nil || r.Text != tc.want {
			t.Errorf("html %+v = %q, %v; want %q", tc.p, r.Text, err, tc.want)
		}
	}
	doc, err := s.HTML(ctx, executor.HTMLParams{TabID: tab})
	if err != nil || !strings.HasPrefix(doc.Text, "<!DOCTYPE html>") || !strings.Contains(doc.Text, `id="hoverme"`) {
		t.Errorf("document html: %.80q, %v", doc.Text, err)
	}
}

func TestScreenshot(t *testing.T) {
	s := shared(t)
	t.Parallel()
	ctx := ctxFor(t, 40*time.Second)
	tall := tabAt(t, s, "/tall")
	tests := []struct {
		name          string
		p             executor.ScreenshotParams
		mime          string
		w, h          int
		truncated     bool
		fullHeight    int
		checkElementW bool
	}{
		{"viewport", executor.ScreenshotParams{TabID: tall}, "image/png", 1280, 720, false, 0, false},
		{"full page, capped", executor.ScreenshotParams{TabID: tall, FullPage: true}, "image/png", 0, 8000, true, 0, false},
		{"full page, own cap", executor.ScreenshotParams{TabID: tall, FullPage: true, MaxHeight: 1000, Format: "jpeg"}, "image/jpeg", 0, 1000, true, 0, false},
		{"element", executor.ScreenshotParams{TabID: tall, Target: executor.Target{Selector: "#top"}}, "image/png", 0, 0, false, 0, true},
	}
	for _, tc := range tests {
		shot, err := s.Screenshot(ctx, tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(shot.Data))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if shot.MIMEType != tc.mime || "image/"+format != tc.mime {
			t.Errorf("%s: mime %s, decoded as %s", tc.name, shot.MIMEType, format)
		}
		if cfg.Width != shot.Width || cfg.Height != shot.Height {
			t.Errorf("%s: reported %dx%d, image is %dx%d", tc.name, shot.Width, shot.Height, cfg.Width, cfg.Height)
		}
		if (tc.w != 0 && shot.Width != tc.w) || (tc.h != 0 && shot.Height != tc.h) {
			t.Errorf("%s: %dx%d, want %dx%d", tc.name, shot.Width, shot.Height, tc.w, tc.h)
		}
		if shot.Truncated != tc.truncated {
			t.Errorf("%s: truncated %v", tc.name, shot.Truncated)
		}
		if tc.truncated && (shot.FullHeight < 20000 || shot.FullHeight > 20100) {
			t.Errorf("%s: full height %d, want about 20040", tc.name, shot.FullHeight)
		}
		if tc.checkElementW && (shot.Width < 100 || shot.Height > 40 || shot.Height == 0) {
			t.Errorf("%s: %dx%d does not look like one line of text", tc.name, shot.Width, shot.Height)
		}
	}

	sizes := map[int]int{}
	for _, q := range []int{20, 95} {
		shot, err := s.Screenshot(ctx, executor.ScreenshotParams{TabID: tall, Format: "jpeg", Quality: q})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jpeg.Decode(bytes.NewReader(shot.Data)); err != nil {
			t.Fatalf("quality %d: %v", q, err)
		}
		sizes[q] = len(shot.Data)
	}
	if sizes[20] >= sizes[95] {
		t.Errorf("JPEG quality 20 is %d bytes, quality 95 is %d: quality is ignored", sizes[20], sizes[95])
	}
	for _, p := range []executor.ScreenshotParams{
		{TabID: tall, Format: "gif"},
		{TabID: tall, Format: "jpeg", Quality: 101},
		{TabID: tall, FullPage: true, Target: executor.Target{Selector: "#top"}},
	} {
		_, err := s.Screenshot(ctx, p)
		wantCode(t, err, executor.CodeBadArgs)
	}
}

func TestEval(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/counter")
	tests := []struct {
		expr      string
		await     bool
		wantOK    bool
		wantValue string
		wantErr   string
	}{
		{"1 + 1", false, true, "2", ""},
		{"document.title", false, true, `"Counter"`, ""},
		{"({a: [1, 'x', null, true]})", false, true, `{"a":[1,"x",null,true]}`, ""},
		{"undefined", false, true, "null", ""},
		{"[NaN, Infinity, -Infinity, 0.5]", false, true, `["NaN","Infinity","-Infinity",0.5]`, ""},
		{"let a = 2; a * 3", false, true, "6", ""},
		{"() => 7", false, true, "7", ""},
		{"1 // a trailing comment", false, true, "1", ""},
		{"Promise.resolve(5)", true, true, "5", ""},
		{"Promise.resolve(5)", false, true, `"[object Promise]"`, ""},
		{"async () => 'later'", true, true, `"later"`, ""},
		{"(() => { const o = {n: 1}; o.self = o; return o; })()", false, true, `{"n":1,"self":"[Circular]"}`, ""},
		{"new Date(0)", false, true, `"1970-01-01T00:00:00.000Z"`, ""},
		{"2n ** 70n", false, true, `"1180591620717411303424"`, ""},
		{"[2n ** 3n, undefined, {u: undefined, n: null}]", false, true, `[8,null,{"n":null}]`, ""},
		{"let d = new Date(0); [d, NaN]", false, true, `["1970-01-01T00:00:00.000Z","NaN"]`, ""},
		{"throw new Error('boom')", false, false, "", "boom"},
		{"Promise.reject(new Error('nope'))", true, false, "", "nope"},
		{"noSuchVariable", false, false, "", "ReferenceError"},
		{"1 +", false, false, "", "SyntaxError"},
		{"throw 'plain'", false, false, "", "plain"},
		// A SyntaxError thrown while running is the page's exception, and
		// the expression runs once (not again as statements).
		{"(window.ranOnce = (window.ranOnce || 0) + 1, JSON.parse('{x'))", false, false, "", "SyntaxError"},
		{"window.ranOnce", false, true, "1", ""},
	}
	for _, tc := range tests {
		r, err := s.Eval(ctxFor(t, 10*time.Second), executor.EvalParams{TabID: tab, Expression: tc.expr, AwaitPromise: tc.await})
		if err != nil {
			t.Errorf("eval %q: %v", tc.expr, err)
			continue
		}
		if r.OK != tc.wantOK || string(r.Value) != tc.wantValue || !strings.Contains(r.Error, tc.wantErr) {
			t.Errorf("eval %q (await %v) = ok %v value %s error %q; want ok %v value %s error ~%q",
				tc.expr, tc.await, r.OK, r.Value, r.Error, tc.wantOK, tc.wantValue, tc.wantErr)
		}
		if r.Title != "Counter" || r.TabID != tab {
			t.Errorf("eval %q: page state %+v", tc.expr, r.PageState)
		}
	}
	// A promise that never settles must not hold the call.
	start := time.Now()
	_, err := s.Eval(ctxFor(t, 3*time.Second), executor.EvalParams{TabID: tab, Expression: "new Promise(() => {})", AwaitPromise: true})
	wantCode(t, err, executor.CodeTimeout)
	promptly(t, "eval of a never-settling promise", start, 3*time.Second)
	_, err = s.Eval(ctxFor(t, time.Second), executor.EvalParams{TabID: tab, Expression: "  "})
	wantCode(t, err, executor.CodeBadArgs)
}

func TestWaitFor(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tests := []struct {
		name string
		p    executor.WaitParams
	}{
		{"appears", executor.WaitParams{Target: executor.Target{Selector: "#late"}}},
		{"becomes visible", executor.WaitParams{Target: executor.Target{Selector: "#shy"}, Visible: true}},
		{"disappears", executor.WaitParams{Target: executor.Target{Selector: "#gone"}, Gone: true}},
		{"text appears", executor.WaitParams{Text: "arrived late"}},
		{"text disappears", executor.WaitParams{Text: "going", Gone: true}},
	}
	for _, tc := range tests {
		tab := tabAt(t, s, "/late")
		tc.p.TabID = tab
		evalJSON(t, s, tab, "later()")
		r, err := s.WaitFor(ctxFor(t, 10*time.Second), tc.p)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.ElapsedMs < 100 {
			t.Errorf("%s: elapsed %d ms, want about 400", tc.name, r.ElapsedMs)
		}
		if r.TabID != tab || r.Title != "Late" {
			t.Errorf("%s: page state %+v", tc.name, r.PageState)
		}
	}
	// Already true: no waiting on an event that fired long ago.
	tab := tabAt(t, s, "/counter")
	r, err := s.WaitFor(ctxFor(t, 5*time.Second), executor.WaitParams{TabID: tab, Target: executor.Target{Selector: "#inc"}, Visible: true})
	if err != nil || r.ElapsedMs > 5000 {
		t.Errorf("present element: %+v, %v", r, err)
	}

	errs := []struct {
		name string
		p    executor.WaitParams
		code executor.Code
		msg  string
	}{
		{"never", executor.WaitParams{TabID: tab, Target: executor.Target{Selector: "#never"}}, executor.CodeTimeout, "#never"},
		{"never text", executor.WaitParams{TabID: tab, Text: "no such text"}, executor.CodeTimeout, "no such text"},
		{"both", executor.WaitParams{TabID: tab, Target: executor.Target{Selector: "#inc"}, Text: "x"}, executor.CodeBadArgs, "exactly one"},
		{"neither", executor.WaitParams{TabID: tab}, executor.CodeBadArgs, "exactly one"},
		{"bad selector", executor.WaitParams{TabID: tab, Target: executor.Target{Selector: "##["}}, executor.CodeBadArgs, "selector"},
	}
	for _, tc := range errs {
		start := time.Now()
		_, err := s.WaitFor(ctxFor(t, 3*time.Second), tc.p)
		e := wantCode(t, err, tc.code)
		if !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%s: %q lacks %q", tc.name, e.Message, tc.msg)
		}
		promptly(t, tc.name, start, 3*time.Second)
	}
}

// TestDialogs: a dialog is never answered for the caller. The call that
// raised it returns as soon as it is open, every call that needs the page
// meanwhile fails at once with DIALOG_OPEN, and AnswerDialog answers it.
func TestDialogs(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/dialogs")
	click := func() executor.ActionResult {
		t.Helper()
		start := time.Now()
		r, err := s.Click(ctxFor(t, 10*time.Second), executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#go"}}})
		if err != nil {
			t.Fatal(err)
		}
		promptly(t, "a click that opens a dialog", start, 3*time.Second)
		return r
	}
	answer := func(accept bool, text *string) executor.PageState {
		t.Helper()
		st, err := s.AnswerDialog(ctxFor(t, 10*time.Second), executor.DialogParams{TabID: tab, Accept: accept, PromptText: text})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	r := click()
	// Each carries the page that opened it, for the server to decide on.
	// and the documents that may have opened it (the renderer it blocks
	// holds only the page's).
	at := r.URL
	want := executor.Dialog{Type: "alert", Message: "hello", Action: "open", URL: at,
		Docs: []executor.Source{{URL: at, Origin: executor.OriginOf(at), Main: true}}}
	if diff := cmp.Diff([]executor.Dialog{want}, r.Dialogs); diff != "" {
		t.Errorf("the click's dialogs (-want +got):\n%s", diff)
	}
	// The page waits: a read fails at once, naming the dialog.
	for _, read := range []func(ctx context.Context) error{
		func(ctx context.Context) error {
			_, err := s.Eval(ctx, executor.EvalParams{TabID: tab, Expression: "1"})
			return err
		},
		func(ctx context.Context) error { _, err := s.Text(ctx, executor.TextParams{TabID: tab}); return err },
		func(ctx context.Context) error {
			_, err := s.Screenshot(ctx, executor.ScreenshotParams{TabID: tab})
			return err
		},
	} {
		start := time.Now()
		err := read(ctxFor(t, 10*time.Second))
		if e := executor.AsError(err); e == nil || e.Code != executor.CodeDialogOpen || !strings.Contains(e.Page, "hello") || !strings.Contains(e.Hint, "dialog_answer") {
			t.Errorf("a read while an alert is open: %v", err)
		}
		promptly(t, "a read while a dialog is open", start, 2*time.Second)
	}
	if info, err := s.TabInfo(ctxFor(t, 5*time.Second), tab); err != nil || info.Dialog == nil || info.Dialog.Type != "alert" {
		t.Errorf("tab info names the dialog: %+v, %v", info, err)
	}
	st := answer(true, nil) // the alert; the confirm comes next
	if len(st.Dialogs) != 2 || st.Dialogs[0].Action != "accepted" || st.Dialogs[1].Type != "confirm" || st.Dialogs[1].Action != "open" {
		t.Errorf("after the alert: %+v", st.Dialogs)
	}
	st = answer(false, nil) // the confirm, dismissed
	if len(st.Dialogs) != 2 || st.Dialogs[0].Action != "dismissed" || st.Dialogs[1].Type != "prompt" || st.Dialogs[1].Default != "anon" {
		t.Errorf("after the confirm: %+v", st.Dialogs)
	}
	text := "Ada"
	st = answer(true, &text)
	if len(st.Dialogs) != 1 || st.Dialogs[0].Answer != "Ada" {
		t.Errorf("after the prompt: %+v", st.Dialogs)
	}
	e, err := s.Eval(ctxFor(t, 5*time.Second), executor.EvalParams{TabID: tab, Expression: "out.textContent"})
	if err != nil || string(e.Value) != `"false Ada"` || len(e.Dialogs) != 0 {
		t.Errorf("after the answers: %s, dialogs %v, %v", e.Value, e.Dialogs, err)
	}
	if _, err := s.AnswerDialog(ctxFor(t, 5*time.Second), executor.DialogParams{TabID: tab, Accept: true}); executor.CodeOf(err) != executor.CodeBadArgs {
		t.Errorf("an answer with no dialog open: %v", err)
	}

	// A dialog while the page loads is part of the navigation's result.
	start := time.Now()
	n, err := s.Navigate(ctxFor(t, 10*time.Second), executor.NavigateParams{TabID: tab, URL: srv.URL + "/alertonload"})
	if err != nil || len(n.Dialogs) != 1 || n.Dialogs[0].Message != "loading" || n.Dialogs[0].Action != "open" {
		t.Errorf("alert on load: %+v, %v", n, err)
	}
	promptly(t, "a navigation held by an alert", start, 3*time.Second)
	answer(true, nil)

	// beforeunload (armed by a real keystroke) holds the navigation until
	// it is answered: dismissed, the page stays; accepted, it goes on.
	if _, err := s.Navigate(ctxFor(t, 10*time.Second), executor.NavigateParams{TabID: tab, URL: srv.URL + "/leave"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Type(ctxFor(t, 10*time.Second), executor.TypeParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: "#i"}}, Text: "x"}); err != nil {
		t.Fatal(err)
	}
	for _, accept := range []bool{false, true} {
		n, err = s.Navigate(ctxFor(t, 10*time.Second), executor.NavigateParams{TabID: tab, URL: srv.URL + "/dialogs"})
		if err != nil || len(n.Dialogs) != 1 || n.Dialogs[0].Type != "beforeunload" || n.Dialogs[0].Action != "open" || !strings.HasSuffix(n.URL, "/leave") {
			t.Fatalf("beforeunload: %+v, %v", n, err)
		}
		st = answer(accept, nil)
		want := "/leave"
		if accept {
			want = "/dialogs"
		}
		if !strings.HasSuffix(st.URL, want) {
			t.Errorf("beforeunload answered %v: at %s, want %s", accept, st.URL, want)
		}
	}

	// A dialog raised by eval itself never hangs the call: DIALOG_OPEN.
	start = time.Now()
	_, err = s.Eval(ctxFor(t, 5*time.Second), executor.EvalParams{TabID: tab, Expression: "alert('from eval'), 42"})
	if e := executor.AsError(err); e == nil || e.Code != executor.CodeDialogOpen || !strings.Contains(e.Page, "from eval") {
		t.Errorf("alert in eval: %v", err)
	}
	promptly(t, "an eval that opens an alert", start, 3*time.Second)
	answer(true, nil)
	if _, err := s.Eval(ctxFor(t, 5*time.Second), executor.EvalParams{TabID: tab, Expression: "1"}); err != nil {
		t.Errorf("after the answer: %v", err)
	}
}

func TestCookies(t *testing.T) {
	s := shared(t)
	t.Parallel()
	ctx := ctxFor(t, 20*time.Second)
	err := s.SetCookies(ctx, executor.SetCookiesParams{Cookies: []executor.Cookie{
		{Name: "sess", Value: "abc", URL: srv.URL + "/"},
		{Name: "pref", Value: "dark", Domain: "127.0.0.1", Path: "/cookies", SameSite: "lax", Expires: float64(time.Now().Add(time.Hour).Unix())},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.Cookies(ctx, executor.CookiesParams{URLs: []string{srv.URL + "/cookies"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]executor.Cookie{}
	for _, c := range cs {
		got[c.Name] = c
	}
	if got["sess"].Value != "abc" || got["pref"].Value != "dark" || got["pref"].SameSite != "Lax" || got["pref"].Path != "/cookies" {
		t.Errorf("cookies: %+v", cs)
	}
	tab := tabAt(t, s, "/cookies")
	if txt, _ := s.Text(ctx, executor.TextParams{TabID: tab, Target: executor.Target{Selector: "#c"}}); !strings.Contains(txt.Text, "sess=abc") {
		t.Errorf("the page did not get the cookie: %q", txt.Text)
	}
	all, err := s.Cookies(ctx, executor.CookiesParams{})
	if err != nil || len(all) < 2 {
		t.Errorf("all cookies: %v, %v", all, err)
	}
	for _, tc := range []struct {
		c   executor.Cookie
		msg string
	}{
		{executor.Cookie{Name: "x", Value: "1"}, "needs a url"},
		{executor.Cookie{Name: "x", Value: "1", Domain: "example.com"}, "needs a url"},
		{executor.Cookie{Value: "1", URL: "https://example.com/"}, "name"},
		{executor.Cookie{Name: "x", URL: "https://example.com/", Domain: "example.com", Path: "/"}, "exclude"},
		{executor.Cookie{Name: "x", URL: "https://example.com/", SameSite: "Sometimes"}, "sameSite"},
	} {
		err := s.SetCookies(ctx, executor.SetCookiesParams{Cookies: []executor.Cookie{tc.c}})
		if e := wantCode(t, err, executor.CodeBadArgs); !strings.Contains(e.Message, tc.msg) {
			t.Errorf("%+v: %q lacks %q", tc.c, e.Message, tc.msg)
		}
	}
	_, err = s.Cookies(ctx, executor.CookiesParams{URLs: []string{"nope"}})
	wantCode(t, err, executor.CodeBadArgs)
}

func TestClipboard(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/form")
	if err := s.ClipboardWrite(ctxFor(t, 10*time.Second), executor.ClipboardParams{TabID: tab, Text: "hello clipboard ✓"}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tab, "navigator.clipboard.readText()"); got != `"hello clipboard ✓"` {
		t.Errorf("read back %s", got)
	}
	// A page without an http origin gets no permission: the fallback writes.
	blank, err := s.NewTab(ctxFor(t, 10*time.Second), executor.NewTabParams{URL: "data:text/html,<p>no origin</p>"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.CloseTab(context.Background(), blank.ID)
	if err := s.ClipboardWrite(ctxFor(t, 10*time.Second), executor.ClipboardParams{TabID: blank.ID, Text: "fallback"}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tab, "navigator.clipboard.readText()"); got != `"fallback"` {
		t.Errorf("read back after the fallback: %s", got)
	}
}

func TestWebMCPFlag(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/webmcp")
	if got := evalJSON(t, s, tab, "'modelContext' in document"); got != "true" {
		t.Errorf("document.modelContext is missing: the WebMCP features are not enabled")
	}
}
