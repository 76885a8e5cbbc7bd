package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/executor/ext/pairing"
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
	if _, err := pairing.InstallNativeHost(pairing.NativeHostInstall{Binary: bin, DataDir: data, ExtensionID: "abc",
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

// TestBridgeOptional: a data dir the bridge cannot use costs the extension,
// not the server, unless the extension was asked for.
func TestBridgeOptional(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bf := browserFlags{dataDir: dir}
	log := slog.New(slog.DiscardHandler)
	s, err := (&extFlags{prefer: "extension", bridgeAddr: defaultBridgeAddr}).setup(log, &bf, bf.options(log), "test", nil)
	if err != nil {
		t.Fatalf("an unusable data dir stopped the server: %v", err)
	}
	defer s.Close()
	if s.bridge != nil || len(s.backends) != 1 || s.backends[0].Name() != "cdp" {
		t.Fatalf("backends %v, bridge %v", s.backends, s.bridge)
	}
	if _, err := (&extFlags{prefer: "extension", bridgeAddr: defaultBridgeAddr, noCDPFallback: true}).setup(log, &bf, bf.options(log), "test", nil); err == nil {
		t.Fatal("--no-cdp-fallback without a bridge was accepted")
	}
}
