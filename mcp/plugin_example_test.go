package mcp_test

import (
	"fmt"
	"log"

	"github.com/chromegate/chromegate/mcp"
)

// A plugin file is checked when it loads, against the built-in tools its
// steps call; a server built with Options.Plugins lists it like any tool.
func ExampleParsePlugin() {
	p, err := mcp.ParsePlugin([]byte(`{
	  "name": "headline",
	  "description": "Open a page and return its main heading.",
	  "read_only": false,
	  "params": {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}}},
	  "steps": [
	    {"tool": "navigate", "args": {"url": "{{params.url}}"}},
	    {"tool": "get_text", "args": {"selector": "h1"}}
	  ]
	}`), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Name(), p.Tools())

	_, err = mcp.ParsePlugin([]byte(`{"name": "bad", "description": "d", "read_only": true,
	  "steps": [{"tool": "navigate", "args": {"url": "https://example.com/"}}]}`), nil)
	fmt.Println(err)
	// Output:
	// headline [navigate get_text]
	// read_only is true, but a step calls a tool that is not read-only
}
