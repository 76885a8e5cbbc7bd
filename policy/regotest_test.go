package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTestRunsDefaultPolicyTestsWithCoverage(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	passed, failed, err := Test(t.Context(), nil, &out, true)
	if err != nil {
		t.Fatal(err)
	}
	if failed > 0 || passed < 40 {
		t.Errorf("passed %d, failed %d:\n%s", passed, failed, out.String())
	}
	for _, want := range []string{"PASS  policies/default/chromegate_test.rego:", "coverage: 100.0%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestTestReportsFailuresAndBuiltins(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"p.rego": "package chromegate\n\ndecision := {\"allow\": chromegate.host_match(\"*.example.com\", input.host), \"reasons\": []}\n",
		"p_test.rego": `package chromegate_test

import data.chromegate as p

test_subdomain_allowed if p.decision.allow with input as {"host": "a.b.example.com"}

test_apex_allowed if p.decision.allow with input as {"host": "example.com"}
`,
	})
	var out bytes.Buffer
	passed, failed, err := Test(t.Context(), []string{dir}, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	if passed != 1 || failed != 1 {
		t.Errorf("passed %d failed %d, want 1 and 1:\n%s", passed, failed, out.String())
	}
	if !strings.Contains(out.String(), "FAIL  "+filepath.Join(dir, "p_test.rego")+":7: data.chromegate_test.test_apex_allowed") {
		t.Errorf("failure not reported with file:line:\n%s", out.String())
	}
	if strings.Contains(out.String(), "coverage") {
		t.Errorf("coverage printed without being asked:\n%s", out.String())
	}
}

func TestTestRefusesBrokenPolicy(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{
		"p.rego": "package chromegate\n\ndecision := http.send({\"method\": \"get\", \"url\": \"http://169.254.169.254/\"})\n",
	})
	_, _, err := Test(t.Context(), []string{dir}, &bytes.Buffer{}, false)
	if err == nil || !strings.Contains(err.Error(), "p.rego:3:") || !strings.Contains(err.Error(), "http.send is not available") {
		t.Fatalf("err = %v, want the removed builtin named with file:line", err)
	}
}
