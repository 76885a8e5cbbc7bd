package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Browsers counts starts by result, crashes, and sessions by kind; a
// kind outside the closed set is "other", and every kind is on /metrics
// at zero before any session opened.
func TestBrowsersCounted(t *testing.T) {
	m := New("test")
	kind := func(s string) string {
		kinds := map[string]string{"": "default", "named:k:a": "named", "sid": "mcp"}
		if k, ok := kinds[s]; ok {
			return k
		}
		return s // a session's own text: must not become a label
	}
	ev := m.Browsers(kind)

	srv := httptest.NewServer(m.Handler(nil))
	defer srv.Close()
	scrape := func() string {
		r, err := srv.Client().Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return string(b)
	}
	if body := scrape(); !strings.Contains(body, `chromegate_sessions{kind="handle"} 0`) {
		t.Errorf("no zero handle series:\n%s", body)
	}

	ev.Launched("cdp", nil)
	ev.Launched("cdp", errors.New("no chromium"))
	ev.Crashed("cdp")
	ev.Launched("cdp", nil) // the next call's relaunch
	for _, s := range []string{"", "named:k:a", "sid", "handle:cgs_SECRET"} {
		ev.SessionOpened("cdp", s)
	}
	ev.SessionClosed("cdp", "sid")
	ev.SessionLost("cdp", "sid", "gone")
	ev.SessionLost("cdp", "sid", "eaten by a grue")

	for _, c := range []struct {
		got  float64
		want float64
		what string
	}{
		{testutil.ToFloat64(ev.(*events).launches.WithLabelValues("cdp", "ok")), 2, "launches ok"},
		{testutil.ToFloat64(ev.(*events).launches.WithLabelValues("cdp", "failed")), 1, "launches failed"},
		{testutil.ToFloat64(ev.(*events).crashes.WithLabelValues("cdp")), 1, "crashes"},
		{testutil.ToFloat64(ev.(*events).live.WithLabelValues("mcp")), 0, "live mcp"},
		{testutil.ToFloat64(ev.(*events).live.WithLabelValues("named")), 1, "live named"},
		{testutil.ToFloat64(ev.(*events).opened.WithLabelValues("mcp")), 1, "opened mcp"},
		{testutil.ToFloat64(ev.(*events).closed.WithLabelValues("mcp")), 1, "closed mcp"},
		{testutil.ToFloat64(ev.(*events).opened.WithLabelValues("other")), 1, "opened other"},
		{testutil.ToFloat64(ev.(*events).lost.WithLabelValues("cdp", "gone")), 1, "lost gone"},
		{testutil.ToFloat64(ev.(*events).lost.WithLabelValues("cdp", "other")), 1, "lost other"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if body := scrape(); strings.Contains(body, "SECRET") {
		t.Errorf("a session's text became a label:\n%s", body)
	}
}
