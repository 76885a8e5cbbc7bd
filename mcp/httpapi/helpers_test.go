package httpapi

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
)

// readPlugin is a small valid plugin: it opens a page and reads it (the
// same file package mcp's tests use).
var readPlugin = testkit.ReadFile("../testdata/plugins/read_page.json")

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
func textOf(res *sdk.CallToolResult) string { return testkit.TextOf(res) }

// bufLogger returns a logger writing text records into a buffer.
func bufLogger() (*slog.Logger, *testkit.Buffer) {
	b := &testkit.Buffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
