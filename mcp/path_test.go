package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestPathComposesInOrder: the stages listed first see the call first and
// its outcome last, and a stage that does not call next ends the path.
func TestPathComposesInOrder(t *testing.T) {
	t.Parallel()
	var trace []string
	mark := func(name string) stage {
		return stage{name, func(s *Server, next step) step {
			return func(ctx context.Context, c *Call) (*Result, error) {
				trace = append(trace, "in "+name)
				r, err := next(ctx, c)
				trace = append(trace, "out "+name)
				return r, err
			}
		}}
	}
	end := stage{"end", func(*Server, step) step {
		return func(context.Context, *Call) (*Result, error) {
			trace = append(trace, "end")
			return &Result{Value: "done"}, nil
		}
	}}
	never := mark("never")
	run := (&Server{}).compose([]stage{mark("a"), mark("b"), end, never})
	r, err := run(t.Context(), &Call{})
	if err != nil || r.Value != "done" {
		t.Fatalf("run = %v, %v", r, err)
	}
	if want := []string{"in a", "in b", "end", "out b", "out a"}; !slices.Equal(trace, want) {
		t.Errorf("trace = %q, want %q", trace, want)
	}

	// A path whose last stage calls next has no tool to run: an error,
	// never a nil result taken for a success.
	if _, err := (&Server{}).compose([]stage{mark("x")})(t.Context(), &Call{}); err == nil {
		t.Error("a path that runs off its end succeeded")
	}
}

// TestCallPathShape: the gated half is the tail of the whole path, every
// stage is named once, and both end in the handler; what must come before
// what (the policy before anything runs, secrets out last) holds.
func TestCallPathShape(t *testing.T) {
	t.Parallel()
	names := func(ss []stage) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.name)
		}
		return out
	}
	all, gated := names(callPath), names(gatedPath)
	if !slices.Equal(all[len(all)-len(gated):], gated) {
		t.Fatalf("gatedPath %q is not the tail of callPath %q", gated, all)
	}
	seen := map[string]bool{}
	for _, n := range all {
		if seen[n] {
			t.Errorf("stage %q is listed twice", n)
		}
		seen[n] = true
	}
	if all[0] != "secrets out" || all[len(all)-1] != "run" {
		t.Errorf("the path starts with %q and ends with %q; want secrets out … run", all[0], all[len(all)-1])
	}
	before := func(a, b string) {
		if slices.Index(all, a) > slices.Index(all, b) {
			t.Errorf("%s comes after %s in %s", a, b, strings.Join(all, " → "))
		}
	}
	before("acl", "decode")       // a hidden tool's schema is never described
	before("decode", "gate")      // the policy decides on checked arguments
	before("secrets in", "gate")  // and knows which secrets they name
	before("gate", "run")         // nothing runs undecided
	before("landed", "run")       // where the call left the tab is decided again
	before("recover", "envelope") // a panic in rendering is still a reply
}
