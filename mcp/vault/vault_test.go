package vault

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const pw = `s3cr&t "pass"/word+1`

func mustVault(t *testing.T) *Vault {
	t.Helper()
	v, err := New(map[string]string{"PASSWORD": pw, "TOKEN": "tok-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseRefs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    []Part
		wantErr bool
	}{
		{"", nil, false},
		{"plain text", []Part{{Text: "plain text"}}, false},
		{"<secret:PASSWORD>", []Part{{Secret: "PASSWORD"}}, false},
		{"user <secret:USER> pw <secret:PW_2>!", []Part{{Text: "user "}, {Secret: "USER"}, {Text: " pw "}, {Secret: "PW_2"}, {Text: "!"}}, false},
		{"<secret:>", []Part{{Text: "<secret:"}}, false},
		{"<secret:>X>", []Part{{Text: "<secret:X>"}}, false},
		{"<<secret:A>", []Part{{Text: "<"}, {Secret: "A"}}, false},
		{"a < b, secret: c, <secret", []Part{{Text: "a < b, secret: c, <secret"}}, false},
		{"<SECRET:A>", []Part{{Text: "<SECRET:A>"}}, false},
		{"<secret:A><secret:A>", []Part{{Secret: "A"}, {Secret: "A"}}, false},
		{"<secret:A", nil, true},
		{"<secret:1A>", nil, true},
		{"<secret:A B>", nil, true},
		{"<secret:A-B>", nil, true},
		{"ok <secret:", nil, true},
	}
	for _, tt := range tests {
		got, err := ParseRefs(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseRefs(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" && !tt.wantErr {
			t.Errorf("ParseRefs(%q) (-want +got):\n%s", tt.in, diff)
		}
		var re *RefError
		if err != nil && !errors.As(err, &re) {
			t.Errorf("ParseRefs(%q) error %T, want *RefError", tt.in, err)
		}
	}
}

// FuzzParseRefs: ParseRefs never panics; what it accepts, written back in
// reference syntax, parses to the same parts; literal text without
// "<secret:" is returned as it is.
func FuzzParseRefs(f *testing.F) {
	for _, s := range []string{"", "x", "<secret:A>", "<secret:>", "a<secret:B_1>b<secret:>c", "<secret:", "<<secret:A>>", "<secret:é>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, err := ParseRefs(s)
		if err != nil {
			if !strings.Contains(s, RefOpen) {
				t.Fatalf("ParseRefs(%q) failed without a reference: %v", s, err)
			}
			return
		}
		var b strings.Builder
		for i, p := range parts {
			if (p.Text == "") == (p.Secret == "") {
				t.Fatalf("part %d of %q is neither text nor a secret: %+v", i, s, p)
			}
			if p.Secret != "" {
				if !ValidName(p.Secret) {
					t.Fatalf("invalid name %q from %q", p.Secret, s)
				}
				b.WriteString(Shown(p.Secret))
				continue
			}
			b.WriteString(strings.ReplaceAll(p.Text, RefOpen, RefOpen+">"))
		}
		again, err := ParseRefs(b.String())
		if err != nil {
			t.Fatalf("re-written %q does not parse: %v", b.String(), err)
		}
		if diff := cmp.Diff(parts, again); diff != "" {
			t.Fatalf("round trip of %q via %q (-first +second):\n%s", s, b.String(), diff)
		}
		if !strings.Contains(s, RefOpen) && (len(parts) > 1 || len(parts) == 1 && parts[0].Text != s) {
			t.Fatalf("text without references changed: %q → %+v", s, parts)
		}
	})
}

func TestExpandAndRefs(t *testing.T) {
	t.Parallel()
	v := mustVault(t)
	got, names, err := v.Expand("u=<secret:TOKEN>&p=<secret:PASSWORD>&q=<secret:>&r=<secret:TOKEN>")
	if err != nil {
		t.Fatal(err)
	}
	if want := "u=tok-0123456789&p=" + pw + "&q=<secret:&r=tok-0123456789"; got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	if diff := cmp.Diff([]string{"TOKEN", "PASSWORD"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	_, err = v.Refs("<secret:NOPE>")
	var unknown *UnknownError
	if !errors.As(err, &unknown) || unknown.Name != "NOPE" {
		t.Fatalf("Refs of an undeclared name: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "PASSWORD, TOKEN") || strings.Contains(msg, pw) {
		t.Errorf("unknown-name error %q should list the names and no value", msg)
	}
	var none *Vault
	if _, err := none.Refs("<secret:X>"); err == nil || !strings.Contains(err.Error(), "no secrets are declared") {
		t.Errorf("nil vault: %v", err)
	}
}

func TestNewRefusesShortValuesAndBadNames(t *testing.T) {
	t.Parallel()
	_, err := New(map[string]string{"PIN": "1234"})
	if err == nil || !strings.Contains(err.Error(), "at least 8") || strings.Contains(err.Error(), "1234") {
		t.Errorf("short value: %v", err)
	}
	if _, err := New(map[string]string{"1X": "long enough value"}); err == nil {
		t.Error("a name starting with a digit was accepted")
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	v := mustVault(t)
	jsonEsc, _ := json.Marshal(pw)
	forms := map[string]string{
		"plain":       pw,
		"query":       url.QueryEscape(pw),
		"path":        url.PathEscape(pw),
		"json":        strings.Trim(string(jsonEsc), `"`),
		"html":        html.EscapeString(pw),
		"base64":      base64.StdEncoding.EncodeToString([]byte(pw)),
		"base64url":   base64.RawURLEncoding.EncodeToString([]byte(pw)),
		"form-body":   "user=me&password=" + url.QueryEscape(pw) + "&x=1",
		"json-body":   `{"password":` + string(jsonEsc) + `}`,
		"attribute":   `<input data-v="` + html.EscapeString(pw) + `">`,
		"twice":       pw + " and " + pw,
		"other token": "Bearer tok-0123456789.",
	}
	for name, s := range forms {
		got := v.Redact("before " + s + " after")
		if strings.Contains(got, pw) || strings.Contains(got, "tok-0123456789") {
			t.Errorf("%s: %q still holds a value", name, got)
		}
		for _, enc := range encodings(pw) {
			if strings.Contains(got, enc) {
				t.Errorf("%s: %q still holds an encoding %q", name, got, enc)
			}
		}
		if !strings.Contains(got, "<secret:") {
			t.Errorf("%s: %q names no secret", name, got)
		}
	}
	if got := v.Redact("nothing secret here"); got != "nothing secret here" {
		t.Errorf("Redact changed plain text: %q", got)
	}
	if got := v.Redact("pw: " + pw); got != "pw: <secret:PASSWORD>" {
		t.Errorf("Redact = %q", got)
	}
	var none *Vault
	if none.Redact(pw) != pw {
		t.Error("a nil vault redacted")
	}
}

func TestRedactEdges(t *testing.T) {
	t.Parallel()
	v := mustVault(t)
	// A window of text that was cut inside the value, at either end.
	for _, s := range []string{"text then " + pw[:6], pw[5:] + " then text", pw[2 : len(pw)-2]} {
		got := v.RedactEdges(s)
		for i := minEdge; i <= len(pw); i++ {
			for j := 0; j+i <= len(pw); j++ {
				if strings.Contains(got, pw[j:j+i]) {
					t.Errorf("RedactEdges(%q) = %q keeps %q of the value", s, got, pw[j:j+i])
				}
			}
		}
	}
	if got := v.RedactEdges("nothing here"); got != "nothing here" {
		t.Errorf("RedactEdges changed plain text: %q", got)
	}
}

func TestParseFileAndLoadFile(t *testing.T) {
	t.Parallel()
	in := `# comment
PASSWORD=plain value here # a comment
export TOKEN='single # quoted'
QUOTED="line\none \"q\""

EMPTY_IS_FINE_HERE=
`
	got, err := ParseFile(strings.NewReader(in), "test.env")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"PASSWORD": "plain value here", "TOKEN": "single # quoted", "QUOTED": "line\none \"q\"", "EMPTY_IS_FINE_HERE": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseFile (-want +got):\n%s", diff)
	}
	for _, bad := range []struct{ text, line string }{
		{"A=ok-value-1\nnot a pair hunter2hunter2\n", "line 2"},
		{"A=x\nA=y\n", "line 2"},
		{"\n\nB=\"unclosed hunter2hunter2\n", "line 3"},
		{"1BAD=hunter2hunter2\n", "line 1"},
		{"C='hunter2hunter2' trailing\n", "line 1"},
	} {
		_, err := ParseFile(strings.NewReader(bad.text), "s.env")
		if err == nil || !strings.Contains(err.Error(), "s.env "+bad.line) {
			t.Errorf("ParseFile(%q) error %v, want one at %s", bad.text, err, bad.line)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error %q shows a value", err)
		}
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "secrets.env")
	if err := os.WriteFile(file, []byte("PASSWORD=correct horse battery\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(file); err != nil {
		t.Fatalf("0600 file: %v", err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o644} {
		os.Chmod(file, mode)
		if _, err := LoadFile(file); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
	os.Chmod(file, 0o400)
	if _, err := LoadFile(file); err != nil {
		t.Errorf("0400 file: %v", err)
	}
	link := filepath.Join(dir, "link.env")
	os.Symlink(file, link)
	if _, err := LoadFile(link); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("symlink: %v", err)
	}
	if _, err := LoadFile(dir); err == nil {
		t.Error("a directory was loaded")
	}
}

func TestLoadMergesFileAndEnv(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "s.env")
	os.WriteFile(file, []byte("PASSWORD=correct horse battery\n"), 0o600)
	v, err := Load(file, []string{"CHROMEGATE_SECRET_TOKEN=tok-0123456789", "CHROMEGATE_SECRET_ORIGINS=X=https://a.test", "HOME=/root"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"PASSWORD", "TOKEN"}, v.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if _, err := Load(file, []string{"CHROMEGATE_SECRET_PASSWORD=another long one"}); err == nil {
		t.Error("a name in both the file and the environment was accepted")
	}
}

func TestBindingsAndOrigins(t *testing.T) {
	t.Parallel()
	name, origins, err := ParseBinding("PASSWORD=https://Login.Test:443/, http://127.0.0.1:8080,https://login.test")
	if err != nil {
		t.Fatal(err)
	}
	if name != "PASSWORD" || !cmp.Equal(origins, []string{"https://login.test", "http://127.0.0.1:8080"}) {
		t.Errorf("ParseBinding = %q %q", name, origins)
	}
	for _, bad := range []string{"PASSWORD", "=https://a.test", "P=", "P=https://a.test/path", "P=file:///x", "P=https://u@a.test", "P=a.test"} {
		if _, _, err := ParseBinding(bad); err == nil {
			t.Errorf("ParseBinding(%q) accepted", bad)
		}
	}
	v := mustVault(t)
	if err := v.Bind("PASSWORD", origins); err != nil {
		t.Fatal(err)
	}
	if err := v.Bind("NOPE", origins); err == nil || !strings.Contains(err.Error(), "PASSWORD, TOKEN") {
		t.Errorf("Bind of an undeclared name: %v", err)
	}
	want := map[string][]string{"PASSWORD": {"https://login.test", "http://127.0.0.1:8080"}, "TOKEN": {}}
	if diff := cmp.Diff(want, v.Origins()); diff != "" {
		t.Errorf("Origins (-want +got):\n%s", diff)
	}
}

func TestHandlerRedactsEveryPart(t *testing.T) {
	t.Parallel()
	v := mustVault(t)
	for _, h := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler {
			return slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})
		},
		func(b *bytes.Buffer) slog.Handler {
			return slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})
		},
	} {
		var buf bytes.Buffer
		log := slog.New(v.Handler(h(&buf))).With("with", "w "+pw)
		log.Debug("typed "+pw, "text", pw, "err", errors.New("failed on "+pw),
			slog.Group("g", "inner", pw), "struct", struct{ V string }{pw}, "n", 3)
		log.WithGroup("grp").Info("x", "k", url.QueryEscape(pw))
		out := buf.String()
		for _, enc := range encodings(pw) {
			if strings.Contains(out, enc) {
				t.Errorf("log holds %q:\n%s", enc, out)
			}
		}
		if !strings.Contains(out, "<secret:PASSWORD>") || !strings.Contains(out, "n=3") && !strings.Contains(out, `"n":3`) {
			t.Errorf("log lost its shape:\n%s", out)
		}
	}
	var buf bytes.Buffer
	w := v.Writer(&buf)
	w.Write([]byte(`{"reasons":["` + pw + `"]}` + "\n"))
	if strings.Contains(buf.String(), "word") {
		t.Errorf("Writer: %s", buf.String())
	}
}

// BenchmarkRedact measures the redaction every result passes: a 100 KB
// page text with three declared secrets, holding none of them (the common
// case) and holding one.
func BenchmarkRedact(b *testing.B) {
	v, err := New(map[string]string{"PASSWORD": pw, "TOKEN": "tok-0123456789", "API_KEY": "sk-live-abcdefghijklmnop"})
	if err != nil {
		b.Fatal(err)
	}
	page := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit. ", 100_000/57)
	for _, c := range []struct {
		name, text string
	}{{"clean", page}, {"one value", page[:50_000] + pw + page[50_000:]}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				_ = v.RedactEdges(v.Redact(c.text))
			}
		})
	}
}
