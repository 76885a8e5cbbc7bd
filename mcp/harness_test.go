package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

// harness is a Server over a fake backend, connected to a real SDK client
// through in-memory transports.
type harness struct {
	t       testing.TB
	backend *executortest.Backend
	manager *executor.Manager
	server  *Server
	client  *sdk.ClientSession
	wire    *captureTransport
}

func newHarness(t testing.TB, configure func(*Options)) *harness {
	t.Helper()
	h := &harness{t: t, backend: executortest.NewBackend("fake")}
	h.manager = executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{h.backend}})
	opts := Options{Manager: h.manager, Gate: gatetest.AllowAll, Version: "test", StateDir: t.TempDir()}
	if configure != nil {
		configure(&opts)
	}
	s, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.server = s
	st, ct := sdk.NewInMemoryTransports()
	h.wire = &captureTransport{Transport: st}
	ctx := context.Background()
	ss, err := s.SDK().Connect(ctx, h.wire, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.client = cs
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
		_ = h.manager.Close()
	})
	return h
}

// call calls a tool through the SDK client; a protocol error fails the test.
func (h *harness) call(name string, args any) *sdk.CallToolResult {
	h.t.Helper()
	res, err := h.callErr(name, args)
	if err != nil {
		h.t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

func (h *harness) callErr(name string, args any) (*sdk.CallToolResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	return h.client.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
}

// fake returns the fake browser, opening one (through the Manager, not a
// tool call, so no Gate is involved) if none is open yet.
func (h *harness) fake() *executortest.Fake {
	h.t.Helper()
	if f := h.backend.Last(); f != nil {
		return f
	}
	if _, err := h.manager.Ready(context.Background(), DefaultSession); err != nil {
		h.t.Fatal(err)
	}
	return h.backend.Last()
}

// textOf joins the text contents of a result.
func textOf(res *sdk.CallToolResult) string { return testkit.TextOf(res) }

// fenced reports whether text is one page-content block (see fence).
func fenced(text string) bool {
	_, _, ok := Unfence(text)
	return ok
}

// unfenced returns the page content of a fenced text, or text as it is.
func unfenced(text string) string {
	if content, _, ok := Unfence(text); ok {
		return content
	}
	return text
}

// jsonOf decodes a result's value: its structured content's data (every
// field, as clients read it), else the JSON line of its text (inside the
// page fence, if any).
func jsonOf(t testing.TB, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if v := dataOf(res); v != nil {
		return v
	}
	text := unfenced(textOf(res))
	line, _, _ := strings.Cut(text, "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, text)
	}
	return m
}

// dataOf is the data of a result's structured content as a JSON object,
// or nil.
func dataOf(res *sdk.CallToolResult) map[string]any {
	if res == nil || res.StructuredContent == nil {
		return nil
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil
	}
	var d struct {
		Data map[string]any `json:"data"`
	}
	if json.Unmarshal(b, &d) != nil {
		return nil
	}
	return d.Data
}

// captureTransport records what the server writes, so tests can measure
// the bytes a client really receives.
type captureTransport struct {
	sdk.Transport
	mu   sync.Mutex
	sent []jsonrpc.Message
}

func (c *captureTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := c.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: conn, c: c}, nil
}

func (c *captureTransport) responses() []*jsonrpc.Response {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*jsonrpc.Response
	for _, m := range c.sent {
		if r, ok := m.(*jsonrpc.Response); ok {
			out = append(out, r)
		}
	}
	return out
}

type captureConn struct {
	sdk.Connection
	c *captureTransport
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.c.mu.Lock()
	c.c.sent = append(c.c.sent, msg)
	c.c.mu.Unlock()
	return c.Connection.Write(ctx, msg)
}

// bufLogger returns a logger writing text records into a buffer.
func bufLogger() (*slog.Logger, *testkit.Buffer) {
	b := &testkit.Buffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
