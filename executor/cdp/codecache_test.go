package cdp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cacheEntries lists the code cache's entries (not their markers).
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if !strings.Contains(e.Name(), ".") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

// startStop starts the real driver and stops it.
func startStop(t *testing.T, dir string) {
	t.Helper()
	d, err := FindDriver(dir)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := runDriver(d, discardLogger)
	if err != nil {
		t.Fatalf("the driver did not start: %v", err)
	}
	if err := pw.Stop(); err != nil {
		t.Logf("stop: %v", err)
	}
}

// TestDriverCodeCache: a driver start writes V8's code cache of the
// driver's bundles, private to the user; a later start runs with it; an
// entry that is garbage (a truncated write, a disk error, a hand that
// tampered with it) is rejected by V8 and rewritten, and the driver starts
// all the same; with CHROMEGATE_NO_CODE_CACHE nothing is read or written.
func TestDriverCodeCache(t *testing.T) {
	needBrowser(t)
	d, err := FindDriver("")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("CHROMEGATE_CACHE_DIR", t.TempDir())
	t.Setenv("PLAYWRIGHT_NODEJS_PATH", "")
	cache := filepath.Join(DefaultCacheDir(), "v8")

	t.Setenv(noCodeCacheEnv, "1")
	startStop(t, d.Dir)
	if got := cacheEntries(t, cache); len(got) != 0 {
		t.Fatalf("with %s the driver wrote a code cache: %v", noCodeCacheEnv, got)
	}
	t.Setenv(noCodeCacheEnv, "")

	startStop(t, d.Dir)
	entries := cacheEntries(t, cache)
	if len(entries) == 0 {
		t.Fatal("the driver wrote no code cache")
	}
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the cache directory: %v, mode %v, want 0700", err, fi.Mode().Perm())
	}
	for _, e := range entries {
		if fi, err := os.Stat(e); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
			t.Errorf("cache entry %s: %v, mode %v, want a non-empty 0600 file", e, err, fi.Mode().Perm())
		}
	}
	startStop(t, d.Dir) // with the cache

	for _, e := range entries {
		if err := os.WriteFile(e, []byte("not V8's code cache"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	startStop(t, d.Dir)
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil || string(b) == "not V8's code cache" {
			t.Errorf("the garbage entry %s was not rewritten (%v)", e, err)
		}
	}
}
