package executor_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromegate/chromegate/executor"
)

// TestFetchDecidesEveryHop: a server that redirects a fetch elsewhere gets
// each hop decided before it is sent; a refused hop is never requested,
// the decider's error comes back as is, and nothing is stored.
func TestFetchDecidesEveryHop(t *testing.T) {
	var reached atomic.Int64
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_, _ = w.Write([]byte("internal secret"))
	}))
	defer inner.Close()
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, inner.URL+"/secret", http.StatusFound)
		case "/hop":
			http.Redirect(w, r, "/file", http.StatusFound)
		default:
			_, _ = w.Write([]byte("file"))
		}
	}))
	defer outer.Close()
	denied := executor.Errorf(executor.CodePolicyDenied, "not there")
	var asked []string
	decide := func(_ context.Context, u string) error {
		asked = append(asked, u)
		if strings.HasPrefix(u, inner.URL) {
			return denied
		}
		return nil
	}
	dir := t.TempDir()
	_, err := executor.Fetch(t.Context(), executor.FetchParams{URL: outer.URL + "/away", Dir: dir, Limit: 1 << 20, DecideHop: decide})
	if err != denied {
		t.Fatalf("fetch through a refused hop: %v, want the decider's error", err)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the refused hop was requested %d times", n)
	}
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("a refused fetch stored %d files", len(files))
	}
	asked = nil
	res, err := executor.Fetch(t.Context(), executor.FetchParams{URL: outer.URL + "/hop", Dir: dir, Limit: 1 << 20, DecideHop: decide})
	if err != nil || res.Size != 4 {
		t.Fatalf("an allowed chain: %+v, %v", res, err)
	}
	if want := []string{outer.URL + "/hop", outer.URL + "/file"}; strings.Join(asked, " ") != strings.Join(want, " ") {
		t.Errorf("hops decided: %v, want %v", asked, want)
	}
	if _, err := executor.Fetch(t.Context(), executor.FetchParams{URL: inner.URL + "/secret", Dir: dir, Limit: 1 << 20, DecideHop: decide}); err != denied || reached.Load() != 0 {
		t.Errorf("a refused first URL: %v, reached %d", err, reached.Load())
	}
}
