package ext

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chromegate/chromegate/executor"
)

const testExt = "abcdefghijklmnopabcdefghijklmnop"

// logBuf collects the bridge's log for the secret-leak checks.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startBridge(t *testing.T, mod func(*Options)) (*Bridge, *logBuf) {
	t.Helper()
	logs := &logBuf{}
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

func token(t *testing.T, b *Bridge) string {
	t.Helper()
	h, err := ReadHandshake(b.opts.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	return h.Token
}

// fakeExt is a Go stand-in for the extension's connection module.
type fakeExt struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, b *Bridge, extID string) *fakeExt {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d/ext", b.Port()), &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {"chrome-extension://" + extID}}})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(MaxFrameBytes)
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &fakeExt{t: t, ws: ws}
}

func (f *fakeExt) send(v any) {
	f.t.Helper()
	data, _ := json.Marshal(v)
	if err := f.ws.Write(f.t.Context(), websocket.MessageText, data); err != nil {
		f.t.Fatal(err)
	}
}

// read returns the next frame, or the close status when the socket closed.
func (f *fakeExt) read() (Frame, websocket.StatusCode) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.t.Context(), 5*time.Second)
	defer cancel()
	_, data, err := f.ws.Read(ctx)
	if err != nil {
		return Frame{}, websocket.CloseStatus(err)
	}
	fr, err := DecodeFrame(data)
	if err != nil {
		f.t.Fatalf("bad frame from the bridge: %v: %s", err, data)
	}
	return fr, -1
}

func (f *fakeExt) hello(tok string) Frame {
	f.t.Helper()
	f.send(map[string]any{"v": 1, "type": "hello", "token": tok, "ext": map[string]any{"id": testExt, "version": "1.0"}})
	fr, code := f.read()
	if fr.Type != TypeWelcome {
		f.t.Fatalf("hello: got %+v (close %d), want welcome", fr, code)
	}
	return fr
}

// wantClose reads until the socket closes and checks the close code.
func (f *fakeExt) wantClose(want websocket.StatusCode) {
	f.t.Helper()
	for range 10 {
		_, code := f.read()
		if code != -1 {
			if code != want {
				f.t.Fatalf("closed with %d, want %d", code, want)
			}
			return
		}
	}
	f.t.Fatalf("socket not closed, want %d", want)
}

func TestHandshake(t *testing.T) {
	t.Parallel()
	b, logs := startBridge(t, nil)
	tok := token(t, b)
	cases := []struct {
		name  string
		hello map[string]any // nil: say nothing
		ext   string
	}{
		{"wrong token", map[string]any{"v": 1, "type": "hello", "token": strings.Repeat("0", 64), "ext": map[string]any{"id": testExt}}, testExt},
		{"wrong version", map[string]any{"v": 2, "type": "hello", "token": tok, "ext": map[string]any{"id": testExt}}, testExt},
		{"silence", nil, testExt},
		{"not a hello", map[string]any{"v": 1, "type": "ping", "id": "x"}, testExt},
		{"id differs from origin", map[string]any{"v": 1, "type": "hello", "token": tok, "ext": map[string]any{"id": "zzzz"}}, testExt},
		{"case-folded token field", map[string]any{"v": 1, "type": "hello", "Token": tok, "ext": map[string]any{"id": testExt}}, testExt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := dial(t, b, tc.ext)
			if tc.hello != nil {
				f.send(tc.hello)
			}
			fr, code := f.read()
			if code != -1 || fr.Type != TypeUnauthorized || fr.Reason == "" {
				t.Fatalf("got %+v close %d, want unauthorized", fr, code)
			}
			f.wantClose(CloseUnauthorized)
		})
	}
	if b.Conn() != nil {
		t.Fatal("a refused connection became current")
	}
	f := dial(t, b, testExt)
	w := f.hello(tok)
	if w.SessionID == "" || w.HeartbeatMs <= 0 || w.Scripts["element"] == "" || w.Token != "" {
		t.Fatalf("welcome = %+v", w)
	}
	if b.Conn() == nil || !b.Status().Connected || b.Status().PairedExt != testExt {
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
	req.Header.Set("Origin", "chrome-extension://"+testExt)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host evil.example: status %d, want 403", resp.StatusCode)
	}
}

