package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBadInput: each bad call returns isError with the right code (or the
// documented result), and the next call still works.
func TestBadInput(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	base := site(t)
	s := startServer(t, permissive...)
	s.call("navigate", map[string]any{"url": base + "/form"})
	current := tabIDs(s)[0]
	backend, session := strings.Split(current, ":")[0], strings.Split(current, ":")[1]

	cases := []struct {
		name string
		tool string
		args map[string]any
		code string // "" = a documented non-error result, checked by check
		want string // a substring of the text
	}{
		{"invalid URL", "navigate", map[string]any{"url": "not a url"}, "BAD_ARGS", ""},
		{"unknown tab id", "click", map[string]any{"tab_id": "nonsense", "selector": "#counter"}, "TAB_NOT_FOUND", "tabs_list"},
		{"closed tab id", "get_text", map[string]any{"tab_id": backend + ":" + session + ":999"}, "TAB_NOT_FOUND", ""},
		{"stale tab id", "click", map[string]any{"tab_id": backend + ":0badcafe:1", "selector": "#counter"}, "STALE_TAB", "tabs_list"},
		{"both selector and ref", "click", map[string]any{"selector": "#counter", "ref": "e1"}, "BAD_ARGS", "exactly one"},
		{"neither selector nor ref", "click", map[string]any{}, "BAD_ARGS", ""},
		{"selector that never appears", "click", map[string]any{"selector": "#never-there", "timeout_ms": 1500}, "SELECTOR_NOT_FOUND", "#never-there"},
		{"wait_for deadline", "wait_for", map[string]any{"selector": "#never-there", "timeout_ms": 800}, "TIMEOUT", ""},
		{"wrong argument type", "navigate", map[string]any{"url": 42}, "BAD_ARGS", "url"},
		{"unknown argument", "navigate", map[string]any{"url": base + "/form", "urll": "x"}, "BAD_ARGS", "urll"},
		{"missing file", "set_files", map[string]any{"selector": "#files", "paths": []string{"/nonexistent/file.txt"}}, "BAD_ARGS", "/nonexistent/file.txt"},
		{"file outside the upload dirs", "set_files", map[string]any{"selector": "#files", "paths": []string{"/etc/passwd"}}, "BAD_ARGS", "outside the upload directories"},
		{"eval that throws", "eval", map[string]any{"expression": "throw new Error('boom')"}, "", "boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.code == "" {
				res := s.call(c.tool, c.args)
				txt := resultText(res)
				if !strings.Contains(txt, `"ok":false`) || !strings.Contains(txt, c.want) || !strings.Contains(string(structuredData(res)), `"ok":false`) {
					t.Fatalf("want a result with ok:false and %q, got %s", c.want, txt)
				}
			} else {
				txt := s.fail(c.code, c.tool, c.args)
				if c.want != "" && !strings.Contains(txt, c.want) {
					t.Fatalf("error text lacks %q: %s", c.want, txt)
				}
				if !strings.Contains(txt, "Next:") {
					t.Fatalf("error text does not say what to do next: %s", txt)
				}
			}
			// The server keeps serving.
			if ids := tabIDs(s); len(ids) == 0 {
				t.Fatal("no tabs after the bad call")
			}
		})
	}

	t.Run("huge output is capped with a marker", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": base + "/big"})
		txt := resultText(s.call("get_text", nil))
		if len(txt) > 110_000 || !strings.Contains(txt, "truncated") {
			t.Fatalf("get_text of a 480 KB page: %d chars, marker present=%v", len(txt), strings.Contains(txt, "truncated"))
		}
	})
	t.Run("dialogs never hang a call", func(t *testing.T) {
		// Each is left open for the model, never answered for it: the
		// click returns with it open, and the page goes on as answered.
		s.call("navigate", map[string]any{"url": base + "/dialogs"})
		res := s.call("click", map[string]any{"selector": "#alert"})
		if txt := resultText(res); !strings.Contains(txt, "hello from alert") || !strings.Contains(txt, `"action":"open"`) {
			t.Fatalf("the alert is not reported open: %s", txt)
		}
		s.call("dialog_answer", map[string]any{"accept": true})
		s.call("click", map[string]any{"selector": "#confirm"})
		s.call("dialog_answer", map[string]any{"accept": false})
		s.call("click", map[string]any{"selector": "#prompt"})
		s.call("dialog_answer", map[string]any{"accept": true})
		got := s.evalString(`document.querySelector('#alert').textContent + '|' + document.querySelector('#confirm').textContent + '|' + document.querySelector('#prompt').textContent`)
		if got != "after alert|confirm=false|prompt=default-answer" {
			t.Fatalf("dialogs handled as %q", got)
		}
		// An alert a timer opens after the call: the next call says so
		// at once, and goes through once it is answered.
		// (The alert may open before the eval's result is read back: then
		// the eval says so.)
		if res := s.try("eval", map[string]any{"expression": `setTimeout(() => alert('async alert'), 0); 1`}); res.IsError && !strings.HasPrefix(resultText(res), "DIALOG_OPEN") {
			t.Fatalf("eval: %s", resultText(res))
		}
		time.Sleep(200 * time.Millisecond)
		if res := s.try("get_text", nil); !res.IsError || !strings.HasPrefix(resultText(res), "DIALOG_OPEN") {
			t.Fatalf("get_text while the timer's alert is open: %s", resultText(res))
		}
		s.call("dialog_answer", map[string]any{"accept": true})
		s.call("get_text", nil)
	})
	t.Run("unknown tool is a protocol error", func(t *testing.T) {
		_, err := s.session.CallTool(context.Background(), &sdk.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
		if err == nil {
			t.Fatal("calling an unknown tool did not fail")
		}
		s.call("tabs_list", nil)
	})
}

