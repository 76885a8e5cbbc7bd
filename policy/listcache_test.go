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
