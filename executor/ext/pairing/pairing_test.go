package pairing

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHandshakeFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	tok, _ := NewToken()
	if err := WriteHandshake(dir, Handshake{Port: 1, Token: tok, PID: os.Getpid(), Version: 1}); err != nil {
		t.Fatal(err)
	}
	if h, err := ReadHandshake(dir); err != nil || h.Token != tok {
		t.Fatalf("read back: %v", err)
	}
	if !TokenMatches(TokenHash(tok), tok) || TokenMatches(TokenHash(tok), tok[:63]+"x") {
		t.Fatal("TokenMatches")
	}
	RemoveHandshake(dir)
	if _, err := os.Stat(filepath.Join(dir, HandshakeFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("RemoveHandshake left the file of this process: %v", err)
	}
	// Another process's file stays.
	if err := WriteHandshake(dir, Handshake{Port: 1, Token: tok, PID: os.Getpid() + 1, Version: 1}); err != nil {
		t.Fatal(err)
	}
	RemoveHandshake(dir)
	if _, err := ReadHandshake(dir); err != nil {
		t.Fatalf("RemoveHandshake removed another server's file: %v", err)
	}
}

func TestPin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if PairedExtension(dir) != "" {
		t.Fatal("a fresh directory has a pairing")
	}
	if err := Pin(dir, testExt); err != nil || PairedExtension(dir) != testExt {
		t.Fatalf("Pin: %v, paired %q", err, PairedExtension(dir))
	}
	if err := ForgetPairing(dir); err != nil || PairedExtension(dir) != "" {
		t.Fatalf("ForgetPairing: %v", err)
	}
	if err := ForgetPairing(dir); err != nil {
		t.Fatalf("ForgetPairing twice: %v", err)
	}
}

func TestCodes(t *testing.T) {
	t.Parallel()
	var cs Codes
	code, _ := cs.Mint(time.Minute)
	if len(code) != 9 || code[4] != '-' {
		t.Fatalf("code %q", code)
	}
	if !cs.Use(" " + strings.ToLower(code) + " ") {
		t.Fatal("a code typed in lower case with spaces was refused")
	}
	if cs.Use(code) {
		t.Fatal("a code was used twice")
	}
	expired, _ := cs.Mint(-time.Second)
	if cs.Use(expired) {
		t.Fatal("an expired code was accepted")
	}
	code, _ = cs.Mint(time.Minute)
	cs.Reset()
	if cs.Use(code) {
		t.Fatal("a code survived Reset")
	}
}
