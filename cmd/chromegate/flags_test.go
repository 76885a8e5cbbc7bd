package main

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policy"
)

func TestFlagsFromEnvironment(t *testing.T) {
	t.Setenv("CHROMEGATE_EXECUTABLE_PATH", "/from/env")
	t.Setenv("CHROMEGATE_HEADED", "true")
	t.Setenv("CHROMEGATE_ALLOW_DOMAIN", "a.test, *.b.test,")
	t.Setenv("CHROMEGATE_MAX_RESULT_CHARS", "500")

	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	cfg.browser.register(fs)
	cfg.policy.register(fs)
	fs.IntVar(&cfg.maxResultChars, "max-result-chars", 100, "")
	// The command line wins over the environment.
	if err := parseFlags(fs, []string{"--executable-path=/from/flag"}); err != nil {
		t.Fatal(err)
	}
	if cfg.browser.executablePath != "/from/flag" || !cfg.browser.headed || cfg.maxResultChars != 500 {
		t.Fatalf("parsed %+v, max %d", cfg.browser, cfg.maxResultChars)
	}
	if diff := cmp.Diff([]string{"a.test", "*.b.test"}, []string(cfg.policy.allowDomains)); diff != "" {
		t.Fatalf("allow-domain from the environment (-want +got):\n%s", diff)
	}
	want := map[string]any{"allow_domains": []string{"a.test", "*.b.test"}}
	if diff := cmp.Diff(want, cfg.policy.data()); diff != "" {
		t.Fatalf("policy data (-want +got):\n%s", diff)
	}
}

func TestFlagsBadEnvironmentValue(t *testing.T) {
	t.Setenv("CHROMEGATE_HEADED", "maybe")
	var b browserFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	b.register(fs)
	err := parseFlags(fs, nil)
	if err == nil || !strings.Contains(err.Error(), "CHROMEGATE_HEADED") {
		t.Fatalf("a bad value in the environment: %v", err)
	}
}

func TestCommandLine(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"nonsense"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "unknown command") {
		t.Fatalf("unknown command: code %d, %q", code, errb.String())
	}
	out.Reset()
	if code := run([]string{"version"}, nil, &out, &errb); code != 0 || !strings.Contains(out.String(), "playwright-core 1.60.0") {
		t.Fatalf("version: code %d, %q", code, out.String())
	}
	errb.Reset()
	if code := run([]string{"serve", "--no-such-flag"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "no-such-flag") {
		t.Fatalf("bad flag: code %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"serve", "--log-level=loud"}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "--log-level") {
		t.Fatalf("bad log level: code %d, %q", code, errb.String())
	}
}

// TestPolicyFlagsFeedData checks that each policy flag sets its data key
// only when given, so that a data file's value is not undone by a flag's
// default, and that the data does what the flag says in the default policy.
func TestPolicyFlagsFeedData(t *testing.T) {
	tests := []struct {
		args []string
		want map[string]any
	}{
		{nil, map[string]any{}},
		{[]string{"--strict-egress"}, map[string]any{"strict_egress": true}},
		{[]string{"--strict-egress=false"}, map[string]any{}},
		{[]string{"--asset-domain", "fonts.gstatic.com", "--asset-domain=*.cdn.test"}, map[string]any{"asset_domains": []string{"fonts.gstatic.com", "*.cdn.test"}}},
		{[]string{"--allow-domain", "a.test", "--enable-mutations", "--strict-egress", "--asset-domain", "cdn.test"}, map[string]any{
			"allow_domains": []string{"a.test"}, "enable_mutations": true, "strict_egress": true, "asset_domains": []string{"cdn.test"},
		}},
	}
	for _, tt := range tests {
		var p policyFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		p.register(fs)
		if err := parseFlags(fs, tt.args); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, p.data()); diff != "" {
			t.Errorf("%q: policy data (-want +got):\n%s", tt.args, diff)
		}
	}
}

func TestStrictEgressFlagsDecideRequests(t *testing.T) {
	var p policyFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	p.register(fs)
	if err := parseFlags(fs, []string{"--allow-domain", "docs.example.com", "--strict-egress", "--asset-domain", "*.cdn.test"}); err != nil {
		t.Fatal(err)
	}
	eng, err := policy.New(t.Context(), policy.WithData(p.data()), policy.WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string]bool{
		"https://docs.example.com/app.js": true,
		"https://a.cdn.test/lib.js":       true,
		"https://tracker.example.net/p":   false,
	} {
		in, err := policy.NewRequestInput(&egress.Request{URL: u, Method: "GET", ResourceType: "script", Via: "proxy"}, policy.Principal{})
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := eng.DecideRequest(t.Context(), in); d.Allow != want {
			t.Errorf("%s: %+v, want allow %v", u, d, want)
		}
	}
}

func TestStrictEgressFromEnvironment(t *testing.T) {
	t.Setenv("CHROMEGATE_STRICT_EGRESS", "true")
	t.Setenv("CHROMEGATE_ASSET_DOMAIN", "fonts.gstatic.com,*.cdn.test")
	var p policyFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	p.register(fs)
	if err := parseFlags(fs, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"strict_egress": true, "asset_domains": []string{"fonts.gstatic.com", "*.cdn.test"}}
	if diff := cmp.Diff(want, p.data()); diff != "" {
		t.Errorf("policy data (-want +got):\n%s", diff)
	}
}

// A bad value in the environment is reported, not swallowed.
func TestBadEnvironmentValueIsReported(t *testing.T) {
	t.Setenv("CHROMEGATE_HEADED", "maybe")
	var out, errb bytes.Buffer
	if code := run([]string{"serve"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "CHROMEGATE_HEADED") {
		t.Fatalf("code %d, stderr %q", code, errb.String())
	}
}
