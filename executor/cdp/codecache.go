package cdp

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
)

// codeCacheJS is preloaded into the driver to keep V8's code cache of its
// bundles between starts (codecache.js says how and why).
//
//go:embed codecache.js
var codeCacheJS string

// noCodeCacheEnv names the environment variable that starts the driver
// without its code cache, as before: for measuring one against the other.
const noCodeCacheEnv = "CHROMEGATE_NO_CODE_CACHE"

// codeCacheExec is the shim's line that execs node with the code cache
// preloaded, or "" when the preload cannot be written (the driver then
// starts as it did without it).
func codeCacheExec(d Driver, node string) string {
	js, err := writeOnce(filepath.Join(DefaultCacheDir(), "bin"), "codecache-", ".js", codeCacheJS, 0o644)
	if err != nil {
		return ""
	}
	cache := filepath.Join(DefaultCacheDir(), "v8")
	return `[ -z "$` + noCodeCacheEnv + `" ] && CHROMEGATE_CODE_CACHE_DIR=` + shQuote(cache) +
		` CHROMEGATE_CODE_CACHE_ROOT=` + shQuote(filepath.Join(d.Dir, "package")) +
		` exec ` + node + ` --require ` + shQuote(js) + ` "$@"` + "\n"
}

// writeOnce writes content under dir in a file named by its hash, unless
// that file already holds it, and returns its path. The write is atomic.
func writeOnce(dir, prefix, suffix, content string, mode os.FileMode) (string, error) {
	sum := sha256.Sum256([]byte(content))
	path := filepath.Join(dir, prefix+hex.EncodeToString(sum[:8])+suffix)
	if cur, err := os.ReadFile(path); err == nil && string(cur) == content {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+prefix)
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	_, werr := f.WriteString(content)
	if err := errors.Join(werr, f.Chmod(mode), f.Close()); err != nil {
		return "", err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}
