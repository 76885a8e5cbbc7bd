package httpapi

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/e2e/testkit"
	"github.com/chromegate/chromegate/mcp"
)

// readPlugin is a small valid plugin: it opens a page and reads it (the
// same as package mcp's tests use).
const readPlugin = `{
  "name": "read_page",
  "description": "Open a page and return its text.",
  "read_only": false,
  "params": {"type": "object", "required": ["url"], "properties": {
    "url": {"type": "string"},
    "selector": {"type": "string"},
    "count": {"type": "integer", "minimum": 1, "default": 2}
  }},
  "steps": [
    {"name": "open", "tool": "navigate", "args": {"url": "{{params.url}}"}},
    {"name": "read", "tool": "get_text", "args": {"selector": "{{params.selector}}"}}
  ],
  "result": {"text": "{{steps.read.text}}", "title": "{{steps.open.title}}", "count": "{{params.count}}", "where": "{{steps.open.url}}#{{params.count}}"}
}`

// loadPlugins writes files (name → JSON) to a directory and loads it.
func loadPlugins(t *testing.T, files map[string]string) *mcp.Plugins {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := mcp.LoadPlugins(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// textOf joins the text contents of a result.
func textOf(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// bufLogger returns a logger writing text records into a buffer.
func bufLogger() (*slog.Logger, *testkit.Buffer) {
	b := &testkit.Buffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
