package helpers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
)

// frameFake is a backend with frames of other origins: frames maps an
// iframe's ref to its document; outlines maps a document token ("" for
// the main document) to what snapshot.js would return there.
type frameFake struct {
	*executortest.Fake
	frames   map[string]executor.FrameDoc
	outlines map[string]string
	ran      []string // the documents scripts ran in
}

func (f *frameFake) FrameDocument(_ context.Context, p executor.FrameParams) (executor.FrameDoc, error) {
	d, ok := f.frames[p.Ref]
	if !ok {
		return executor.FrameDoc{}, executor.Errorf(executor.CodeRefExpired, "gone")
	}
	return d, nil
}

func (f *frameFake) RefDocument(_ context.Context, p executor.FrameParams) (executor.FrameDoc, error) {
	for _, d := range f.frames {
		if d.Doc == executor.RefToken(p.Ref) {
			return d, nil
		}
	}
	return executor.FrameDoc{Main: true}, nil
}

func newFrameFake(outlines map[string]string, frames map[string]executor.FrameDoc) *frameFake {
	f := &frameFake{Fake: executortest.New("fake", "s"), frames: frames, outlines: outlines}
	f.Handle("RunScript", func(_ context.Context, params any) (any, error) {
		p := params.(executor.ScriptParams)
		f.ran = append(f.ran, p.Doc)
		v, ok := f.outlines[p.Doc]
		if !ok {
			return nil, executor.Errorf(executor.CodeRefExpired, "gone")
		}
		return executor.ScriptResult{PageState: executor.PageState{TabID: f.TabID(0), URL: "http://top.test/"}, Value: json.RawMessage(v)}, nil
	})
	return f
}

func raw(lines []string, runOf []int, frames, where string) string {
	l, _ := json.Marshal(lines)
	r, _ := json.Marshal(runOf)
	return `{"lines":` + string(l) + `,"runOf":` + string(r) + `,"frames":` + frames + `,"where":` + where + `}`
}

