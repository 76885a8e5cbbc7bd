package e2e

// The official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in testdata/conformance/package-lock.json and installed by `make
// conformance-deps`) against `chromegate serve --http` on loopback, with no
// key, at each revision chromegate serves over one /mcp endpoint.
//
// The rule: every check the suite runs passes, except those named in
// testdata/conformance/expected-failures.yml (the suite's own baseline
// format, `- scenario:check-id  # reason`), which may list only checks that
// need the suite's own fixtures (its test_* tools, prompts and test://
// resources, or capabilities chromegate does not declare), each with its
// reason. A listed check that no longer fails is a failure too (a stale
// entry), and so is one that no revision ran. A FAILURE or a WARNING (a
// SHOULD) fails, as in the suite's own baseline check; SKIPPED is "not
// testable" and counts as neither.

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// conformanceDir holds the suite's package.json, its lock file, the Node 20
// shim and the expected failures.
const conformanceDir = "testdata/conformance"

// conformanceRevisions are the protocol revisions the suite is run at: the
// two current ones, and 2025-06-18, which clients still speak.
var conformanceRevisions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// shimMarker is what shim-globsync.mjs leaves in the suite's dist/index.js.
const shimMarker = "chromegate: globSync shim"

// needConformance returns the suite's CLI (dist/index.js) and the node that
// runs it; it fails in CI, and skips elsewhere, when either is missing, the
// installed suite is not the pinned version, or the CLI was installed
// without its Node 20 shim.
func needConformance(t *testing.T) (node, cli string) {
	t.Helper()
	pkg := filepath.Join(conformanceDir, "node_modules", "@modelcontextprotocol", "conformance")
	cli, err := filepath.Abs(filepath.Join(pkg, "dist", "index.js"))
	var src []byte
	if err == nil {
		src, err = os.ReadFile(cli)
	}
	if err == nil && !bytes.Contains(src, []byte(shimMarker)) {
		err = fmt.Errorf("%s is not patched by shim-globsync.mjs", cli)
	}
	if err == nil {
		var pinned struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		var installed struct {
			Version string `json:"version"`
		}
		err = cmp.Or(readJSONFile(filepath.Join(conformanceDir, "package.json"), &pinned), readJSONFile(filepath.Join(pkg, "package.json"), &installed))
		if want := pinned.Dependencies["@modelcontextprotocol/conformance"]; err == nil && installed.Version != want {
			err = fmt.Errorf("the installed suite is %s, package.json pins %s", installed.Version, want)
		}
	}
	if err == nil {
		node, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the conformance suite cannot run: %v (CI installs it with `make deps`)", err)
		}
		t.Skipf("the conformance suite cannot run: %v (run `make conformance-deps`)", err)
	}
	return node, cli
}

func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// expectedFailure is one entry of expected-failures.yml.
type expectedFailure struct {
	scenario, check, reason string
	line                    int
}

func (e expectedFailure) String() string { return e.scenario + ":" + e.check }

// readExpectedFailures parses the suite's baseline file, as far as this
// test writes it: a `server:` list of `scenario:check-id` entries, each
// followed on its line by a `# reason`. (The suite reads the same file with
// a YAML parser, so an entry this parser and the suite read differently
// shows as a disagreement between the two verdicts.)
func readExpectedFailures(t *testing.T, path string) []expectedFailure {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []expectedFailure
	inServer := false
	entry := regexp.MustCompile(`^  - ([a-z0-9-]+):([A-Za-z0-9_-]+)\s+#\s*(\S.*)$`)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch trimmed := strings.TrimSpace(line); {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case line == "server:":
			inServer = true
		case inServer && strings.HasPrefix(line, "  - "):
			m := entry.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("%s:%d: want `  - scenario:check-id  # reason`, got %q", path, n, line)
			}
			out = append(out, expectedFailure{scenario: m[1], check: m[2], reason: m[3], line: n})
		default:
			t.Fatalf("%s:%d: unexpected line %q", path, n, line)
		}
	}
	seen := map[string]int{}
	for _, e := range out {
		if prev, dup := seen[e.String()]; dup {
			t.Fatalf("%s:%d: %s is listed already on line %d", path, e.line, e, prev)
		}
		seen[e.String()] = e.line
	}
	return out
}

// conformanceCheck is one entry of a scenario's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, SKIPPED, INFO
	Description  string `json:"description"`
	ErrorMessage string `json:"errorMessage"`
}

// statusRank orders a check's statuses when a scenario reports one id more
// than once: the worst counts (as the suite's baseline check does).
var statusRank = map[string]int{"FAILURE": 3, "WARNING": 2, "SUCCESS": 1, "SKIPPED": 0}

func failing(status string) bool { return status == "FAILURE" || status == "WARNING" }

// notTestable says whether a check could not be exercised on this server:
// skipped, or failed with the suite's "Not testable:" (a fixture missing;
// such a check still fails unless it is listed).
func notTestable(c conformanceCheck) bool {
	return c.Status == "SKIPPED" || strings.HasPrefix(c.ErrorMessage, "Not testable")
}

// resultDir is the name the suite gives a scenario's results directory:
// server-SCENARIO-TIMESTAMP, the timestamp an ISO time with : and . as -.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

var suiteTotal = regexp.MustCompile(`Total: \d+ passed, \d+ failed`)

var runningScenario = regexp.MustCompile(`(?m)^=== Running scenario: (\S+) ===$`)

