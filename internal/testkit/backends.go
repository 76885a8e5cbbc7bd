package testkit

// The e2e test matrix lives in code: every e2e test's first statement is
// Backends(t, ...), naming the backends whose code the test proves, and a
// run of the suite drives one backend, named by CHROMEGATE_E2E_BACKEND
// (cdp when unset). A test not declared for the run's backend is skipped,
// saying which backends it runs on, and is counted as not run, never as a
// pass; Matrix tells, at the end of a run, how many tests ran (passed or
// failed), how many were not declared for the backend, were long, or
// skipped themselves.
//
// A long test (a soak, a sweep, a scale run) also calls Long: it runs only
// when LongVar is 1, which the make target named in its call sets, and is
// otherwise skipped and counted as long, not run.
//
// Backends never skips for a missing browser, driver or tool: a test
// declared for the run's backend meets its dependencies or fails under
// CI=true (the e2e suite's needBrowser and its kin).

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Backend is a set of the backends the e2e suite drives.
type Backend uint8

const (
	// CDP is a Chromium chromegate launches and drives over CDP (the default).
	CDP Backend = 1 << iota
	// Ext is chromegate's extension loaded into that browser and paired over
	// CDP, every call going through it.
	Ext
	// BrowserServer is a local `playwright run-server` joined with
	// --browser-endpoint.
	BrowserServer
	// CDPEndpoint is a bare Chromium attached with --cdp-endpoint.
	CDPEndpoint

	// Remote is both remote browsers.
	Remote = BrowserServer | CDPEndpoint
	// All is every backend.
	All = CDP | Ext | Remote
)

// BackendVar names the backend a run of the e2e suite drives.
const BackendVar = "CHROMEGATE_E2E_BACKEND"

// backendNames are the backends' names, as BackendVar spells them, in the
// order the matrix lists them.
var backendNames = []struct {
	b    Backend
	name string
}{{CDP, "cdp"}, {Ext, "ext"}, {BrowserServer, "browser-server"}, {CDPEndpoint, "cdp-endpoint"}}

// String lists the backends in b by name: "cdp, ext".
func (b Backend) String() string {
	var names []string
	for _, n := range backendNames {
		if b&n.b != 0 {
			names = append(names, n.name)
		}
	}
	if len(names) == 0 {
		return "no backend"
	}
	return strings.Join(names, ", ")
}

// ParseBackend is the backend named name ("" is cdp).
func ParseBackend(name string) (Backend, error) {
	if name == "" {
		return CDP, nil
	}
	for _, n := range backendNames {
		if n.name == name {
			return n.b, nil
		}
	}
	return 0, fmt.Errorf("%s=%q: not a backend (cdp, ext, browser-server, cdp-endpoint)", BackendVar, name)
}

// RunBackend is the backend this run drives, from BackendVar.
func RunBackend() (Backend, error) { return ParseBackend(os.Getenv(BackendVar)) }

// matrix counts the tests of this run by what became of them.
var matrix struct {
	mu                         sync.Mutex
	ran, skipped, notRun, long []string
}

// Backends declares the backends test t runs on (a union of the arguments)
// and skips t when this run's backend is not among them, counting it as not
// run. It is the first statement of every e2e test.
func Backends(t testing.TB, on ...Backend) {
	t.Helper()
	run, err := RunBackend()
	if err != nil {
		t.Fatal(err)
	}
	var set Backend
	for _, b := range on {
		set |= b
	}
	if set == 0 {
		t.Fatal("Backends: name at least one backend")
	}
	name := t.Name()
	if set&run == 0 {
		add(&matrix.notRun, name)
		t.Skipf("runs on %s; this run drives %s", set, run)
	}
	t.Cleanup(func() {
		if slices.Contains(Matrix().Long, name) {
			return
		}
		if t.Skipped() {
			add(&matrix.skipped, name)
		} else {
			add(&matrix.ran, name)
		}
	})
}

// LongVar, set to 1, runs the long tests.
const LongVar = "CHROMEGATE_E2E_LONG"

// Long marks t as a long test, which `make target` runs: without LongVar=1
// it is skipped and counted as long. It follows Backends.
func Long(t testing.TB, target string) {
	t.Helper()
	if os.Getenv(LongVar) == "1" {
		return
	}
	add(&matrix.long, t.Name())
	t.Skipf("a long test: `make %s` runs it (%s=1)", target, LongVar)
}

func add(list *[]string, name string) {
	matrix.mu.Lock()
	defer matrix.mu.Unlock()
	*list = append(*list, name)
}

// MatrixCounts are the tests of this run: those that ran (passed or
// failed), those not declared for its backend, the long ones left to their
// own target, and those declared for it that skipped themselves.
type MatrixCounts struct {
	Backend                    Backend
	Ran, NotRun, Long, Skipped []string
}

// Matrix is what became of this run's tests so far.
func Matrix() MatrixCounts {
	run, _ := RunBackend()
	matrix.mu.Lock()
	defer matrix.mu.Unlock()
	return MatrixCounts{Backend: run, Ran: slices.Sorted(slices.Values(matrix.ran)),
		NotRun: slices.Sorted(slices.Values(matrix.notRun)), Long: slices.Sorted(slices.Values(matrix.long)), Skipped: slices.Sorted(slices.Values(matrix.skipped))}
}

// String is the run's line of the matrix: "e2e on ext: 90 ran, 53 not
// declared for ext, 0 long (own targets), 0 skipped", with the skipped
// tests named.
func (m MatrixCounts) String() string {
	s := fmt.Sprintf("e2e on %s: %d ran, %d not declared for %s, %d long (own targets), %d skipped",
		m.Backend, len(m.Ran), len(m.NotRun), m.Backend, len(m.Long), len(m.Skipped))
	if len(m.Skipped) > 0 {
		s += " (" + strings.Join(m.Skipped, " ") + ")"
	}
	return s
}