// serve answers commands like the extension would, by method.
func (f *fakeExt) serve(answer func(Frame) (any, *WireError)) {
	go func() {
		for {
			_, data, err := f.ws.Read(context.Background())
			if err != nil {
				return
			}
			fr, err := DecodeFrame(data)
			if err != nil {
				continue
			}
			switch fr.Type {
			case TypeCommand:
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
					_ = f.ws.Write(context.Background(), websocket.MessageText, raw)
				}()
			case TypePing:
				raw, _ := json.Marshal(map[string]any{"v": 1, "type": "pong", "id": fr.ID})
				_ = f.ws.Write(context.Background(), websocket.MessageText, raw)
			}
		}
	}()
}

func connected(t *testing.T, mod func(*Options)) (*Bridge, *fakeExt, *Executor) {
	t.Helper()
	b, _ := startBridge(t, mod)
	f := dial(t, b, testExt)
	f.hello(token(t, b))
	ex, err := NewBackend(b, BackendOptions{DataDir: b.opts.DataDir}).Open(t.Context(), executor.DefaultSession)
	if err != nil {
		t.Fatal(err)
	}
	return b, f, ex.(*Executor)
}

func TestCallsInFlight(t *testing.T) {
	t.Parallel()
	_, f, ex := connected(t, nil)
	f.serve(func(fr Frame) (any, *WireError) {
		var p struct {
			Expression string `json:"expression"`
		}
		_ = json.Unmarshal(fr.Params, &p)
		// Answer in reverse order of arrival: the later calls first.
		d := map[string]time.Duration{"1": 300 * time.Millisecond, "2": 150 * time.Millisecond, "3": 0}[p.Expression]
		time.Sleep(d)
		return map[string]any{"tabId": *fr.TabID, "url": "http://x/", "ok": true, "value": p.Expression}, nil
	})
	var wg sync.WaitGroup
	for _, n := range []string{"1", "2", "3"} {
		wg.Go(func() {
			res, err := ex.Eval(t.Context(), executor.EvalParams{Expression: n})
			if err != nil {
				t.Errorf("call %s: %v", n, err)
				return
			}
			if string(res.Value) != `"`+n+`"` {
				t.Errorf("call %s got the answer %s", n, res.Value)
			}
		})
	}
	wg.Wait()
}

func TestTabIDsStamped(t *testing.T) {
	t.Parallel()
	_, f, ex := connected(t, nil)
	var gotTab string
	f.serve(func(fr Frame) (any, *WireError) {
		gotTab = *fr.TabID
		return map[string]any{"tabId": "42", "url": "http://x/"}, nil
	})
	res, err := ex.Text(t.Context(), executor.TextParams{})
	if err != nil {
		t.Fatal(err)
	}
	if gotTab != "" || !strings.HasPrefix(res.TabID, "ext:") || !strings.HasSuffix(res.TabID, ":42") {
		t.Fatalf("sent tab %q, got id %q", gotTab, res.TabID)
	}
	if _, err := ex.Text(t.Context(), executor.TextParams{TabID: res.TabID}); err != nil || gotTab != "42" {
		t.Fatalf("stamped id not unstamped: sent %q, err %v", gotTab, err)
	}
	_, err = ex.Text(t.Context(), executor.TextParams{TabID: "cdp:1a2b3c4d:7"})
	if executor.CodeOf(err) != executor.CodeStaleTab {
		t.Fatalf("a CDP tab id on the extension: %v, want STALE_TAB", err)
	}
}

