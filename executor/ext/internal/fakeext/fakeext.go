// Package fakeext is a Go stand-in for the extension's connection module,
// for the tests of the bridge and of the backend: it dials a bridge, says
// hello, answers commands and reads what the bridge sends.
package fakeext

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chromegate/chromegate/executor/ext/pairing"
	"github.com/chromegate/chromegate/executor/ext/wire"
)

// ID is the extension id the fake says it is.
const ID = "abcdefghijklmnopabcdefghijklmnop"

// Ext is one fake extension connection.
type Ext struct {
	t  *testing.T
	WS *websocket.Conn
}

// Dial opens a connection to the bridge on port with the Origin of extID.
func Dial(t *testing.T, port int, extID string) *Ext {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d/ext", port), &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {"chrome-extension://" + extID}}})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(wire.MaxFrameBytes)
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &Ext{t: t, WS: ws}
}

// Token is the token in the handshake file of dataDir.
func Token(t *testing.T, dataDir string) string {
	t.Helper()
	h, err := pairing.ReadHandshake(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	return h.Token
}

// Send writes v as one text frame.
func (f *Ext) Send(v any) {
	f.t.Helper()
	data, _ := json.Marshal(v)
	if err := f.WS.Write(f.t.Context(), websocket.MessageText, data); err != nil {
		f.t.Fatal(err)
	}
}

// Read returns the next frame, or the close status when the socket closed.
func (f *Ext) Read() (wire.Frame, websocket.StatusCode) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.t.Context(), 5*time.Second)
	defer cancel()
	_, data, err := f.WS.Read(ctx)
	if err != nil {
		return wire.Frame{}, websocket.CloseStatus(err)
	}
	fr, err := wire.Decode(data)
	if err != nil {
		f.t.Fatalf("bad frame from the bridge: %v: %s", err, data)
	}
	return fr, -1
}

// Hello says hello with tok as ID and wants a welcome.
func (f *Ext) Hello(tok string) wire.Frame {
	f.t.Helper()
	f.Send(map[string]any{"v": 1, "type": "hello", "token": tok, "ext": map[string]any{"id": ID, "version": "1.0"}})
	fr, code := f.Read()
	if fr.Type != wire.TypeWelcome {
		f.t.Fatalf("hello: got %+v (close %d), want welcome", fr, code)
	}
	return fr
}

// WantClose reads until the socket closes and checks the close code.
func (f *Ext) WantClose(want websocket.StatusCode) {
	f.t.Helper()
	for range 10 {
		_, code := f.Read()
		if code != -1 {
			if code != want {
				f.t.Fatalf("closed with %d, want %d", code, want)
			}
			return
		}
	}
	f.t.Fatalf("socket not closed, want %d", want)
}

// Serve answers commands like the extension would, by method, and pings
// with pongs: answer returns the result's data, or an error, or neither
// (the command is never answered).
func (f *Ext) Serve(answer func(wire.Frame) (any, *wire.Error)) {
	go func() {
		for {
			_, data, err := f.WS.Read(context.Background())
			if err != nil {
				return
			}
			fr, err := wire.Decode(data)
			if err != nil {
				continue
			}
			switch fr.Type {
			case wire.TypeCommand:
				go func() {
					d, werr := answer(fr)
					out := map[string]any{"v": 1, "id": fr.ID}
					if werr != nil {
						out["type"], out["error"] = "error", werr
					} else if d != nil {
						out["type"], out["data"] = "result", d
					} else {
						return // never answers
					}
					raw, _ := json.Marshal(out)
					_ = f.WS.Write(context.Background(), websocket.MessageText, raw)
				}()
			case wire.TypePing:
				raw, _ := json.Marshal(map[string]any{"v": 1, "type": "pong", "id": fr.ID})
				_ = f.WS.Write(context.Background(), websocket.MessageText, raw)
			}
		}
	}()
}

// Decisions reads frames until it has one decision per id (other frames
// are skipped).
func (f *Ext) Decisions(n int) map[string]wire.Frame {
	f.t.Helper()
	out := map[string]wire.Frame{}
	for len(out) < n {
		fr, code := f.Read()
		if code != -1 {
			f.t.Fatalf("socket closed (%d) with %d of %d decisions", code, len(out), n)
		}
		if fr.Type == wire.TypeDecision {
			out[fr.ID] = fr
		}
	}
	return out
}

// Log collects a bridge's log, for the secret-leak checks.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
