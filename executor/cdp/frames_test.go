package cdp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// TestTargetsStayInMainFrame: a selector that steps into a frame is
// refused by name, and, whatever its spelling, the element a selector
// resolved to is checked to be in the main frame before it is touched.
func TestTargetsStayInMainFrame(t *testing.T) {
	s := shared(t)
	t.Parallel()
	ctx := func() context.Context { return ctxFor(t, 10*time.Second) }
	tab := tabAt(t, s, "/refs")
	const inner = "#fr >> internal:control=enter-frame >> #inner"

	_, err := s.Click(ctx(), executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Selector: inner}}})
	if e := wantCode(t, err, executor.CodeBadArgs); !strings.Contains(e.Message, "cannot enter frames") {
		t.Errorf("click into a frame: %v", e)
	}
	_, err = s.Text(ctx(), executor.TextParams{TabID: tab, Target: executor.Target{Selector: inner}})
	wantCode(t, err, executor.CodeBadArgs)

	// The check on the resolved element, reached past Target.Validate.
	check := func(sel string) error {
		_, err := s.onTab(ctx(), tab, "get_text", func(c *call) error {
			return c.inMainFrame(c.page.Locator(sel).First(), executor.Target{Selector: sel}, "get_text")
		})
		return err
	}
	if e := wantCode(t, check(inner), executor.CodeBadArgs); !strings.Contains(e.Message, "inside a frame") {
		t.Errorf("an element in a frame: %v", e)
	}
	if err := check("#go"); err != nil {
		t.Errorf("an element of the main frame: %v", err)
	}
	if got := evalJSON(t, s, tab, `document.getElementById('out').textContent`); got != `""` {
		t.Errorf("the frame's button was clicked: %s", got)
	}
}

// TestTabInfoOrigin: TabInfo gives the document's origin where the URL
// does not carry it: an about:blank written by a page is that page's, one
// of an opaque origin that a page opened is opaque, and a fresh tab's is
// the URL's own. Not parallel: it finds the popups as the tabs that were
// not there before, and another test's new tab (which it would then close)
// must not be among them.
func TestTabInfoOrigin(t *testing.T) {
	s := shared(t)
	ctx := func() context.Context { return ctxFor(t, 10*time.Second) }
	opener := tabAt(t, s, "/")
	if info, err := s.TabInfo(ctx(), opener); err != nil || info.Origin != "" {
		t.Errorf("an http page: origin %q, %v", info.Origin, err)
	}
	fresh, err := s.NewTab(ctx(), executor.NewTabParams{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.CloseTab(context.Background(), fresh.ID) })
	if info, err := s.TabInfo(ctx(), fresh.ID); err != nil || info.URL != "about:blank" || info.Origin != "" {
		t.Errorf("a fresh tab: %+v, %v", info, err)
	}

	popup := func(expr string) executor.Tab {
		t.Helper()
		before, err := s.Tabs(ctx())
		if err != nil {
			t.Fatal(err)
		}
		evalJSON(t, s, opener, expr)
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			after, err := s.Tabs(ctx())
			if err != nil {
				t.Fatal(err)
			}
			for _, tb := range after {
				if !slices.ContainsFunc(before, func(b executor.Tab) bool { return b.ID == tb.ID }) {
					t.Cleanup(func() { _ = s.CloseTab(context.Background(), tb.ID) })
					time.Sleep(200 * time.Millisecond) // let the opener write
					info, err := s.TabInfo(ctx(), tb.ID)
					if err != nil {
						t.Fatal(err)
					}
					return info
				}
			}
		}
		t.Fatalf("%s opened no tab", expr)
		return executor.Tab{}
	}
	written := popup(`(() => { const w = window.open('about:blank'); w.document.write('<p>written</p>'); w.document.close(); return 1; })()`)
	if want := strings.TrimSuffix(srv.URL, "/"); written.URL != "about:blank" || written.Origin != want {
		t.Errorf("an about:blank the page wrote: %+v, want origin %s", written, want)
	}
	opaque := popup(`(() => { const f = document.createElement('iframe'); f.sandbox = 'allow-scripts allow-popups';
		f.srcdoc = '<script>window.open("about:blank")<\/script>'; document.body.append(f); return 1; })()`)
	if opaque.Origin != executor.OpaqueOrigin {
		t.Errorf("an about:blank a sandboxed frame opened: %+v, want origin %s", opaque, executor.OpaqueOrigin)
	}
}

