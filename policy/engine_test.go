package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policies"
)

func navInput(t testing.TB, url string) Input {
	t.Helper()
	in, err := testInput(PhaseCall, "navigate", map[string]any{"url": url})
	if err != nil {
		t.Fatal(err)
	}
	in.Principal = Principal{Name: "test", Transport: "stdio"}
	return in
}

func readInput(t testing.TB, tool, page string) Input {
	t.Helper()
	in, err := testInput(PhaseCall, tool, nil)
	if err != nil {
		t.Fatal(err)
	}
	in.Page = NewPage(page)
	return in
}

// newEngine builds an engine whose deadline is a minute unless opts set
// one: on a loaded machine a 100ms wall-clock deadline turns a starved
// evaluation into a denial, which only the timeout test wants.
func newEngine(t testing.TB, opts ...Option) *Engine {
	t.Helper()
	e, err := New(context.Background(), append([]Option{WithTimeout(time.Minute)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// policyDir writes a one-file policy whose decision rule is body.
func policyDir(t *testing.T, body string) string {
	t.Helper()
	return writeFiles(t, map[string]string{"policy.rego": "package chromegate\n\n" + body + "\n"})
}

func wantPolicyError(t *testing.T, d Decision, contains string) {
	t.Helper()
	if d.Allow {
		t.Fatalf("allowed: %+v", d)
	}
	if len(d.Reasons) != 1 || !strings.HasPrefix(d.Reasons[0], "policy error: ") || !strings.Contains(d.Reasons[0], contains) {
		t.Fatalf("reasons = %q, want one policy error containing %q", d.Reasons, contains)
	}
}

func TestDefaultPolicyDecides(t *testing.T) {
	t.Parallel()
	e := newEngine(t, WithData(map[string]any{"allow_domains": []string{"allowed.test"}}))
	ctx := t.Context()
	if d := e.Decide(ctx, navInput(t, "https://allowed.test/")); !d.Allow || len(d.Reasons) != 0 {
		t.Errorf("allowed.test: %+v", d)
	}
	for _, u := range []string{"https://other.test/", "file:///etc/passwd", "chrome://settings", "javascript:alert(1)",
		"data:text/html,x", "http://127.0.0.1:8080/", "http://2130706433:8080/", "http://[::1]:8080/", "http://169.254.169.254/"} {
		d := e.Decide(ctx, navInput(t, u))
		if d.Allow || len(d.Reasons) == 0 || strings.HasPrefix(d.Reasons[0], "policy error") {
			t.Errorf("%s: %+v, want a denial with a reason", u, d)
		}
	}
	if d := e.Decide(ctx, readInput(t, "get_text", "https://other.test/")); d.Allow {
		t.Errorf("read on other.test allowed")
	}
	if d := e.Decide(ctx, readInput(t, "screenshot", "about:blank")); !d.Allow {
		t.Errorf("screenshot of about:blank denied: %+v", d)
	}
}

func TestFailClosed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	tests := []struct {
		name, body, contains string
	}{
		{"undefined", `decision := {"allow": true, "reasons": []} if input.tool == "chrome_status"`, "undefined"},
		// The shapes below are wrong only for navigate: a policy that is
		// wrong for every input does not load at all (TestLoadErrors).
		{"evaluation error", `decision := {"allow": x, "reasons": []} if { input.tool == "navigate"; x := 1 / 0 }
decision := {"allow": true, "reasons": []} if input.tool != "navigate"`, "divide by zero"},
		{"builtin error", `decision := {"allow": true, "reasons": []} if { input.tool == "chrome_status" }
decision := {"allow": to_number(input.tool) > 0, "reasons": []} if input.tool != "chrome_status"`, "to_number"},
		{"conflict", `decision := {"allow": true, "reasons": []}
decision := {"allow": false, "reasons": []} if input.tool == "navigate"`, "conflict"},
		{"non-boolean allow", `decision := {"allow": "yes", "reasons": []} if input.tool == "navigate"
decision := {"allow": true} if input.tool != "navigate"`, "allow is not a boolean"},
		{"missing allow", `decision := {"reasons": []} if input.tool == "navigate"
decision := {"allow": true} if input.tool != "navigate"`, "allow is not a boolean"},
		{"non-object", `decision := true if input.tool == "navigate"
decision := {"allow": true} if input.tool != "navigate"`, "is not an object"},
		{"bad reasons", `decision := {"allow": false, "reasons": [1]} if input.tool == "navigate"
decision := {"allow": true} if input.tool != "navigate"`, "reasons holds a non-string"},
		{"reasons not a list", `decision := {"allow": true, "reasons": "fine"} if input.tool == "navigate"
decision := {"allow": true} if input.tool != "navigate"`, "reasons is not an array"},
		{"bad hints", `decision := {"allow": true, "reasons": [], "hints": {"a": 1}} if input.tool == "navigate"
decision := {"allow": true} if input.tool != "navigate"`, "hints is not an array"},
		{"timeout", `decision := {"allow": count(slow) > 0, "reasons": []}
slow contains i * j if {
	input.tool == "navigate"
	some i in numbers.range(1, 20000)
	some j in numbers.range(1, 20000)
	i * j == -1
}`, "ran out of time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEngine(t, WithDir(policyDir(t, tt.body)), WithTimeout(50*time.Millisecond))
			wantPolicyError(t, e.Decide(ctx, navInput(t, "https://example.com/")), tt.contains)
		})
	}
}

func TestDenyWithoutReasonGetsOne(t *testing.T) {
	t.Parallel()
	e := newEngine(t, WithDir(policyDir(t, `decision := {"allow": false}`)))
	if d := e.Decide(t.Context(), navInput(t, "https://example.com/")); d.Allow || !slicesEqual(d.Reasons, []string{"denied by policy"}) {
		t.Errorf("decision = %+v", d)
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func TestNilEngineAndCancelledContextDeny(t *testing.T) {
	t.Parallel()
	var e *Engine
	wantPolicyError(t, e.Decide(t.Context(), navInput(t, "https://example.com/")), "no policy engine")

	e = newEngine(t, WithData(map[string]any{"all_domains": true}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	wantPolicyError(t, e.Decide(ctx, navInput(t, "https://example.com/")), "cancelled")
}

func TestInvalidArgsDeny(t *testing.T) {
	t.Parallel()
	e := newEngine(t, WithData(map[string]any{"all_domains": true}))
	in := navInput(t, "https://example.com/")
	in.Args = map[string]any{"x": make(chan int)}
	wantPolicyError(t, e.Decide(t.Context(), in), "input")
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"http.send", map[string]string{"p.rego": "package chromegate\n\nimport rego.v1\n\ndecision := {\"allow\": r.status_code == 200, \"reasons\": []} if {\n\tr := http.send({\"method\": \"get\", \"url\": \"http://169.254.169.254/\"})\n}\n"},
			"p.rego:6:7: builtin http.send is not available in chromegate policies: it reaches the network"},
		{"syntax", map[string]string{"p.rego": "package chromegate\n\ndecision := {\n"}, "p.rego:4:"},
		{"no decision", map[string]string{"p.rego": "package chromegate\n\nallow := true\n"}, "no rule defines data.chromegate.decision"},
		{"no rego", map[string]string{"data.json": "{}"}, "no .rego files"},
		{"bad data", map[string]string{"p.rego": "package chromegate\n\ndecision := {\"allow\": true}\n", "data.json": "{"}, "data.json: invalid data"},
		{"data not an object", map[string]string{"p.rego": "package chromegate\n\ndecision := {\"allow\": true}\n", "data.json": "[]"}, "data must be a JSON object"},
		{"data conflict", map[string]string{"p.rego": "package chromegate\n\ndecision := {\"allow\": true}\n", "data.json": `{"a": {"b": 1}}`, "a/data.json": `{"b": 2}`}, "data.a.b is set by more than one data file"},
		{"error on every input", map[string]string{"p.rego": "package chromegate\n\ndecision := {\"allow\": 1 / 0 > 0}\n"}, "evaluating a chrome_status listing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeFiles(t, tt.files)
			_, err := New(t.Context(), WithDir(dir))
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a *LoadError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := New(t.Context(), WithDir(filepath.Join(t.TempDir(), "missing"))); err == nil {
		t.Error("missing dir: no error")
	}
	if _, err := New(t.Context(), WithTimeout(0)); err == nil {
		t.Error("zero timeout: no error")
	}
}

func TestPolicyFilesLoadedRecursivelyTestsAndHiddenSkipped(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"main.rego":            "package chromegate\n\nimport data.chromegate.lib\n\ndecision := {\"allow\": lib.ok, \"reasons\": [data.team.name]}\n",
		"lib/lib.rego":         "package chromegate.lib\n\nok := input.tool == data.team.tool\n",
		"team/data.json":       `{"name": "blue", "tool": "navigate"}`,
		"main_test.rego":       "package chromegate_test\n\nx := 1 / 0\n",
		".git/broken.rego":     "not rego at all",
		"input.example.json":   `["not data"]`,
		"notes/readme.md":      "# notes",
		"lib/.hidden/bad.rego": "nope",
	})
	e := newEngine(t, WithDir(dir))
	d := e.Decide(t.Context(), navInput(t, "https://example.com/"))
	if !d.Allow || !slicesEqual(d.Reasons, []string{"blue"}) {
		t.Errorf("decision = %+v", d)
	}
}

func TestDataLayers(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"p.rego":    "package chromegate\n\ndecision := {\"allow\": true, \"reasons\": [json.marshal({\"d\": data.allow_domains, \"m\": data.enable_mutations, \"x\": data.extra})]}\n",
		"data.json": `{"allow_domains": ["a.test"], "enable_mutations": true, "extra": {"k": 1, "keep": true}}`,
	})
	dataFile := filepath.Join(t.TempDir(), "team.json")
	if err := os.WriteFile(dataFile, []byte(`{"allow_domains": ["b.test", "a.test"], "extra": {"k": 2}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, WithDir(dir), WithDataFile(dataFile),
		WithData(map[string]any{"allow_domains": []string{"c.test"}}),
		WithData(map[string]any{"enable_mutations": false}))
	d := e.Decide(t.Context(), navInput(t, "https://example.com/"))
	want := `{"d":["a.test","b.test","c.test"],"m":false,"x":{"k":2,"keep":true}}`
	if !d.Allow || len(d.Reasons) != 1 || d.Reasons[0] != want {
		t.Errorf("data = %v, want %s", d.Reasons, want)
	}
	if _, err := New(t.Context(), WithDataFile(filepath.Join(t.TempDir(), "nope.json"))); err == nil {
		t.Error("missing data file: no error")
	}
}

func TestAllDomainsIsLoggedAndReported(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	e := newEngine(t, WithData(map[string]any{"all_domains": true}), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if !e.Status().AllDomains {
		t.Error("Status().AllDomains is false")
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "all_domains is on") {
		t.Errorf("no warning logged: %s", logs.String())
	}
}

// TestConcurrentDecisions runs 100 goroutines of mixed decisions while the
// policy is reloaded between two versions: every decision must come whole
// from one version, never from a half-loaded one, and never fail.
func TestConcurrentDecisions(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"p.rego":    "package chromegate\n\ndecision := {\"allow\": input.tool in data.tools, \"reasons\": [data.version]}\n",
		"data.json": `{"version": "v1", "tools": ["navigate", "get_text"]}`,
	})
	// newEngine's deadline is generous: this test is about whole
	// decisions, and under -race with a reload loop beside it one
	// evaluation can take longer than the default 100ms of wall time.
	e := newEngine(t, WithDir(dir))
	ctx := t.Context()
	nav, read, click := navInput(t, "https://example.com/"), readInput(t, "get_text", "https://example.com/"), readInput(t, "click", "https://example.com/")

	stop := make(chan struct{})
	var reloads sync.WaitGroup
	reloads.Add(1)
	go func() {
		defer reloads.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v := fmt.Sprintf(`{"version": "v%d", "tools": ["navigate", "get_text"]}`, i%2+1)
			if err := os.WriteFile(filepath.Join(dir, "data.json"), []byte(v), 0o644); err != nil {
				t.Error(err)
				return
			}
			if err := e.Reload(ctx); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var wg sync.WaitGroup
	for g := 0; g < 100; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				for _, c := range []struct {
					in    Input
					allow bool
				}{{nav, true}, {read, true}, {click, false}} {
					d := e.Decide(ctx, c.in)
					if d.Allow != c.allow || len(d.Reasons) != 1 || (d.Reasons[0] != "v1" && d.Reasons[0] != "v2") {
						t.Errorf("%s: %+v", c.in.Tool, d)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	reloads.Wait()
	if e.Status().Revision < 2 {
		t.Errorf("revision %d: no reload happened", e.Status().Revision)
	}
}

func TestReloadKeepsOldPolicyWhenNewIsBroken(t *testing.T) {
	t.Parallel()
	dir := policyDir(t, `decision := {"allow": true, "reasons": ["v1"]}`)
	e := newEngine(t, WithDir(dir))
	ctx := t.Context()
	st := e.Status()
	if st.Source != filepath.Clean(dir) || st.Revision != 1 || st.LastError != "" || st.LoadedAt.IsZero() {
		t.Fatalf("status = %+v", st)
	}
	broken := "package chromegate\n\ndecision := {\"allow\": http.send({\"url\": \"http://x\", \"method\": \"get\"}).status_code == 200}\n"
	if err := os.WriteFile(filepath.Join(dir, "policy.rego"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	err := e.Reload(ctx)
	if err == nil || !strings.Contains(err.Error(), "policy.rego:3:") {
		t.Fatalf("Reload = %v, want an error with file:line", err)
	}
	if d := e.Decide(ctx, navInput(t, "https://example.com/")); !d.Allow || d.Reasons[0] != "v1" {
		t.Errorf("after a broken reload: %+v, want the old policy", d)
	}
	st = e.Status()
	if st.Revision != 1 || !strings.Contains(st.LastError, "http.send is not available") {
		t.Errorf("status = %+v", st)
	}

	if err := os.WriteFile(filepath.Join(dir, "policy.rego"), []byte("package chromegate\n\ndecision := {\"allow\": false, \"reasons\": [\"v2\"]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if d := e.Decide(ctx, navInput(t, "https://example.com/")); d.Allow || d.Reasons[0] != "v2" {
		t.Errorf("after a good reload: %+v", d)
	}
	if st := e.Status(); st.Revision != 2 || st.LastError != "" {
		t.Errorf("status = %+v", st)
	}
}

func TestWatchReloadsOnChange(t *testing.T) {
	t.Parallel()
	dir := policyDir(t, `decision := {"allow": true, "reasons": ["v1"]}`)
	dataFile := filepath.Join(t.TempDir(), "extra.json")
	if err := os.WriteFile(dataFile, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, WithDir(dir), WithDataFile(dataFile))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		e.Watch(ctx, 10*time.Millisecond)
		close(done)
	}()
	waitRevision := func(rev int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for e.Status().Revision < rev {
			if time.Now().After(deadline) {
				t.Fatalf("revision %d never came: %+v", rev, e.Status())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// A new file (the directory's listing changes, whatever the mtimes).
	if err := os.WriteFile(filepath.Join(dir, "more.rego"), []byte("package chromegate\n\nx := 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitRevision(2)
	// The data file changes size.
	if err := os.WriteFile(dataFile, []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	waitRevision(3)
	cancel()
	<-done
}

func TestWatchOfEmbeddedPolicyReturnsOnCancel(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	e.Watch(ctx, 5*time.Millisecond)
	if e.Status().Revision != 1 || e.Status().Source != DefaultSource {
		t.Errorf("status = %+v", e.Status())
	}
}

func TestWithFSLoadsEachExample(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"ci-agent", "security-team", "desktop"} {
		sub, err := fsSub(policies.Examples, name)
		if err != nil {
			t.Fatal(err)
		}
		e := newEngine(t, WithFS("examples/"+name, sub))
		st := e.decideStatus(t)
		if !st.Allow {
			t.Errorf("%s: chrome_status denied: %+v", name, st)
		}
	}
}

func (e *Engine) decideStatus(t *testing.T) Decision {
	in, _ := testInput(PhaseCall, "chrome_status", nil)
	in.Principal = Principal{Name: "x", Transport: "stdio"}
	return e.Decide(t.Context(), in)
}

func TestHintAndDeniedError(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	ctx := t.Context()
	in := navInput(t, "https://other.test/")
	d := e.Decide(ctx, in)
	if got := Hint(d, in); !strings.Contains(got, "--allow-domain other.test") {
		t.Errorf("Hint = %q", got)
	}
	err := DeniedError(d, in)
	if err == nil || err.Code != executor.CodePolicyDenied || !strings.Contains(err.Message, "other.test is not allowed") || !strings.Contains(err.Hint, "--allow-domain") {
		t.Errorf("DeniedError = %#v", err)
	}
	if !errors.Is(err, &executor.Error{Code: executor.CodePolicyDenied}) {
		t.Error("DeniedError is not POLICY_DENIED to errors.Is")
	}
	ok := e.Decide(ctx, navInput(t, "about:blank"))
	if DeniedError(ok, in) != nil || Hint(ok, in) != "" {
		t.Error("an allowed decision has an error or a hint")
	}

	// A policy without hints: Hint guesses from the input.
	for _, tt := range []struct {
		tool, page, want string
	}{
		{"eval", "https://example.com/", "--unsafe-enable-eval"},
		{"download_file", "https://example.com/", "--enable-downloads"},
		{"click", "https://example.com/", "--enable-mutations"},
		{"get_text", "https://example.com/", "--allow-domain example.com"},
		{"get_text", "chrome://settings", "ask the operator"},
	} {
		in := readInput(t, tt.tool, tt.page)
		if got := Hint(Decision{Reasons: []string{"no"}}, in); !strings.Contains(got, tt.want) {
			t.Errorf("Hint(%s on %s) = %q, want %q", tt.tool, tt.page, got, tt.want)
		}
	}
	if got := Hint(denyError("boom"), in); !strings.Contains(got, "chrome_status") {
		t.Errorf("Hint for a policy error = %q", got)
	}
	if err := DeniedError(Decision{}, in); err.Message != "denied by policy" {
		t.Errorf("DeniedError without reasons = %q", err.Message)
	}
}

func fsSub(fsys fs.FS, dir string) (fs.FS, error) { return fs.Sub(fsys, dir) }

func TestDecideDocument(t *testing.T) {
	t.Parallel()
	e := newEngine(t, WithData(map[string]any{"allow_domains": []string{"example.com"}}))
	var doc any
	b, _ := json.Marshal(navInput(t, "https://example.com/"))
	_ = json.Unmarshal(b, &doc)
	if d := e.DecideDocument(t.Context(), doc); !d.Allow {
		t.Errorf("document of an allowed navigation: %+v", d)
	}
	if d := e.DecideDocument(t.Context(), map[string]any{"version": 1}); d.Allow || len(d.Reasons) == 0 {
		t.Errorf("partial document: %+v", d)
	}
	wantPolicyError(t, e.DecideDocument(t.Context(), map[string]any{"x": make(chan int)}), "input")
	var nilEngine *Engine
	wantPolicyError(t, nilEngine.DecideDocument(t.Context(), doc), "no policy engine")
}
