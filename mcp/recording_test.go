package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/mcp/record"
)

// TestRecordRedacts records calls that type a secret and plain text, and a
// denied one: the record has the reference, never a value or the typed
// text, and the denial with its reasons.
func TestRecordRedacts(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	rec := &Recorder{Root: root}
	h := secretHarness(t, "https://login.test/signin", func(o *Options) { o.Record = rec })
	h.call("type", map[string]any{"selector": "#user", "text": "alice-in-chains"})
	h.call("type", map[string]any{"selector": "#pw", "text": "<secret:PASSWORD>"})
	h.call("fill_form", map[string]any{"fields": []any{
		map[string]any{"selector": "#a", "value": "plain-field-text"},
		map[string]any{"selector": "#b", "value": "<secret:PASSWORD>"},
	}})
	if res := h.call("navigate", map[string]any{"url": "https://denied.test/"}); !res.IsError {
		t.Fatal("navigate off the allowlist was allowed")
	}
	if res := h.call("type", map[string]any{"selector": "#user", "text": "bad-args-text", "nope": 1}); !res.IsError {
		t.Fatal("an unknown argument was taken")
	}
	rec.Close()

	dir := record.SessionDir(root, LocalPrincipal.Name, DefaultSession)
	raw, err := os.ReadFile(filepath.Join(dir, record.CallsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{testSecret, "alice-in-chains", "plain-field-text", "bad-args-text"} {
		if strings.Contains(string(raw), bad) {
			t.Errorf("the record holds %q:\n%s", bad, raw)
		}
	}
	r, err := record.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, e := range r.Entries {
		tools = append(tools, e.Tool+":"+e.Decision)
	}
	// The harness's own navigate comes first.
	if got := strings.Join(tools, " "); got != "navigate:allow type:allow type:allow fill_form:allow navigate:deny type:error" {
		t.Fatalf("entries: %s", got)
	}
	if got := r.Entries[1].Args["text"]; got != "[redacted]" {
		t.Errorf("plain typed text recorded as %v", got)
	}
	if got := r.Entries[2].Args["text"]; got != "<secret:PASSWORD>" {
		t.Errorf("a secret reference recorded as %v", got)
	}
	fields := r.Entries[3].Args["fields"].([]any)
	if fields[0].(map[string]any)["value"] != "[redacted]" || fields[1].(map[string]any)["value"] != "<secret:PASSWORD>" {
		t.Errorf("fill_form fields recorded as %v", fields)
	}
	if d := r.Entries[4]; d.Code != "POLICY_DENIED" || len(d.Reasons) == 0 || !strings.Contains(strings.Join(d.Reasons, " "), "denied.test") {
		t.Errorf("denial recorded as %+v", d)
	}
	if e := r.Entries[5]; e.Code != "BAD_ARGS" || len(e.Args) != 0 {
		t.Errorf("refused arguments recorded as %+v", e)
	}
}

// TestRecordWriteErrorStopsQuietly removes the record under a running
// server: the calls go on, and the failure is logged once.
func TestRecordWriteErrorStopsQuietly(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	log, buf := bufLogger()
	h := newHarness(t, func(o *Options) { o.Record = &Recorder{Root: root}; o.Logger = log })
	h.call("navigate", map[string]any{"url": "https://a.test/"})
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if res := h.call("navigate", map[string]any{"url": "https://a.test/"}); res.IsError {
			t.Fatalf("a call failed because its record could not be written: %s", textOf(res))
		}
	}
	if n := strings.Count(buf.String(), "recording stops"); n != 1 {
		t.Errorf("the write error was logged %d times, want once:\n%s", n, buf.String())
	}
}
