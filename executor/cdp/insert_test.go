package cdp

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// A text guarded by OnlyOrigin goes in whole, into the named field, only
// while the field's document is of that origin (as the browser says, not
// as the page claims) and the field holds the focus.
func TestGuardedInsert(t *testing.T) {
	s := shared(t)
	t.Parallel()
	tab := tabAt(t, s, "/guard")
	ctx := ctxFor(t, 30*time.Second)
	u, _ := url.Parse(srv.URL)
	origin := "http://" + u.Host
	at := func(sel string) executor.TargetParams {
		return executor.TargetParams{TabID: tab, Target: executor.Target{Selector: sel}}
	}
	const value = "correct horse battery"

	if _, err := s.Type(ctx, executor.TypeParams{TargetParams: at("#pw"), Text: value, OnlyOrigin: origin}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Type(ctx, executor.TypeParams{TargetParams: at("#pw"), Text: "!", OnlyOrigin: origin}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tab, "pw.value"); got != `"`+value+`!"` {
		t.Errorf("typed: %s", got)
	}
	if _, err := s.Fill(ctx, executor.FillParams{TargetParams: at("#pw"), Value: value, OnlyOrigin: origin}); err != nil {
		t.Fatal(err)
	}
	if got := evalJSON(t, s, tab, "pw.value"); got != `"`+value+`"` {
		t.Errorf("filled: %s", got)
	}

	// The page claims https://login.test in its own world: the check is
	// made in the isolated world, which it cannot reach.
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"another origin", func() error {
			_, err := s.Fill(ctx, executor.FillParams{TargetParams: at("#other"), Value: value, OnlyOrigin: "https://login.test"})
			return err
		}, "another origin"},
		{"another origin by ref", func() error {
			ref := refFor(t, s, tab, "#other")
			_, err := s.Type(ctx, executor.TypeParams{TargetParams: executor.TargetParams{TabID: tab, Target: executor.Target{Ref: ref}}, Text: value, OnlyOrigin: "https://login.test"})
			return err
		}, "another origin"},
		{"focus moved", func() error {
			_, err := s.Type(ctx, executor.TypeParams{TargetParams: at("#steal"), Text: value, OnlyOrigin: origin})
			return err
		}, "focus left the field"},
	} {
		e := wantCode(t, c.call(), executor.CodePolicyDenied)
		if !strings.Contains(e.Message, c.want) || strings.Contains(e.Message, value) {
			t.Errorf("%s: %q", c.name, e.Message)
		}
	}
	if got := evalJSON(t, s, tab, "[steal.value, other.value]"); got != `["",""]` {
		t.Errorf("a refused insert wrote: %s", got)
	}
}
