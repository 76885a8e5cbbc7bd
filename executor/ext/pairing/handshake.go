package pairing

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// HandshakeFile is the name of the pairing file in the data directory.
const HandshakeFile = "handshake.json"

// Handshake is what handshake.json holds: where the bridge listens and the
// token an extension must present. Only the user who runs the server can
// read it (mode 0600 in a 0700 directory); the native-messaging host reads
// it to hand the extension its pairing.
type Handshake struct {
	Port    int    `json:"port"`
	Token   string `json:"token"`
	PID     int    `json:"pid"`
	Version int    `json:"v"`
}

// NewToken returns a fresh 256-bit token, hex-encoded.
func NewToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("read random token: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// TokenHash is what the bridge keeps of a token (or a pairing code) to
// compare against: never the secret itself.
func TokenHash(tok string) [32]byte { return sha256.Sum256([]byte(tok)) }

// TokenMatches compares a presented token with the expected hash in
// constant time (both sides hashed first, so lengths cannot leak either).
func TokenMatches(want [32]byte, got string) bool {
	h := TokenHash(got)
	return subtle.ConstantTimeCompare(want[:], h[:]) == 1
}

// EnsurePrivateDir creates dir with mode 0700 if needed and refuses one
// that others can read or write: the token lives there.
func EnsurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory %s: %w", dir, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("stat data directory %s: %w", dir, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("data directory %s is mode %o and cannot be made private: %w", dir, fi.Mode().Perm(), err)
		}
	}
	return nil
}

// writePrivateJSON writes v to path atomically with mode 0600 and checks
// the mode of what landed, failing closed when it is not private.
func writePrivateJSON(path string, v any) error {
	dir := filepath.Dir(path)
	if err := EnsurePrivateDir(dir); err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := errors.Join(tmp.Sync(), tmp.Close()); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	if fi.Mode().Perm() != 0o600 {
		_ = os.Remove(path)
		return fmt.Errorf("%s landed with mode %o, not 0600; refusing to keep a readable secret", path, fi.Mode().Perm())
	}
	return nil
}

// WriteHandshake writes h to the handshake file of dataDir (0600, in a
// 0700 directory), atomically, failing closed when it would be readable by
// others.
func WriteHandshake(dataDir string, h Handshake) error {
	return writePrivateJSON(filepath.Join(dataDir, HandshakeFile), h)
}

// RemoveHandshake removes the handshake file of dataDir when this process
// wrote it, so a native host cannot hand out a dead port, and a server
// started since on the same directory keeps its own.
func RemoveHandshake(dataDir string) {
	path := filepath.Join(dataDir, HandshakeFile)
	var h Handshake
	if raw, err := os.ReadFile(path); err == nil && json.Unmarshal(raw, &h) == nil && h.PID == os.Getpid() {
		_ = os.Remove(path)
	}
}

// ReadHandshake reads the handshake file of a data directory, refusing one
// that other users could read.
func ReadHandshake(dataDir string) (Handshake, error) {
	path := filepath.Join(dataDir, HandshakeFile)
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Handshake{}, fmt.Errorf("no %s in %s: is `chromegate serve` running with this data directory?", HandshakeFile, dataDir)
		}
		return Handshake{}, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return Handshake{}, fmt.Errorf("%s is mode %o; refusing a pairing file others can read", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Handshake{}, err
	}
	var h Handshake
	if err := json.Unmarshal(b, &h); err != nil {
		return Handshake{}, fmt.Errorf("%s is not valid: %v", path, err)
	}
	if h.Port <= 0 || len(h.Token) != 64 {
		return Handshake{}, fmt.Errorf("%s is incomplete", path)
	}
	return h, nil
}

// pinned is the extension id the user paired, kept across restarts in
// paired.json: a connection from any other extension is refused until the
// user re-pairs (`chromegate pair reset`).
type pinned struct {
	ExtensionID string `json:"extensionId"`
}

const pinnedFile = "paired.json"

// PairedExtension is the extension id pinned in dataDir ("" when none).
func PairedExtension(dataDir string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, pinnedFile))
	if err != nil {
		return ""
	}
	var p pinned
	if json.Unmarshal(b, &p) != nil {
		return ""
	}
	return p.ExtensionID
}

// Pin records id as the paired extension of dataDir: connections from any
// other extension are refused until ForgetPairing.
func Pin(dataDir, id string) error {
	return writePrivateJSON(filepath.Join(dataDir, pinnedFile), pinned{ExtensionID: id})
}

// ForgetPairing removes the pinned extension id, so the next extension that
// authenticates is paired anew.
func ForgetPairing(dataDir string) error {
	err := os.Remove(filepath.Join(dataDir, pinnedFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
