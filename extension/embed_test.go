package extension

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestIDMatchesKeyAndDocs(t *testing.T) {
	if ID() != documentedID {
		t.Fatalf("the manifest key gives id %s, but embed.go documents %s", ID(), documentedID)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), ID()) {
		t.Fatalf("README.md does not mention the extension id %s", ID())
	}
	if !regexp.MustCompile(`^[a-p]{32}$`).MatchString(ID()) {
		t.Fatalf("id %q is not 32 letters a-p", ID())
	}
	if Origin() != "chrome-extension://"+ID() {
		t.Fatalf("Origin() = %q", Origin())
	}
}

func TestIDFromKey(t *testing.T) {
	// The id of a key is the SHA-256 of its DER bytes, the first 32 hex
	// digits mapped 0-f to a-p: one byte 0x00 hashes to 6e340b9cffb37a98
	// 9ca544e6bb780a2c... (printf '\x00' | sha256sum).
	got, err := idFromKey("AA==")
	if err != nil {
		t.Fatal(err)
	}
	if want := "godealjmppldhkjijmkfeeogllhiakcm"; got != want {
		t.Fatalf("idFromKey(AA==) = %s, want %s", got, want)
	}
	if _, err := idFromKey("not base64!"); err == nil {
		t.Fatal("a key that is not base64 was accepted")
	}
}

func TestVersion(t *testing.T) {
	if !regexp.MustCompile(`^\d+(\.\d+){0,3}$`).MatchString(Version()) {
		t.Fatalf("manifest version %q is not what Chrome accepts", Version())
	}
}

// The methods Go reads are the table of PROTOCOL.md, in both directions.
func TestMethodsMatchProtocolTable(t *testing.T) {
	doc, err := fs.ReadFile(FS(), "PROTOCOL.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`^\| ([a-zA-Z, ]+) \| `)
	var table []string
	for _, line := range strings.Split(string(doc), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil || strings.TrimSpace(m[1]) == "method" {
			continue
		}
		for _, name := range strings.Split(m[1], ",") {
			table = append(table, strings.TrimSpace(name))
		}
	}
	got := Methods()
	slices.Sort(table)
	slices.Sort(got)
	if !slices.Equal(got, table) {
		t.Fatalf("methods.js lists %v, PROTOCOL.md's table %v", got, table)
	}
	got[0] = "changed"
	if Methods()[0] == "changed" {
		t.Fatal("Methods returned its own slice")
	}
}

// Every module a loaded file imports is embedded, and so is every file the
// manifest names: a file left out of the go:embed line breaks the
// installed extension, not the source tree.
func TestEmbeddedFilesAreComplete(t *testing.T) {
	imp := regexp.MustCompile(`(?m)^\s*import\s[^'"]*['"]\./([^'"]+)['"]|<script[^>]+src="([^"]+)"`)
	err := fs.WalkDir(FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS(), path)
		if err != nil {
			return err
		}
		for _, m := range imp.FindAllStringSubmatch(string(b), -1) {
			name := m[1] + m[2]
			if _, err := fs.Stat(FS(), name); err != nil {
				t.Errorf("%s loads %s, which is not embedded", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := fs.ReadFile(FS(), "manifest.json")
	for _, name := range regexp.MustCompile(`"([a-z]+\.(?:js|html))"`).FindAllStringSubmatch(string(m), -1) {
		if _, err := fs.Stat(FS(), name[1]); err != nil {
			t.Errorf("manifest.json names %s, which is not embedded", name[1])
		}
	}
	// and nothing of the tests or the Go package travels with it
	entries, _ := fs.ReadDir(FS(), ".")
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".test.js") || strings.HasSuffix(e.Name(), ".go") || e.Name() == "package.json" {
			t.Errorf("%s is embedded", e.Name())
		}
	}
}

func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ext")
	if err := Install(dir); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		st, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o755 {
			t.Errorf("dir mode %v, want 0755", st.Mode().Perm())
		}
		err = fs.WalkDir(FS(), ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			want, _ := fs.ReadFile(FS(), path)
			got, err := os.ReadFile(filepath.Join(dir, path))
			if err != nil {
				t.Errorf("%s was not written: %v", path, err)
				return nil
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the embedded file", path)
			}
			st, _ := os.Stat(filepath.Join(dir, path))
			if st.Mode().Perm() != 0o644 {
				t.Errorf("%s has mode %v, want 0644", path, st.Mode().Perm())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	check()

	// An older copy: a changed file, a file this version lacks, and a file
	// of the user's that is not the extension's.
	must(t, os.WriteFile(filepath.Join(dir, "sw.js"), []byte("old"), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "gone.js"), []byte("old"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	if err := Install(dir); err != nil {
		t.Fatal(err)
	}
	check()
	if _, err := os.Stat(filepath.Join(dir, "gone.js")); !os.IsNotExist(err) {
		t.Errorf("the stale gone.js is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("a file that is not the extension's was removed: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".chromegate-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestInstallRefusesAnotherExtension(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"name":"other"}`), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "bg.js"), []byte("keep"), 0o644))
	if err := Install(dir); err == nil || !strings.Contains(err.Error(), "another extension") {
		t.Fatalf("Install into another extension's dir: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "bg.js")); string(b) != "keep" {
		t.Fatal("another extension's file was touched")
	}
	if err := Install(""); err == nil {
		t.Fatal("Install(\"\") succeeded")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