// readConformanceResults reads every scenario's checks.json under dir: by
// scenario, by check id, the worst status of that id.
func readConformanceResults(t *testing.T, dir string) map[string]map[string]conformanceCheck {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("the suite wrote no results: %v", err)
	}
	results := map[string]map[string]conformanceCheck{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			t.Fatalf("unexpected entry in the suite's results: %s", e.Name())
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if _, dup := results[m[1]]; dup {
			t.Fatalf("scenario %s has two results directories", m[1])
		}
		byID := map[string]conformanceCheck{}
		for _, c := range checks {
			if c.Status == "INFO" {
				continue
			}
			if _, known := statusRank[c.Status]; !known {
				t.Fatalf("%s: check %s has an unknown status %q", m[1], c.ID, c.Status)
			}
			if prev, ok := byID[c.ID]; !ok || statusRank[c.Status] >= statusRank[prev.Status] {
				byID[c.ID] = c
			}
		}
		results[m[1]] = byID
	}
	return results
}

// TestConformance runs the official MCP conformance suite against the built
// binary over HTTP at 2025-06-18, 2025-11-25 and 2026-07-28: every scenario
// on that revision's timeline (`--suite all --spec-version REV`: the
// revision's required set and its pending scenarios; extensions chromegate
// does not declare, such as tasks, are not run), each check judged against
// expected-failures.yml.
func TestConformance(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	node, cli := needConformance(t)
	baseline := filepath.Join(conformanceDir, "expected-failures.yml")
	expected := readExpectedFailures(t, baseline)
	baselineAbs, err := filepath.Abs(baseline)
	if err != nil {
		t.Fatal(err)
	}

	// ran[entry] says whether some revision ran the entry's scenario.
	ran := map[string]bool{}
	for _, rev := range conformanceRevisions {
		t.Run(rev, func(t *testing.T) {
			// A server per revision: the suite's client never ends the
			// 2025 sessions it opens (no DELETE), and one revision's ~25
			// would leave the next too few of the 32 a key may hold.
			h := startHTTP(t, t.TempDir())
			url := h.url + "/mcp"
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, cli, "server", "--url", url,
				"--suite", "all", "--spec-version", rev, "--expected-failures", baselineAbs, "-o", out)
			cmd.Dir = conformanceDir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("the suite did not finish: %v\n%s\n%s", ctx.Err(), tail(stdout.String(), 4000), stderr.String())
			}
			var exitErr *exec.ExitError
			if runErr != nil && !errors.As(runErr, &exitErr) {
				t.Fatalf("running the suite: %v", runErr)
			}

			results := readConformanceResults(t, out)
			var announced []string
			for _, m := range runningScenario.FindAllStringSubmatch(stdout.String(), -1) {
				announced = append(announced, m[1])
			}
			if len(announced) == 0 {
				t.Fatalf("the suite ran no scenario:\n%s\n%s", tail(stdout.String(), 4000), stderr.String())
			}
			for _, s := range announced {
				if results[s] == nil {
					t.Errorf("scenario %s ran but left no checks.json", s)
				}
			}

			listed := map[string]expectedFailure{}
			for _, e := range expected {
				listed[e.String()] = e
			}
			var passed, failed, untestable, expectedFailed int
			var unexpected, stale []string
			for _, scenario := range slices.Sorted(maps.Keys(results)) {
				for _, id := range slices.Sorted(maps.Keys(results[scenario])) {
					c := results[scenario][id]
					key := scenario + ":" + id
					switch {
					case notTestable(c):
						untestable++
					case failing(c.Status):
						failed++
					default:
						passed++
					}
					if !failing(c.Status) {
						continue
					}
					if _, ok := listed[key]; ok {
						expectedFailed++
					} else {
						unexpected = append(unexpected, fmt.Sprintf("%s %s: %s", key, c.Status, cmp.Or(c.ErrorMessage, c.Description)))
					}
				}
			}
			for _, e := range expected {
				checks := results[e.scenario]
				if checks == nil {
					continue // a scenario of another revision
				}
				ran[e.String()] = true
				if c, ok := checks[e.check]; !ok {
					stale = append(stale, fmt.Sprintf("%s (line %d): scenario %s ran without this check", e, e.line, e.scenario))
				} else if !failing(c.Status) {
					stale = append(stale, fmt.Sprintf("%s (line %d): %s now (%s): remove it", e, e.line, c.Status, e.reason))
				}
			}

			t.Logf("%s: %d scenarios, distinct checks: passed %d, failed %d, not testable %d; %d of the failing and not testable are expected (the suite's fixtures); the suite's own count (FAILURE only, repeats counted): %s",
				rev, len(results), passed, failed, untestable, expectedFailed, cmp.Or(suiteTotal.FindString(stdout.String()), "none printed"))
			for _, u := range unexpected {
				t.Errorf("failing check not in %s: %s", baseline, u)
			}
			for _, s := range stale {
				t.Errorf("stale entry in %s: %s", baseline, s)
			}
			if runErr != nil && len(unexpected) == 0 && len(stale) == 0 {
				t.Errorf("the suite's own baseline check failed (%v) where this test found nothing:\n%s\n%s", runErr, tail(stdout.String(), 6000), stderr.String())
			}
			if t.Failed() {
				t.Logf("the suite's output:\n%s\n%s", tail(stdout.String(), 6000), stderr.String())
			}
		})
	}
	if t.Failed() {
		return
	}
	for _, e := range expected {
		if !ran[e.String()] {
			t.Errorf("stale entry in %s: %s (line %d): no revision ran scenario %s", baseline, e, e.line, e.scenario)
		}
	}
}
