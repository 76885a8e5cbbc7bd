package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/coder/websocket"
)

// TestExtensionWorkerRestart stops the extension's service worker for
// real, in a Chromium run as a user would, while it drives a page with a
// frame of another site and one of another origin: the worker comes back
// (chrome.alarms re-dials every 30 s, other events wake it sooner), and
// refs of the main document and of both frames, taken before the
// restart, still act and read without a new snapshot, twice over — what chrome.storage.session keeps (store.js, world.js,
// frames.js) is enough to go on.
func TestExtensionWorkerRestart(t *testing.T) {
	testkit.Backends(t, testkit.Ext)
	site := newXframeSite(t)
	s, profile := pairedChromium(t, []string{"--policy=" + xframePolicy(t), "--allow-domain=allowed.test",
		"--allow-domain=sub.allowed.test", "--allow-domain=widget.test", "--enable-mutations", "--unsafe-enable-eval"},
		"--remote-debugging-port=0", "--host-resolver-rules=MAP *.test 127.0.0.1")
	devtools := browserCDP(t, profile)

	s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/outer?frames=pay,sub"})
	_, outline := s.snapshotOf(nil)
	own := refOf(t, outline, "button Own button")
	pay := refOf(t, outline, "button Pay now")
	sub := refOf(t, outline, "button Sub button")

	// Twice: what a restarted worker restored must be kept again for the
	// next restart.
	for round := 1; round <= 2; round++ {
		stopWorker(t, s, devtools)

		// The refs of before, without a new snapshot.
		s.call("click", map[string]any{"ref": own})
		if !sawTimes(site, "allowed.test:click:own", round) {
			t.Errorf("restart %d: the click by the main document's ref did not land: %q", round, site.seen())
		}
		s.call("click", map[string]any{"ref": pay})
		if !sawTimes(site, "widget.test:click:btn", round) {
			t.Errorf("restart %d: the click by the out-of-process frame's ref did not land: %q", round, site.seen())
		}
		s.call("click", map[string]any{"ref": sub})
		if !sawTimes(site, "sub.allowed.test:click:subbtn", round) {
			t.Errorf("restart %d: the click by the in-process frame's ref did not land: %q", round, site.seen())
		}
		if txt := resultText(s.call("get_text", map[string]any{"ref": pay})); !strings.Contains(txt, "Pay now") {
			t.Errorf("restart %d: get_text by the frame's ref: %s", round, short(txt))
		}
		if txt := resultText(s.call("get_text", map[string]any{"ref": own})); !strings.Contains(txt, "Own button") {
			t.Errorf("restart %d: get_text by the main document's ref: %s", round, short(txt))
		}
		if got := s.evalString(`document.title`); got != "Outer" {
			t.Errorf("restart %d: eval: title %q", round, got)
		}
	}
}

// stopWorker stops the extension's service worker with Target.closeTarget
// on its service_worker target (what Puppeteer's WebWorker.close does) and
// proves it: a mark left in its memory is gone from the worker that comes
// back, and its connection to the server closed in between. It returns
// once the restarted worker is connected again (on its own: the alarm, a
// debugger event or any other wake-up).
func stopWorker(t *testing.T, s *server, devtools *devtoolsConn) {
	t.Helper()
	closed := strings.Count(s.log.String(), "extension connection closed")
	connected := strings.Count(s.log.String(), "extension connected")
	sw := devtools.extensionWorker()
	devtools.evalIn(sw, `globalThis.e2eBeforeRestart = true`)
	if mark := devtools.evalIn(sw, `String(globalThis.e2eBeforeRestart)`); mark != `"true"` {
		t.Fatalf("the mark in the worker reads %s", mark)
	}
	devtools.send("Target.closeTarget", map[string]any{"targetId": sw})
	t0 := time.Now()
	waitServerLog(t, s, "extension connection closed", closed, 30*time.Second)
	t.Logf("worker stopped: its connection closed after %s", time.Since(t0).Round(time.Millisecond))
	waitServerLog(t, s, "extension connected", connected, 90*time.Second)
	s.waitPaired()
	t.Logf("worker back and connected %s after it stopped", time.Since(t0).Round(time.Millisecond))
	if now := devtools.extensionWorkerOr(""); now == "" {
		t.Fatal("connected again, but no service worker of the extension runs")
	} else if mark := devtools.evalIn(now, `String(globalThis.e2eBeforeRestart)`); mark != `"undefined"` {
		t.Fatalf("the worker connected again is the old one (its memory holds the mark: %s), not a restarted one", mark)
	}
}

