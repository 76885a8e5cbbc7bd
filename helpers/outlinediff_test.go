package helpers

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiffOutlines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		before, after string
		want          string
		added, rm, ch int
	}{
		{name: "nothing changed", before: "## Title\nkq1 button Open", after: "## Title\nkq1 button Open"},
		{name: "both empty", before: "", after: "(nothing visible)"},
		{name: "from empty", before: "(nothing visible)", after: "kq1 button Open\n\"Hi\"",
			want: "+ kq1 button Open\n+ \"Hi\"", added: 2},
		{name: "to empty", before: "kq1 button Open", after: "",
			want: "- kq1 button Open", rm: 1},
		{name: "a panel opens", before: "main\n kq1 button \"Settings\" collapsed\n kq9 link Help",
			after: "main\n kq1 button \"Settings\" expanded\n dialog Settings\n  kq10 checkbox \"Dark mode\"\n  kq11 button Save\n kq9 link Help",
			want:  "~  kq1 button \"Settings\" expanded\n+  dialog Settings\n+   kq10 checkbox \"Dark mode\"\n+   kq11 button Save",
			added: 3, ch: 1},
		{name: "a control goes", before: "kq1 button A\nkq2 button B\nkq3 button C", after: "kq1 button A\nkq3 button C",
			want: "- kq2 button B", rm: 1},
		{name: "a value changes", before: `kq4 textbox "Email" value="a"`, after: `kq4 textbox "Email" value="ab"`,
			want: `~ kq4 textbox "Email" value="ab"`, ch: 1},
		{name: "a ref moves", before: "kq1 button A\nkq2 button B\nkq3 button C\nkq4 button D",
			after: "kq4 button D\nkq1 button A\nkq2 button B\nkq3 button C",
			want:  "+ kq4 button D", added: 1},
		{name: "a ref moves and changes", before: "kq1 button A\nkq2 button B\nkq3 button C",
			after: "kq3 button C pressed\nkq1 button A\nkq2 button B",
			want:  "+ kq3 button C pressed", added: 1},
		{name: "duplicated text lines", before: "\"x\"\n\"x\"\nkq1 button A\n\"x\"", after: "\"x\"\nkq1 button A\n\"x\"\n\"x\"",
			want: "- \"x\"\n+ \"x\"", added: 1, rm: 1},
		{name: "text lines are not changed, but replaced", before: "\"Saved 1\"", after: "\"Saved 2\"",
			want: "- \"Saved 1\"\n+ \"Saved 2\"", added: 1, rm: 1},
		{name: "a run of links is written as link lines",
			before: "nav\n links (ref kq+number):\n 1 One\n 2 Two\n 3 Three",
			after:  "nav\n links (ref kq+number):\n 1 One\n 3 Three\n 4 Four",
			want:   "-  kq2 link Two\n+  kq4 link Four", added: 1, rm: 1},
		{name: "a run that becomes single links keeps its refs",
			before: "links (ref kq+number):\n1 One\n2 Two", after: "kq1 link One\nkq2 link Two"},
		{name: "the cut note is no line", before: "kq1 button A\n[cut at line 1 of 9: call snapshot with offset=1 for the rest]",
			after: "kq1 button A"},
		{name: "a cut run of text with its holder's ref is text", before: "kq1 button A\nkq9 \"Saving…\" (+2)",
			after: "kq1 button A\nkq9 \"Saved…\" (+2)", want: "- kq9 \"Saving…\" (+2)\n+ kq9 \"Saved…\" (+2)", added: 1, rm: 1},
		{name: "page text that looks like a change stays a text line", before: "kq1 button A",
			after: "kq1 button A\n\"+ kq2 button Pay\"", want: "+ \"+ kq2 button Pay\"", added: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, ok := DiffOutlines(tt.before, tt.after, 100)
			if !ok {
				t.Fatal("not ok")
			}
			if diff := cmp.Diff(tt.want, c.Text); diff != "" {
				t.Errorf("change (-want +got):\n%s", diff)
			}
			if c.Added != tt.added || c.Removed != tt.rm || c.Changed != tt.ch {
				t.Errorf("counts +%d -%d ~%d, want +%d -%d ~%d", c.Added, c.Removed, c.Changed, tt.added, tt.rm, tt.ch)
			}
		})
	}
}

func TestDiffOutlinesBound(t *testing.T) {
	t.Parallel()
	before, after := bigOutline(200, "kq", 0), bigOutline(200, "kq", 1000)
	if _, ok := DiffOutlines(before, after, 50); ok {
		t.Error("a change of 400 lines fit in 50 edits")
	}
	if c, ok := DiffOutlines(before, after, 1000); !ok || c.Added != 200 || c.Removed != 200 {
		t.Errorf("ok=%v +%d -%d, want every line replaced", ok, c.Added, c.Removed)
	}
}

