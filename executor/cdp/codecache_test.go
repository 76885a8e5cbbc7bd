package cdp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
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

// BenchmarkDriverStart starts the driver with its code cache and without
// (CHROMEGATE_NO_CODE_CACHE), alternating, until it answered, and reports
// both medians of the wall time and of the driver's CPU time at that
// point (user + system, from /proc: unlike the wall time it hardly moves
// with the machine's load).
func BenchmarkDriverStart(b *testing.B) {
	needBrowser(b)
	d, err := FindDriver("")
	if err != nil {
		b.Fatal(err)
	}
	type sample struct{ wall, cpu time.Duration }
	got := map[bool][]sample{}
	round := 0
	for b.Loop() {
		for _, cached := range []bool{round%2 == 0, round%2 != 0} {
			if cached {
				b.Setenv(noCodeCacheEnv, "")
			} else {
				b.Setenv(noCodeCacheEnv, "1")
			}
			t0 := time.Now()
			pw, err := runDriver(d, discardLogger)
			if err != nil {
				b.Fatal(err)
			}
			wall := time.Since(t0)
			got[cached] = append(got[cached], sample{wall, cpuOf(pw.Pid())})
			_ = pw.Stop()
		}
		round++
	}
	med := func(cached bool, f func(sample) time.Duration) time.Duration {
		ds := make([]time.Duration, 0, len(got[cached]))
		for _, s := range got[cached] {
			ds = append(ds, f(s))
		}
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	wall := func(s sample) time.Duration { return s.wall }
	cpu := func(s sample) time.Duration { return s.cpu }
	line := fmt.Sprintf("driver start, %d runs each: with the code cache wall %d ms, CPU %d ms; without wall %d ms, CPU %d ms; CPU with/without %.2f×",
		len(got[true]), med(true, wall).Milliseconds(), med(true, cpu).Milliseconds(), med(false, wall).Milliseconds(), med(false, cpu).Milliseconds(),
		float64(med(true, cpu))/float64(max(med(false, cpu), 1)))
	b.Log(line)
	fmt.Println(line)
	b.ReportMetric(float64(med(true, cpu).Milliseconds()), "cpu-ms-cached")
	b.ReportMetric(float64(med(false, cpu).Milliseconds()), "cpu-ms-uncached")
	b.ReportMetric(float64(med(true, wall).Milliseconds()), "wall-ms-cached")
	b.ReportMetric(float64(med(false, wall).Milliseconds()), "wall-ms-uncached")
}

// cpuOf is the CPU time pid has used (user + system), 0 when unknown.
func cpuOf(pid int) time.Duration {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which may hold spaces.
	_, rest, ok := strings.Cut(string(st), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}
