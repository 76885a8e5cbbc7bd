package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/executor/ext"
)

func TestCheckExtension(t *testing.T) {
	data, hosts := t.TempDir(), t.TempDir()
	c := checkExtension(data, []string{hosts})
	if !c.ok || !strings.Contains(c.info, "not registered") || !strings.Contains(c.info, "not paired") {
		t.Fatalf("nothing set up: %+v", c)
	}
	bin := filepath.Join(t.TempDir(), "chromegate")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ext.InstallNativeHost(ext.NativeHostInstall{Binary: bin, DataDir: data, ExtensionID: "abc",
		ProfileDirs: []string{filepath.Dir(hosts)}}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(hosts), "NativeMessagingHosts")
	if c := checkExtension(data, []string{dir}); !c.ok || !strings.Contains(c.info, "registered (1") {
		t.Fatalf("registered: %+v", c)
	}
	// The launcher was removed (data dir wiped): a problem with its fix.
	if err := os.Remove(filepath.Join(data, "native-host.sh")); err != nil {
		t.Fatal(err)
	}
	if c := checkExtension(data, []string{dir}); c.ok || !strings.Contains(c.fix, "pair install") {
		t.Fatalf("broken registration: %+v", c)
	}
}