// TestFrameDocuments: a frame of another site is reached through a world
// of its own: its token names its refs, a click by such a ref is trusted
// input at the right place of the page, FrameBox says where the frame
// is, and once the frame navigates its token and refs are REF_EXPIRED.
func TestFrameDocuments(t *testing.T) {
	s := shared(t)
	t.Parallel()
	ctx := func() context.Context { return ctxFor(t, 15*time.Second) }
	tab := tabAt(t, s, "/xframe")
	run := func(doc, body string) string {
		t.Helper()
		r, err := s.RunScript(ctx(), executor.ScriptParams{TabID: tab, Doc: doc, Source: executor.WithRefs("(arg, env) => { const reg = chromegateRefs(env); " + body + " }")})
		if err != nil {
			t.Fatalf("run %q in %q: %v", body, doc, err)
		}
		var v string
		_ = json.Unmarshal(r.Value, &v)
		return v
	}
	owner := run("", "return reg.refFor(document.getElementById('x'));")
	if d, err := s.RefDocument(ctx(), executor.FrameParams{TabID: tab, Ref: owner}); err != nil || !d.Main {
		t.Errorf("RefDocument of a main document's ref: %+v, %v", d, err)
	}
	var doc executor.FrameDoc
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		doc, err = s.FrameDocument(ctx(), executor.FrameParams{TabID: tab, Ref: owner})
		if err == nil && strings.HasSuffix(doc.URL, "/xinner") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("FrameDocument: %+v, %v", doc, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.HasPrefix(doc.URL, "http://localhost:") || !strings.HasPrefix(doc.Origin, "http://localhost:") || doc.Doc == "" {
		t.Errorf("FrameDocument: %+v", doc)
	}
	btn := run(doc.Doc, "return reg.refFor(document.getElementById('b'));")
	if !strings.HasPrefix(btn, doc.Doc) {
		t.Errorf("the frame's ref %q does not carry its token %q", btn, doc.Doc)
	}
	if d, err := s.RefDocument(ctx(), executor.FrameParams{TabID: tab, Ref: btn}); err != nil || d.Main || d.URL != doc.URL {
		t.Errorf("RefDocument of the frame's ref: %+v, %v", d, err)
	}
	if _, err := s.Click(ctx(), executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Ref: btn}}}); err != nil {
		t.Fatalf("click by the frame's ref: %v", err)
	}
	// The click is trusted input routed to the frame's renderer: it
	// lands there a moment after the browser took it.
	for got, until := "", time.Now().Add(5*time.Second); got != "clicked true"; {
		got = run(doc.Doc, "return document.getElementById('out').textContent;")
		if time.Now().After(until) {
			t.Fatalf("the frame's button after the click: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	box, err := s.FrameBox(ctx(), tab, doc.Doc)
	if err != nil || box.Box == nil {
		t.Fatalf("FrameBox: %+v, %v", box, err)
	}
	want := run("", "const r = document.getElementById('x').getBoundingClientRect(); return JSON.stringify([r.left + 5, r.top + 5]);")
	if got, _ := json.Marshal([]float64{box.Box.X, box.Box.Y}); string(got) != want || box.Box.Width != 300 || box.Box.Height != 200 {
		t.Errorf("FrameBox: %+v, want the frame's viewport at %s, 300×200", *box.Box, want)
	}

	// Which document is at a point of the page.
	at, err := s.FrameAt(ctx(), executor.FrameAtParams{TabID: tab, X: box.Box.X + 10, Y: box.Box.Y + 10})
	if err != nil || at.Main || at.Doc != doc.Doc || at.Box == nil || *at.Box != *box.Box {
		t.Errorf("FrameAt inside the frame: %+v, %v; want %s at %+v", at, err, doc.Doc, *box.Box)
	}
	if at, err := s.FrameAt(ctx(), executor.FrameAtParams{TabID: tab, X: 2, Y: 2}); err != nil || !at.Main {
		t.Errorf("FrameAt on the page: %+v, %v", at, err)
	}
	if at, err := s.FrameAt(ctx(), executor.FrameAtParams{TabID: tab, X: box.Box.X - 2, Y: box.Box.Y + 10}); err != nil || !at.Main {
		t.Errorf("FrameAt on the frame's border: %+v, %v", at, err)
	}

	// The frame navigates: its document, and every ref of it, is gone.
	run("", "document.getElementById('x').src = 'about:blank'; return '';")
	deadline = time.Now().Add(10 * time.Second)
	for {
		_, err := s.RunScript(ctx(), executor.ScriptParams{TabID: tab, Doc: doc.Doc, Source: "() => 1"})
		if err != nil {
			wantCode(t, err, executor.CodeRefExpired)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the frame's old document still runs scripts after it navigated")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err = s.Click(ctx(), executor.ClickParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Ref: btn}}})
	wantCode(t, err, executor.CodeRefExpired)
	_, err = s.RefDocument(ctx(), executor.FrameParams{TabID: tab, Ref: btn})
	if err != nil {
		wantCode(t, err, executor.CodeRefExpired)
	}
	_, err = s.RunScript(ctx(), executor.ScriptParams{TabID: tab, Doc: "zzzz", Source: "() => 1"})
	wantCode(t, err, executor.CodeRefExpired)
}
