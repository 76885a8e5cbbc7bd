package webmcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// scriptedLink is a tab's DevTools protocol played by the test: a main
// frame whose document (loaderId) the test changes, the WebMCP domain's
// replay and answers, and an in-page script that finds nothing. The real
// protocol is exercised by the backends' tests against Chromium.
type scriptedLink struct {
	tab *Tab

	mu       sync.Mutex
	loader   string
	tools    []map[string]any
	answer   func(tool string, input any) map[string]any // nil: never answers
	sent     []string
	canceled []string
	next     int
	// eval answers the in-page script's ops (nil: it finds nothing).
	eval func(ctx context.Context, arg map[string]any) map[string]any
}

func (l *scriptedLink) Open(context.Context) error { return nil }
func (l *scriptedLink) URL() string                { return "https://shop.example/cart" }
func (l *scriptedLink) Closed() bool               { return false }

func (l *scriptedLink) Send(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	l.mu.Lock()
	l.sent = append(l.sent, method)
	loader, tools, answer, eval := l.loader, l.tools, l.answer, l.eval
	l.mu.Unlock()
	var out any = map[string]any{}
	switch method {
	case "Page.getFrameTree":
		out = map[string]any{"frameTree": map[string]any{"frame": map[string]any{"id": "main", "url": "https://shop.example/cart", "loaderId": loader}}}
	case "WebMCP.enable":
		// Chromium replays the registered tools before it answers.
		if len(tools) > 0 {
			l.tab.Event("WebMCP.toolsAdded", map[string]any{"tools": toAny(tools)})
		}
	case "WebMCP.invokeTool":
		l.mu.Lock()
		l.next++
		id := "inv" + string(rune('0'+l.next))
		l.mu.Unlock()
		out = map[string]any{"invocationId": id}
		if answer != nil {
			a := answer(params["toolName"].(string), params["input"])
			a["invocationId"] = id
			go l.tab.Event("WebMCP.toolResponded", a)
		}
	case "WebMCP.cancelInvocation":
		l.mu.Lock()
		l.canceled = append(l.canceled, params["invocationId"].(string))
		l.mu.Unlock()
	case "Runtime.evaluate":
		v := map[string]any{"tools": []any{}, "sig": "[]|0", "res": 0}
		if eval != nil {
			// the script's argument: "(" + script + ")(" + arg + ")"
			expr, _ := params["expression"].(string)
			var arg map[string]any
			if i := strings.LastIndex(expr, `)({"key":`); i >= 0 {
				_ = json.Unmarshal([]byte(strings.TrimSuffix(expr[i+2:], ")")), &arg)
			}
			v = eval(ctx, arg)
		}
		// The script answers with one JSON text.
		text, _ := json.Marshal(v)
		out = map[string]any{"result": map[string]any{"value": string(text)}}
	}
	return json.Marshal(out)
}

func toAny(tools []map[string]any) []any {
	out := make([]any, len(tools))
	for i, t := range tools {
		out[i] = t
	}
	return out
}

