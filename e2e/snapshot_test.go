package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/mcp"
)

// UPDATE_GOLDEN=1 rewrites the snapshot golden files on purpose.
var updateGolden = os.Getenv("UPDATE_GOLDEN") == "1"

// snapshotSite serves the fixture pages of testdata/snapshot under
// /snapshot/ and returns the port.
func snapshotSite(t *testing.T) string {
	t.Helper()
	return serveMux(t, snapshotMux())
}

func snapshotMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/snapshot/", http.StripPrefix("/snapshot/", http.FileServer(http.Dir("testdata/snapshot"))))
	return mux
}

// snapshotOf runs snapshot with args and returns its header and outline.
func (s *server) snapshotOf(args map[string]any) (head map[string]any, outline string) {
	s.t.Helper()
	text := resultText(s.call("snapshot", args))
	content, _, ok := mcp.Unfence(text)
	if !ok {
		s.t.Fatalf("snapshot result is not fenced page content:\n%s", short(text))
	}
	first, rest, _ := strings.Cut(content, "\n")
	if err := json.Unmarshal([]byte(first), &head); err != nil {
		s.t.Fatalf("snapshot header %q: %v", first, err)
	}
	return head, rest
}

var refInOutline = regexp.MustCompile(`\[ref=[a-z]+([0-9]+)\]`)

// refOf finds the ref of the first outline line that contains all of
// words.
func refOf(t testing.TB, outline string, words ...string) string {
	t.Helper()
	for _, line := range strings.Split(outline, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if m := regexp.MustCompile(`\[ref=([a-z]+[0-9]+)\]`).FindStringSubmatch(line); all && m != nil {
			return m[1]
		}
	}
	t.Fatalf("no line with a ref contains %q in:\n%s", words, short(outline))
	return ""
}

func TestSnapshotGolden(t *testing.T) {
	s := startServer(t, permissive...)
	base := "http://127.0.0.1:" + snapshotSite(t)
	for _, page := range []string{"article", "form", "links", "shadow", "spa"} {
		t.Run(page, func(t *testing.T) {
			s.t = t
			s.call("navigate", map[string]any{"url": base + "/snapshot/" + page + ".html"})
			_, outline := s.snapshotOf(nil)
			// Document tokens differ from run to run; the numbers do not.
			got := refInOutline.ReplaceAllString(outline, "[ref=e$1]") + "\n"
			golden := filepath.Join("testdata", "snapshot", page+".golden")
			if updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with UPDATE_GOLDEN=1 to write it)", err)
			}
			if got != string(want) {
				t.Errorf("snapshot of %s differs from %s (run with UPDATE_GOLDEN=1 if the change is meant):\n%s", page, golden, got)
			}
			t.Logf("%s: %d characters", page, len([]rune(outline)))
		})
	}
}
