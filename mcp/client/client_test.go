package client_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/client"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// connect serves a real chromegate mcp.Server (the default policy with
// data, an in-memory browser, plugins if given) and returns a client on it.
func connect(t *testing.T, data map[string]any, plugins *mcp.Plugins) *client.Client {
	t.Helper()
	eng, err := policy.New(t.Context(), policy.WithData(data), policy.WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	mgr := executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{executortest.NewBackend("fake")}})
	srv, err := mcp.NewServer(mcp.Options{Manager: mgr, Gate: gate.New(eng, nil), Plugins: plugins})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.ConnectMCP(t.Context(), ct)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Close()
		_ = ss.Wait()
		_ = mgr.Close()
	})
	return c
}

func TestTypedCalls(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := connect(t, map[string]any{"allow_domains": []string{"a.test"}, "enable_mutations": true}, nil)

	page, err := c.Navigate(ctx, client.NavigateParams{URL: "https://a.test/x"})
	if err != nil {
		t.Fatal(err)
	}
	if page.URL != "https://a.test/x" || page.Status != 200 || page.TabID == "" {
		t.Errorf("navigate: %+v", page)
	}
	text, err := c.GetText(ctx, client.GetTextParams{Selector: "#main"})
	if err != nil {
		t.Fatal(err)
	}
	// The page text comes back out of its untrusted-content fence.
	if text.Text != "text of selector #main" || text.Chars != len(text.Text) {
		t.Errorf("get_text: %+v", text)
	}
	shot, err := c.Screenshot(ctx, client.ScreenshotParams{})
	if err != nil {
		t.Fatal(err)
	}
	if shot.ImageMIMEType != "image/png" || len(shot.Image) == 0 || shot.Width != 4 {
		t.Errorf("screenshot: %+v", shot)
	}
	tabs, err := c.TabsList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs.Tabs) != 1 || tabs.Tabs[0].URL != "https://a.test/x" || !tabs.Tabs[0].Selected {
		t.Errorf("tabs_list: %+v", tabs)
	}
	clicked, err := c.Click(ctx, client.ClickParams{Selector: "#go"})
	if err != nil || clicked.URL != "https://a.test/x" {
		t.Errorf("click: %+v, %v", clicked, err)
	}
	st, err := c.ChromeStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := st["browser"].(map[string]any); st["backends"] == nil || b["live"] != true {
		t.Errorf("chrome_status: %v", st)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	c := connect(t, map[string]any{"allow_domains": []string{"a.test"}}, nil)

	_, err := c.Navigate(ctx, client.NavigateParams{URL: "https://b.test/"})
	var e *client.Error
	if !errors.As(err, &e) || e.Code != "POLICY_DENIED" || !strings.Contains(e.Message, "b.test") || !strings.Contains(e.Hint, "--allow-domain b.test") {
		t.Fatalf("denied navigation: %#v", err)
	}
	if !errors.Is(err, &client.Error{Code: "POLICY_DENIED"}) {
		t.Error("errors.Is does not match the code")
	}
	_, err = c.WaitFor(ctx, client.WaitForParams{})
	if !errors.As(err, &e) || e.Code != "BAD_ARGS" || e.Message != "nothing to wait for" || e.Hint == "" {
		t.Errorf("wait_for without anything to wait for: %#v", err)
	}
	_, err = c.Call(ctx, "no_such_tool", nil)
	if err == nil || errors.As(err, &e) {
		t.Errorf("an unknown tool is a protocol error, not a tool error: %#v", err)
	}
}

// Plugins, which each server loads from its own files, are called by name.
func TestCallPlugin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plugin := `{"name": "headline", "description": "Read a page's headline.", "read_only": false,
	  "params": {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}}},
	  "steps": [{"tool": "navigate", "args": {"url": "{{params.url}}"}}, {"tool": "get_text", "args": {"selector": "h1"}}]}`
	if err := os.WriteFile(filepath.Join(dir, "headline.json"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	ps, err := mcp.LoadPlugins(dir)
	if err != nil || len(ps.Loaded) != 1 {
		t.Fatalf("%v %+v", err, ps)
	}
	c := connect(t, map[string]any{"allow_domains": []string{"a.test"}}, ps)
	tools, err := c.ListTools(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var listed *client.Tool
	for i := range tools {
		if tools[i].Name == "headline" {
			listed = &tools[i]
		}
	}
	if listed == nil || listed.Description != "Read a page's headline." || !strings.Contains(string(listed.InputSchema), `"url"`) {
		t.Errorf("headline in ListTools: %+v", listed)
	}
	var out client.TextResult
	raw, err := c.CallJSON(t.Context(), "headline", map[string]any{"url": "https://a.test/"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if raw.Text != "text of selector h1" || out.URL != "https://a.test/" {
		t.Errorf("plugin result: %+v, text %q", out, raw.Text)
	}
	_, err = c.Call(t.Context(), "headline", map[string]any{"url": "https://b.test/"})
	var e *client.Error
	if !errors.As(err, &e) || e.Code != "POLICY_DENIED" || !strings.HasPrefix(e.Message, "plugin headline stopped at step 1 (navigate, navigate)") {
		t.Errorf("denied step: %#v", err)
	}
}
