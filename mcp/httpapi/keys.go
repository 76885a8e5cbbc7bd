package httpapi

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/chromegate/chromegate/mcp"
)

// Keys are bearer tokens for the HTTP transports. A key is shown once, when
// it is created; the store keeps only its SHA-256, in a file of mode 0600 in
// a directory of mode 0700, written atomically. The key itself never reaches
// a log, an error or a listing.
//
// Rights never grow through a key's own actions: a key (with the admin
// role) can only create a key whose roles, tool ACL, rate and expiry are
// all within its own (CheckWithin). Only the operator, with `chromegate
// keys create` on the machine, makes keys of any rights.

// KeyPrefix starts every key, so a leaked one is easy to recognise (and to
// scan for) and a key is never mistaken for another kind of secret.
const KeyPrefix = "cgk_"

// KeysFileMode is the only mode a keys file may have: the store refuses to
// read a file that others could read.
const KeysFileMode = 0o600

// KeyInfo describes one key, without the key.
type KeyInfo struct {
	Name       string    `json:"name"`
	Roles      []string  `json:"roles"`
	AllowTools []string  `json:"allow_tools"`
	Rate       string    `json:"rate"` // "N/min", "N/s", "N/h"; "" = unlimited
	Created    time.Time `json:"created"`
	// Expires is when the key stops working; nil = never.
	Expires *time.Time `json:"expires,omitempty"`
}

// storedKey is one line of the keys file.
type storedKey struct {
	KeyInfo
	SHA256 string `json:"sha256"`
}

type keysFile struct {
	Version int         `json:"version"`
	Keys    []storedKey `json:"keys"`
}

// liveKey is a key ready for authentication: its hash decoded, its ACL and
// rate limit built.
type liveKey struct {
	info  KeyInfo
	hash  [sha256.Size]byte
	acl   *mcp.ToolACL
	limit *mcp.RateLimit
}

// KeyStore is the keys file of a data dir. It re-reads the file when it
// changed on disk (a `chromegate keys` command run next to a serving
// server), so a revoked key stops working at the next request.
//
// KeyStore is safe for concurrent use.
type KeyStore struct {
	where   string // the keys file's path, or where the shared keys are
	backend keysBackend
	rates   mcp.RateStore // nil: each key's limit is this process's

	mu     sync.Mutex
	stamp  any // the backend's stamp of keys; nil: never read
	keys   []*liveKey
	limits map[string]*mcp.RateLimit // by key name and rate, kept across reloads
}

// keysBackend is where the keys live: the keys file of a data dir, or the
// document a fleet's replicas share (keys_shared.go).
type keysBackend interface {
	// stamp is a comparable value that changes when the keys do.
	stamp() (any, error)
	// read returns the keys and their stamp.
	read() (keysFile, any, error)
	// update changes the keys with change, which may refuse (its error
	// is update's).
	update(change func(*keysFile) error) error
}

// fileKeys is the keys file at path.
type fileKeys struct{ path string }

func (f fileKeys) stamp() (any, error) {
	st, err := stampOf(f.path)
	if err != nil {
		return nil, fmt.Errorf("keys file: %w", err)
	}
	return st, nil
}

func (f fileKeys) read() (keysFile, any, error) {
	st, err := f.stamp()
	if err != nil {
		return keysFile{}, nil, err
	}
	kf, err := readKeysFile(f.path)
	return kf, st, err
}

func (f fileKeys) update(change func(*keysFile) error) error {
	kf, err := readKeysFile(f.path)
	if err != nil {
		return err
	}
	if err := change(&kf); err != nil {
		return err
	}
	return writeKeysFile(f.path, kf)
}

type fileStamp struct {
	exists bool
	ino    uint64
	size   int64
	mode   os.FileMode
	mtime  time.Time
}

// ErrNoKey is returned when a key is not in the store.
var ErrNoKey = errors.New("no such key")

// OpenKeyStore opens the keys file at path (it need not exist yet). It fails
// when the file exists with a mode other than 0600, or does not parse.
func OpenKeyStore(path string) (*KeyStore, error) {
	return openKeyStore(path, fileKeys{path}, nil)
}

