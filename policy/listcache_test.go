package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listIn is a list-phase input for tool, as the server builds one.
func listIn(t *testing.T, tool string, roles ...string) Input {
	t.Helper()
	in, err := NewInput(PhaseList, tool, Class{Action: "read", ReadOnly: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Principal = Principal{Name: "agent", Roles: append([]string{}, roles...), Transport: "stdio"}
	return in
}

// DecideList answers as Decide, from the revision's cache after the first
// time, every answer in the decision log; a reload answers anew, and a
// policy error is never kept.
func TestDecideListCachesPerRevision(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := policyDir(t, `decision := {"allow": "reader" in input.principal.roles, "reasons": ["not a reader"]}`)
	var log bytes.Buffer
	e := newEngine(t, WithDir(dir), WithDecisionLog(&log))
	reader, other := listIn(t, "get_text", "reader"), listIn(t, "get_text")
	for i := range 3 {
		if d := e.DecideList(ctx, reader); !d.Allow {
			t.Errorf("reader, decision %d: %+v", i+1, d)
		}
		if d, want := e.DecideList(ctx, other), e.Decide(ctx, other); d.Allow || strings.Join(d.Reasons, ";") != strings.Join(want.Reasons, ";") {
			t.Errorf("other, decision %d: %+v, want Decide's %+v", i+1, d, want)
		}
	}
	if got := e.cur.Load().lists; len(got.m) != 2 {
		t.Errorf("%d inputs cached, want 2 (one per principal)", len(got.m))
	}
	if n := strings.Count(log.String(), "\n"); n != 9 {
		t.Errorf("%d decision log lines, want 9 (every decision, cached or not)", n)
	}

	if err := os.WriteFile(filepath.Join(dir, "policy.rego"), []byte("package chromegate\n\ndecision := {\"allow\": false, \"reasons\": [\"closed\"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if d := e.DecideList(ctx, reader); d.Allow {
		t.Errorf("after the reload: %+v, want the new policy's denial", d)
	}

	broken := newEngine(t, WithDir(policyDir(t, `decision := {"allow": x, "reasons": []} if { input.tool == "get_text"; x := 1 / 0 }
decision := {"allow": true, "reasons": []} if input.tool != "get_text"`)), WithTimeout(50*time.Millisecond))
	for range 2 {
		wantPolicyError(t, broken.DecideList(ctx, reader), "divide by zero")
	}
	if n := len(broken.cur.Load().lists.m); n != 0 {
		t.Errorf("%d policy errors cached", n)
	}
}

// Call decisions come from a cache of the policy revision in force, as
// list decisions do, when the policy is a function of its input: the same
// input gets the same answer, a reload the new policy's, an error is
// decided again; a long input is never kept.
func TestDecideCachesCallsPerRevision(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := policyDir(t, `decision := {"allow": input.page.host == "a.test", "reasons": ["not a.test"]}`)
	var log bytes.Buffer
	e := newEngine(t, WithDir(dir), WithDecisionLog(&log))
	on := func(host string, expr string) Input {
		in, err := testInput(PhaseCall, "eval", map[string]any{"expression": expr})
		if err != nil {
			t.Fatal(err)
		}
		in.Page = NewPage("https://" + host + "/")
		return in
	}
	for i := range 3 {
		if d := e.Decide(ctx, on("a.test", "1+1")); !d.Allow {
			t.Errorf("a.test, decision %d: %+v", i+1, d)
		}
		if d := e.Screen(ctx, on("b.test", "1+1")); d.Allow || d.Reasons[0] != "not a.test" {
			t.Errorf("b.test, decision %d: %+v", i+1, d)
		}
	}
	e.Decide(ctx, on("a.test", strings.Repeat("x", maxCachedInput)))
	if n := len(e.cur.Load().calls.m); n != 2 {
		t.Errorf("%d inputs cached, want 2 (the long one is not)", n)
	}
	if n := strings.Count(log.String(), "\n"); n != 3+3+1 {
		t.Errorf("%d decision log lines, want 7 (every Decide, cached or not, and Screen's denials)", n)
	}
	if err := os.WriteFile(filepath.Join(dir, "policy.rego"), []byte("package chromegate\n\ndecision := {\"allow\": false, \"reasons\": [\"closed\"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if d := e.Decide(ctx, on("a.test", "1+1")); d.Allow {
		t.Errorf("after the reload: %+v, want the new policy's denial", d)
	}
	broken := newEngine(t, WithDir(policyDir(t, `decision := {"allow": x, "reasons": []} if { input.tool == "eval"; x := 1 / 0 }
decision := {"allow": true, "reasons": []} if input.tool != "eval"`)))
	for range 2 {
		wantPolicyError(t, broken.Decide(ctx, on("a.test", "1+1")), "divide by zero")
	}
	if n := len(broken.cur.Load().calls.m); n != 0 {
		t.Errorf("%d policy errors cached", n)
	}
}

// A policy that reads the clock, the network or chance is decided afresh
// every time: its answer to the same input may change.
func TestNondeterministicPolicyIsNotCached(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	e := newEngine(t, WithDir(policyDir(t, `decision := {"allow": false, "reasons": [sprintf("%d", [rand.intn("draw", 1000000000)])]}`)))
	if e.cur.Load().deterministic {
		t.Fatal("a policy calling rand.intn was taken as deterministic")
	}
	in, err := testInput(PhaseCall, "get_text", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 5 {
		seen[e.Decide(ctx, in).Reasons[0]] = true
	}
	// rand.intn is memoised within one evaluation only: five evaluations
	// draw five numbers (a repeat is one in a hundred million).
	if len(seen) < 4 {
		t.Errorf("%d different answers in 5 decisions: cached", len(seen))
	}
	if n := len(e.cur.Load().calls.m); n != 0 {
		t.Errorf("%d decisions cached", n)
	}
	for _, src := range []string{
		`decision := {"allow": time.now_ns() > 0, "reasons": []}`,
		`decision := {"allow": uuid.rfc4122("k") != "", "reasons": []}`,
	} {
		if newEngine(t, WithDir(policyDir(t, src))).cur.Load().deterministic {
			t.Errorf("taken as deterministic: %s", src)
		}
	}
	if !newEngine(t, WithDir(policyDir(t, `decision := {"allow": startswith(input.tool, "get"), "reasons": []}`))).cur.Load().deterministic {
		t.Error("a policy of its input alone was taken as nondeterministic")
	}
}
