package cdp

import (
	"context"
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
// the URL's own.
func TestTabInfoOrigin(t *testing.T) {
	s := shared(t)
	t.Parallel()
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