func newScripted(t *testing.T, tools ...map[string]any) (*Tab, *scriptedLink, chan executor.PageToolsEvent) {
	t.Helper()
	h := NewHub(nil)
	events := make(chan executor.PageToolsEvent, 100)
	stop := h.Subscribe(func(ev executor.PageToolsEvent) { events <- ev })
	l := &scriptedLink{loader: "doc1", tools: tools}
	tab := NewTab(h, "cdp:s:1", l)
	l.tab = tab
	t.Cleanup(func() { stop(); tab.Close() })
	return tab, l, events
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var addTool = map[string]any{"name": "add", "frameId": "main", "description": "Adds.",
	"inputSchema": map[string]any{"type": "object"}, "annotations": map[string]any{"readOnly": true}}

func TestTabReplayAndChanges(t *testing.T) {
	t.Parallel()
	tab, l, events := newScripted(t, addTool, map[string]any{"name": "bad name", "frameId": "main"})
	tools, err := tab.Tools(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "add" || !tools[0].Annotations.ReadOnly || tools[0].Origin != "https://shop.example" ||
		tools[0].TabID != "cdp:s:1" || tools[0].Surface != executor.SurfaceWebMCP {
		t.Fatalf("tools after the replay (an invalid name dropped): %+v", tools)
	}
	if ev := <-events; len(ev.Added) != 1 || ev.TabID != "cdp:s:1" {
		t.Errorf("first event: %+v", ev)
	}
	tab.Event("WebMCP.toolsRemoved", map[string]any{"tools": []any{map[string]any{"frameId": "main", "name": "add"}}})
	if ev := <-events; len(ev.Removed) != 1 || ev.Removed[0].Name != "add" {
		t.Errorf("removed: %+v", ev)
	}
	// A same-document navigation keeps the document; a new one drops
	// its tools and asks the domain for the new document's.
	tab.Event("WebMCP.toolsAdded", map[string]any{"tools": []any{addTool}})
	<-events
	tab.Navigated()
	l.mu.Lock()
	l.loader = "doc2"
	l.tools = nil
	l.mu.Unlock()
	tab.Navigated()
	select {
	case ev := <-events:
		if len(ev.Removed) != 1 {
			t.Errorf("after a new document: %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a new document did not drop the old one's tools")
	}
	// The drop is announced before the domain is asked again: wait for
	// the re-enable rather than race it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		sent := strings.Join(l.sent, " ")
		l.mu.Unlock()
		if strings.Contains(sent, "WebMCP.disable WebMCP.enable") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the domain was not re-enabled for the new document: %s", sent)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTabCall(t *testing.T) {
	t.Parallel()
	tab, l, _ := newScripted(t, addTool)
	l.answer = func(tool string, input any) map[string]any {
		in := input.(map[string]any)
		switch in["mode"] {
		case "throw":
			return map[string]any{"status": "Error", "errorText": "", "exception": map[string]any{"description": "Error: kaboom\n    at x"}}
		case "mcp-error":
			return map[string]any{"status": "Completed", "output": map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "no stock"}}}}
		}
		return map[string]any{"status": "Completed", "output": 5}
	}
	call := func(input string, d time.Duration) (executor.PageToolResult, error) {
		return tab.Call(ctxFor(t, d), executor.PageToolCallParams{Name: "add", Input: json.RawMessage(input)})
	}
	if r, err := call(`{"a":2}`, 5*time.Second); err != nil || string(r.Output) != "5" || r.IsError || r.Surface != executor.SurfaceWebMCP {
		t.Errorf("add: %+v %v", r, err)
	}
	if r, err := call(`{"mode":"throw"}`, 5*time.Second); err != nil || !r.IsError || r.Error != "Error: kaboom" {
		t.Errorf("a throw: %+v %v", r, err)
	}
	if r, err := call(`{"mode":"mcp-error"}`, 5*time.Second); err != nil || !r.IsError || r.Error != "no stock" {
		t.Errorf("an MCP error result: %+v %v", r, err)
	}
	if _, err := tab.Call(ctxFor(t, 5*time.Second), executor.PageToolCallParams{Name: "nope"}); executor.CodeOf(err) != executor.CodeBadArgs {
		t.Errorf("an unknown tool: %v", err)
	}
	if _, err := call(`[1]`, 5*time.Second); executor.CodeOf(err) != executor.CodeBadArgs {
		t.Errorf("input that is not an object: %v", err)
	}

	// A tool that never answers is cancelled in the page when the call's
	// time is up.
	l.mu.Lock()
	l.answer = nil
	l.mu.Unlock()
	if _, err := call(`{}`, 200*time.Millisecond); executor.CodeOf(err) != executor.CodeTimeout {
		t.Errorf("a hung tool: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		n := len(l.canceled)
		l.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the hung invocation was not cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A new document while a call runs interrupts it.
	done := make(chan error, 1)
	go func() {
		_, err := call(`{}`, 10*time.Second)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	l.mu.Lock()
	l.loader = "doc2"
	l.mu.Unlock()
	tab.Navigated()
	select {
	case err := <-done:
		if !errors.Is(err, executor.ErrInterruptedByNavigation) && !strings.Contains(executor.AsError(err).Message, "interrupted by navigation") {
			t.Errorf("a call across a navigation: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call across a navigation did not end")
	}
}

// TestTabPollAcrossNavigation: a navigation commits while the long poll is
// asked, before its event arrives, and the new document answers the poll.
// Its tools must not be filed under the old document (whose origin they
// are not), and the poll of the new document must not wait for a change
// from the list it already saw: the tools show, once.
func TestTabPollAcrossNavigation(t *testing.T) {
	t.Parallel()
	tab, l, events := newScripted(t)
	const polySig = `[{"name":"echo"}]|0`
	poly := []any{map[string]any{"surface": "inpage", "name": "echo", "description": "Echoes.", "inputSchema": map[string]any{"type": "object"}}}
	l.eval = func(ctx context.Context, arg map[string]any) map[string]any {
		l.mu.Lock()
		if arg["op"] == "wait" && l.loader == "doc1" && arg["sig"] == "[]|0" {
			// The navigation commits now; the new document answers.
			l.loader = "doc2"
		}
		doc := l.loader
		l.mu.Unlock()
		tools, sig := []any{}, "[]|0"
		if doc == "doc2" {
			tools, sig = poly, polySig
		}
		if arg["op"] == "wait" && arg["sig"] == sig {
			// Nothing changes in this document: the poll waits its time.
			select {
			case <-ctx.Done():
			case <-tab.closedCh:
			}
		}
		return map[string]any{"tools": tools, "sig": sig, "res": 0}
	}
	tab.Watch()
	var adds int
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-events:
			for _, a := range ev.Added {
				adds++
				if a.Name != "echo" {
					t.Errorf("added %+v", a)
				}
			}
			for _, r := range ev.Removed {
				t.Errorf("removed %s: it was filed under the old document", r.Name)
			}
		case <-deadline:
			t.Fatal("the new document's tools never showed")
		}
		if adds > 0 {
			break
		}
	}
	// and nothing flaps after
	select {
	case ev := <-events:
		if len(ev.Added)+len(ev.Removed) > 0 {
			t.Errorf("after the tools showed: %+v", ev)
		}
	case <-time.After(300 * time.Millisecond):
	}
	if tools := tab.Merged(); len(tools) != 1 || tools[0].Name != "echo" {
		t.Errorf("tools: %+v", tools)
	}
}
