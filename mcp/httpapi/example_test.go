package httpapi_test

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

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/httpapi"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

// An MCP server over HTTP: Streamable HTTP MCP at /mcp and REST at
// /api/v1/, behind a bearer key with a tool ACL. The key store lives in the
// data dir; `chromegate keys create` writes it too.
func ExampleNew() {
	ctx, stop := context.WithCancel(context.Background())
	manager := executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{executortest.NewBackend("fake")}})
	defer manager.Close()
	s, err := mcp.NewServer(mcp.Options{Manager: manager, Gate: gatetest.AllowAll, Version: "example"})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "chromegate-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	keys, err := httpapi.OpenKeyStore(httpapi.KeysPath(dir))
	if err != nil {
		log.Fatal(err)
	}
	key, _, err := keys.Create(httpapi.NewKey{Name: "reader", Roles: []string{"ci"}, AllowTools: []string{"get_*", "navigate"}}, time.Now())
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	h, err := httpapi.New(s, httpapi.Options{Addr: ln.Addr().String(), Keys: keys})
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