func openKeyStore(where string, b keysBackend, rates mcp.RateStore) (*KeyStore, error) {
	s := &KeyStore{where: where, backend: b, rates: rates, limits: map[string]*mcp.RateLimit{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.reloadLocked(); err != nil {
		return nil, err
	}
	return s, nil
}

// KeysPath is the keys file of a data dir.
func KeysPath(dataDir string) string { return filepath.Join(dataDir, "keys.json") }

// Path is the keys file, or where the shared keys are (a fleet's keys
// live in its Redis).
func (s *KeyStore) Path() string { return s.where }

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return fileStamp{}, nil
	}
	if err != nil {
		return fileStamp{}, err
	}
	st := fileStamp{exists: true, size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime()}
	st.ino = inode(fi)
	return st, nil
}

// reloadLocked re-reads the file when its stamp changed.
func (s *KeyStore) reloadLocked() error {
	st, err := s.backend.stamp()
	if err != nil {
		return err
	}
	if st == s.stamp && s.keys != nil {
		return nil
	}
	kf, st, err := s.backend.read()
	if err != nil {
		return err
	}
	keys := make([]*liveKey, 0, len(kf.Keys))
	for _, k := range kf.Keys {
		lk, err := s.live(k)
		if err != nil {
			return fmt.Errorf("keys %s: key %q: %w", s.where, k.Name, err)
		}
		keys = append(keys, lk)
	}
	s.keys, s.stamp = keys, st
	return nil
}

func (s *KeyStore) live(k storedKey) (*liveKey, error) {
	h, err := hex.DecodeString(k.SHA256)
	if err != nil || len(h) != sha256.Size {
		return nil, errors.New("sha256 is not a SHA-256 in hex")
	}
	acl, err := mcp.NewToolACL(k.AllowTools)
	if err != nil {
		return nil, err
	}
	perMin, err := mcp.ParseRate(k.Rate)
	if err != nil {
		return nil, err
	}
	lk := &liveKey{info: k.KeyInfo, acl: acl}
	copy(lk.hash[:], h)
	if perMin > 0 {
		id := k.Name + "\x00" + k.Rate + "\x00" + k.SHA256
		if s.limits[id] == nil {
			s.limits[id] = mcp.NewRateLimit(perMin)
			if s.rates != nil {
				// The fleet's bucket of this key: named by the key's
				// name and hash, so a key made again under the name
				// starts full.
				s.limits[id] = mcp.NewSharedRateLimit(s.rates, "rate:key:"+k.Name+":"+k.SHA256[:16], perMin)
			}
		}
		lk.limit = s.limits[id]
	}
	return lk, nil
}

func readKeysFile(path string) (keysFile, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return keysFile{Version: 1}, nil
	}
	if err != nil {
		return keysFile{}, fmt.Errorf("keys file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return keysFile{}, fmt.Errorf("keys file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return keysFile{}, fmt.Errorf("keys file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm != KeysFileMode {
		return keysFile{}, fmt.Errorf("keys file %s has mode %04o, want %04o: others may have read it; chmod 600 it (and consider revoking its keys)", path, perm, KeysFileMode)
	}
	var kf keysFile
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&kf); err != nil {
		return keysFile{}, fmt.Errorf("keys file %s: %w", path, err)
	}
	if kf.Version != 1 {
		return keysFile{}, fmt.Errorf("keys file %s: version %d, want 1", path, kf.Version)
	}
	return kf, nil
}