func TestDeadlineKeepsSocket(t *testing.T) {
	t.Parallel()
	b, f, ex := connected(t, nil)
	f.serve(func(fr Frame) (any, *WireError) {
		if fr.Method == "text" {
			return nil, nil // hangs
		}
		return map[string]any{"tabId": "1", "url": "u", "ok": true}, nil
	})
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err := ex.Text(ctx, executor.TextParams{})
	if executor.CodeOf(err) != executor.CodeTimeout {
		t.Fatalf("hung call: %v, want TIMEOUT", err)
	}
	if b.Conn() == nil {
		t.Fatal("a timed-out call closed the connection")
	}
	if _, err := ex.Eval(t.Context(), executor.EvalParams{Expression: "1"}); err != nil {
		t.Fatalf("the next call after a timeout: %v", err)
	}
}

func TestCloseFailsPending(t *testing.T) {
	t.Parallel()
	b, f, ex := connected(t, nil)
	f.serve(func(Frame) (any, *WireError) { return nil, nil })
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := ex.Eval(t.Context(), executor.EvalParams{Expression: "1"})
			errs <- err
		}()
	}
	time.Sleep(100 * time.Millisecond)
	_ = f.ws.Close(websocket.StatusNormalClosure, "bye")
	for range 3 {
		if err := <-errs; executor.CodeOf(err) != executor.CodeExtensionDisconnected {
			t.Fatalf("pending call after close: %v, want EXTENSION_DISCONNECTED", err)
		}
	}
	select {
	case <-ex.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("Done not closed")
	}
	if b.Conn() != nil {
		t.Fatal("a closed connection is still current")
	}
	if _, err := NewBackend(b, BackendOptions{}).Open(t.Context(), ""); executor.CodeOf(err) != executor.CodeNoBackend {
		t.Fatalf("Open without a connection: %v, want NO_BACKEND", err)
	}
}

func TestErrorFrames(t *testing.T) {
	t.Parallel()
	_, f, ex := connected(t, nil)
	f.serve(func(fr Frame) (any, *WireError) {
		if fr.Method == "click" {
			return nil, &WireError{Code: "DEVTOOLS_OPEN", Message: "DevTools is open on this tab", Hint: "close DevTools"}
		}
		return nil, &WireError{Code: "MADE_UP", Message: "odd"}
	})
	_, err := ex.Click(t.Context(), executor.ClickParams{TargetParams: executor.TargetParams{Target: executor.Target{Selector: "a"}}})
	e := executor.AsError(err)
	if e.Code != executor.CodeDevtoolsOpen || e.Hint != "close DevTools" {
		t.Fatalf("got %v", err)
	}
	_, err = ex.Eval(t.Context(), executor.EvalParams{Expression: "1"})
	if executor.CodeOf(err) != executor.CodeInternal {
		t.Fatalf("unknown code: %v, want INTERNAL", err)
	}
}

func TestBackpressure(t *testing.T) {
	t.Parallel()
	b, f, ex := connected(t, func(o *Options) { o.MaxBuffered = 4 << 10 })
	f.serve(func(Frame) (any, *WireError) { return map[string]any{"tabId": "1", "ok": true}, nil })
	_, err := ex.Eval(t.Context(), executor.EvalParams{Expression: strings.Repeat("x", 8<<10)})
	if executor.CodeOf(err) != executor.CodeBackpressure {
		t.Fatalf("oversized send: %v, want BACKPRESSURE", err)
	}
	if b.Conn() == nil {
		t.Fatal("backpressure closed the connection")
	}
	if _, err := ex.Eval(t.Context(), executor.EvalParams{Expression: "1"}); err != nil {
		t.Fatalf("a small call after backpressure: %v", err)
	}
}

func TestDisplacement(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, nil)
	tok := token(t, b)
	first := dial(t, b, testExt)
	first.hello(tok)
	c1 := b.Conn()
	second := dial(t, b, testExt)
	second.hello(tok)
	first.wantClose(CloseSuperseded)
	st := b.Status()
	if st.LastDisplaced == nil || st.LastDisplaced.NewExt != testExt || b.Conn() == c1 || b.Conn() == nil {
		t.Fatalf("displacement not reported: %+v", st)
	}
}

