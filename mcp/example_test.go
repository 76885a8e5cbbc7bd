package mcp_test

import (
	"context"
	"fmt"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

// A server over a (fake) browser, called by an MCP client. A real server
// gets a policy Gate and the CDP or extension backend, and runs over stdio
// with s.Run(ctx, &sdk.StdioTransport{}).
func Example() {
	ctx := context.Background()
	manager := executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{executortest.NewBackend("fake")}})
	defer manager.Close()
	s, err := mcp.NewServer(mcp.Options{Manager: manager, Gate: gatetest.AllowAll, Version: "example"})
	if err != nil {
		log.Fatal(err)
	}
	serverSide, clientSide := sdk.NewInMemoryTransports()
	go func() { _ = s.Run(ctx, serverSide) }()
	client, err := sdk.NewClient(&sdk.Implementation{Name: "example"}, nil).Connect(ctx, clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	res, err := client.CallTool(ctx, &sdk.CallToolParams{Name: "navigate", Arguments: map[string]any{"url": "https://example.com/"}})
	if err != nil {
		log.Fatal(err)
	}
	// The page's title is its own words: the result comes fenced.
	page, _, fenced := mcp.Unfence(res.Content[0].(*sdk.TextContent).Text)
	fmt.Println(fenced, page)

	res, err = client.CallTool(ctx, &sdk.CallToolParams{Name: "click", Arguments: map[string]any{"selector": "a", "ref": "e1"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.IsError, res.Content[0].(*sdk.TextContent).Text)
	// Output:
	// true {"tab_id":"fake:s1:1","url":"https://example.com/","title":"Title of https://example.com/","status":200}
	// true BAD_ARGS: both selector and ref are set
	// Next: pass exactly one of selector or ref
}
