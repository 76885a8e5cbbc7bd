package main

import (
	"strings"

	"github.com/chromegate/chromegate/mcp"
)

// toolGroups is serve --tools: the groups of tools/list a caller starts
// with (mcp.ParseGroups; nil until given: mcp.DefaultGroups). An unknown
// group stops the server at start, naming the groups.
type toolGroups []mcp.ListGroup

func (g *toolGroups) String() string {
	var names []string
	for _, x := range *g {
		names = append(names, string(x))
	}
	return strings.Join(names, ",")
}

func (g *toolGroups) Set(v string) error {
	gs, err := mcp.ParseGroups(v)
	if err != nil {
		return err
	}
	*g = gs
	return nil
}

// toolsUsage is serve --tools' usage line, naming the groups.
func toolsUsage() string {
	var names []string
	for _, g := range mcp.ListGroups {
		names = append(names, string(g))
	}
	return "groups of tools tools/list shows, separated by commas, or all: " + strings.Join(names, ", ") +
		" (default: core; a client turns groups on and off with tool_groups; a call of a tool by name works whatever the groups)"
}
