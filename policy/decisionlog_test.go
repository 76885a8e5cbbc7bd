package policy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOpenDecisionLogMode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "decisions.jsonl")
	w, err := OpenDecisionLog(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o, want 0600", info.Mode().Perm())
	}
	// Reopening appends.
	w, err = OpenDecisionLog(p)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte("{}\n"))
	_ = w.Close()
	if b, _ := os.ReadFile(p); string(b) != "{}\n{}\n" {
		t.Errorf("log = %q, want two lines", b)
	}

	loose := filepath.Join(dir, "loose.jsonl")
	if err := os.WriteFile(loose, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDecisionLog(loose); err == nil || !strings.Contains(err.Error(), "mode is 0644") {
		t.Errorf("0644 file: err = %v", err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDecisionLog(link); err == nil {
		t.Error("symlink: no error")
	}
	if _, err := OpenDecisionLog(dir); err == nil {
		t.Error("directory: no error")
	}
}

// TestDecisionLogLinesAndNoSecrets decides calls full of secrets, from many
// goroutines, and checks that the log has one well-formed line per decision
// and none of the secrets.
func TestDecisionLogLinesAndNoSecrets(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "decisions.jsonl")
	w, err := OpenDecisionLog(p)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// A careless custom policy that quotes arguments in its reasons.
	dir := writeFiles(t, map[string]string{"p.rego": `package chromegate

decision := {"allow": false, "reasons": [sprintf("no %v", [input.args])]} if input.tool == "eval"

decision := {"allow": input.tool != "type", "reasons": []} if input.tool != "eval"
`})
	e := newEngine(t, WithDir(dir), WithDecisionLog(w), WithTimeout(10e9))
	ctx := t.Context()

	secrets := []string{"hunter2-typed-text", "cookie-value-0xdeadbeef", "clipboard-secret-text", "document.cookie + 'EVALSECRET'", "s3cr3t-fill"}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"type", map[string]any{"selector": "#pw", "text": secrets[0]}},
		{"cookies_set", map[string]any{"cookies": []any{map[string]any{"name": "sid", "value": secrets[1], "domain": "example.com"}}}},
		{"clipboard_write", map[string]any{"text": secrets[2]}},
		{"eval", map[string]any{"expression": secrets[3]}},
		{"fill", map[string]any{"ref": "e3", "value": secrets[4]}},
	}
	const rounds = 20
	var wg sync.WaitGroup
	for i := 0; i < rounds; i++ {
		for _, c := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				in, err := testInput(PhaseCall, c.tool, c.args)
				if err != nil {
					t.Error(err)
					return
				}
				in.Page = NewPage("https://example.com/login?session=abc")
				in.Principal = Principal{Name: "alice", Transport: "http"}
				e.Decide(ctx, in)
			}()
		}
	}
	wg.Wait()

	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("the decision log contains %q", s)
		}
	}
	if !bytes.Contains(b, []byte(HashSecret(secrets[3]))) {
		t.Errorf("the eval source is not even hashed in the quoted reason:\n%s", b)
	}
	if bytes.Contains(b, []byte("session=abc")) {
		t.Error("the decision log contains a page URL")
	}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		lines++
		var e LogEntry
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("line %d: %v: %s", lines, err, sc.Bytes())
		}
		if e.Principal != "alice" || e.Phase != "call" || e.PageHost != "example.com" || e.Time.IsZero() || e.Reasons == nil {
			t.Errorf("line %d: %+v", lines, e)
		}
		if (e.Tool == "type" || e.Tool == "eval") == e.Allow {
			t.Errorf("line %d: %+v", lines, e)
		}
	}
	if want := rounds * len(calls); lines != want {
		t.Errorf("%d lines, want one per decision (%d)", lines, want)
	}
}

func TestDecisionLogFields(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	e := newEngine(t, WithDecisionLog(&buf))
	in := navInput(t, "https://other.test/a?token=x")
	in.Principal = Principal{Name: "ci", Roles: []string{"ci"}, Transport: "stdio"}
	e.Decide(t.Context(), in)
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	for _, k := range []string{"time", "phase", "principal", "transport", "tool", "action", "target_host", "page_host", "allow", "reasons", "eval_us"} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %q in %s", k, buf.Bytes())
		}
	}
	if got["target_host"] != "other.test" || got["allow"] != false || strings.Contains(buf.String(), "token=x") {
		t.Errorf("line = %s", buf.Bytes())
	}
	if _, ok := got["args"]; ok {
		t.Error("args in the decision log")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestDecisionLogWriteFailureIsLoggedNotFatal(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	e := newEngine(t, WithDecisionLog(failingWriter{}), WithLogger(newTextLogger(&logs)))
	if d := e.Decide(t.Context(), navInput(t, "about:blank")); !d.Allow {
		t.Errorf("decision = %+v", d)
	}
	if !strings.Contains(logs.String(), "decision log write failed") {
		t.Errorf("logs = %s", logs.String())
	}
}

func newTextLogger(w *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// TestScreenLogsOnlyDenials: a screen (may the model be shown this tab?)
// is Decide's decision, but an allowed one is not a call and stays out of
// the decision log.
func TestScreenLogsOnlyDenials(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "decisions.jsonl")
	w, err := OpenDecisionLog(p)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	dir := writeFiles(t, map[string]string{"p.rego": `package chromegate

decision := {"allow": input.target.host == "ok.test", "reasons": ["host"]}
`})
	e := newEngine(t, WithDir(dir), WithDecisionLog(w))
	screen := func(u string) bool {
		in, err := testInput(PhaseCall, "get_text", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		if in, err = in.Landed(u); err != nil {
			t.Fatal(err)
		}
		return e.Screen(t.Context(), in).Allow
	}
	if !screen("https://ok.test/a") || screen("https://evil.test/b") {
		t.Fatal("Screen decided otherwise than the policy")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `"evil.test"`) || !strings.Contains(lines[0], `"allow":false`) {
		t.Errorf("decision log after an allowed and a denied screen:\n%s", data)
	}
}
