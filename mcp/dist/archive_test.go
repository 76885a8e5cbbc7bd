package dist

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteArchive writes the same files as a tar.gz and as a zip: the
// entries sit under the archive's own folder with their modes (the binary
// executable), the same input gives the same bytes, and a name that would
// leave the folder is refused.
func TestWriteArchive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := []File{
		{Name: "chromegate", Mode: 0o755, Data: []byte("#!bin")},
		{Name: "README.md", Mode: 0o644, Data: []byte("# readme")},
		{Name: "extension/manifest.json", Mode: 0o644, Data: []byte("{}")},
	}
	for _, name := range []string{"chromegate-1.0.0-linux-amd64.tar.gz", "chromegate-1.0.0-windows-amd64.zip"} {
		a := filepath.Join(dir, name)
		if err := WriteArchive(a, files); err != nil {
			t.Fatal(err)
		}
		first, _ := os.ReadFile(a)
		if err := WriteArchive(a, files); err != nil {
			t.Fatal(err)
		}
		second, _ := os.ReadFile(a)
		if !bytes.Equal(first, second) {
			t.Errorf("%s: two writes differ", name)
		}
		root := strings.TrimSuffix(strings.TrimSuffix(name, ".zip"), ".tar.gz") + "/"
		modes := map[string]os.FileMode{}
		if strings.HasSuffix(name, ".zip") {
			zr, err := zip.NewReader(bytes.NewReader(first), int64(len(first)))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				modes[f.Name] = f.Mode()
			}
		} else {
			gz, err := gzip.NewReader(bytes.NewReader(first))
			if err != nil {
				t.Fatal(err)
			}
			tr := tar.NewReader(gz)
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				modes[h.Name] = h.FileInfo().Mode()
			}
		}
		if m := modes[root+"chromegate"]; m.Perm() != 0o755 {
			t.Errorf("%s: the binary's mode is %v, want 0755 (entries %v)", name, m, modes)
		}
		if _, ok := modes[root+"extension/manifest.json"]; !ok {
			t.Errorf("%s: no extension/manifest.json under %s: %v", name, root, modes)
		}
		if _, ok := modes[root+"extension/"]; !ok {
			t.Errorf("%s: no folder entry for extension/: %v", name, modes)
		}
	}
	for _, bad := range []string{"../evil", "/abs", `a\b`, ""} {
		if err := WriteArchive(filepath.Join(dir, "x.tar.gz"), []File{{Name: bad, Data: []byte("x")}}); err == nil {
			t.Errorf("entry %q accepted", bad)
		}
	}
}

func TestWriteSums(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "b.zip"), filepath.Join(dir, "a.tar.gz")
	_ = os.WriteFile(a, []byte("hello"), 0o644)
	_ = os.WriteFile(b, nil, 0o644)
	sums := filepath.Join(dir, "SHA256SUMS")
	if err := WriteSums(sums, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(sums)
	want := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a.tar.gz\n" +
		"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824  b.zip\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", got, want)
	}
}
