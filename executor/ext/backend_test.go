package ext

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/ext/bridge"
	"github.com/chromegate/chromegate/executor/ext/internal/fakeext"
	"github.com/chromegate/chromegate/executor/ext/wire"
)

// dataDirs are the data directories of the bridges startBridge started.
var dataDirs sync.Map // *bridge.Bridge -> string

func dataDir(b *bridge.Bridge) string {
	d, _ := dataDirs.Load(b)
	return d.(string)
}

// startBridge starts a real bridge on loopback; the backend's tests run
// over it with a fake extension (internal/fakeext) on the other end.
func startBridge(t *testing.T, mod func(*bridge.Options)) (*bridge.Bridge, *fakeext.Log) {
	t.Helper()
	logs := &fakeext.Log{}
	opts := bridge.Options{DataDir: filepath.Join(t.TempDir(), "data"), HelloTimeout: 300 * time.Millisecond,
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Scripts: map[string]string{"element": "(() => 1)"}, Version: "test"}
	if mod != nil {
		mod(&opts)
	}
	b, err := bridge.Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	dataDirs.Store(b, opts.DataDir)
	t.Cleanup(func() { _ = b.Close() })
	return b, logs
}

// connected is a backend's Executor over a bridge a fake extension said
// hello to.
func connected(t *testing.T, mod func(*bridge.Options)) (*bridge.Bridge, *fakeext.Ext, *Executor) {
	t.Helper()
	b, _ := startBridge(t, mod)
	f := fakeext.Dial(t, b.Port(), fakeext.ID)
	f.Hello(fakeext.Token(t, dataDir(b)))
	ex, err := NewBackend(b, BackendOptions{DataDir: dataDir(b)}).Open(t.Context(), executor.DefaultSession)
	if err != nil {
		t.Fatal(err)
	}
	return b, f, ex.(*Executor)
}

func TestCallsInFlight(t *testing.T) {
	t.Parallel()
	_, f, ex := connected(t, nil)
	f.Serve(func(fr wire.Frame) (any, *wire.Error) {
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
	f.Serve(func(fr wire.Frame) (any, *wire.Error) {
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
	f.Serve(func(fr wire.Frame) (any, *wire.Error) {
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
	f.Serve(func(wire.Frame) (any, *wire.Error) { return nil, nil })
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := ex.Eval(t.Context(), executor.EvalParams{Expression: "1"})
			errs <- err
		}()
	}
	time.Sleep(100 * time.Millisecond)
	_ = f.WS.Close(websocket.StatusNormalClosure, "bye")
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
	f.Serve(func(fr wire.Frame) (any, *wire.Error) {
		if fr.Method == "click" {
			return nil, &wire.Error{Code: "DEVTOOLS_OPEN", Message: "DevTools is open on this tab", Hint: "close DevTools"}
		}
		return nil, &wire.Error{Code: "MADE_UP", Message: "odd"}
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

// A ref the page's registry refused comes as error.ref, and the server
// words it (executor.RefError), whatever the extension's own words were.
func TestRefErrorFrames(t *testing.T) {
	t.Parallel()
	_, f, ex := connected(t, nil)
	f.Serve(func(fr wire.Frame) (any, *wire.Error) {
		return nil, &wire.Error{Code: "BAD_ARGS", Message: "the extension's words",
			Ref: &wire.RefFailure{Ref: "kq12", Failure: "expired", Why: "removed"}}
	})
	_, err := ex.Click(t.Context(), executor.ClickParams{TargetParams: executor.TargetParams{Target: executor.Target{Ref: "kq12"}}})
	want := executor.RefError("kq12", "expired", "removed")
	if e := executor.AsError(err); e == nil || e.Code != want.Code || e.Message != want.Message || e.Hint != want.Hint {
		t.Fatalf("got %v, want %v", err, want)
	}
}

func TestBackpressure(t *testing.T) {
	t.Parallel()
	b, f, ex := connected(t, func(o *bridge.Options) { o.MaxBuffered = 4 << 10 })
	f.Serve(func(wire.Frame) (any, *wire.Error) { return map[string]any{"tabId": "1", "ok": true}, nil })
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

func TestRotateClosesConnection(t *testing.T) {
	t.Parallel()
	b, f, ex := connected(t, nil)
	f.Serve(func(wire.Frame) (any, *wire.Error) { return nil, nil })
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

func TestHeartbeatWatchdog(t *testing.T) {
	t.Parallel()
	_, _, ex := connected(t, func(o *bridge.Options) { o.Heartbeat = 100 * time.Millisecond })
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
	tok := fakeext.Token(t, dataDir(b))
	bad := fakeext.Dial(t, b.Port(), fakeext.ID)
	bad.Send(map[string]any{"v": 1, "type": "hello", "token": tok[:63] + "x", "ext": map[string]any{"id": fakeext.ID}})
	bad.Read()
	f := fakeext.Dial(t, b.Port(), fakeext.ID)
	f.Hello(tok)
	f.Serve(func(wire.Frame) (any, *wire.Error) { return nil, &wire.Error{Code: "BAD_ARGS", Message: "no"} })
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
		f := fakeext.Dial(t, b.Port(), fakeext.ID)
		f.Send(map[string]any{"v": 1, "type": "hello", "token": fakeext.Token(t, dataDir(b)), "ext": map[string]any{"id": fakeext.ID}})
		if fr, _ := f.Read(); fr.Type != wire.TypeWelcome {
			t.Fatalf("first frame after hello is %q, want welcome", fr.Type)
		}
		<-called
	}
}
