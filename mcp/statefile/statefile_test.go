package statefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
)

func TestCheckName(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"login", "app-login", "ci.v2", "A_1", strings.Repeat("n", 64)} {
		if err := CheckName(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", "a\\b", "/etc/passwd", ".hidden", "-x", "a..b", "a b", "é", "x\x00", strings.Repeat("n", 65)} {
		err := CheckName(bad)
		if e := executor.AsError(err); err == nil || e.Code != executor.CodeBadArgs || !strings.Contains(e.Message, NameRule) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestStoreWriteReadList(t *testing.T) {
	t.Parallel()
	s := &Store{Dir: filepath.Join(t.TempDir(), "state")}
	st := `{"cookies":[{"name":"sid","value":"v","domain":".a.test","path":"/","expires":-1,"httpOnly":true,"secure":true,"sameSite":"Lax"}],"origins":[{"origin":"https://a.test","localStorage":[{"name":"k","value":"v"}]}]}`
	path, err := s.Write("alice", "login", []byte(st))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(s.Dir, "alice", "login.json"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	for p, mode := range map[string]os.FileMode{path: FileMode, filepath.Dir(path): DirMode, s.Dir: DirMode} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, mode)
		}
	}
	// A second save replaces the first, atomically, and leaves no
	// temporary file behind.
	if _, err := s.Write("alice", "login", []byte(`{"cookies":[],"origins":[]}`)); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("%d files in the principal's dir, want 1", len(ents))
	}
	got, err := s.Read("alice", "login")
	if err != nil || len(got.Cookies) != 0 {
		t.Errorf("read back %+v %v", got, err)
	}
	// Another principal has its own directory: the name is not found.
	if _, err := s.Read("bob", "login"); !errors.Is(err, ErrNotFound) {
		t.Errorf("bob read alice's state: %v", err)
	}
	if l, _ := s.List("bob"); len(l) != 0 {
		t.Errorf("bob lists %v", l)
	}
	if l, _ := s.List("alice"); len(l) != 1 || l[0].Name != "login" {
		t.Errorf("alice lists %v", l)
	}
	// A principal whose name is not a file name gets an encoded directory,
	// inside the store; one whose name differs by a trailing dot or by case
	// gets another (encoded, not trimmed or folded).
	p2, err := s.Write("../../etc", "x", []byte(`{"cookies":[],"origins":[]}`))
	if err != nil || filepath.Dir(filepath.Dir(p2)) != s.Dir || strings.Contains(filepath.Base(filepath.Dir(p2)), ".") {
		t.Errorf("principal ../../etc wrote %s (%v)", p2, err)
	}
	for _, other := range []string{"alice.", "Alice", "ALICE"} {
		if _, err := s.Read(other, "login"); !errors.Is(err, ErrNotFound) {
			t.Errorf("%q read alice's state: %v", other, err)
		}
		if l, _ := s.List(other); len(l) != 0 {
			t.Errorf("%q lists alice's states %v", other, l)
		}
	}
	// A narrowed mode is restored on an existing directory.
	if err := os.Chmod(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write("alice", "again", []byte(`{"cookies":[],"origins":[]}`)); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != DirMode {
		t.Errorf("dir mode %v after a write, want 0700", fi.Mode().Perm())
	}
}

func TestReadFileRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadFile(huge); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a file over MaxSize: %v", err)
	}
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value"
	good := `{"cookies":[{"name":"sid","value":"` + secret + `","domain":"a.test"}],
	  "origins":[{"origin":"https://a.test","localStorage":[{"name":"k","value":"` + secret + `"}],
	    "sessionStorage":[{"name":"d","value":"x"}],"indexedDB":[{"name":"db","version":1,"stores":[]}],"future":1}]}`
	st, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	want := executor.StorageState{
		Cookies: []executor.StateCookie{{Name: "sid", Value: secret, Domain: "a.test", Path: "/", Expires: -1, SameSite: "Lax"}},
		Origins: []executor.OriginState{{Origin: "https://a.test", LocalStorage: []executor.NameValue{{Name: "k", Value: secret}},
			SessionStorage: []executor.NameValue{{Name: "d", Value: "x"}}, IndexedDB: []byte(`[{"name":"db","version":1,"stores":[]}]`)}},
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("parsed (-want +got):\n%s", diff)
	}
	for name, c := range map[string]struct{ in, want string }{
		"empty":       {``, "not a JSON object"},
		"array":       {`[]`, "not a JSON object"},
		"truncated":   {`{"cookies":[{"name":"` + secret, "syntax error"},
		"top field":   {`{"cookies":[],"version":2}`, `unknown field "version"`},
		"cookie type": {`{"cookies":[{"name":"a","value":1,"domain":"a.test"}]}`, "cookies.value should be string, not number"},
		"no name":     {`{"cookies":[{"value":"` + secret + `","domain":"a.test"}]}`, "cookies[0] has no name"},
		"bad domain":  {`{"cookies":[{"name":"a","value":"` + secret + `","domain":"a.test/x"}]}`, "cookies[0] has no valid domain"},
		"samesite":    {`{"cookies":[{"name":"a","value":"v","domain":"a.test","sameSite":"` + secret + `"}]}`, "sameSite is not"},
		"origin path": {`{"origins":[{"origin":"https://a.test/path"}]}`, "origins[0].origin is not an http or https origin"},
		"origin js":   {`{"origins":[{"origin":"javascript:alert(1)"}]}`, "origins[0].origin is not"},
		"origin user": {`{"origins":[{"origin":"https://u:p@a.test"}]}`, "origins[0].origin is not"},
		"twice":       {`{"origins":[{"origin":"https://a.test"},{"origin":"https://a.test"}]}`, "appears twice"},
		"idb":         {`{"origins":[{"origin":"https://a.test","indexedDB":{"x":1}}]}`, "indexedDB is not a list"},
	} {
		_, err := Parse([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error carries a value: %v", name, err)
		}
	}
	many := `{"cookies":[` + strings.Repeat(`{"name":"a","value":"v","domain":"a.test"},`, MaxCookies) + `{"name":"a","value":"v","domain":"a.test"}]}`
	if _, err := Parse([]byte(many)); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("too many cookies: %v", err)
	}
}

// FuzzParse: any input is parsed or refused, never a panic; what parses
// encodes to a file that parses to the same state.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"cookies":[{"name":"sid","value":"v","domain":".a.test","path":"/","expires":-1,"httpOnly":true,"secure":true,"sameSite":"Lax"}],"origins":[{"origin":"https://a.test","localStorage":[{"name":"k","value":"v"}],"indexedDB":[]}]}`))
	f.Add([]byte(`{"cookies":[],"origins":[{"origin":"http://[::1]:8080","sessionStorage":[{"name":"","value":""}]}]}`))
	f.Add([]byte(`{"origins":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := Parse(data)
		if err != nil {
			if executor.AsError(err).Code != executor.CodeBadArgs {
				t.Fatalf("error without BAD_ARGS: %v", err)
			}
			return
		}
		b, err := Encode(st)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(b)
		if err != nil {
			t.Fatalf("an encoded state does not parse: %v\n%s", err, b)
		}
		if diff := cmp.Diff(st, again); diff != "" {
			t.Fatalf("round trip (-first +second):\n%s", diff)
		}
	})
}
