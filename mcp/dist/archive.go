package dist

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// modTime is every archive entry's time, so an archive's bytes depend only
// on what it holds.
var modTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// File is one entry of an archive: its slash-separated name inside the
// archive, its mode and where its bytes are (Path on disk, or Data).
type File struct {
	Name string
	Mode os.FileMode
	Path string
	Data []byte
}

func (f File) open() (io.ReadCloser, int64, error) {
	if f.Path == "" {
		return io.NopCloser(strings.NewReader(string(f.Data))), int64(len(f.Data)), nil
	}
	r, err := os.Open(f.Path)
	if err != nil {
		return nil, 0, err
	}
	st, err := r.Stat()
	if err != nil {
		r.Close()
		return nil, 0, err
	}
	return r, st.Size(), nil
}

// ArchiveName is the release archive's name for a target: .zip for
// Windows, .tar.gz elsewhere.
func ArchiveName(version string, t Target) string {
	base := "chromegate-" + strings.TrimPrefix(version, "v") + "-" + t.String()
	if t.OS == "windows" {
		return base + ".zip"
	}
	return base + ".tar.gz"
}

// WriteArchive writes files into the archive at dst, as a zip when dst ends
// in .zip and a gzipped tar otherwise, every entry under a folder of the
// archive's own name (what unpacking makes). Entries are sorted, so the
// same files give the same bytes.
func WriteArchive(dst string, files []File) (err error) {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	for _, f := range files {
		if f.Name == "" || path.IsAbs(f.Name) || strings.Contains(f.Name, "..") || strings.Contains(f.Name, `\`) {
			return fmt.Errorf("dist: archive entry %q is not a plain relative name", f.Name)
		}
	}
	root := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(dst), ".zip"), ".tar.gz")
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	defer func() {
		if cerr := out.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("dist: %w", cerr)
		}
		if err != nil {
			os.Remove(dst)
		}
	}()
	bw := bufio.NewWriter(out)
	if strings.HasSuffix(dst, ".zip") {
		err = writeZip(bw, root, files)
	} else {
		err = writeTarGz(bw, root, files)
	}
	if err != nil {
		return fmt.Errorf("dist: %s: %w", dst, err)
	}
	return bw.Flush()
}

func writeTarGz(w io.Writer, root string, files []File) error {
	gz, _ := gzip.NewWriterLevel(w, gzip.DefaultCompression)
	tw := tar.NewWriter(gz)
	dirs := map[string]bool{}
	for _, f := range files {
		// Each folder once, before its first file.
		for _, d := range parents(root + "/" + f.Name) {
			if !dirs[d] {
				dirs[d] = true
				if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: modTime, Format: tar.FormatPAX}); err != nil {
					return err
				}
			}
		}
		r, size, err := f.open()
		if err != nil {
			return err
		}
		err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: root + "/" + f.Name, Mode: int64(f.Mode.Perm()), Size: size, ModTime: modTime, Format: tar.FormatPAX})
		if err == nil {
			_, err = io.Copy(tw, r)
		}
		r.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, root string, files []File) error {
	zw := zip.NewWriter(w)
	dirs := map[string]bool{}
	for _, f := range files {
		for _, d := range parents(root + "/" + f.Name) {
			if !dirs[d] {
				dirs[d] = true
				h := &zip.FileHeader{Name: d + "/", Modified: modTime}
				h.SetMode(os.ModeDir | 0o755)
				if _, err := zw.CreateHeader(h); err != nil {
					return err
				}
			}
		}
		r, _, err := f.open()
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: root + "/" + f.Name, Method: zip.Deflate, Modified: modTime}
		h.SetMode(f.Mode.Perm())
		fw, err := zw.CreateHeader(h)
		if err == nil {
			_, err = io.Copy(fw, r)
		}
		r.Close()
		if err != nil {
			return err
		}
	}
	return zw.Close()
}

// parents lists the folders of name, outermost first.
func parents(name string) []string {
	var out []string
	for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
		out = append(out, d)
	}
	slices.Reverse(out)
	return out
}

// WriteSums writes SHA256SUMS for files (base names, sorted) in the format
// `sha256sum -c` reads: the hex digest, two spaces, the name.
func WriteSums(dst string, files []string) error {
	var b strings.Builder
	names := slices.Clone(files)
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	for _, p := range names {
		sum, err := fileSum(p)
		if err != nil {
			return fmt.Errorf("dist: SHA256SUMS: %w", err)
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, filepath.Base(p))
	}
	return os.WriteFile(dst, []byte(b.String()), 0o644)
}

func fileSum(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
