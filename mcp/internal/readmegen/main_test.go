package main

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/mcp"
)

// TestREADMEToolTable fails when README.md's tool table is not the one
// the tool constructors give: run `go generate ./mcp`.
func TestREADMEToolTable(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	table, err := toolTable(mcp.Tools())
	if err != nil {
		t.Fatal(err)
	}
	want, err := replaceTable(readme, table)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(readme)); diff != "" {
		t.Errorf("README.md's tool table is stale; run go generate ./mcp (-want +got):\n%s", diff)
	}
}

func TestToolTableNeedsAGroup(t *testing.T) {
	t.Parallel()
	if _, err := toolTable([]*mcp.Tool{{Name: "x"}}); err == nil {
		t.Error("a tool without a group was rendered")
	}
}
