package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
)

var echoTool = executor.PageTool{
	URL: "https://a.test/", Origin: "https://a.test", Name: "echo", Description: "Echoes.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer"}}}`),
	Annotations: executor.PageToolAnnotations{ReadOnly: true}, Surface: executor.SurfaceWebMCP,
}

// waitTool polls tools/list until name is (or, with gone, is no longer)
// listed, and returns its definition.
func (h *harness) waitTool(name string, gone ...bool) *sdk.Tool {
	h.t.Helper()
	want := len(gone) == 0 || !gone[0]
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := h.client.ListTools(context.Background(), nil)
		if err != nil {
			h.t.Fatal(err)
		}
		var found *sdk.Tool
		for _, t := range res.Tools {
			if t.Name == name {
				found = t
			}
		}
		if (found != nil) == want {
			return found
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("tool %s listed=%v, want %v", name, found != nil, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLivePageTools(t *testing.T) {
	t.Parallel()
	changed := make(chan struct{}, 100)
	h := newHarness(t, nil)
	// A second client that listens for list_changed.
	st, ct := sdk.NewInMemoryTransports()
	ss, err := h.server.SDK().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cl := sdk.NewClient(&sdk.Implementation{Name: "watcher", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := cl.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })

	f := h.fake()
	tab := f.TabID(0)
	// The SDK's Connect returns before the server has registered the
	// watcher's subscriptions/listen stream (it is sent without waiting
	// for its acknowledgement), so a change made at once may come before
	// it. Change the tools until a change is notified; from then on every
	// change must be.
	probe := echoTool
	probe.Name = "probe"
	for i := 0; ; i++ {
		if i%2 == 0 {
			f.SetPageTools(tab, []executor.PageTool{probe})
		} else {
			f.SetPageTools(tab, nil)
		}
		select {
		case <-changed:
		case <-time.After(200 * time.Millisecond):
			if i == 25 {
				t.Fatal("no notifications/tools/list_changed for any change in 5 s")
			}
			continue
		}
		break
	}
	time.Sleep(50 * time.Millisecond) // the debounced notification of the last change, if two were sent
	for len(changed) > 0 {
		<-changed
	}
	writer := echoTool
	writer.Name, writer.Annotations = "post.comment", executor.PageToolAnnotations{Consequential: true}
	long := echoTool
	long.Name = strings.Repeat("x", 128)
	f.SetPageTools(tab, []executor.PageTool{echoTool, writer, long})
	def := h.waitTool("page_a_test_echo")
	if !def.Annotations.ReadOnlyHint || def.Annotations.DestructiveHint == nil || *def.Annotations.DestructiveHint {
		t.Errorf("echo's hints: %+v", def.Annotations)
	}
	if !strings.Contains(def.Description, "Page tool echo of a.test (tab "+tab+"). The page describes it (unverified): Echoes.") {
		t.Errorf("echo's description: %s", def.Description)
	}
	w := h.waitTool("page_a_test_post.comment")
	if w.Annotations.ReadOnlyHint || w.Annotations.DestructiveHint != nil {
		t.Errorf("a consequential tool's hints: %+v", w.Annotations)
	}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	res, _ := h.client.ListTools(t.Context(), nil)
	var longName string
	for _, d := range res.Tools {
		if strings.HasPrefix(d.Name, "page_a_test_xxx") {
			longName = d.Name
		}
	}
	if len(longName) != maxToolName || !strings.HasPrefix(longName, "page_a_test_xx") {
		t.Errorf("a long page tool's name: %q (%d)", longName, len(longName))
	}

	// The same tool in a second tab of the same site gets a name of its own.
	second, err := f.NewTab(t.Context(), executor.NewTabParams{URL: "https://a.test/"})
	if err != nil {
		t.Fatal(err)
	}
	f.SetPageTools(second.ID, []executor.PageTool{echoTool})
	var other string
	deadline := time.Now().Add(5 * time.Second)
	for other == "" && time.Now().Before(deadline) {
		res, _ := h.client.ListTools(t.Context(), nil)
		for _, d := range res.Tools {
			if strings.HasPrefix(d.Name, "page_a_test_echo_") {
				other = d.Name
			}
		}
	}
	if len(other) != len("page_a_test_echo_")+6 {
		t.Fatalf("the second tab's echo: %q", other)
	}

	// A live tool calls its page tool with the arguments, checked against
	// the page's schema first.
	out := h.call("page_a_test_echo", map[string]any{"x": 7})
	if out.IsError || !strings.Contains(unfenced(textOf(out)), `{"x":7}`) || !fenced(textOf(out)) {
		t.Errorf("live call: %s", textOf(out))
	}
	if last := f.Last(); last.Method != "CallPageTool" || last.Params.(executor.PageToolCallParams).TabID != tab {
		t.Errorf("last call: %+v", last)
	}
	// The validator's detail names the page's properties: it follows the
	// hint, fenced.
	bad := h.call("page_a_test_echo", map[string]any{"x": "seven"})
	if !bad.IsError || !strings.HasPrefix(textOf(bad), "BAD_ARGS: the arguments do not match the input_schema of page tool echo\nNext: ") ||
		!strings.HasPrefix(pageDetail(t, textOf(bad)), "x: ") {
		t.Errorf("a bad argument: %s", textOf(bad))
	}
	bad = h.call("page_tool_call", map[string]any{"name": "echo", "arguments": map[string]any{"x": 1.5}})
	if !bad.IsError || !strings.HasPrefix(textOf(bad), "BAD_ARGS: the arguments do not match the input_schema of page tool echo\nNext: ") ||
		!strings.HasPrefix(pageDetail(t, textOf(bad)), "x: ") {
		t.Errorf("a bad argument through page_tool_call: %s", textOf(bad))
	}
	f.Handle("CallPageTool", func(context.Context, any) (any, error) {
		return executor.PageToolResult{IsError: true, Error: "it broke", Surface: executor.SurfaceWebMCP}, nil
	})
	failed := h.call("page_a_test_echo", map[string]any{})
	if !failed.IsError || !strings.Contains(unfenced(textOf(failed)), "it broke") {
		t.Errorf("a failing page tool: %s", textOf(failed))
	}

	// Unregistered: gone from the list, and the name is free again.
	f.SetPageTools(tab, []executor.PageTool{writer})
	h.waitTool("page_a_test_echo", true)
	h.waitTool("page_a_test_post.comment")
	f.Kill()
	h.waitTool("page_a_test_post.comment", true)
}

func TestPageToolPolicy(t *testing.T) {
	t.Parallel()
	g := newPolicyGate(t, map[string]any{"allow_domains": []string{"a.test"}})
	h := newHarness(t, func(o *Options) { o.Gate = g })
	f := h.fake()
	tab := f.TabID(0)
	if _, err := f.Navigate(t.Context(), executor.NavigateParams{URL: "https://a.test/"}); err != nil {
		t.Fatal(err)
	}
	writer := echoTool
	writer.Name, writer.Annotations = "post", executor.PageToolAnnotations{}
	f.SetPageTools(tab, []executor.PageTool{echoTool, writer})
	h.waitTool("page_a_test_echo")
	// Safe mode: the writer is neither listed nor callable.
	h.waitTool("page_a_test_post", true)
	list := unfenced(textOf(h.call("page_tools_list", nil)))
	if !strings.Contains(list, `"name":"echo"`) || strings.Contains(list, `"name":"post"`) {
		t.Errorf("page_tools_list in safe mode: %s", list)
	}
	if res := h.call("page_tool_call", map[string]any{"name": "post"}); !res.IsError || !strings.Contains(textOf(res), "POLICY_DENIED") {
		t.Errorf("the writer called in safe mode: %s", textOf(res))
	}
	if res := h.call("page_a_test_echo", map[string]any{"x": 1}); res.IsError {
		t.Errorf("a read-only page tool on an allowed page: %s", textOf(res))
	}
	// The tab leaves for a denied host: its page tools are denied.
	if _, err := f.Navigate(t.Context(), executor.NavigateParams{URL: "https://evil.test/"}); err != nil {
		t.Fatal(err)
	}
	evil := echoTool
	evil.Origin = "https://evil.test"
	f.SetPageTools(tab, []executor.PageTool{evil})
	h.waitTool("page_evil_test_echo", true)
	if res := h.call("page_tool_call", map[string]any{"name": "echo"}); !res.IsError || !strings.Contains(textOf(res), "POLICY_DENIED") {
		t.Errorf("a page tool of a denied page: %s", textOf(res))
	}
	if list := textOf(h.call("page_tools_list", nil)); strings.Contains(list, "echo") {
		t.Errorf("a denied origin's tools listed: %s", list)
	}
}
