// Package statefile keeps storage-state files: the cookies and storage of a
// browser context, in Playwright's storageState format, saved by name under
// a server-owned directory, one directory per principal.
//
// A name is a short word of a safe charset (NamePattern), never a path;
// files are written atomically (a temporary file in the same directory,
// fsync, rename) with mode 0600 in directories of mode 0700; a file is read
// only up to MaxSize, and parsed strictly (Parse). Nothing here logs or
// returns a cookie's or a storage entry's value: errors name the file and
// the field, never its content.
package statefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// MaxSize bounds a state file, read or written: a context with thousands
// of cookies and megabytes of localStorage fits; a file meant to exhaust
// the server does not.
const MaxSize = 32 << 20

// Limits of the parsed state, past which a file is refused.
const (
	MaxCookies = 10_000
	MaxOrigins = 2_000
	MaxEntries = 100_000 // storage entries of one origin
)

// FileMode is the mode of every state file; DirMode that of the
// directories holding them.
const (
	FileMode = 0o600
	DirMode  = 0o700
)

// NamePattern is what a state name may be: a letter or digit, then up to
// 63 letters, digits, '.', '_' or '-' (so never "..", a slash or a path).
var NamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// NameRule says NamePattern in words, for errors.
const NameRule = "1 to 64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit (a name, not a path)"

// ErrNotFound is returned by Read for a name that was never saved (by
// this principal).
var ErrNotFound = errors.New("no state of that name")

// CheckName refuses a name that is not a safe file name, with a BAD_ARGS
// error that says what is allowed.
func CheckName(name string) error {
	if !NamePattern.MatchString(name) || strings.Contains(name, "..") {
		return executor.Errorf(executor.CodeBadArgs, "state name %q is not allowed: %s", clip(name), NameRule).
			WithHint(`use a short name such as "app-login"; the server chooses where the file lives`)
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Store is the directory of state files. The zero value is not usable;
// its methods are safe for concurrent use (each write is one rename).
type Store struct {
	// Dir is the root, DATA/state; each principal has a directory in it.
	Dir string
}

// StateInfo describes one saved state, without its content. Modified is
// RFC 3339, UTC.
type StateInfo struct {
	Name     string `json:"name"`
	Size     int64  `json:"size"`
	Modified string `json:"modified"`
}

// principalDir is a principal's own directory, named by
// executor.TenantDir, which no two principals share. A directory an
// earlier version named differently (the name itself where it was a safe
// file name, "alice." for one, else a hash) is moved to it on first use.
func (s *Store) principalDir(principal string) string {
	dir := filepath.Join(s.Dir, executor.TenantDir(principal))
	if legacy := s.legacyDir(principal); legacy != dir {
		if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
			_ = os.Rename(legacy, dir) // nothing there: nothing to move
		}
	}
	return dir
}

// legacyDir is where versions before executor.TenantDir kept principal's
// states.
func (s *Store) legacyDir(principal string) string {
	if NamePattern.MatchString(principal) && !strings.Contains(principal, "..") {
		return filepath.Join(s.Dir, principal)
	}
	sum := sha256.Sum256([]byte(principal))
	return filepath.Join(s.Dir, "p-"+hex.EncodeToString(sum[:8]))
}

// Path is where principal's state called name lives (after CheckName).
func (s *Store) Path(principal, name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	return filepath.Join(s.principalDir(principal), name+".json"), nil
}

// ErrExists is returned by Create for a name already saved.
var ErrExists = errors.New("a state of that name exists")

// Write saves data as principal's state called name: atomically, mode
// 0600, in a directory of mode 0700. It returns the file's path.
func (s *Store) Write(principal, name string, data []byte) (string, error) {
	return s.write(principal, name, data, true)
}

// Create is Write that never replaces a state: a name already saved is
// ErrExists, decided atomically (two Creates of one name: one wins).
func (s *Store) Create(principal, name string, data []byte) (string, error) {
	return s.write(principal, name, data, false)
}

func (s *Store) write(principal, name string, data []byte, replace bool) (string, error) {
	path, err := s.Path(principal, name)
	if err != nil {
		return "", err
	}
	if len(data) > MaxSize {
		return "", executor.Errorf(executor.CodeBadArgs, "the state is %d bytes, over the limit of %d", len(data), MaxSize).
			WithHint("save fewer origins (the origins argument)")
	}
	dir := filepath.Dir(path)
	if err := ensureDir(s.Dir); err != nil {
		return "", err
	}
	if err := ensureDir(dir); err != nil {
		return "", err
	}
	if !replace {
		return path, createAtomic(path, data)
	}
	return path, WriteAtomic(path, data)
}

// ensureDir makes dir with mode 0700, or narrows an existing one to it.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return executor.Errorf(executor.CodeInternal, "state directory: %v", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return executor.Errorf(executor.CodeInternal, "state directory: %v", err)
	}
	if !fi.IsDir() {
		return executor.Errorf(executor.CodeInternal, "state directory %s is not a directory", dir)
	}
	if fi.Mode().Perm() != DirMode {
		if err := os.Chmod(dir, DirMode); err != nil {
			return executor.Errorf(executor.CodeInternal, "state directory: %v", err)
		}
	}
	return nil
}

