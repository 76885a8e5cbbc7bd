package mcp

import (
	"fmt"
	"strings"
	"testing"
)

func TestViewsBounds(t *testing.T) {
	t.Parallel()
	var v views
	seen := func(viewer, session, tab, outline string) {
		v.saw(&seenOutline{viewer: viewer, session: session, tab: tab, outline: outline})
	}
	for i := range maxViewsPerCaller + 5 {
		seen("a", "s1", fmt.Sprint("t", i), "kq1 button A")
	}
	if n := v.len(); n != maxViewsPerCaller {
		t.Errorf("one caller keeps %d outlines, want %d", n, maxViewsPerCaller)
	}
	if v.get("a", "t0") != nil || v.get("a", fmt.Sprint("t", maxViewsPerCaller+4)) == nil {
		t.Error("the oldest tab was not the one evicted")
	}
	seen("b", "s2", "t1", "kq1 button B")
	seen("b", "s2", "t1", "kq1 button B2") // replaces, not adds
	if o := v.get("b", "t1"); o == nil || o.outline != "kq1 button B2" {
		t.Errorf("b/t1 = %+v", o)
	}
	if v.get("a", "t9") == nil {
		t.Fatal("a/t9 missing")
	}
	// A closed tab is forgotten by every caller of its session, and
	// only there.
	seen("c", "s1", "t9", "x")
	v.forget("s1", "t9")
	if v.get("a", "t9") != nil || v.get("c", "t9") != nil {
		t.Error("a closed tab is still kept")
	}
	v.forget("s2", "")
	if v.get("b", "t1") != nil {
		t.Error("an ended session's outlines are still kept")
	}
	if v.get("a", "t10") == nil {
		t.Error("another session's outline was dropped")
	}
	// The total is bounded in characters.
	big := strings.Repeat("x", maxViewChars/3+1)
	for i := range 4 {
		seen(fmt.Sprint("big", i), "s3", "t", big)
	}
	if v.chars > maxViewChars {
		t.Errorf("%d characters kept, over %d", v.chars, maxViewChars)
	}
	if v.get("big3", "t") == nil {
		t.Error("the newest outline was evicted")
	}
}

func TestCutOutline(t *testing.T) {
	t.Parallel()
	if got := cutOutline("a\nb", 10); got != "a\nb" {
		t.Errorf("short outline: %q", got)
	}
	got := cutOutline("aaaa\nbbbb\ncccc", 10)
	want := "aaaa\nbbbb\n[cut at line 2 of 3: call snapshot with offset=2 for the rest]"
	if got != want {
		t.Errorf("cut: %q, want %q", got, want)
	}
	if got := cutOutline(strings.Repeat("z", 20)+"\nb", 10); !strings.HasPrefix(got, strings.Repeat("z", 20)+"\n[cut at line 1 of 2") {
		t.Errorf("a first line longer than the cap is shown: %q", got)
	}
}

func TestChangesOn(t *testing.T) {
	t.Parallel()
	s := &Server{opts: Options{Changes: true}}
	click := &Tool{Name: "click"}
	for _, tt := range []struct {
		tool *Tool
		args map[string]any
		on   bool
		want bool
	}{
		{click, nil, true, true},
		{click, map[string]any{"changes": false}, true, false},
		{click, map[string]any{"changes": true}, false, true},
		{click, nil, false, false},
		{&Tool{Name: "get_text"}, map[string]any{"changes": true}, true, false},
		{&Tool{Name: "reload"}, nil, true, false},
	} {
		s.opts.Changes = tt.on
		if got := s.changesOn(&Call{Tool: tt.tool, Args: tt.args}); got != tt.want {
			t.Errorf("%s %v (server %v): %v", tt.tool.Name, tt.args, tt.on, got)
		}
	}
}
