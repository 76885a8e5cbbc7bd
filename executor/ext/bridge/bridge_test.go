package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor/ext/internal/fakeext"
	"github.com/chromegate/chromegate/executor/ext/pairing"
	"github.com/chromegate/chromegate/executor/ext/wire"
)

func startBridge(t *testing.T, mod func(*Options)) (*Bridge, *fakeext.Log) {
	t.Helper()
	logs := &fakeext.Log{}
	opts := Options{DataDir: filepath.Join(t.TempDir(), "data"), HelloTimeout: 300 * time.Millisecond,
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Scripts: map[string]string{"element": "(() => 1)"}, Version: "test"}
	if mod != nil {
		mod(&opts)
	}
	b, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, logs
}

func TestHandshake(t *testing.T) {
	t.Parallel()
	b, logs := startBridge(t, nil)
	tok := fakeext.Token(t, b.opts.DataDir)
	cases := []struct {
		name  string
		hello map[string]any // nil: say nothing
		ext   string
	}{
		{"wrong token", map[string]any{"v": 1, "type": "hello", "token": strings.Repeat("0", 64), "ext": map[string]any{"id": fakeext.ID}}, fakeext.ID},
		{"wrong version", map[string]any{"v": 2, "type": "hello", "token": tok, "ext": map[string]any{"id": fakeext.ID}}, fakeext.ID},
		{"silence", nil, fakeext.ID},
		{"not a hello", map[string]any{"v": 1, "type": "ping", "id": "x"}, fakeext.ID},
		{"id differs from origin", map[string]any{"v": 1, "type": "hello", "token": tok, "ext": map[string]any{"id": "zzzz"}}, fakeext.ID},
		{"case-folded token field", map[string]any{"v": 1, "type": "hello", "Token": tok, "ext": map[string]any{"id": fakeext.ID}}, fakeext.ID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := fakeext.Dial(t, b.Port(), tc.ext)
			if tc.hello != nil {
				f.Send(tc.hello)
			}
			fr, code := f.Read()
			if code != -1 || fr.Type != wire.TypeUnauthorized || fr.Reason == "" {
				t.Fatalf("got %+v close %d, want unauthorized", fr, code)
			}
			f.WantClose(wire.CloseUnauthorized)
		})
	}
	if b.Conn() != nil {
		t.Fatal("a refused connection became current")
	}
	f := fakeext.Dial(t, b.Port(), fakeext.ID)
	w := f.Hello(tok)
	if w.SessionID == "" || w.HeartbeatMs <= 0 || w.Scripts["element"] == "" || w.Token != "" {
		t.Fatalf("welcome = %+v", w)
	}
	if b.Conn() == nil || !b.Status().Connected || b.Status().PairedExt != fakeext.ID {
		t.Fatalf("status after welcome: %+v", b.Status())
	}
	if strings.Contains(logs.String(), tok) {
		t.Fatal("the token reached the log")
	}
}

func TestNoExtensionOrigin(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, nil)
	for _, origin := range []string{"", "http://127.0.0.1:8000", "null", "chrome-extension://"} {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/ext", b.Port()), nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("origin %q: status %d, want 403", origin, resp.StatusCode)
		}
	}
	// A DNS-rebound name is refused even with an extension origin.
	req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/ext", b.Port()), nil)
	req.Host = "evil.example"
	req.Header.Set("Origin", "chrome-extension://"+fakeext.ID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host evil.example: status %d, want 403", resp.StatusCode)
	}
}

func TestDisplacement(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, nil)
	tok := fakeext.Token(t, b.opts.DataDir)
	first := fakeext.Dial(t, b.Port(), fakeext.ID)
	first.Hello(tok)
	c1 := b.Conn()
	second := fakeext.Dial(t, b.Port(), fakeext.ID)
	second.Hello(tok)
	first.WantClose(wire.CloseSuperseded)
	st := b.Status()
	if st.LastDisplaced == nil || st.LastDisplaced.NewExt != fakeext.ID || b.Conn() == c1 || b.Conn() == nil {
		t.Fatalf("displacement not reported: %+v", st)
	}
}

func TestPinnedExtension(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, nil)
	tok := fakeext.Token(t, b.opts.DataDir)
	fakeext.Dial(t, b.Port(), fakeext.ID).Hello(tok)
	other := "ponmlkjihgfedcbaponmlkjihgfedcba"
	f := fakeext.Dial(t, b.Port(), other)
	f.Send(map[string]any{"v": 1, "type": "hello", "token": tok, "ext": map[string]any{"id": other}})
	if fr, _ := f.Read(); fr.Reason != "extension not paired" {
		t.Fatalf("another extension with the right token: %+v", fr)
	}
	f.WantClose(wire.CloseUnauthorized)
	// A restarted server remembers the pairing.
	if got := pairing.PairedExtension(b.opts.DataDir); got != fakeext.ID {
		t.Fatalf("paired.json holds %q", got)
	}
	// The kill switch: the old token stops working, the pairing is forgotten.
	if err := b.Rotate(); err != nil {
		t.Fatal(err)
	}
	if newTok := fakeext.Token(t, b.opts.DataDir); newTok == tok {
		t.Fatal("Rotate kept the token")
	}
	g := fakeext.Dial(t, b.Port(), other)
	g.Send(map[string]any{"v": 1, "type": "hello", "token": tok, "ext": map[string]any{"id": other}})
	if fr, _ := g.Read(); fr.Reason != "bad token" {
		t.Fatalf("old token after rotate: %+v", fr)
	}
	h := fakeext.Dial(t, b.Port(), other)
	h.Send(map[string]any{"v": 1, "type": "hello", "token": fakeext.Token(t, b.opts.DataDir), "ext": map[string]any{"id": other}})
	if fr, _ := h.Read(); fr.Type != wire.TypeWelcome {
		t.Fatalf("re-pairing after rotate: %+v", fr)
	}
}