// WriteAtomic writes data to path through a temporary file in the same
// directory, synced before it is renamed over path, so a reader sees the
// old file or the whole new one, never a part.
func WriteAtomic(path string, data []byte) error {
	return writeAtomic(path, data, os.Rename)
}

// createAtomic is WriteAtomic for a path that must not exist: the whole
// file is linked into place, which fails if the name is taken.
func createAtomic(path string, data []byte) error {
	err := writeAtomic(path, data, os.Link)
	if errors.Is(err, fs.ErrExist) {
		return ErrExists
	}
	return err
}

func writeAtomic(path string, data []byte, place func(tmp, path string) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".state-*.tmp")
	if err != nil {
		return executor.Errorf(executor.CodeInternal, "write state: %v", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if err := tmp.Chmod(FileMode); err != nil {
		tmp.Close()
		return executor.Errorf(executor.CodeInternal, "write state: %v", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return executor.Errorf(executor.CodeInternal, "write state: %v", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return executor.Errorf(executor.CodeInternal, "write state: %v", err)
	}
	if err := tmp.Close(); err != nil {
		return executor.Errorf(executor.CodeInternal, "write state: %v", err)
	}
	if err := place(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return executor.Errorf(executor.CodeInternal, "write state: %v", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the rename itself survives a crash
		d.Close()
	}
	return nil
}

// Read returns principal's state called name, parsed. Another principal's
// state of the same name is another file: it is ErrNotFound here.
func (s *Store) Read(principal, name string) (executor.StorageState, error) {
	path, err := s.Path(principal, name)
	if err != nil {
		return executor.StorageState{}, err
	}
	st, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, executor.Errorf(executor.CodeBadArgs, "no saved state is called %q", name).
			WithHint("call state_list for the names saved, or state_save first").Wrap(ErrNotFound)
	}
	return st, err
}

// List lists principal's saved states, by name.
func (s *Store) List(principal string) ([]StateInfo, error) {
	dir := s.principalDir(principal)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []StateInfo{}, nil
	}
	if err != nil {
		return nil, executor.Errorf(executor.CodeInternal, "list states: %v", err)
	}
	out := []StateInfo{}
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || CheckName(name) != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, StateInfo{Name: name, Size: fi.Size(), Modified: fi.ModTime().UTC().Format(time.RFC3339)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ReadFile reads and parses a state file: an operator's (serve
// --storage-state) or one of the store's. It refuses a file over MaxSize
// without reading it whole.
func ReadFile(path string) (executor.StorageState, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return executor.StorageState{}, err
		}
		return executor.StorageState{}, executor.Errorf(executor.CodeBadArgs, "state file: %v", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return executor.StorageState{}, executor.Errorf(executor.CodeBadArgs, "state file %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return executor.StorageState{}, executor.Errorf(executor.CodeBadArgs, "state file: %v", err)
	}
	if len(data) > MaxSize {
		return executor.StorageState{}, executor.Errorf(executor.CodeBadArgs, "state file %s is over the limit of %d bytes", filepath.Base(path), MaxSize).
			WithHint("a storage state is cookies and storage, not megabytes of data: save fewer origins")
	}
	return Parse(data)
}

// Parse decodes a state in Playwright's storageState format, strictly:
// the top level and each cookie and origin must be objects of the known
// fields (unknown fields are ignored, as Playwright does, except at the
// top level where they are refused as a sign of the wrong file), cookies
// need a name and a domain, origins must be http(s) origins, and the
// counts stay within the limits. Errors name the field, never a value.
func Parse(data []byte) (executor.StorageState, error) {
	var st executor.StorageState
	bad := func(format string, a ...any) error {
		return executor.Errorf(executor.CodeBadArgs, "state file is not a storage state: "+format, a...).
			WithHint(`a storage state is Playwright's storageState JSON: {"cookies":[...],"origins":[{"origin":"https://…","localStorage":[{"name":…,"value":…}]}]}`)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return st, bad("not a JSON object")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return st, bad("invalid JSON (%s)", jsonWhere(err))
	}
	for k := range top {
		if k != "cookies" && k != "origins" {
			return st, bad("unknown field %q at the top level", clip(k))
		}
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return executor.StorageState{}, bad("%s", jsonWhere(err))
	}
	if len(st.Cookies) > MaxCookies {
		return executor.StorageState{}, bad("%d cookies, over the limit of %d", len(st.Cookies), MaxCookies)
	}
	if len(st.Origins) > MaxOrigins {
		return executor.StorageState{}, bad("%d origins, over the limit of %d", len(st.Origins), MaxOrigins)
	}
	for i, c := range st.Cookies {
		switch {
		case c.Name == "":
			return executor.StorageState{}, bad("cookies[%d] has no name", i)
		case c.Domain == "" || strings.ContainsAny(c.Domain, "/:@ \t\r\n"):
			return executor.StorageState{}, bad("cookies[%d] has no valid domain", i)
		case c.SameSite != "" && !slices.Contains([]string{"Strict", "Lax", "None"}, c.SameSite):
			return executor.StorageState{}, bad("cookies[%d].sameSite is not Strict, Lax or None", i)
		}
		if st.Cookies[i].Path == "" {
			st.Cookies[i].Path = "/"
		}
		if st.Cookies[i].SameSite == "" {
			st.Cookies[i].SameSite = "Lax"
		}
		if st.Cookies[i].Expires == 0 {
			st.Cookies[i].Expires = -1
		}
	}
	seen := map[string]bool{}
	for i, o := range st.Origins {
		u, err := url.Parse(o.Origin)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return executor.StorageState{}, bad("origins[%d].origin is not an http or https origin", i)
		}
		if seen[o.Origin] {
			return executor.StorageState{}, bad("origins[%d].origin appears twice", i)
		}
		seen[o.Origin] = true
		if len(o.LocalStorage)+len(o.SessionStorage) > MaxEntries {
			return executor.StorageState{}, bad("origins[%d] has over %d storage entries", i, MaxEntries)
		}
		if len(o.IndexedDB) > 0 && !bytes.Equal(o.IndexedDB, []byte("null")) {
			var dbs []json.RawMessage
			if json.Unmarshal(o.IndexedDB, &dbs) != nil {
				return executor.StorageState{}, bad("origins[%d].indexedDB is not a list", i)
			}
		} else {
			st.Origins[i].IndexedDB = nil
		}
		if o.LocalStorage == nil {
			st.Origins[i].LocalStorage = []executor.NameValue{}
		}
		if len(o.SessionStorage) == 0 {
			st.Origins[i].SessionStorage = nil
		}
	}
	if st.Cookies == nil {
		st.Cookies = []executor.StateCookie{}
	}
	if st.Origins == nil {
		st.Origins = []executor.OriginState{}
	}
	return st, nil
}

// jsonWhere describes a JSON error by its place, never by the text around
// it (which may be a cookie's value).
func jsonWhere(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		if te.Field != "" {
			return fmt.Sprintf("%s should be %s, not %s", te.Field, te.Type, te.Value)
		}
		return fmt.Sprintf("a %s where %s was expected", te.Value, te.Type)
	}
	return "invalid JSON"
}

// Encode is the file's content for st: indented JSON, as Playwright's
// tooling writes it.
func Encode(st executor.StorageState) ([]byte, error) {
	return json.MarshalIndent(st, "", "  ")
}