func TestPinnedExtension(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, nil)
	tok := token(t, b)
	dial(t, b, testExt).hello(tok)
	other := "ponmlkjihgfedcbaponmlkjihgfedcba"
	f := dial(t, b, other)
	f.send(map[string]any{"v": 1, "type": "hello", "token": tok, "ext": map[string]any{"id": other}})
	if fr, _ := f.read(); fr.Reason != "extension not paired" {
		t.Fatalf("another extension with the right token: %+v", fr)
	}
	f.wantClose(CloseUnauthorized)
	// A restarted server remembers the pairing.
	if got := readPinned(b.opts.DataDir); got != testExt {
		t.Fatalf("paired.json holds %q", got)
	}
	// The kill switch: the old token stops working, the pairing is forgotten.
	if err := b.Rotate(); err != nil {
		t.Fatal(err)
	}
	if newTok := token(t, b); newTok == tok {
		t.Fatal("Rotate kept the token")
	}
	g := dial(t, b, other)
	g.send(map[string]any{"v": 1, "type": "hello", "token": tok, "ext": map[string]any{"id": other}})
	if fr, _ := g.read(); fr.Reason != "bad token" {
		t.Fatalf("old token after rotate: %+v", fr)
	}
	h := dial(t, b, other)
	h.send(map[string]any{"v": 1, "type": "hello", "token": token(t, b), "ext": map[string]any{"id": other}})
	if fr, _ := h.read(); fr.Type != TypeWelcome {
		t.Fatalf("re-pairing after rotate: %+v", fr)
	}
}