func TestPairingCode(t *testing.T) {
	t.Parallel()
	b, logs := startBridge(t, nil)
	tok := fakeext.Token(t, b.opts.DataDir)
	// `chromegate pair code` asks for a code with the token.
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/pair/code", b.Port()), nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Code string }
	_ = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(got.Code) != 9 {
		t.Fatalf("code endpoint: %d %+v", resp.StatusCode, got)
	}
	bad, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/pair/code", b.Port()), nil)
	bad.Header.Set("Authorization", "Bearer nope")
	if resp, err := http.DefaultClient.Do(bad); err != nil || resp.StatusCode != 401 {
		t.Fatalf("code without the token: %v %v", resp.StatusCode, err)
	}
	f := fakeext.Dial(t, b.Port(), fakeext.ID)
	f.Send(map[string]any{"v": 1, "type": "hello", "code": strings.ToLower(got.Code), "ext": map[string]any{"id": fakeext.ID}})
	w, _ := f.Read()
	if w.Type != wire.TypeWelcome || w.Token != tok {
		t.Fatalf("welcome after a code must hand over the token: %+v", w.Type)
	}
	// Single use.
	g := fakeext.Dial(t, b.Port(), fakeext.ID)
	g.Send(map[string]any{"v": 1, "type": "hello", "code": got.Code, "ext": map[string]any{"id": fakeext.ID}})
	if fr, _ := g.Read(); fr.Reason != "bad code" {
		t.Fatalf("a reused code: %+v", fr)
	}
	// Expired.
	code, _ := b.NewCode(-time.Second)
	h := fakeext.Dial(t, b.Port(), fakeext.ID)
	h.Send(map[string]any{"v": 1, "type": "hello", "code": code, "ext": map[string]any{"id": fakeext.ID}})
	if fr, _ := h.Read(); fr.Reason != "bad code" {
		t.Fatalf("an expired code: %+v", fr)
	}
	if strings.Contains(logs.String(), tok) || strings.Contains(logs.String(), got.Code) {
		t.Fatal("a secret reached the log")
	}
}

func TestHandshakeFileMode(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, nil)
	fi, err := os.Stat(filepath.Join(b.opts.DataDir, pairing.HandshakeFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("handshake.json mode %o", fi.Mode().Perm())
	}
	di, _ := os.Stat(b.opts.DataDir)
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode %o", di.Mode().Perm())
	}
	h, err := pairing.ReadHandshake(b.opts.DataDir)
	if err != nil || h.Port != b.Port() || len(h.Token) != 64 {
		t.Fatalf("handshake %+v %v", h.Port, err)
	}
	// A readable pairing file is refused by readers (fail closed).
	if err := os.Chmod(filepath.Join(b.opts.DataDir, pairing.HandshakeFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := pairing.ReadHandshake(b.opts.DataDir); err == nil {
		t.Fatal("a world-readable handshake file was accepted")
	}
	_ = b.Close()
	if _, err := os.Stat(filepath.Join(b.opts.DataDir, pairing.HandshakeFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Close left the handshake file: %v", err)
	}
}

func TestNonLoopbackRefused(t *testing.T) {
	t.Parallel()
	if _, err := Start(Options{DataDir: t.TempDir(), Addr: "0.0.0.0:0"}); err == nil {
		t.Fatal("the bridge listened on a non-loopback address")
	}
}

// TestPairOverCDPRetries hands the pairing to a worker that is not ready
// at first, and never lets the token into the error.
func TestPairOverCDPRetries(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, nil)
	tries := 0
	var got map[string]any
	err := b.PairOverCDP(t.Context(), func(_ context.Context, fn string, arg any) error {
		tries++
		if tries < 3 {
			return errors.New("wire.TypeError: globalThis.chromegatePair is not a function")
		}
		got = arg.(map[string]any)
		return nil
	})
	if err != nil || tries != 3 || got["token"] != fakeext.Token(t, b.opts.DataDir) || got["port"] != b.Port() {
		t.Fatalf("err %v after %d tries, arg port %v", err, tries, got["port"])
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err = b.PairOverCDP(ctx, func(context.Context, string, any) error { return errors.New("worker gone\nstack") })
	if err == nil || strings.Contains(err.Error(), fakeext.Token(t, b.opts.DataDir)) || strings.Contains(err.Error(), "stack") {
		t.Fatalf("a worker that never pairs: %v", err)
	}
}