// TestBrowserKilled: killing Chromium between calls and during a call fails
// the call in flight promptly and the next call relaunches the browser.
func TestBrowserKilled(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	base := site(t)
	s := startServer(t, permissive...)
	s.call("navigate", map[string]any{"url": base + "/form"})

	t.Run("between calls", func(t *testing.T) {
		first := s.browserPID()
		s.killBrowser()
		// The next call relaunches once the server has noticed the death.
		waitFor(t, 10*time.Second, func() bool {
			return strings.Contains(resultText(s.call("chrome_status", nil)), `"live":false`)
		})
		res := s.call("navigate", map[string]any{"url": base + "/other"})
		if !strings.Contains(resultText(res), "Other page") {
			t.Fatalf("after relaunch: %s", resultText(res))
		}
		if pid := s.browserPID(); pid == 0 || pid == first {
			t.Fatalf("no new browser process (old %d, now %d)", first, pid)
		}
	})
	t.Run("during a call", func(t *testing.T) {
		done := make(chan *sdk.CallToolResult, 1)
		go func() {
			res, err := s.session.CallTool(context.Background(), &sdk.CallToolParams{Name: "wait_for",
				Arguments: map[string]any{"selector": "#never", "timeout_ms": 60000}})
			if err != nil {
				res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "protocol error: " + err.Error()}}}
			}
			done <- res
		}()
		time.Sleep(time.Second)
		s.killBrowser()
		select {
		case res := <-done:
			if !res.IsError {
				t.Fatalf("the call in flight succeeded after the browser was killed: %s", resultText(res))
			}
			if txt := resultText(res); strings.HasPrefix(txt, "protocol error") {
				t.Fatalf("the call in flight failed at the protocol level, want isError: %s", txt)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the call in flight did not fail after the browser was killed (it waits for its own 60 s deadline)")
		}
		res := s.call("navigate", map[string]any{"url": base + "/form"})
		if !strings.Contains(resultText(res), "Test form") {
			t.Fatalf("the next call did not relaunch: %s", resultText(res))
		}
	})
	t.Run("nothing is left behind after exit", func(t *testing.T) {
		if len(s.procs()) < 2 {
			t.Fatalf("expected the server, a driver and a browser to be running, found pids %v", s.procs())
		}
		s.stop()
		waitFor(t, 15*time.Second, func() bool { return len(s.procs()) == 0 })
	})
}

// TestSignalsCloseEverything: SIGTERM and stdin EOF each leave no chromium or
// node process behind.
func TestSignalsCloseEverything(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	base := site(t)
	for _, how := range []string{"sigterm", "eof"} {
		t.Run(how, func(t *testing.T) {
			s := startServer(t, permissive...)
			s.call("navigate", map[string]any{"url": base + "/form"})
			if s.browserPID() == 0 {
				t.Fatal("no browser running")
			}
			if how == "sigterm" {
				if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
			}
			s.stop() // closes stdin: EOF
			waitFor(t, 15*time.Second, func() bool { return len(s.procs()) == 0 })
		})
	}
}

// TestDemo runs the README's first command end to end.
func TestDemo(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	out := t.TempDir()
	cmd := exec.Command(binary, "demo", "--out", out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromegate demo: %v\n%s", err, b)
	}
	text := string(b)
	for _, want := range []string{"→ navigate", "→ click", "Thanks, Ada Lovelace", "POLICY_DENIED", "demo finished"} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q:\n%s", want, text)
		}
	}
	st, err := os.Stat(filepath.Join(out, "screenshot.png"))
	if err != nil || st.Size() < 1000 {
		t.Fatalf("demo screenshot: %v", err)
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestMissingBrowser: with no usable browser, calls fail with LAUNCH_FAILED
// and the fix, and the server keeps serving.
func TestMissingBrowser(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	s := startServer(t, "--executable-path=/nonexistent/chromium", "--allow-domain=127.0.0.1")
	txt := s.fail("LAUNCH_FAILED", "navigate", map[string]any{"url": "http://127.0.0.1:1/"})
	if !strings.Contains(txt, "/nonexistent/chromium") || !strings.Contains(txt, "apt-get install -y chromium") {
		t.Fatalf("the error should name the missing browser and the fix: %s", txt)
	}
	if txt := resultText(s.call("chrome_status", nil)); !strings.Contains(txt, `"live":false`) {
		t.Fatalf("chrome_status: %s", txt)
	}
	s.fail("LAUNCH_FAILED", "tabs_list", nil)
}

// TestDoctor: each problem is reported with the command that fixes it.
func TestDoctor(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	out, err := exec.Command(binary, "doctor", "--launch=false", "--driver-path="+t.TempDir(), "--executable-path=/nonexistent/chromium").CombinedOutput()
	if err == nil {
		t.Fatalf("doctor passed with no driver and no browser:\n%s", out)
	}
	for _, want := range []string{"FAIL playwright driver", "chromegate setup", "FAIL chromium", "apt-get install -y chromium", "ok   node"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	out, err = exec.Command(binary, "doctor").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok   launch") {
		t.Fatalf("doctor on a working machine: %v\n%s", err, out)
	}
}