// writeKeysFile replaces the file atomically: a temporary file of mode 0600
// in the same directory (created with mode 0700, refused when others may
// write to it), synced, renamed over the old one, and its mode checked
// after the rename.
func writeKeysFile(path string, kf keysFile) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("keys dir: %w", err)
	}
	// An existing dir keeps its mode (it may be the data dir a user chose),
	// but one others can write to could have the file swapped: refuse it.
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("keys dir: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("keys dir %s has mode %04o: others may write to it; use a data dir of your own (chmod 700)", dir, perm)
	}
	b, err := json.MarshalIndent(kf, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".keys-*.json")
	if err != nil {
		return fmt.Errorf("keys file: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := tmp.Chmod(KeysFileMode); err != nil {
		tmp.Close()
		return fmt.Errorf("keys file: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("keys file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("keys file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("keys file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("keys file: %w", err)
	}
	fi, err = os.Stat(path)
	if err != nil {
		return fmt.Errorf("keys file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm != KeysFileMode {
		return fmt.Errorf("keys file %s has mode %04o after writing, want %04o", path, perm, KeysFileMode)
	}
	return nil
}

var keyNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// NewKey is what Create needs to make a key.
type NewKey struct {
	Name       string
	Roles      []string
	AllowTools []string  // tool globs; "!glob" excludes; none = every tool
	Rate       string    // "N/min" ("N/s", "N/h"); "" = unlimited
	Expires    time.Time // zero = never
}

// Create makes a key and returns it: the only time the key exists outside
// the caller's hands. A name already in use is an error.
func (s *KeyStore) Create(nk NewKey, now time.Time) (string, KeyInfo, error) {
	if !keyNameRE.MatchString(nk.Name) {
		return "", KeyInfo{}, fmt.Errorf("key name %q: use 1-64 of a-z 0-9 _ . - (starting with a letter or digit)", nk.Name)
	}
	if nk.Name == anonymous || nk.Name == mcp.LocalPrincipal.Name {
		// Policies tell callers apart by name: a key must not pass for
		// the keyless local caller.
		return "", KeyInfo{}, fmt.Errorf("key name %q is reserved for callers without a key", nk.Name)
	}
	for _, r := range nk.Roles {
		if !keyNameRE.MatchString(r) {
			return "", KeyInfo{}, fmt.Errorf("role %q: use 1-64 of a-z 0-9 _ . -", r)
		}
	}
	if _, err := mcp.NewToolACL(nk.AllowTools); err != nil {
		return "", KeyInfo{}, err
	}
	if _, err := mcp.ParseRate(nk.Rate); err != nil {
		return "", KeyInfo{}, err
	}
	if !nk.Expires.IsZero() && !nk.Expires.After(now) {
		return "", KeyInfo{}, fmt.Errorf("key %q would expire at %s, which has passed", nk.Name, nk.Expires.UTC().Format(time.RFC3339))
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read does not fail
	key := KeyPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(key))
	info := KeyInfo{
		Name:       nk.Name,
		Roles:      nonNil(slices.Clone(nk.Roles)),
		AllowTools: nonNil(slices.Clone(nk.AllowTools)),
		Rate:       nk.Rate,
		Created:    now.UTC().Truncate(time.Second),
	}
	if !nk.Expires.IsZero() {
		exp := nk.Expires.UTC().Truncate(time.Second)
		info.Expires = &exp
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.backend.update(func(kf *keysFile) error {
		for _, k := range kf.Keys {
			if k.Name == nk.Name {
				return fmt.Errorf("a key named %q exists; revoke it first or pick another name", nk.Name)
			}
		}
		kf.Keys = append(kf.Keys, storedKey{KeyInfo: info, SHA256: hex.EncodeToString(sum[:])})
		return nil
	})
	if err != nil {
		return "", KeyInfo{}, err
	}
	s.stamp = nil // force a reload
	if err := s.reloadLocked(); err != nil {
		return "", KeyInfo{}, err
	}
	return key, info, nil
}

// Revoke removes the key called name. Requests with it fail from the next
// one on.
func (s *KeyStore) Revoke(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.backend.update(func(kf *keysFile) error {
		n := len(kf.Keys)
		kf.Keys = slices.DeleteFunc(kf.Keys, func(k storedKey) bool { return k.Name == name })
		if len(kf.Keys) == n {
			return fmt.Errorf("%w %q", ErrNoKey, name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.stamp = nil
	return s.reloadLocked()
}

// List describes every key, in creation order.
func (s *KeyStore) List() ([]KeyInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.reloadLocked(); err != nil {
		return nil, err
	}
	out := make([]KeyInfo, len(s.keys))
	for i, k := range s.keys {
		out[i] = k.info
	}
	return out, nil
}

// Empty reports whether the store holds no key. A store that cannot be
// read is not empty: callers then require a key, which nobody has.
func (s *KeyStore) Empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.reloadLocked(); err != nil {
		return false
	}
	return len(s.keys) == 0
}

// Authenticate returns the principal of a presented key. Every stored hash
// is compared, in constant time, so timing tells nothing about which key
// came close. transport is "http" or "rest".
func (s *KeyStore) Authenticate(presented, transport string) (mcp.Principal, error) {
	sum := sha256.Sum256([]byte(presented))
	found, err := s.find(sum)
	if err == nil && found == nil {
		if sy, ok := s.backend.(syncer); ok {
			// A key made a moment ago on another replica: ask again
			// (at most every few tens of milliseconds, whoever asks).
			if err = sy.sync(); err == nil {
				found, err = s.find(sum)
			}
		}
	}
	if err != nil {
		return mcp.Principal{}, err
	}
	if found == nil || found.info.Expires != nil && !time.Now().Before(*found.info.Expires) {
		return mcp.Principal{}, ErrNoKey
	}
	p := mcp.Principal{
		Name:      found.info.Name,
		Roles:     slices.Clone(found.info.Roles),
		Transport: transport,
		Tools:     found.acl,
		Rate:      found.limit,
	}
	if found.info.Expires != nil {
		p.Expires = *found.info.Expires
	}
	return p, nil
}

// find is the key whose hash is sum, or nil; every stored hash is
// compared, in constant time.
func (s *KeyStore) find(sum [sha256.Size]byte) (*liveKey, error) {
	s.mu.Lock()
	err := s.reloadLocked()
	keys := s.keys
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	var found *liveKey
	for _, k := range keys {
		if subtle.ConstantTimeCompare(sum[:], k.hash[:]) == 1 {
			found = k
		}
	}
	return found, nil
}

// syncer is a keysBackend that can be asked to confirm its keys now.
type syncer interface{ sync() error }

// ErrWiderKey is returned when a principal asks for a key with a right it
// does not have itself.
var ErrWiderKey = errors.New("a key can only create keys within its own rights")

// CheckWithin reports whether p may create nk: rights never grow through a
// key's own actions. Every role of nk must be p's; every tool nk's ACL
// allows must be one p's allows (see mcp.ToolACL.Covers); its rate may not be
// higher than p's, nor unlimited when p's is not; it must expire no later
// than p, and not never when p expires. The error, wrapping ErrWiderKey,
// names the first right that is wider.
func CheckWithin(p mcp.Principal, nk NewKey) error {
	for _, r := range nk.Roles {
		if !slices.Contains(p.Roles, r) {
			return fmt.Errorf("%w: role %q is not one of %s's", ErrWiderKey, r, p.Name)
		}
	}
	acl, err := mcp.NewToolACL(nk.AllowTools)
	if err != nil {
		return err
	}
	if !p.Tools.Covers(acl) {
		return fmt.Errorf("%w: tools %q allow more than %s's (%s)", ErrWiderKey, acl.String(), p.Name, p.Tools.String())
	}
	if p.Rate != nil {
		perMin, err := mcp.ParseRate(nk.Rate)
		if err != nil {
			return err
		}
		if perMin == 0 || perMin > p.Rate.PerMinute() {
			return fmt.Errorf("%w: rate %q is higher than %s's %s", ErrWiderKey, cmp.Or(nk.Rate, "unlimited"), p.Name, p.Rate)
		}
	}
	if !p.Expires.IsZero() && (nk.Expires.IsZero() || nk.Expires.After(p.Expires)) {
		return fmt.Errorf("%w: the key must expire by %s, when %s does", ErrWiderKey, p.Expires.UTC().Format(time.RFC3339), p.Name)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
