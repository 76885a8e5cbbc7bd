package pairing

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// NativeHostName is the native-messaging host the extension asks for its
// pairing.
const NativeHostName = "com.chromegate.bridge"

// maxNativeMessage bounds a message from the browser (Chrome sends at most
// 64 MiB; the extension's requests are tiny).
const maxNativeMessage = 1 << 20

// ServeNativeHost speaks Chrome's native-messaging protocol (a 32-bit
// native-endian length, then JSON) on r and w until r ends. To
// {"type":"pairing"} it answers {"port", "token"} from the handshake file
// of dataDir, read afresh each time so a restarted server's new port is
// found. caller is the origin Chrome passes as the host's first argument;
// only allowedID may ask.
func ServeNativeHost(r io.Reader, w io.Writer, dataDir, caller, allowedID string) error {
	if strings.TrimSuffix(caller, "/") != "chrome-extension://"+allowedID {
		_ = writeNative(w, map[string]string{"error": "this host serves only the chromegate extension"})
		return fmt.Errorf("native host called by %q, not the chromegate extension", caller)
	}
	for {
		var n uint32
		if err := binary.Read(r, binary.NativeEndian, &n); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read message length: %w", err)
		}
		if n > maxNativeMessage {
			return fmt.Errorf("message of %d bytes is too large", n)
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("read message: %w", err)
		}
		var req struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(buf, &req); err != nil || req.Type != "pairing" {
			if err := writeNative(w, map[string]string{"error": "unknown request; send {\"type\":\"pairing\"}"}); err != nil {
				return err
			}
			continue
		}
		h, err := ReadHandshake(dataDir)
		var resp any = map[string]any{"port": h.Port, "token": h.Token}
		if err != nil {
			resp = map[string]string{"error": err.Error()}
		}
		if err := writeNative(w, resp); err != nil {
			return err
		}
	}
}

func writeNative(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := binary.Write(w, binary.NativeEndian, uint32(len(b))); err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// NativeHostInstall says where to register the native-messaging host.
type NativeHostInstall struct {
	// Binary is the chromegate executable the host runs.
	Binary string
	// DataDir is the server's data directory, whose handshake file the
	// host reads.
	DataDir string
	// ExtensionID is the only extension allowed to call the host.
	ExtensionID string
	// ProfileDirs are browser user-data directories to register in
	// (<dir>/NativeMessagingHosts); empty means the per-user locations of
	// Chrome and Chromium.
	ProfileDirs []string
}

// UserHostDirs are the per-user native-messaging directories of Chrome and
// Chromium on this system.
func UserHostDirs() ([]string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	switch runtime.GOOS {
	case "darwin":
		base := filepath.Join(home, "Library", "Application Support")
		return []string{filepath.Join(base, "Google", "Chrome", "NativeMessagingHosts"),
			filepath.Join(base, "Chromium", "NativeMessagingHosts")}, nil
	case "linux":
		cfg := os.Getenv("XDG_CONFIG_HOME")
		if cfg == "" {
			cfg = filepath.Join(home, ".config")
		}
		return []string{filepath.Join(cfg, "google-chrome", "NativeMessagingHosts"),
			filepath.Join(cfg, "chromium", "NativeMessagingHosts")}, nil
	}
	return nil, fmt.Errorf("native messaging registration on %s is not supported; pair with a code instead (`chromegate pair code`)", runtime.GOOS)
}

// InstallNativeHost writes a launcher script into the data directory and a
// host manifest into every target directory, returning the manifests
// written. The launcher bakes in the data directory, since Chrome starts
// the host with only the caller's origin as argument.
func InstallNativeHost(in NativeHostInstall) ([]string, error) {
	if in.Binary == "" || in.DataDir == "" || in.ExtensionID == "" {
		return nil, errors.New("native host: binary, data directory and extension id are required")
	}
	if err := EnsurePrivateDir(in.DataDir); err != nil {
		return nil, err
	}
	launcher := filepath.Join(in.DataDir, "native-host.sh")
	script := "#!/bin/sh\nexec " + shellQuote(in.Binary) + " native-host --data-dir " + shellQuote(in.DataDir) + " \"$@\"\n"
	if err := os.WriteFile(launcher, []byte(script), 0o700); err != nil {
		return nil, fmt.Errorf("write %s: %w", launcher, err)
	}
	if err := os.Chmod(launcher, 0o700); err != nil {
		return nil, err
	}
	dirs := make([]string, 0, len(in.ProfileDirs))
	for _, d := range in.ProfileDirs {
		dirs = append(dirs, filepath.Join(d, "NativeMessagingHosts"))
	}
	if len(dirs) == 0 {
		var err error
		if dirs, err = UserHostDirs(); err != nil {
			return nil, err
		}
	}
	manifest, _ := json.MarshalIndent(map[string]any{
		"name":            NativeHostName,
		"description":     "chromegate: hands the extension its pairing with the local server",
		"path":            launcher,
		"type":            "stdio",
		"allowed_origins": []string{"chrome-extension://" + in.ExtensionID + "/"},
	}, "", "  ")
	var written []string
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return written, fmt.Errorf("create %s: %w", d, err)
		}
		p := filepath.Join(d, NativeHostName+".json")
		if err := os.WriteFile(p, append(manifest, '\n'), 0o644); err != nil {
			return written, fmt.Errorf("write %s: %w", p, err)
		}
		written = append(written, p)
	}
	return written, nil
}

// RegisteredHost is a native-messaging host manifest found on disk.
type RegisteredHost struct {
	Manifest string // the manifest's path
	Launcher string // the program it names
	OK       bool   // the launcher exists and is executable
}

// FindNativeHosts lists the chromegate host manifests in dirs (default:
// the per-user locations of Chrome and Chromium).
func FindNativeHosts(dirs []string) []RegisteredHost {
	if len(dirs) == 0 {
		dirs, _ = UserHostDirs()
	}
	var out []RegisteredHost
	for _, d := range dirs {
		p := filepath.Join(d, NativeHostName+".json")
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var m struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(b, &m)
		h := RegisteredHost{Manifest: p, Launcher: m.Path}
		if fi, err := os.Stat(m.Path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o100 != 0 {
			h.OK = true
		}
		out = append(out, h)
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
