package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor/egress"
)

// TestRotatingLog: the log rotates before a line would take it past the
// size, never splits a line, keeps the newest old files as FILE.1..keep
// with mode 0600, and refuses a symlink at the path as OpenDecisionLog does.
func TestRotatingLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "decisions.jsonl")
	r, err := OpenRotatingDecisionLog(p, 100, 2)
	if err != nil {
		t.Fatal(err)
	}
	line := func(i int) []byte {
		return fmt.Appendf(nil, "{\"line\":\"%03d\",\"pad\":\"%s\"}\n", i, strings.Repeat("x", 14))
	} // 35 bytes
	for i := range 20 {
		if _, err := r.Write(line(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// 35-byte lines, two to a 100-byte file: 20 lines end in three files
	// of 2 (lines 14-15, 16-17, 18-19); the rest were rotated away.
	want := map[string]string{p + ".2": "014 015", p + ".1": "016 017", p: "018 019"}
	for f, lines := range want {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var v struct{ Line string }
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%s: a split or broken line %q: %v", f, l, err)
			}
			got = append(got, v.Line)
		}
		if strings.Join(got, " ") != lines {
			t.Errorf("%s holds lines %v, want %s", f, got, lines)
		}
		if info, _ := os.Stat(f); info.Mode().Perm() != DecisionLogMode {
			t.Errorf("%s: mode %04o", f, info.Mode().Perm())
		}
		if info, _ := os.Stat(f); info.Size() > 100 {
			t.Errorf("%s: %d bytes, over the size", f, info.Size())
		}
	}
	if _, err := os.Stat(p + ".3"); !os.IsNotExist(err) {
		t.Errorf("a third old file was kept: %v", err)
	}
	if _, err := r.Write(line(0)); err == nil {
		t.Error("a write after Close succeeded")
	}

	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRotatingDecisionLog(link, 100, 2); err == nil {
		t.Error("a symlink was opened as the decision log")
	}
}

// denialInput is a request the policy denies: host is its target.
func denialInput(session, host string) Input {
	in, err := NewRequestInput(&egress.Request{URL: "http://" + host + "/x", Method: "GET", ResourceType: "fetch", Via: "route", Session: session},
		Principal{Name: "local"})
	if err != nil {
		panic(err)
	}
	return in
}

type logLine struct {
	Phase      string     `json:"phase"`
	Session    string     `json:"session"`
	TargetHost string     `json:"target_host"`
	Allow      bool       `json:"allow"`
	Count      int        `json:"count"`
	Until      *time.Time `json:"until"`
}

func readLines(t *testing.T, b []byte) []logLine {
	t.Helper()
	var out []logLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var v logLine
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, v)
	}
	return out
}

// TestDenialsAggregated: a page that repeats a denied request a thousand
// times in a window leaves two lines (the first, then one with the count
// of the rest), per session and host; call decisions stay a line each;
// the counts are written when the window ends and on close; and a page
// that asks for a new host each time is counted together past the cap.
func TestDenialsAggregated(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var timers []func()
	l := &decisionLog{w: &buf, denials: denials{window: DenialWindow, after: func(_ time.Duration, f func()) { timers = append(timers, f) }}}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	deny := Decision{Reasons: []string{"request to a denied host"}}
	for i := range 1000 {
		at := t0.Add(time.Duration(i) * 5 * time.Millisecond) // 5 s
		for _, k := range []struct{ session, host string }{{"a", "evil.test"}, {"a", "other.test"}, {"b", "evil.test"}} {
			if err := l.write(at, denialInput(k.session, k.host), deny, nil); err != nil {
				t.Fatal(err)
			}
		}
		if i%100 == 0 {
			l.write(at, Input{Version: InputVersion, Phase: PhaseCall, Tool: "snapshot", Action: ActionRead, Principal: Principal{Name: "local"}}, Decision{Allow: true}, nil)
		}
	}
	lines := readLines(t, buf.Bytes())
	if len(lines) != 3+10 {
		t.Fatalf("within the window: %d lines, want the 3 first denials and 10 calls:\n%s", len(lines), buf.String())
	}
	l.flushDue(t0.Add(DenialWindow))
	lines = readLines(t, buf.Bytes())
	if len(lines) != 3+10+3 {
		t.Fatalf("after the window: %d lines, want 3 more with counts:\n%s", len(lines), buf.String())
	}
	for _, c := range lines[13:] {
		if c.Count != 999 || c.Until == nil || c.Phase != PhaseRequest || c.Allow {
			t.Errorf("a window's line: %+v, want count 999 with until", c)
		}
	}
	if len(timers) != 3 {
		t.Errorf("%d timers scheduled, want one per window", len(timers))
	}

	// A new window after the last: the first is a line again, the rest
	// are written on close.
	buf.Reset()
	t1 := t0.Add(time.Minute)
	for i := range 5 {
		l.write(t1.Add(time.Duration(i)*time.Millisecond), denialInput("a", "evil.test"), deny, nil)
	}
	l.close()
	lines = readLines(t, buf.Bytes())
	if len(lines) != 2 || lines[0].Count != 0 || lines[1].Count != 4 {
		t.Errorf("close: %+v, want the first denial and a line of 4", lines)
	}

	// A new host each time: at most maxDenialWindows kinds are told apart.
	buf.Reset()
	l2 := &decisionLog{w: &buf, denials: denials{window: DenialWindow, after: func(time.Duration, func()) {}}}
	for i := range 10 * maxDenialWindows {
		l2.write(t0.Add(time.Duration(i)*time.Microsecond), denialInput("a", fmt.Sprintf("h%d.evil.test", i)), deny, nil)
	}
	l2.close()
	lines = readLines(t, buf.Bytes())
	if len(lines) > maxDenialWindows+2 {
		t.Errorf("%d lines for %d denials of distinct hosts, want at most %d", len(lines), 10*maxDenialWindows, maxDenialWindows+2)
	}
	total := 0
	for _, c := range lines {
		total += max(c.Count, 1)
	}
	if total != 10*maxDenialWindows {
		t.Errorf("the lines count %d denials, want %d", total, 10*maxDenialWindows)
	}
}

// TestDenialsConcurrentAndRedacted: denials from many goroutines through a
// redacting writer (as the vault's) are counted exactly, and every line,
// the counted ones too, goes through the writer.
func TestDenialsConcurrentAndRedacted(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := redactWriter{w: &buf, secret: "10.9.8.7", with: "[REDACTED]"}
	eng, err := New(t.Context(), WithDecisionLog(w))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				eng.DecideRequest(t.Context(), denialInput("a", "10.9.8.7")) // private: denied
			}
		})
	}
	wg.Wait()
	eng.Close()
	lines := readLines(t, buf.Bytes())
	total := 0
	for _, c := range lines {
		total += max(c.Count, 1)
		if c.TargetHost != "[REDACTED]" {
			t.Errorf("a line not through the writer: %+v", c)
		}
	}
	if total != 800 || len(lines) != 2 {
		t.Errorf("%d lines counting %d denials, want 2 counting 800:\n%s", len(lines), total, buf.String())
	}
}

// redactWriter stands in for vault.Writer: it replaces secret in each line.
type redactWriter struct {
	w            *bytes.Buffer
	secret, with string
}

func (r redactWriter) Write(p []byte) (int, error) {
	r.w.WriteString(strings.ReplaceAll(string(p), r.secret, r.with))
	return len(p), nil
}
