package pairing

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func nativeMsg(v any) []byte {
	b, _ := json.Marshal(v)
	var out bytes.Buffer
	_ = binary.Write(&out, binary.NativeEndian, uint32(len(b)))
	out.Write(b)
	return out.Bytes()
}

func readNative(t *testing.T, r *bytes.Buffer) map[string]any {
	t.Helper()
	var n uint32
	if err := binary.Read(r, binary.NativeEndian, &n); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Next(int(n)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const testExt = "abcdefghijklmnopabcdefghijklmnop"

func TestNativeHost(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	tok, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHandshake(dir, Handshake{Port: 4321, Token: tok, PID: os.Getpid(), Version: 1}); err != nil {
		t.Fatal(err)
	}
	in := bytes.NewBuffer(append(nativeMsg(map[string]string{"type": "pairing"}), nativeMsg(map[string]string{"type": "other"})...))
	var out bytes.Buffer
	if err := ServeNativeHost(in, &out, dir, "chrome-extension://"+testExt+"/", testExt); err != nil {
		t.Fatal(err)
	}
	got := readNative(t, &out)
	if got["token"] != tok || got["port"] != float64(4321) {
		t.Fatalf("pairing answer %v", got["port"])
	}
	if bad := readNative(t, &out); bad["error"] == nil {
		t.Fatalf("unknown request answered %v", bad)
	}
	// Another caller is refused, and gets no token.
	out.Reset()
	err = ServeNativeHost(bytes.NewBuffer(nativeMsg(map[string]string{"type": "pairing"})), &out, dir, "chrome-extension://evil/", testExt)
	if err == nil || strings.Contains(out.String(), tok) {
		t.Fatalf("foreign caller: err %v", err)
	}
	// No server: a clear error, not a crash.
	out.Reset()
	if err := ServeNativeHost(bytes.NewBuffer(nativeMsg(map[string]string{"type": "pairing"})), &out, t.TempDir(), "chrome-extension://"+testExt+"/", testExt); err != nil {
		t.Fatal(err)
	}
	if m := readNative(t, &out); !strings.Contains(m["error"].(string), "chromegate serve") {
		t.Fatalf("no server: %v", m)
	}
}

func TestInstallNativeHost(t *testing.T) {
	t.Parallel()
	dir, profile := t.TempDir(), t.TempDir()
	written, err := InstallNativeHost(NativeHostInstall{Binary: "/opt/chrome gate/chromegate", DataDir: filepath.Join(dir, "data"),
		ExtensionID: testExt, ProfileDirs: []string{profile}})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 1 || written[0] != filepath.Join(profile, "NativeMessagingHosts", NativeHostName+".json") {
		t.Fatalf("written %v", written)
	}
	var m struct {
		Name, Path, Type string
		AllowedOrigins   []string `json:"allowed_origins"`
	}
	raw, _ := os.ReadFile(written[0])
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Name != NativeHostName || m.Type != "stdio" || len(m.AllowedOrigins) != 1 || m.AllowedOrigins[0] != "chrome-extension://"+testExt+"/" {
		t.Fatalf("manifest %+v", m)
	}
	script, _ := os.ReadFile(m.Path)
	if !strings.Contains(string(script), `'/opt/chrome gate/chromegate' native-host --data-dir`) {
		t.Fatalf("launcher %s", script)
	}
	if fi, _ := os.Stat(m.Path); fi.Mode().Perm() != 0o700 {
		t.Fatalf("launcher mode %o", fi.Mode().Perm())
	}
}
