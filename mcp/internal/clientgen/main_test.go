package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/chromegate/chromegate/mcp"
)

// The generated client in the tree must be what the tool table generates
// now: a tool, argument or result change without `go generate ./mcp/client`
// fails here.
func TestGeneratedClientIsFresh(t *testing.T) {
	want, err := generate(mcp.Tools())
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../client/tools_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("mcp/client/tools_gen.go is stale: run `go generate ./mcp/client` and commit the result")
	}
}

// A tool without a declared Output cannot be generated, and says so.
func TestToolWithoutOutputFails(t *testing.T) {
	tools := mcp.Tools()
	tools[0].Output = nil
	if _, err := generate(tools); err == nil {
		t.Fatalf("generated a client for %s, which declares no Output", tools[0].Name)
	}
}

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{
		"tab_id": "TabID", "get_html": "GetHTML", "urls": "URLs", "read_as_markdown": "ReadAsMarkdown",
		"sha256": "SHA256", "timeout_ms": "TimeoutMs",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
}
