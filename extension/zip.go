package extension

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// zipTime is every entry's modification time: the same extension gives the
// same bytes, so a release's checksums can be reproduced.
var zipTime = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// Zip writes the extension as a zip archive whose entries sit under
// folder/ (the folder a user unzips and picks with "Load unpacked"; "" puts
// them at the root, the layout the Chrome Web Store takes). The manifest
// keeps its key, so the unzipped folder loads with the id ID returns.
func Zip(w io.Writer, folder string) error {
	zw := zip.NewWriter(w)
	prefix := ""
	if folder != "" {
		prefix = folder + "/"
		if _, err := zw.CreateHeader(&zip.FileHeader{Name: prefix, Modified: zipTime}); err != nil {
			return fmt.Errorf("extension: zip: %w", err)
		}
	}
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		h := &zip.FileHeader{Name: prefix + path, Method: zip.Deflate, Modified: zipTime}
		h.SetMode(0o644)
		f, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		_, err = f.Write(b)
		return err
	})
	if err != nil {
		return fmt.Errorf("extension: zip: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("extension: zip: %w", err)
	}
	return nil
}

// ZipName is the file name of the extension's zip for a release.
func ZipName() string { return "chromegate-extension-" + Version() + ".zip" }

// IDOf is the id Chrome gives the unpacked extension in dir: from its
// manifest's key, the way ID is computed for the built-in one.
func IDOf(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return "", fmt.Errorf("extension: %w", err)
	}
	var m struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("extension: %s/manifest.json: %w", dir, err)
	}
	if m.Key == "" {
		return "", fmt.Errorf("extension: %s/manifest.json has no key: Chrome would give it a random id", dir)
	}
	return idFromKey(m.Key)
}
