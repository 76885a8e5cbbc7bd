package extension

import (
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// files is the extension as loaded by the browser: no tests, no Go.
//
//go:embed manifest.json PROTOCOL.md sw.js connection.js frame.js router.js methods.js errors.js
//go:embed cdp.js capture.js session.js tabstate.js store.js deadline.js world.js selector.js targets.js input.js navigation.js
//go:embed evaluate.js image.js downloads.js cookies.js egress.js netlog.js consolelog.js webmcp.js tabs.js keys.js dialogs.js emulate.js point.js popup.html popup.js frames.js
var files embed.FS

// The id the manifest key gives (see ID); written down here and in
// README.md, and checked against the key by the tests.
const documentedID = "panapbedhlmfgppfnakffbadibcgglbb"

var manifest struct {
	Key     string `json:"key"`
	Version string `json:"version"`
}

var (
	id      string
	methods []string
	events  []string
)

func init() {
	b, err := files.ReadFile("manifest.json")
	if err != nil {
		panic("extension: manifest.json is not embedded") // a build defect, caught by every test
	}
	if err := json.Unmarshal(b, &manifest); err != nil {
		panic("extension: manifest.json does not parse: " + err.Error())
	}
	if id, err = idFromKey(manifest.Key); err != nil {
		panic("extension: " + err.Error())
	}
	src, err := files.ReadFile("methods.js")
	if err != nil {
		panic("extension: methods.js is not embedded")
	}
	methods = parseList(methodsList, string(src))
	events = parseList(eventsList, string(src))
	if len(methods) == 0 || len(events) == 0 {
		panic("extension: methods.js lists no methods or no events")
	}
}

// idFromKey computes an extension id the way Chrome does: the SHA-256 of
// the DER public key, its first 32 hex digits spelled with a-p for 0-f.
func idFromKey(key string) (string, error) {
	der, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(der) == 0 {
		return "", fmt.Errorf("the manifest key is not base64 DER: %v", err)
	}
	sum := sha256.Sum256(der)
	h := hex.EncodeToString(sum[:16])
	var b strings.Builder
	for _, c := range h {
		if c >= 'a' {
			b.WriteRune('a' + 10 + (c - 'a'))
		} else {
			b.WriteRune('a' + (c - '0'))
		}
	}
	return b.String(), nil
}

var (
	methodsList = regexp.MustCompile(`(?s)METHODS\s*=\s*Object\.freeze\(\[(.*?)\]\)`)
	eventsList  = regexp.MustCompile(`(?s)EVENTS\s*=\s*Object\.freeze\(\[(.*?)\]\)`)
	quoted      = regexp.MustCompile(`'([A-Za-z]+)'`)
)

// parseList reads the names of one frozen list of methods.js, in order.
func parseList(list *regexp.Regexp, src string) []string {
	m := list.FindStringSubmatch(src)
	if m == nil {
		return nil
	}
	var out []string
	for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
		out = append(out, q[1])
	}
	return out
}

// ID is the extension's id in every browser it is loaded into, fixed by
// the public key in its manifest.
func ID() string { return id }

// Origin is the Origin header of the extension's WebSocket handshake.
func Origin() string { return "chrome-extension://" + id }

// Version is the manifest version, which the extension reports in hello.
func Version() string { return manifest.Version }

// Methods returns the wire methods the extension implements (a copy), as
// listed in methods.js, which the extension's router checks its handlers
// against at start-up.
func Methods() []string { return append([]string(nil), methods...) }

// Events returns the events the extension sends the server (a copy), as
// listed in methods.js.
func Events() []string { return append([]string(nil), events...) }

// FS returns the extension's files, rooted at the extension directory.
func FS() fs.FS { return files }

// Install writes the extension into dir (created 0755 as needed; files
// 0644), replacing an older copy: files of the extension are rewritten, and
// when dir held an earlier chromegate extension, its .js, .json, .html and
// .md files that this version lacks are removed. A directory holding
// another extension is refused.
func Install(dir string) error {
	if dir == "" {
		return fmt.Errorf("extension: install: no directory given")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("extension: install: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return fmt.Errorf("extension: install: %w", err)
	}
	stale, err := olderCopy(dir)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	err = fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			if path == "." {
				return nil
			}
			return os.MkdirAll(dst, 0o755)
		}
		want[path] = true
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		return writeFile(dst, b)
	})
	if err != nil {
		return fmt.Errorf("extension: install into %s: %w", dir, err)
	}
	if !stale {
		return nil
	}
	// Leftovers of an older version would be loaded with the new files.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("extension: install: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || want[name] || !ours(name) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("extension: install: removing the stale %s: %w", name, err)
		}
	}
	return nil
}

// olderCopy reports whether dir holds an earlier chromegate extension,
// whose leftovers Install may remove. A directory holding another
// extension is refused rather than overwritten.
func olderCopy(dir string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("extension: install: %w", err)
	}
	var m struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(b, &m) != nil || m.Name != "chromegate" {
		return false, fmt.Errorf("extension: install: %s holds another extension (its manifest.json is not chromegate's); choose an empty directory", dir)
	}
	return true, nil
}

func ours(name string) bool {
	switch filepath.Ext(name) {
	case ".js", ".json", ".html", ".md":
		return true
	}
	return false
}

// writeFile replaces dst atomically with mode 0644.
func writeFile(dst string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".chromegate-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(b); err != nil {
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
	return os.Rename(tmp.Name(), dst)
}
