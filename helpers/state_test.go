package helpers

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
)

func TestCookieSentTo(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		domain string
		secure bool
		origin string
		want   bool
	}{
		{"a.test", false, "http://a.test:8080", true},
		{"a.test", false, "http://b.a.test", false}, // host-only
		{".a.test", false, "http://b.a.test", true},
		{".a.test", false, "http://a.test", true},
		{".a.test", false, "http://xa.test", false},
		{"A.Test", false, "http://a.test", true},
		{"a.test", true, "http://a.test", false}, // Secure only over https
		{"a.test", true, "https://a.test", true},
		{"localhost", true, "http://localhost:3000", true},
		{"a.test", false, "not a url", false},
	} {
		got := cookieSentTo(executor.StateCookie{Domain: c.domain, Secure: c.secure}, c.origin)
		if got != c.want {
			t.Errorf("cookie of %s (secure %v) sent to %s = %v, want %v", c.domain, c.secure, c.origin, got, c.want)
		}
	}
	if o := CookieOrigin(executor.StateCookie{Domain: ".Example.COM", Secure: true}); o != "https://example.com" {
		t.Errorf("CookieOrigin = %s", o)
	}
}

// denyHosts decides origins whose host is in hosts as denied.
func denyHosts(hosts ...string) OriginDecider {
	return func(_ context.Context, origin string) error {
		for _, h := range hosts {
			if strings.Contains(origin, "://"+h) && !strings.Contains(strings.TrimPrefix(origin, "http://"+h), ".") {
				return executor.Errorf(executor.CodePolicyDenied, "the state of %s is not allowed", h)
			}
		}
		return nil
	}
}

// On a backend without a StateStore (the user's own browser), SaveState
// asks only for the cookies of allowed origins, and drops those of a denied
// domain that an allowed origin is sent (a parent domain's).
func TestSaveStateAsksOnlyForAllowedOrigins(t *testing.T) {
	t.Parallel()
	f := executortest.New("fake", "s")
	ctx := context.Background()
	if err := f.SetCookies(ctx, executor.SetCookiesParams{Cookies: []executor.Cookie{
		{Name: "ok", Value: "v1", Domain: "a.test", Path: "/"},
		{Name: "parent", Value: "v2", Domain: ".test", Path: "/"},
		{Name: "evil", Value: "v3", Domain: "evil.test", Path: "/"},
	}}); err != nil {
		t.Fatal(err)
	}
	st, rep, err := SaveState(ctx, f, SaveOptions{Origins: []string{"http://a.test", "http://evil.test"}, Decide: denyHosts("evil.test", "test")})
	if err != nil {
		t.Fatal(err)
	}
	var asked executor.CookiesParams
	for _, c := range f.Calls() {
		if c.Method == "Cookies" {
			asked = c.Params.(executor.CookiesParams)
		}
	}
	if diff := cmp.Diff([]string{"http://a.test/"}, asked.URLs); diff != "" {
		t.Errorf("cookies asked for (-want +got):\n%s", diff)
	}
	if len(st.Cookies) != 1 || st.Cookies[0].Name != "ok" {
		t.Errorf("saved cookies %+v, want only a.test's", st.Cookies)
	}
	var skipped []string
	for _, k := range rep.Skipped {
		skipped = append(skipped, k.Origin+" "+k.What)
		if !strings.Contains(k.Reason, "not allowed") {
			t.Errorf("skipped %s without the policy's reason: %q", k.Origin, k.Reason)
		}
	}
	if diff := cmp.Diff([]string{"http://evil.test cookies", "http://test cookies"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if rep.Cookies != 1 || len(rep.Origins) != 1 || rep.Origins[0].Origin != "http://a.test" {
		t.Errorf("report %+v", rep)
	}
}

// RestoreState hands the browser nothing of a denied origin: no cookie,
// and no tab opened on it.
func TestRestoreStateLoadsNothingDenied(t *testing.T) {
	t.Parallel()
	f := executortest.New("fake", "s")
	st := executor.StorageState{
		Cookies: []executor.StateCookie{
			{Name: "ok", Value: "v", Domain: "a.test", Path: "/", Expires: -1, SameSite: "Lax"},
			{Name: "evil", Value: "v", Domain: "evil.test", Path: "/", Expires: -1, SameSite: "Lax"},
		},
		Origins: []executor.OriginState{
			{Origin: "http://evil.test", LocalStorage: []executor.NameValue{{Name: "k", Value: "v"}}},
			{Origin: "http://a.test", IndexedDB: []byte(`[{"name":"db"}]`)},
		},
	}
	rep, err := RestoreState(context.Background(), f, st, RestoreOptions{Decide: denyHosts("evil.test"), OpenTabs: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Calls() {
		switch c.Method {
		case "SetCookies":
			if cs := c.Params.(executor.SetCookiesParams).Cookies; len(cs) != 1 || cs[0].Name != "ok" {
				t.Errorf("cookies set: %+v", cs)
			}
		case "NewTab":
			t.Errorf("a tab was opened: %+v", c.Params)
		}
	}
	want := []SkippedOrigin{
		{"http://evil.test", "cookies,storage", "the state of evil.test is not allowed"},
		{"http://a.test", "indexed_db", "this backend does not restore IndexedDB"},
	}
	if diff := cmp.Diff(want, rep.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}