func TestRotateClosesConnection(t *testing.T) {
	t.Parallel()
	b, f, ex := connected(t, nil)
	f.serve(func(Frame) (any, *WireError) { return nil, nil })
	errc := make(chan error, 1)
	go func() {
		_, err := ex.Eval(t.Context(), executor.EvalParams{Expression: "1"})
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := b.Rotate(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; executor.CodeOf(err) != executor.CodeExtensionDisconnected {
		t.Fatalf("call across a rotation: %v", err)
	}
}

func TestPairingCode(t *testing.T) {
	t.Parallel()
	b, logs := startBridge(t, nil)
	tok := token(t, b)
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
	f := dial(t, b, testExt)
	f.send(map[string]any{"v": 1, "type": "hello", "code": strings.ToLower(got.Code), "ext": map[string]any{"id": testExt}})
	w, _ := f.read()
	if w.Type != TypeWelcome || w.Token != tok {
		t.Fatalf("welcome after a code must hand over the token: %+v", w.Type)
	}
	// Single use.
	g := dial(t, b, testExt)
	g.send(map[string]any{"v": 1, "type": "hello", "code": got.Code, "ext": map[string]any{"id": testExt}})
	if fr, _ := g.read(); fr.Reason != "bad code" {
		t.Fatalf("a reused code: %+v", fr)
	}
	// Expired.
	code, _ := b.NewCode(-time.Second)
	h := dial(t, b, testExt)
	h.send(map[string]any{"v": 1, "type": "hello", "code": code, "ext": map[string]any{"id": testExt}})
	if fr, _ := h.read(); fr.Reason != "bad code" {
		t.Fatalf("an expired code: %+v", fr)
	}
	if strings.Contains(logs.String(), tok) || strings.Contains(logs.String(), got.Code) {
		t.Fatal("a secret reached the log")
	}
}

func TestHandshakeFileMode(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, nil)
	fi, err := os.Stat(filepath.Join(b.opts.DataDir, HandshakeFile))
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
	h, err := ReadHandshake(b.opts.DataDir)
	if err != nil || h.Port != b.Port() || len(h.Token) != 64 {
		t.Fatalf("handshake %+v %v", h.Port, err)
	}
	// A readable pairing file is refused by readers (fail closed).
	if err := os.Chmod(filepath.Join(b.opts.DataDir, HandshakeFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadHandshake(b.opts.DataDir); err == nil {
		t.Fatal("a world-readable handshake file was accepted")
	}
	_ = b.Close()
	if _, err := os.Stat(filepath.Join(b.opts.DataDir, HandshakeFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Close left the handshake file: %v", err)
	}
}

func TestNonLoopbackRefused(t *testing.T) {
	t.Parallel()
	if _, err := Start(Options{DataDir: t.TempDir(), Addr: "0.0.0.0:0"}); err == nil {
		t.Fatal("the bridge listened on a non-loopback address")
	}
}

func TestHeartbeatWatchdog(t *testing.T) {
	t.Parallel()
	_, _, ex := connected(t, func(o *Options) { o.Heartbeat = 100 * time.Millisecond })
	// The fake never pings: three heartbeats later the bridge gives up.
	select {
	case <-ex.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("a silent connection was kept")
	}
}

// TestTokenNeverPrinted runs a whole session with stdout and stderr
// captured and searches them, and the log, for the token.
func TestTokenNeverPrinted(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	var captured bytes.Buffer
	done := make(chan struct{})
	go func() { _, _ = io.Copy(&captured, r); close(done) }()
	b, logs := startBridge(t, nil)
	tok := token(t, b)
	bad := dial(t, b, testExt)
	bad.send(map[string]any{"v": 1, "type": "hello", "token": tok[:63] + "x", "ext": map[string]any{"id": testExt}})
	bad.read()
	f := dial(t, b, testExt)
	f.hello(tok)
	f.serve(func(Frame) (any, *WireError) { return nil, &WireError{Code: "BAD_ARGS", Message: "no"} })
	ex, _ := NewBackend(b, BackendOptions{}).Open(t.Context(), "")
	_, _ = ex.Eval(t.Context(), executor.EvalParams{Expression: "1"})
	_ = b.Rotate()
	_ = b.Close()
	os.Stdout, os.Stderr = oldOut, oldErr
	w.Close()
	<-done
	for name, s := range map[string]string{"stdout/stderr": captured.String(), "log": logs.String()} {
		if strings.Contains(s, tok) || strings.Contains(s, tok[:16]) {
			t.Fatalf("the token reached %s", name)
		}
	}
	if !strings.Contains(logs.String(), "refused") {
		t.Fatal("the log is empty: the search proves nothing")
	}
}

// TestWelcomeComesFirst makes a call the instant the connection becomes
// current: the extension ignores everything before welcome, so the
// welcome must already be on its way.
func TestWelcomeComesFirst(t *testing.T) {
	t.Parallel()
	for range 20 {
		b, _ := startBridge(t, nil)
		be := NewBackend(b, BackendOptions{})
		called := make(chan struct{})
		go func() {
			defer close(called)
			for {
				if ex, err := be.Open(t.Context(), ""); err == nil {
					ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
					_, _ = ex.Tabs(ctx)
					cancel()
					return
				}
				time.Sleep(10 * time.Microsecond)
			}
		}()
		f := dial(t, b, testExt)
		f.send(map[string]any{"v": 1, "type": "hello", "token": token(t, b), "ext": map[string]any{"id": testExt}})
		if fr, _ := f.read(); fr.Type != TypeWelcome {
			t.Fatalf("first frame after hello is %q, want welcome", fr.Type)
		}
		<-called
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
			return errors.New("TypeError: globalThis.chromegatePair is not a function")
		}
		got = arg.(map[string]any)
		return nil
	})
	if err != nil || tries != 3 || got["token"] != token(t, b) || got["port"] != b.Port() {
		t.Fatalf("err %v after %d tries, arg port %v", err, tries, got["port"])
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err = b.PairOverCDP(ctx, func(context.Context, string, any) error { return errors.New("worker gone\nstack") })
	if err == nil || strings.Contains(err.Error(), token(t, b)) || strings.Contains(err.Error(), "stack") {
		t.Fatalf("a worker that never pairs: %v", err)
	}
}