// sawTimes waits until the site heard what n times.
func sawTimes(site *xframeSite, what string, n int) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if countOf(site.seen(), what) >= n {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// waitServerLog waits until the server's log holds phrase more than had times.
func waitServerLog(t *testing.T, s *server, phrase string, had int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for strings.Count(s.log.String(), phrase) <= had {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not log %q within %s", phrase, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// devtoolsConn is a plain CDP connection to a browser's DevTools port.
type devtoolsConn struct {
	t    *testing.T
	ws   *websocket.Conn
	next atomic.Int64
}

// browserCDP connects to the browser-wide DevTools endpoint of the
// Chromium whose profile is given (its DevToolsActivePort).
func browserCDP(t *testing.T, profile string) *devtoolsConn {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var port, path string
	for {
		b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if err == nil && len(lines) == 2 && lines[0] != "" {
			port, path = lines[0], lines[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Chromium wrote no DevToolsActivePort: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://127.0.0.1:"+port+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(16 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &devtoolsConn{t: t, ws: ws}
}

// send runs one browser-level CDP method and returns its result; events
// read on the way are dropped.
func (d *devtoolsConn) send(method string, params map[string]any) json.RawMessage {
	d.t.Helper()
	return d.sendTo("", method, params)
}

// sendTo is send in a session of an attached target ("" for the browser).
func (d *devtoolsConn) sendTo(session, method string, params map[string]any) json.RawMessage {
	d.t.Helper()
	id := d.next.Add(1)
	m := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		m["sessionId"] = session
	}
	msg, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.ws.Write(ctx, websocket.MessageText, msg); err != nil {
		d.t.Fatalf("%s: %v", method, err)
	}
	for {
		_, b, err := d.ws.Read(ctx)
		if err != nil {
			d.t.Fatalf("%s: %v", method, err)
		}
		var r struct {
			ID     int64           `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &r) != nil || r.ID != id {
			continue
		}
		if r.Error != nil {
			d.t.Fatalf("%s: %s", method, r.Error.Message)
		}
		return r.Result
	}
}

// evalIn evaluates expr in a target (attached to for the call) and
// returns its value as JSON.
func (d *devtoolsConn) evalIn(targetID, expr string) string {
	d.t.Helper()
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(d.send("Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true}), &att); err != nil {
		d.t.Fatal(err)
	}
	defer d.send("Target.detachFromTarget", map[string]any{"sessionId": att.SessionID})
	var got struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(d.sendTo(att.SessionID, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}), &got); err != nil {
		d.t.Fatal(err)
	}
	if got.Exception != nil {
		d.t.Fatalf("evaluating %s in %s: %s", expr, targetID, got.Exception.Text)
	}
	return string(got.Result.Value)
}

// extensionWorkerOr is the target id of the extension's service worker,
// or none when it does not run.
func (d *devtoolsConn) extensionWorkerOr(none string) string {
	d.t.Helper()
	var got struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			URL      string `json:"url"`
		} `json:"targetInfos"`
	}
	if err := json.Unmarshal(d.send("Target.getTargets", nil), &got); err != nil {
		d.t.Fatal(err)
	}
	for _, ti := range got.TargetInfos {
		if ti.Type == "service_worker" && strings.HasPrefix(ti.URL, "chrome-extension://") && strings.HasSuffix(ti.URL, "/sw.js") {
			return ti.TargetID
		}
	}
	return none
}

// extensionWorker is the running worker's target id; the test fails
// without one.
func (d *devtoolsConn) extensionWorker() string {
	d.t.Helper()
	id := d.extensionWorkerOr("")
	if id == "" {
		d.t.Fatal("no service worker of the extension among the browser's targets")
	}
	return id
}
