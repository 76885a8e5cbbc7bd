package executor

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfinePaths(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	in := filepath.Join(root, "ok.txt")
	sub := filepath.Join(root, "sub", "deep.txt")
	out := filepath.Join(outside, "secret.txt")
	for _, f := range []string{in, sub, out} {
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link.txt")
	if err := os.Symlink(out, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		ok   bool
	}{
		{in, true},
		{sub, true},
		{filepath.Join(root, "sub", "..", "ok.txt"), true},
		{out, false},
		{filepath.Join(root, "..", filepath.Base(outside), "secret.txt"), false},
		{link, false}, // a symlink out of the root
		{root, false}, // the root itself is not a file
		{filepath.Join(root, "sub"), false},
		{filepath.Join(root, "missing.txt"), false},
		{"/etc/passwd", false},
	}
	for _, c := range cases {
		got, err := ConfinePaths([]string{root}, []string{c.path})
		if (err == nil) != c.ok {
			t.Errorf("ConfinePaths(%q) = %v, %v; want ok=%v", c.path, got, err, c.ok)
		}
		if err != nil && CodeOf(err) != CodeBadArgs {
			t.Errorf("%q: code %s", c.path, CodeOf(err))
		}
	}
	if _, err := ConfinePaths(nil, []string{in}); err == nil {
		t.Error("no roots accepted a file")
	}
}
