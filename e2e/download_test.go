package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/internal/testkit"
)

// downloadSite serves, on allowed.test, files whose URLs redirect: to the
// loopback "internal" service, to a denied host (other.test, mapped to
// 127.0.0.1 by the resolver rules), and along a chain that stays on the
// allowed host. /page links to them for downloads by click.
func downloadSite(t *testing.T, evil, internal string) (port string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/file.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		fmt.Fprint(w, "the allowed file")
	})
	mux.HandleFunc("/to-internal", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal+"/latest/meta-data", http.StatusFound)
	})
	mux.HandleFunc("/to-evil", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, evil+"/exfil.bin", http.StatusFound)
	})
	mux.HandleFunc("/chain", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/chain2", http.StatusFound)
	})
	mux.HandleFunc("/chain2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/file.bin", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Files</title>
<a id="internal" href="/to-internal" download>report</a>
<a id="evil" href="/to-evil" download>export</a>
<a id="chain" href="/chain" download>file</a>`)
	})
	return serveMux(t, mux)
}

// TestDownloadRedirects is the attacker's side of download_file: an
// allowed URL whose server answers 302 to the loopback internal service, or
// to a host the policy denies. Each hop is decided as the call was: the
// call fails with POLICY_DENIED, nothing is stored in the download
// directory, the internal service and the denied host are never reached,
// and the hint does not name the host the redirect chose. A redirect chain
// that stays on allowed hosts still downloads. It holds with the egress
// boundary and without it (--unsafe-no-egress-boundary): the hop decision
// is the call's own, not the boundary's.
func TestDownloadRedirects(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	for _, mode := range []struct {
		name  string
		host  string // the allowed host the site is reached by
		flags []string
	}{
		// allowed.test is known only by the browser's host mapping: the
		// server's fetch must see names as the browser does.
		{"egress boundary", "allowed.test", nil},
		// localhost is listed exactly (it is loopback) and resolves
		// without the mapping; 127.0.0.1, the internal service's host, is
		// not listed.
		{"no egress boundary", "localhost", []string{"--unsafe-no-egress-boundary"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			internal := newCountingServer(t, "internal")
			evil := newCountingServer(t, "evil")
			port := downloadSite(t, "http://other.test:"+evil.port, "http://127.0.0.1:"+internal.port)
			base := "http://" + mode.host + ":" + port
			s := startServer(t, append([]string{resolverRules, "--allow-domain=" + mode.host, "--enable-downloads", "--enable-mutations"}, mode.flags...)...)
			dir := filepath.Join(s.dataDir, "downloads")

			denied := func(t *testing.T, args map[string]any, host string) {
				t.Helper()
				txt := s.fail("POLICY_DENIED", "download_file", args)
				t.Logf("denied: %s", txt)
				_, hint, _ := strings.Cut(txt, "\nNext:")
				hint, _, _ = strings.Cut(hint, "\n") // the server's words; page words follow, fenced
				for _, leak := range []string{host, evil.port, internal.port, "secret"} {
					if strings.Contains(hint, leak) {
						t.Errorf("the hint names %q, which the redirect chose: %s", leak, txt)
					}
				}
				if strings.Contains(txt, "secret") {
					t.Errorf("the denial carries the denied service's answer: %s", txt)
				}
				if server, _, _ := strings.Cut(txt, "\n«page-"); strings.Contains(server, host) {
					t.Errorf("the host the redirect chose is named outside the fence: %s", txt)
				}
				if files := stored(t, dir); len(files) != 0 {
					t.Errorf("a denied download left files in %s: %v", dir, files)
				}
			}
			t.Run("to the internal service", func(t *testing.T) {
				denied(t, map[string]any{"url": base + "/to-internal"}, "127.0.0.1")
			})
			t.Run("to a denied host", func(t *testing.T) {
				denied(t, map[string]any{"url": base + "/to-evil"}, "other.test")
			})
			if mode.flags == nil {
				// A click's download is the browser's (cdp: through its
				// proxy, the egress boundary) or, through the extension,
				// fetched by the server from the URL the click led to; both
				// are decided hop by hop. Without the boundary the cdp
				// browser's own fetches are the operator's choice.
				t.Run("by a click", func(t *testing.T) {
					for _, id := range []string{"#internal", "#evil"} {
						s.call("navigate", map[string]any{"url": base + "/page"})
						res := s.try("download_file", map[string]any{"selector": id, "timeout_ms": 3000})
						t.Logf("download_file %s: %s", id, resultText(res))
						if !res.IsError || !strings.HasPrefix(resultText(res), "POLICY_DENIED: ") {
							t.Errorf("download_file %s: want POLICY_DENIED, got %s", id, resultText(res))
						}
						if strings.Contains(resultText(res), "secret") {
							t.Errorf("download_file %s carries the denied service's answer: %s", id, resultText(res))
						}
						if tab := resultText(s.call("tabs_list", nil)); strings.Contains(tab, "chrome-error") || strings.Contains(tab, "outside the policy") {
							t.Errorf("download_file %s left the tab on an error page: %s", id, tab)
						}
					}
					if files := stored(t, dir); len(files) != 0 {
						t.Errorf("a denied download by click left files in %s: %v", dir, files)
					}
				})
			}
			if n := internal.reached(); n != 0 {
				t.Errorf("the internal service was reached %d times: %v", n, internal.seen())
			}
			if n := evil.reached(); n != 0 {
				t.Errorf("the denied host was reached %d times: %v", n, evil.seen())
			}
			t.Run("an allowed redirect chain still downloads", func(t *testing.T) {
				var d struct {
					Path string `json:"path"`
					URL  string `json:"url"`
				}
				res := s.call("download_file", map[string]any{"url": base + "/chain"})
				if err := json.Unmarshal([]byte(jsonPart(resultText(res))), &d); err != nil {
					t.Fatalf("download result: %v: %s", err, resultText(res))
				}
				if got, err := os.ReadFile(d.Path); err != nil || string(got) != "the allowed file" {
					t.Errorf("downloaded %q (%v), want the allowed file", got, err)
				}
				if d.URL != base+"/file.bin" {
					t.Errorf("the download's URL is %q, want the chain's end %s", d.URL, base+"/file.bin")
				}
			})
		})
	}
}

// stored lists the files in the download directory (none when it does not
// exist yet).
func stored(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}
