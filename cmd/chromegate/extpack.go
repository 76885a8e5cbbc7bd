package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/chromegate/chromegate/extension"
)

// packExtension writes the extension's zip to file (default: its release
// name in the working directory), atomically, and says how to load it.
func packExtension(file string, stdout io.Writer) error {
	if file == "" {
		file = extension.ZipName()
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), ".chromegate-extension-*.zip")
	if err != nil {
		return fmt.Errorf("write %s: %w", abs, err)
	}
	defer os.Remove(tmp.Name())
	if err := extension.Zip(tmp, "chromegate-extension"); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), abs); err != nil {
		return fmt.Errorf("write %s: %w", abs, err)
	}
	fmt.Fprintf(stdout, "chromegate extension %s packed into %s (id %s)\n", extension.Version(), abs, extension.ID())
	fmt.Fprintln(stdout, "Load it: unzip it, then chrome://extensions → Developer mode → Load unpacked → the chromegate-extension folder.")
	return nil
}

// unpackedExtension checks that dir is an unpacked chromegate extension
// with the pinned id (the bridge accepts no other), and returns it
// absolute, as Chromium's --load-extension wants it.
func unpackedExtension(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	id, err := extension.IDOf(abs)
	if err != nil {
		return "", fmt.Errorf("--extension-dir: %w", err)
	}
	if id != extension.ID() {
		return "", fmt.Errorf("--extension-dir %s: its manifest key gives id %s, not chromegate's %s", abs, id, extension.ID())
	}
	return abs, nil
}
