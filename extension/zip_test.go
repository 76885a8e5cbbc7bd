package extension

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
)

// TestZip checks the zip a user unpacks: every embedded file under the
// folder, byte for byte, nothing else, the same bytes each time, and a
// manifest whose key gives the documented id when computed the way Chrome
// does (independently of idFromKey).
func TestZip(t *testing.T) {
	t.Parallel()
	var a, b bytes.Buffer
	if err := Zip(&a, "chromegate-extension"); err != nil {
		t.Fatal(err)
	}
	if err := Zip(&b, "chromegate-extension"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two zips of the same extension differ: release checksums would not reproduce")
	}
	zr, err := zip.NewReader(bytes.NewReader(a.Bytes()), int64(a.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, _ error) error {
		if !d.IsDir() {
			want = append(want, p)
		}
		return nil
	})
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		name, ok := strings.CutPrefix(f.Name, "chromegate-extension/")
		if !ok || strings.Contains(name, "..") {
			t.Errorf("entry %q is outside the folder", f.Name)
			continue
		}
		got = append(got, name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(rc)
		rc.Close()
		orig, _ := files.ReadFile(name)
		if !bytes.Equal(data, orig) {
			t.Errorf("%s in the zip differs from the embedded file", name)
		}
		if name == "manifest.json" {
			var m struct{ Key string }
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			der, err := base64.StdEncoding.DecodeString(m.Key)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(der)
			var id strings.Builder
			for _, c := range sum[:16] {
				id.WriteByte('a' + c>>4)
				id.WriteByte('a' + c&0xf)
			}
			if id.String() != "panapbedhlmfgppfnakffbadibcgglbb" {
				t.Errorf("the zipped manifest's key gives id %s, want panapbedhlmfgppfnakffbadibcgglbb", id.String())
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("zip holds %v, want the embedded files %v", got, want)
	}
}
