package testkit

import (
	"strings"
	"testing"
)

func TestParseBackend(t *testing.T) {
	for name, want := range map[string]Backend{"": CDP, "cdp": CDP, "ext": Ext, "browser-server": BrowserServer, "cdp-endpoint": CDPEndpoint} {
		if got, err := ParseBackend(name); err != nil || got != want {
			t.Errorf("ParseBackend(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	if _, err := ParseBackend("remote"); err == nil {
		t.Error("ParseBackend(remote): want an error")
	}
	if got := (CDP | Remote).String(); got != "cdp, browser-server, cdp-endpoint" {
		t.Errorf("String = %q", got)
	}
}

// A test not declared for the run's backend is skipped, naming the backends
// it runs on, and counted as not run; one declared for it runs and counts.
func TestBackendsSkipsAndCounts(t *testing.T) {
	t.Setenv(BackendVar, "ext")
	before := Matrix()
	ranBody := false
	t.Run("cdpOnly", func(t *testing.T) {
		Backends(t, CDP, Remote)
		t.Error("a test not declared for ext ran on ext")
	})
	t.Run("extToo", func(t *testing.T) {
		Backends(t, CDP, Ext)
		ranBody = true
	})
	if !ranBody {
		t.Error("a test declared for ext did not run on ext")
	}
	after := Matrix()
	if len(after.NotRun) != len(before.NotRun)+1 || len(after.Ran) != len(before.Ran)+1 {
		t.Errorf("counts before %v, after %v: want one more not run and one more ran", before, after)
	}
	if !strings.HasPrefix(after.String(), "e2e on ext: ") {
		t.Errorf("summary %q", after)
	}
	t.Setenv(BackendVar, "firefox")
	t.Run("unknown", func(t *testing.T) {
		// Backends fails (not skips) on a backend it does not know; run it
		// where that failure cannot fail this test.
		ft := &fakeTB{TB: t}
		func() {
			defer func() { recover() }()
			Backends(ft, All)
		}()
		if !ft.failed {
			t.Error("an unknown backend did not fail the test")
		}
	})
}

// fakeTB records a fatal failure instead of failing its test.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Fatal(args ...any) { f.failed = true; panic("fatal") }
func (f *fakeTB) Helper()           {}

// A long test runs only with LongVar=1; otherwise it is counted as long,
// neither as ran nor as skipped.
func TestLongRunsOnlyWhenAsked(t *testing.T) {
	t.Setenv(BackendVar, "cdp")
	t.Setenv(LongVar, "")
	before := Matrix()
	t.Run("soak", func(t *testing.T) {
		Backends(t, CDP)
		Long(t, "fault")
		t.Error("a long test ran without " + LongVar)
	})
	after := Matrix()
	if len(after.Long) != len(before.Long)+1 || len(after.Ran) != len(before.Ran) || len(after.Skipped) != len(before.Skipped) {
		t.Errorf("counts before %v, after %v: want one more long", before, after)
	}
	t.Setenv(LongVar, "1")
	ran := false
	t.Run("soakAsked", func(t *testing.T) {
		Backends(t, CDP)
		Long(t, "fault")
		ran = true
	})
	if !ran {
		t.Error("a long test did not run with " + LongVar + "=1")
	}
}
