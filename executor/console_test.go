package executor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConsoleRingBoundsCountAndSize(t *testing.T) {
	t.Parallel()
	r := NewConsoleRing(3)
	big := strings.Repeat("é", MaxConsoleText) // 2 bytes a rune: twice the cap
	for i := range 5 {
		r.Add(ConsoleMessage{Level: LevelLog, Text: big, Stack: strings.Repeat("s", 10*MaxConsoleStack), Nav: 1, TimeMs: int64(i)})
	}
	ms, dropped := r.List(1, 1)
	if len(ms) != 3 || dropped != 2 {
		t.Fatalf("kept %d, dropped %d; want 3 and 2", len(ms), dropped)
	}
	for _, m := range ms {
		if len(m.Text) > MaxConsoleText || len(m.Stack) > MaxConsoleStack {
			t.Fatalf("message of %d text and %d stack bytes kept", len(m.Text), len(m.Stack))
		}
		if m.TextBytes != len(big) || !strings.HasPrefix(big, m.Text) || !strings.HasSuffix(m.Text, "é") {
			t.Fatalf("text cut badly: %d bytes, whole %d", len(m.Text), m.TextBytes)
		}
	}
	if got := []string{ms[0].ID, ms[1].ID, ms[2].ID}; !cmp.Equal(got, []string{"3", "4", "5"}) {
		t.Errorf("ids %v, want the newest three", got)
	}
}

func TestConsoleRingMillion(t *testing.T) {
	t.Parallel()
	r := NewConsoleRing(0)
	for i := range 1_000_000 {
		r.Add(ConsoleMessage{Text: "flood", Nav: 1, TimeMs: int64(i)})
	}
	ms, dropped := r.List(1, 1)
	if len(ms) != MaxConsoleEntries || dropped != 1_000_000-MaxConsoleEntries || cap(r.ring) > 4*MaxConsoleEntries {
		t.Fatalf("kept %d (capacity %d), dropped %d", len(ms), cap(r.ring), dropped)
	}
}

func TestConsoleRingGenerations(t *testing.T) {
	t.Parallel()
	r := NewConsoleRing(0)
	for nav := 0; nav <= 12; nav++ {
		r.Add(ConsoleMessage{Text: "m", Nav: nav})
	}
	ms, _ := r.List(12, 1)
	if len(ms) != 1 || ms[0].Nav != 12 {
		t.Fatalf("since the last navigation: %+v", ms)
	}
	ms, _ = r.List(12, 3)
	if len(ms) != 3 || ms[0].Nav != 10 {
		t.Fatalf("the last three: %+v", ms)
	}
	// Generations no listing can reach are let go.
	ms, _ = r.List(12, 100)
	if len(ms) != MaxConsoleNavigations || ms[0].Nav != 12-MaxConsoleNavigations+1 {
		t.Fatalf("at most %d generations: got %d from %d", MaxConsoleNavigations, len(ms), ms[0].Nav)
	}
	// A navigation with nothing logged yet lists nothing.
	if ms, _ := r.List(13, 1); len(ms) != 0 {
		t.Fatalf("a new page's log: %+v", ms)
	}
}

func TestBoundConsoleRedactsURLs(t *testing.T) {
	t.Parallel()
	m := BoundConsole(ConsoleMessage{URL: "https://u:p@a.test/x.js", Page: "https://u:p@a.test/"})
	if m.URL != "https://a.test/x.js" || m.Page != "https://a.test/" {
		t.Errorf("userinfo kept: %+v", m)
	}
}

func TestConsoleLevel(t *testing.T) {
	t.Parallel()
	for typ, want := range map[string]string{
		"log": LevelLog, "debug": LevelDebug, "info": LevelInfo, "warning": LevelWarn, "error": LevelError,
		"assert": LevelError, "trace": LevelLog, "table": LevelLog, "": LevelLog,
	} {
		if got := ConsoleLevel(typ); got != want {
			t.Errorf("ConsoleLevel(%q) = %q, want %q", typ, got, want)
		}
	}
}

func TestStackLocation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		stack     string
		url       string
		line, col int
	}{
		{"Error: boom\n    at f (http://a.test:8080/app.js:12:7)\n    at http://a.test/b.js:1:1", "http://a.test:8080/app.js", 12, 7},
		{"Error: x\n    at http://a.test/p?q=1:3:9", "http://a.test/p?q=1", 3, 9},
		{"Error: x\n    at new Foo (<anonymous>)", "", 0, 0},
		{"no frames", "", 0, 0},
		{"at 0(:0:1)", "", 0, 0},
		{"", "", 0, 0},
	}
	for _, tt := range tests {
		u, l, c := StackLocation(tt.stack)
		if u != tt.url || l != tt.line || c != tt.col {
			t.Errorf("StackLocation(%q) = %q %d %d, want %q %d %d", tt.stack, u, l, c, tt.url, tt.line, tt.col)
		}
	}
}

func FuzzStackLocation(f *testing.F) {
	f.Add("Error: boom\n    at f (http://a.test/app.js:12:7)")
	f.Add("at ::")
	f.Add("at (a:1:2")
	f.Fuzz(func(t *testing.T, s string) {
		u, l, c := StackLocation(s)
		if u == "" && (l != 0 || c != 0) && !strings.Contains(s, "at :") {
			t.Fatalf("a location without a URL from %q", s)
		}
	})
}

// BenchmarkConsoleRingAdd is what one console message costs the event
// handler: a short one, and one cut from 10 MB.
func BenchmarkConsoleRingAdd(b *testing.B) {
	huge := strings.Repeat("x", 10<<20)
	for _, bc := range []struct {
		name string
		text string
	}{{"short", "flood 12345"}, {"10MB", huge}} {
		b.Run(bc.name, func(b *testing.B) {
			r := NewConsoleRing(0)
			for i := 0; b.Loop(); i++ {
				r.Add(ConsoleMessage{Level: LevelLog, Text: bc.text, URL: "https://a.test/app.js", Page: "https://a.test/", Nav: 1})
			}
		})
	}
}
