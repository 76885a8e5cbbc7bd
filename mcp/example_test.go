package mcp_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/mcp"
)

// A server over a (fake) browser, called by an MCP client. A real server
// gets a policy Gate and the CDP or extension backend, and runs over stdio
// with s.Run(ctx, &sdk.StdioTransport{}).
func Example() {
	ctx := context.Background()
	manager := executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{executortest.NewBackend("fake")}})
	defer manager.Close()
	s, err := mcp.NewServer(mcp.Options{Manager: manager, Gate: mcp.AllowAll, Version: "example"})
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

// The same server over HTTP: Streamable HTTP MCP at /mcp and REST at
// /api/v1/, behind a bearer key with a tool ACL. The key store lives in the
// data dir; `chromegate keys create` writes it too.
func ExampleServer_NewHTTPHandler() {
	ctx, stop := context.WithCancel(context.Background())
	manager := executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{executortest.NewBackend("fake")}})
	defer manager.Close()
	s, err := mcp.NewServer(mcp.Options{Manager: manager, Gate: mcp.AllowAll, Version: "example"})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "chromegate-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	keys, err := mcp.OpenKeyStore(mcp.KeysPath(dir))
	if err != nil {
		log.Fatal(err)
	}
	key, _, err := keys.Create(mcp.NewKey{Name: "reader", Roles: []string{"ci"}, AllowTools: []string{"get_*", "navigate"}}, time.Now())
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	h, err := s.NewHTTPHandler(mcp.HTTPOptions{Addr: ln.Addr().String(), Keys: keys})
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- h.Serve(ctx, ln, 5*time.Second) }()
	defer func() { stop(); <-served }()

	post := func(body string) string {
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/api/v1/command", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	fmt.Println(post(`{"command":"navigate","params":{"url":"https://example.com/"}}`))
	fmt.Println(post(`{"command":"click","params":{"selector":"a"}}`))
	// Output:
	// 200 {"ok":true,"data":{"tab_id":"fake:s1:1","url":"https://example.com/","title":"Title of https://example.com/","status":200},"untrusted":true}
	// 403 {"ok":false,"error":{"code":"POLICY_DENIED","message":"tool click is not available to reader","hint":"use the tools that tools/list shows"}}
}