// The outline of a page with an allowed frame (itself framing a denied
// one) and a denied frame: the allowed documents in place, indented under
// their iframe lines; each denied one a placeholder with its host only,
// and no script ever run in it.
func TestSnapshotSplicesFrames(t *testing.T) {
	main := raw([]string{"# Top", "ma1 button Own", `iframe Pay`, "links (ref ma+number):", "2 One", "3 Two", `iframe Ad`},
		[]int{-1, -1, -1, -1, 3, 3, -1},
		`[{"line":2,"depth":0,"ref":"ma4","name":"Pay"},{"line":6,"depth":0,"ref":"ma5","name":"Ad"}]`,
		`{"url":"http://top.test/","origin":"http://top.test"}`)
	pay := strings.Replace(raw([]string{`"Widget"`, "pb1 button Pay now", " iframe Inner"}, []int{-1, -1, -1},
		`[{"line":2,"depth":1,"ref":"pb2","name":"Inner"}]`, `{"url":"http://pay.test/w","origin":"http://pay.test"}`), `{`, `{"cut":true,`, 1)
	f := newFrameFake(map[string]string{"": main, "pb": pay, "ad": `{"lines":["SECRET"],"runOf":[-1],"frames":[],"where":{"url":"http://ad.test/","origin":"http://ad.test"}}`},
		map[string]executor.FrameDoc{
			"ma4": {Doc: "pb", URL: "http://pay.test/w", Origin: "http://pay.test"},
			"ma5": {Doc: "ad", URL: "http://ad.test/x?q=SECRET", Origin: "http://ad.test"},
			"pb2": {Doc: "ad", URL: "http://ad.test/y", Origin: "http://ad.test"},
		})
	var decided []string
	decide := func(_ context.Context, u, origin string) error {
		decided = append(decided, origin)
		if origin == "http://ad.test" {
			return errors.New("denied")
		}
		return nil
	}
	r, err := Snapshot(t.Context(), f, SnapshotParams{DecideFrame: decide})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"# Top", "ma1 button Own",
		"iframe Pay", ` "Widget"`, " pb1 button Pay now", `  iframe "Inner" [ad.test: not allowed]`,
		"links (ref ma+number):", "2 One", "3 Two",
		`iframe "Ad" [ad.test: not allowed]`,
		CutNote, // a frame's outline cut something
	}, "\n")
	if diff := cmp.Diff(want, r.Text); diff != "" {
		t.Errorf("outline (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"", "pb"}, f.ran); diff != "" {
		t.Errorf("documents scripts ran in (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"http://pay.test", "http://ad.test", "http://ad.test"}, decided); diff != "" {
		t.Errorf("origins decided (-want +got):\n%s", diff)
	}

	// Paged: a page that starts inside the list repeats its head.
	r, err = Snapshot(t.Context(), f, SnapshotParams{DecideFrame: decide, Offset: 7, MaxChars: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("links (ref ma+number):\n2 One\n3 Two\niframe \"Ad\" [ad.test: not allowed]\n"+CutNote, r.Text); diff != "" {
		t.Errorf("a page from line 7 (-want +got):\n%s", diff)
	}
	r, err = Snapshot(t.Context(), f, SnapshotParams{DecideFrame: decide, MaxChars: 30})
	if err != nil {
		t.Fatal(err)
	}
	if r.Next != 2 || r.Lines != 10 || !strings.Contains(r.Text, "[cut at line 2 of 10") {
		t.Errorf("a cut outline: next %d of %d:\n%s", r.Next, r.Lines, r.Text)
	}
}

// Without a decider (a caller that passes no policy), or when a frame's
// document says it is elsewhere than the backend said (it navigated in
// between) and there is denied, nothing of it shows.
func TestSnapshotFramesFailClosed(t *testing.T) {
	main := raw([]string{"ma1 button Own", "iframe Pay"}, []int{-1, -1},
		`[{"line":1,"depth":0,"ref":"ma4","name":"Pay"}]`, `{"url":"http://top.test/","origin":"http://top.test"}`)
	moved := raw([]string{"SECRET"}, []int{-1}, `[]`, `{"url":"http://ad.test/","origin":"http://ad.test"}`)
	f := newFrameFake(map[string]string{"": main, "pb": moved},
		map[string]executor.FrameDoc{"ma4": {Doc: "pb", URL: "http://pay.test/w", Origin: "http://pay.test"}})
	r, err := Snapshot(t.Context(), f, SnapshotParams{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "ma1 button Own\niframe \"Pay\" [not shown]"; r.Text != want {
		t.Errorf("no decider: got\n%s\nwant\n%s", r.Text, want)
	}
	deny := func(_ context.Context, _, origin string) error {
		if origin == "http://ad.test" {
			return errors.New("denied")
		}
		return nil
	}
	r, err = Snapshot(t.Context(), f, SnapshotParams{DecideFrame: deny})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Text, "SECRET") || !strings.Contains(r.Text, `iframe "Pay" [ad.test: not allowed]`) {
		t.Errorf("a frame that moved to a denied origin:\n%s", r.Text)
	}
	// A scope in a frame's document is decided first.
	if _, err := Snapshot(t.Context(), f, SnapshotParams{Scope: executor.Target{Ref: "pb1"}}); executor.AsError(err).Code != executor.CodePolicyDenied {
		t.Errorf("a scope in a frame without a decider: %v", err)
	}
}

func TestNameThenQuotesAsJSON(t *testing.T) {
	for name, want := range map[string]string{"": " [x]", "a<b>&": ` "a<b>&" [x]`, `"q"`: ` "\"q\"" [x]`} {
		if got := nameThen(name, "[x]"); got != want {
			t.Errorf("nameThen(%q) = %q, want %q", name, got, want)
		}
	}
	if got := nameThen("Pay", ""); got != " Pay" {
		t.Errorf("nameThen(Pay) = %q", got)
	}
}
