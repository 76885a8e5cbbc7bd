package cdp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// refSource issues a ref for the element at a path of selectors joined by
// " >>> ", each step entering the previous element's frame or shadow root.
var refSource = executor.WithRefs(`(a, env) => {
  let root = document, el = null;
  for (const sel of a.split(' >>> ')) {
    el = root.querySelector(sel);
    if (!el) return '';
    root = el.contentDocument || el.shadowRoot;
  }
  return chromegateRefs(env).refFor(el);
}`)

// refFor returns the ref of the element at path, as a snapshot would.
func refFor(t testing.TB, s *Session, tab, path string) string {
	t.Helper()
	raw, _ := json.Marshal(path)
	r, err := s.RunScript(ctxFor(t, 10*time.Second), executor.ScriptParams{TabID: tab, Source: refSource, Arg: raw})
	if err != nil {
		t.Fatalf("ref for %s: %v", path, err)
	}
	var ref string
	if err := json.Unmarshal(r.Value, &ref); err != nil || ref == "" {
		t.Fatalf("ref for %s: %s", path, r.Value)
	}
	return ref
}

func byRef(tab, ref string) executor.TargetParams {
	return executor.TargetParams{TabID: tab, Target: executor.Target{Ref: ref}}
}

func TestRefActions(t *testing.T) {
	s := shared(t)
	t.Parallel()
	ctx := func() context.Context { return ctxFor(t, 10*time.Second) }

	t.Run("click", func(t *testing.T) {
		tab := tabAt(t, s, "/counter")
		inc := refFor(t, s, tab, "#inc")
		if again := refFor(t, s, tab, "#inc"); again != inc {
			t.Errorf("the same element got a second ref: %s then %s", inc, again)
		}
		for range 2 {
			if _, err := s.Click(ctx(), executor.ClickParams{TargetParams: byRef(tab, inc)}); err != nil {
				t.Fatal(err)
			}
		}
		if got := evalJSON(t, s, tab, `document.getElementById('count').textContent + ' ' + document.getElementById('trusted').textContent`); got != `"2 trusted"` {
			t.Errorf("after two clicks by ref: %s", got)
		}
		if _, err := s.Click(ctx(), executor.ClickParams{TargetParams: byRef(tab, inc), Count: 2}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Click(ctx(), executor.ClickParams{TargetParams: byRef(tab, inc), Button: "right"}); err != nil {
			t.Fatal(err)
		}
		if got := evalJSON(t, s, tab, `[dbl.textContent, right.textContent]`); got != `["1","1"]` {
			t.Errorf("double and right click by ref: %s", got)
		}
		hv := refFor(t, s, tab, "#hoverme")
		if _, err := s.Hover(ctx(), byRef(tab, hv)); err != nil {
			t.Fatal(err)
		}
		if got := evalJSON(t, s, tab, `hovered.textContent`); got != `"hovered"` {
			t.Errorf("hover by ref: %s", got)
		}
	})

	t.Run("frame and scrolling", func(t *testing.T) {
		tab := tabAt(t, s, "/refs")
		inner := refFor(t, s, tab, "#fr >>> #inner")
		if _, err := s.Click(ctx(), executor.ClickParams{TargetParams: byRef(tab, inner)}); err != nil {
			t.Fatal(err)
		}
		if got := evalJSON(t, s, tab, `out.textContent`); got != `"inner true"` {
			t.Errorf("click by ref in a frame below the fold: %s", got)
		}
		tt, err := s.Text(ctx(), executor.TextParams{TabID: tab, Target: executor.Target{Ref: inner}})
		if err != nil || tt.Text != "inner" {
			t.Errorf("text by ref in a frame: %q, %v", tt.Text, err)
		}
	})

	t.Run("not actionable", func(t *testing.T) {
		tab := tabAt(t, s, "/refs")
		for _, tc := range []struct{ path, why string }{
			{"#under", "another element is on top of it"},
			{"#dis", "disabled"},
		} {
			ref := refFor(t, s, tab, tc.path)
			// The deadline leaves a loaded machine (CI runs packages side
			// by side, under -race) time for the first actionability check,
			// which is what names the reason.
			start := time.Now()
			_, err := s.Click(ctxFor(t, 4*time.Second), executor.ClickParams{TargetParams: byRef(tab, ref)})
			e := wantCode(t, err, executor.CodeTimeout)
			if !strings.Contains(e.Message, tc.why) {
				t.Errorf("%s: %q lacks %q", tc.path, e.Message, tc.why)
			}
			promptly(t, "click on "+tc.path, start, 4*time.Second)
		}
		// A covered element can still be hovered? No: hover needs the
		// pointer on it too. But a disabled one can.
		if _, err := s.Hover(ctx(), byRef(tab, refFor(t, s, tab, "#dis"))); err != nil {
			t.Errorf("hover over a disabled button: %v", err)
		}
	})

	t.Run("input", func(t *testing.T) {
		tab := tabAt(t, s, "/form")
		name := refFor(t, s, tab, "#name")
		if _, err := s.Type(ctx(), executor.TypeParams{TargetParams: byRef(tab, name), Text: "ab", Clear: true}); err != nil {
			t.Fatal(err)
		}
		if got := evalJSON(t, s, tab, `[document.getElementById('name').value, keys.textContent]`); got != `["ab","Delete a b "]` { // clear presses Delete, as Locator.Clear does
			t.Errorf("type by ref (trusted keys): %s", got)
		}
		if _, err := s.Type(ctx(), executor.TypeParams{TargetParams: byRef(tab, name), Text: "c"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Fill(ctx(), executor.FillParams{TargetParams: byRef(tab, refFor(t, s, tab, "#bio")), Value: "multi\nline"}); err != nil {
			t.Fatal(err)
		}
		if got := evalJSON(t, s, tab, `[document.getElementById('name').value, bio.value]`); got != `["abc","multi\nline"]` {
			t.Errorf("type without clear, fill: %s", got)
		}
		if _, err := s.Fill(ctx(), executor.FillParams{TargetParams: byRef(tab, name), Value: ""}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Press(ctx(), executor.PressParams{TabID: tab, Target: executor.Target{Ref: name}, Key: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Type(ctx(), executor.TypeParams{TargetParams: byRef(tab, name), Text: "y", PressEnter: true}); err != nil {
			t.Fatal(err)
		}
		if got := evalJSON(t, s, tab, `[document.getElementById('name').value, out.textContent]`); got != `["xy","submitted:xy"]` {
			t.Errorf("fill empty, press, type+enter by ref: %s", got)
		}
		color := refFor(t, s, tab, "#color")
		r, err := s.SelectOption(ctx(), executor.SelectParams{TargetParams: byRef(tab, color), Values: []string{"Blue"}})
		if err != nil || strings.Join(r.Selected, ",") != "b" {
			t.Errorf("select by ref: %v %v", r.Selected, err)
		}
		_, err = s.SelectOption(ctx(), executor.SelectParams{TargetParams: byRef(tab, color), Values: []string{"Purple"}})
		// The options are the page's words: in Page (fenced), not the hint.
		if e := wantCode(t, err, executor.CodeBadArgs); !strings.Contains(e.Page, `"Red" (value "r")`) || strings.Contains(e.Hint, "Red") {
			t.Errorf("missing option: %#v", e)
		}
		_, err = s.Fill(ctx(), executor.FillParams{TargetParams: byRef(tab, color), Value: "x"})
		wantCode(t, err, executor.CodeBadArgs)
	})

	t.Run("values set directly", func(t *testing.T) {
		tab := tabAt(t, s, "/refs")
		if _, err := s.Fill(ctx(), executor.FillParams{TargetParams: byRef(tab, refFor(t, s, tab, "#d")), Value: "2026-04-01"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Fill(ctx(), executor.FillParams{TargetParams: byRef(tab, refFor(t, s, tab, "#ce")), Value: "new text"}); err != nil {
			t.Fatal(err)
		}
		if got := evalJSON(t, s, tab, `[d.value, ce.textContent]`); got != `["2026-04-01","new text"]` {
			t.Errorf("fill date and contenteditable by ref: %s", got)
		}
		_, err := s.Fill(ctx(), executor.FillParams{TargetParams: byRef(tab, refFor(t, s, tab, "#d")), Value: "yesterday"})
		wantCode(t, err, executor.CodeBadArgs)
	})

	t.Run("reads", func(t *testing.T) {
		tab := tabAt(t, s, "/refs")
		para := refFor(t, s, tab, "#para")
		h, err := s.HTML(ctx(), executor.HTMLParams{TabID: tab, Target: executor.Target{Ref: para}, Outer: true})
		if err != nil || h.Text != `<p id="para">Hello <b>world</b></p>` {
			t.Errorf("outer html by ref: %q %v", h.Text, err)
		}
		shot, err := s.Screenshot(ctx(), executor.ScreenshotParams{TabID: tab, Target: executor.Target{Ref: refFor(t, s, tab, "#go")}})
		if err != nil || shot.Width < 10 || shot.Width > 200 || shot.Height > 60 {
			t.Errorf("element screenshot by ref: %dx%d %v", shot.Width, shot.Height, err)
		}
		if _, err := s.Scroll(ctx(), executor.ScrollParams{TabID: tab, Target: executor.Target{Ref: refFor(t, s, tab, "#fr")}}); err != nil {
			t.Fatal(err)
		}
		if got := evalJSON(t, s, tab, `scrollY > 500`); got != "true" {
			t.Errorf("scroll by ref did not scroll: %s", got)
		}
	})

	t.Run("files", func(t *testing.T) {
		tab := tabAt(t, s, "/form")
		path := filepath.Join(s.b.opts.UploadDirs[0], "ref-a.txt")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("hello"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetFiles(ctx(), executor.SetFilesParams{TargetParams: byRef(tab, refFor(t, s, tab, "#file")), Paths: []string{path}}); err != nil {
			t.Fatal(err)
		}
		if got := evalJSON(t, s, tab, `[...document.getElementById('file').files].map(f => f.name + ':' + f.size)`); got != `["ref-a.txt:5"]` {
			t.Errorf("set_files by ref: %s", got)
		}
	})

	t.Run("drag", func(t *testing.T) {
		tab := tabAt(t, s, "/drag")
		_, err := s.Drag(ctx(), executor.DragParams{TabID: tab, From: executor.Target{Ref: refFor(t, s, tab, "#src")}, To: executor.Target{Selector: "#dst"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := evalJSON(t, s, tab, `dst.textContent`); got != `"dropped"` {
			t.Errorf("drag by ref: %s", got)
		}
	})

	t.Run("wait_for", func(t *testing.T) {
		tab := tabAt(t, s, "/late")
		gone := refFor(t, s, tab, "#gone")
		shy := refFor(t, s, tab, "#shy")
		evalJSON(t, s, tab, `later()`)
		if _, err := s.WaitFor(ctx(), executor.WaitParams{TabID: tab, Target: executor.Target{Ref: gone}, Gone: true}); err != nil {
			t.Errorf("wait for a ref's element to go: %v", err)
		}
		if _, err := s.WaitFor(ctx(), executor.WaitParams{TabID: tab, Target: executor.Target{Ref: shy}, Visible: true}); err != nil {
			t.Errorf("wait for a ref's element to show: %v", err)
		}
	})
}

func TestRefErrors(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/refs")
	click := func(ref string) error {
		_, err := s.Click(ctxFor(t, 5*time.Second), executor.ClickParams{TargetParams: byRef(tab, ref)})
		return err
	}
	goRef := refFor(t, s, tab, "#go")
	tok := strings.TrimRight(goRef, "0123456789")

	e := wantCode(t, click("not a ref"), executor.CodeBadArgs)
	if !strings.Contains(e.Message, "not a ref") {
		t.Errorf("malformed: %v", e)
	}
	e = wantCode(t, click(tok+"99999"), executor.CodeBadArgs)
	if !strings.Contains(e.Message, "never issued") || !strings.Contains(e.Hint, "snapshot") {
		t.Errorf("unknown: %v", e)
	}
	// An element that left the page.
	gone := refFor(t, s, tab, "#gone")
	evalJSON(t, s, tab, `(document.getElementById('gone').remove(), 1)`)
	e = wantCode(t, click(gone), executor.CodeRefExpired)
	if !strings.Contains(e.Message, "removed") {
		t.Errorf("removed: %v", e)
	}
	// Every ref of a page expires when the tab navigates, even when the
	// new page has an element in the same place.
	if _, err := s.Reload(ctxFor(t, 10*time.Second), executor.HistoryParams{TabID: tab}); err != nil {
		t.Fatal(err)
	}
	fresh := refFor(t, s, tab, "#go")
	if fresh == goRef {
		t.Fatalf("the reloaded page issued the old ref %s again", fresh)
	}
	for _, err := range []error{
		click(goRef),
		func() error {
			_, err := s.Text(ctxFor(t, 5*time.Second), executor.TextParams{TabID: tab, Target: executor.Target{Ref: goRef}})
			return err
		}(),
		func() error {
			_, err := s.WaitFor(ctxFor(t, 5*time.Second), executor.WaitParams{TabID: tab, Target: executor.Target{Ref: goRef}, Gone: true})
			return err
		}(),
	} {
		e = wantCode(t, err, executor.CodeRefExpired)
		if !strings.Contains(e.Message, "earlier page") || !strings.Contains(e.Hint, "snapshot") {
			t.Errorf("expired: %v", e)
		}
	}
	if err := click(fresh); err != nil {
		t.Errorf("the new ref: %v", err)
	}
}
