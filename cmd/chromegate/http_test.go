package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJoinHTTPArg(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"--http", "127.0.0.1:7890", "--lazy"}, []string{"--http=127.0.0.1:7890", "--lazy"}},
		{[]string{"--http", "--lazy"}, []string{"--http", "--lazy"}},
		{[]string{"-http", ":8080"}, []string{"-http=:8080"}},
		{[]string{"--http=[::1]:1"}, []string{"--http=[::1]:1"}},
		{[]string{"--", "--http", "a:1"}, []string{"--", "--http", "a:1"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, joinHTTPArg(tc.in)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, diff)
		}
	}
	var a addrFlag
	if err := a.Set("true"); err != nil || a.v != "127.0.0.1:7890" {
		t.Errorf("--http alone: %q %v", a.v, err)
	}
	if err := a.Set("nonsense"); err == nil {
		t.Error("--http=nonsense accepted")
	}
}

// TestKeysCommand: the key is printed once, on stdout, and never again;
// list shows names and settings; revoke removes it.
func TestKeysCommand(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"keys", "create", "ci-bot", "--role", "ci", "--allow-tools", "get_*,snapshot", "--allow-tools", "!eval", "--rate", "30/min", "--data-dir", dir}, nil, &out, &errb)
	key := strings.TrimSpace(out.String())
	if code != 0 || !strings.HasPrefix(key, "cgk_") || strings.Contains(errb.String(), key) {
		t.Fatalf("create: code %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	b, err := os.ReadFile(filepath.Join(dir, "keys.json"))
	if err != nil || bytes.Contains(b, []byte(key)) {
		t.Fatalf("keys.json: %v %s", err, b)
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"keys", "list", "--data-dir", dir}, nil, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "ci-bot") || !strings.Contains(out.String(), "get_*,snapshot,!eval") || !strings.Contains(out.String(), "30/min") || strings.Contains(out.String(), "cgk_") {
		t.Fatalf("list: code %d %q %q", code, out.String(), errb.String())
	}
	if code := run([]string{"keys", "create", "ci-bot", "--data-dir", dir}, nil, &out, &errb); code != 1 {
		t.Errorf("a second key of the same name: code %d", code)
	}
	if code := run([]string{"keys", "create", "x", "--rate", "lots", "--data-dir", dir}, nil, &out, &errb); code != 1 {
		t.Errorf("a bad rate: code %d", code)
	}
	out.Reset()
	if code := run([]string{"keys", "revoke", "ci-bot", "--data-dir", dir}, nil, &out, &errb); code != 0 {
		t.Fatalf("revoke: code %d %q", code, errb.String())
	}
	if code := run([]string{"keys", "list", "--json", "--data-dir", dir}, nil, &out, &errb); code != 0 || strings.TrimSpace(out.String()) != "[]" {
		t.Errorf("list after revoke: %q", out.String())
	}
	if code := run([]string{"keys", "revoke", "ci-bot", "--data-dir", dir}, nil, &out, &errb); code != 1 {
		t.Errorf("revoke twice: code %d", code)
	}
}

// TestServeRemoteNeedsKeys: a non-loopback --http needs --allow-remote and
// a key; nothing is served otherwise.
func TestServeRemoteNeedsKeys(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--http", "0.0.0.0:0", "--lazy", "--isolated", "--data-dir", dir}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "--allow-remote") {
		t.Errorf("without --allow-remote: code %d %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"serve", "--http", "0.0.0.0:0", "--allow-remote", "--lazy", "--isolated", "--data-dir", dir}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "needs at least one key") {
		t.Errorf("without keys: code %d %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"serve", "--http", "--no-mcp-http", "--no-rest", "--lazy", "--isolated", "--data-dir", dir}, nil, &out, &errb); code != 1 || !strings.Contains(errb.String(), "nothing to serve") {
		t.Errorf("nothing to serve: code %d %q", code, errb.String())
	}
}
