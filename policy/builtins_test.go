package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/chromegate/chromegate/policy/hostname"
)

// hostMatchCases prove the builtin is hostname.Match (whose own tests
// cover its semantics): exact, any depth of subdomain, an address in
// another spelling, a wildcard on an address, nothing.
var hostMatchCases = []struct {
	pattern, host string
	want          bool
}{
	{"example.com", "EXAMPLE.COM", true},
	{"example.com", "www.example.com", false},
	{"*.example.com", "a.b.c.example.com", true},
	{"*.example.com", "example.com", false},
	{"0x7f.1", "127.0.0.1", true},
	{"*", "127.0.0.1", false},
	{"", "example.com", false},
}

// regoValue evaluates expr with chromegate's builtins and capabilities and
// strict builtin errors; undefined is nil.
func regoValue(t *testing.T, expr string, input any) (any, error) {
	t.Helper()
	opts := append([]func(*rego.Rego){rego.Query("x := " + expr), rego.Capabilities(capabilities()),
		rego.StrictBuiltinErrors(true), rego.Input(input)}, regoFunctions()...)
	rs, err := rego.New(opts...).Eval(t.Context())
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return rs[0].Bindings["x"], nil
}

func TestHostMatchBuiltin(t *testing.T) {
	t.Parallel()
	for _, tt := range hostMatchCases {
		expr := fmt.Sprintf("chromegate.host_match(%q, %q)", tt.pattern, tt.host)
		got, err := regoValue(t, expr, nil)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got != tt.want {
			t.Errorf("%s = %v, want %v", expr, got, tt.want)
		}
	}
}

func TestHostMatchBuiltinTakesCollections(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]bool{
		`chromegate.host_match(["a.test", "*.example.com"], "x.example.com")`: true,
		`chromegate.host_match(["a.test", "*.example.com"], "b.test")`:        false,
		`chromegate.host_match({"a.test", "b.test"}, "b.test")`:               true,
		`chromegate.host_match([], "b.test")`:                                 false,
	} {
		got, err := regoValue(t, expr, nil)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got != want {
			t.Errorf("%s = %v, want %v", expr, got, want)
		}
	}
	for _, expr := range []string{
		`chromegate.host_match(["a.test", input.n], "b.test")`,
		`chromegate.host_match(input.n, "b.test")`,
		`chromegate.host_match("a", input.n)`,
	} {
		if _, err := regoValue(t, expr, map[string]any{"n": 7}); err == nil {
			t.Errorf("%s: no error for a non-string", expr)
		}
	}
}

// TestGlobMatchDiffers pins the difference documented in policies/README.md:
// Rego's glob.match treats * as one label.
func TestGlobMatchDiffers(t *testing.T) {
	t.Parallel()
	rs, err := rego.New(rego.Query(`x := glob.match("*.example.com", ["."], "a.b.example.com")`)).Eval(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if rs[0].Bindings["x"] != false {
		t.Fatalf("glob.match matched a.b.example.com; the README is out of date")
	}
	if !hostname.Match("*.example.com", "a.b.example.com") {
		t.Fatal("host_match does not match a.b.example.com")
	}
}

func TestParseURLBuiltin(t *testing.T) {
	t.Parallel()
	got, err := regoValue(t, `chromegate.parse_url("HTTP://0x7f.1:8080/a")`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"url": "http://127.0.0.1:8080/a", "scheme": "http", "host": "127.0.0.1", "port": json.Number("8080"), "ip_class": "loopback"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parse_url (-want +got):\n%s", diff)
	}
	if got, err := regoValue(t, `chromegate.parse_url("not a url")`, nil); err != nil || got != nil {
		t.Errorf("parse_url of an invalid URL = %v, %v; want undefined", got, err)
	}
	if _, err := regoValue(t, `chromegate.parse_url(input.n)`, map[string]any{"n": 7}); err == nil {
		t.Error("parse_url of a number: no error")
	}
}

func TestRemovedBuiltinsAreNotInCapabilities(t *testing.T) {
	t.Parallel()
	have := map[string]bool{}
	for _, b := range capabilities().Builtins {
		have[b.Name] = true
	}
	for name := range RemovedBuiltins {
		if have[name] {
			t.Errorf("%s is still in the capabilities", name)
		}
	}
	for _, name := range []string{HostMatchName, ParseURLName, "glob.match", "net.cidr_contains", "time.now_ns", "trace"} {
		if !have[name] {
			t.Errorf("%s is missing from the capabilities", name)
		}
	}
	if c := capabilities(); c.AllowNet == nil || len(c.AllowNet) != 0 {
		t.Errorf("AllowNet = %v, want empty (no network)", c.AllowNet)
	}
}

func TestEveryRemovedBuiltinRefusesToLoad(t *testing.T) {
	t.Parallel()
	calls := map[string]string{
		"http.send":          `http.send({"method": "get", "url": "http://169.254.169.254/"})`,
		"net.lookup_ip_addr": `net.lookup_ip_addr("example.com")`,
		"opa.runtime":        `opa.runtime()`,
		"net.cidr_expand":    `net.cidr_expand("10.0.0.0/8")`,
	}
	for name, call := range calls {
		dir := writeFiles(t, map[string]string{"policy.rego": "package chromegate\n\nx := " + call + "\n\ndecision := {\"allow\": count([x]) > 0, \"reasons\": []}\n"})
		_, err := New(context.Background(), WithDir(dir))
		if err == nil {
			t.Errorf("%s: policy loaded", name)
			continue
		}
		want := fmt.Sprintf("policy.rego:3:6: builtin %s is not available in chromegate policies", name)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q lacks %q", name, err, want)
		}
	}
}