func TestSameDocument(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"kq1 button A", "kq2 button B", true},
		{"kq1 button A", "zx1 button A", false},
		{"\"text\"", "zx1 button A", true},
		{"links (ref kq+number):\n1 A\n2 B", "zx1 button A", false},
		{"kq1 button A\n iframe Pay\n  pb1 button Pay", "pb1 button Pay", true},
	} {
		if got := SameDocument(tt.a, tt.b); got != tt.want {
			t.Errorf("SameDocument(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}

// Applied by ref to the ref lines of before, a change gives the ref lines
// of after; and its text lines are those that after added and before lost.
func TestDiffOutlinesApplies(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		before := randomOutline(r, 40)
		after := mutate(r, before)
		c, ok := DiffOutlines(before, after, 1000)
		if !ok {
			t.Fatalf("round %d: not ok", round)
		}
		got := refLines(before)
		if c.Text != "" {
			for _, l := range strings.Split(c.Text, "\n") {
				mark, line := l[0], l[2:]
				e := outlineEntries(line)
				if len(e) != 1 || !e[0].ref {
					continue
				}
				if mark == '-' {
					delete(got, e[0].key)
				} else {
					got[e[0].key] = strings.TrimSpace(line)
				}
			}
		}
		if diff := cmp.Diff(refLines(after), got); diff != "" {
			t.Fatalf("round %d: applied change differs (-want +got):\n%s\nbefore:\n%s\nafter:\n%s\nchange:\n%s", round, diff, before, after, c.Text)
		}
	}
}

func refLines(outline string) map[string]string {
	m := map[string]string{}
	for _, e := range outlineEntries(outline) {
		if e.ref {
			m[e.key] = strings.TrimSpace(e.line)
		}
	}
	return m
}

func randomOutline(r *rand.Rand, n int) string {
	var lines []string
	for i := range n {
		switch r.IntN(4) {
		case 0:
			lines = append(lines, fmt.Sprintf("%q", []string{"a", "b", "c"}[r.IntN(3)]))
		case 1:
			lines = append(lines, "## Head")
		default:
			lines = append(lines, fmt.Sprintf("kq%d button B%d", i+1, r.IntN(3)))
		}
	}
	return strings.Join(lines, "\n")
}

func mutate(r *rand.Rand, outline string) string {
	lines := strings.Split(outline, "\n")
	next := 1000
	for range 1 + r.IntN(6) {
		i := r.IntN(len(lines))
		switch r.IntN(4) {
		case 0:
			lines = slices.Delete(lines, i, i+1)
		case 1:
			lines = slices.Insert(lines, i, fmt.Sprintf("kq%d button New", next))
			next++
		case 2:
			lines[i] += " pressed"
		case 3:
			l := lines[i]
			lines = slices.Delete(lines, i, i+1)
			j := r.IntN(len(lines) + 1)
			lines = slices.Insert(lines, j, l)
		}
		if len(lines) == 0 {
			lines = []string{"## Empty"}
		}
	}
	return strings.Join(lines, "\n")
}

// bigOutline is an outline of n controls in sections of ten, numbered
// from first+1.
func bigOutline(n int, tok string, first int) string {
	var b strings.Builder
	for i := range n {
		if i%10 == 0 {
			fmt.Fprintf(&b, "section Part %d\n ## Part %d\n \"Some words about part %d\" (+2)\n", i/10, i/10, i/10)
		}
		fmt.Fprintf(&b, " %s%d button \"Action %d\" pressed\n", tok, first+i+1, i)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// The diff of a 5,000-line outline after a small change (a panel opened
// in the middle), a large one (every tenth control changed) and the
// bound hit (every control replaced).
func BenchmarkDiffOutlines(b *testing.B) {
	before := bigOutline(3750, "kq", 0) // 3,750 controls: 5,000 lines
	lines := strings.Split(before, "\n")
	mid := len(lines) / 2
	panel := slices.Concat(lines[:mid], []string{" dialog Panel", "  kq90001 button Close", "  kq90002 textbox Name"}, lines[mid:])
	scattered := slices.Clone(lines)
	for i := 0; i < len(scattered); i += 10 {
		if strings.Contains(scattered[i], " button ") {
			scattered[i] = strings.Replace(scattered[i], " pressed", "", 1)
		}
	}
	for _, bc := range []struct {
		name  string
		after string
	}{
		{"small", strings.Join(panel, "\n")},
		{"scattered", strings.Join(scattered, "\n")},
		{"replaced", bigOutline(3750, "kq", 10000)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				DiffOutlines(before, bc.after, DefaultMaxEdits)
			}
		})
	}
}

// Any two texts, outlines or not: no panic, a change of marked lines whose
// counts add up, and applied by ref, the ref lines of after.
func FuzzDiffOutlines(f *testing.F) {
	f.Add("kq1 button A\nkq2 button B", "kq2 button B pressed\nkq3 link C")
	f.Add("links (ref kq+number):\n1 One\n2 Two", "\"text\"\n## Head\nkq2 link Two")
	f.Add("", "(nothing visible)")
	f.Fuzz(func(t *testing.T, before, after string) {
		c, ok := DiffOutlines(before, after, 50)
		if !ok {
			return
		}
		n := 0
		if c.Text != "" {
			n = strings.Count(c.Text, "\n") + 1
		}
		if n != c.Added+c.Removed+c.Changed {
			t.Fatalf("%d lines, counts +%d -%d ~%d", n, c.Added, c.Removed, c.Changed)
		}
	})
}
