package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// lineClient speaks raw newline-delimited JSON-RPC to a Server.Run.
type lineClient struct {
	t    *testing.T
	in   io.WriteCloser
	out  *bufio.Scanner
	done chan error
}

func startLineServer(t *testing.T, maxLine int) *lineClient {
	t.Helper()
	h := newHarness(t, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &lineClient{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	c.out.Buffer(nil, 1<<20)
	go func() {
		c.done <- h.server.Run(context.Background(), &LineTransport{Reader: inR, Writer: outW, MaxLineBytes: maxLine})
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		_ = outR.Close()
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return after stdin closed")
		}
	})
	return c
}

func (c *lineClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// recv reads the next message the server wrote.
func (c *lineClient) recv() map[string]any {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("no reply: %v", c.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("reply is not JSON: %v: %s", err, c.out.Text())
	}
	return m
}

func errorCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	return code
}

// Malformed input on stdio is answered with a JSON-RPC error and the
// session goes on (the SDK's own StdioTransport ends the session instead).
func TestLineTransportKeepsServing(t *testing.T) {
	t.Parallel()
	c := startLineServer(t, 4096)
	malformed := []struct {
		line string
		code float64
	}{
		{`{not json`, -32700},
		{`{"foo":1}`, -32600},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600},
		{`{"jsonrpc":"2.0","id":2,"method":"ping","params":` + strings.Repeat(" ", 5000) + `{}}`, -32600},
	}
	for _, m := range malformed {
		c.send(m.line)
		reply := c.recv()
		if errorCode(reply) != m.code || reply["id"] != nil {
			t.Errorf("%.40s: got %v, want error %v with id null", m.line, reply, m.code)
		}
	}

	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if init := c.recv(); init["id"] != float64(1) || init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`garbage between requests`)
	if reply := c.recv(); errorCode(reply) != -32700 {
		t.Errorf("garbage after initialize: %v", reply)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`)
	if reply := c.recv(); reply["id"] != float64(2) || errorCode(reply) != -32602 {
		t.Errorf("unknown tool: %v", reply)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"tabs_list","arguments":{}}}`)
	reply := c.recv()
	result, _ := reply["result"].(map[string]any)
	if reply["id"] != float64(3) || result == nil || result["isError"] == true {
		t.Fatalf("tabs_list after malformed input: %v", reply)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"no/such/method"}`)
	if reply := c.recv(); reply["id"] != float64(4) || errorCode(reply) != -32601 {
		t.Errorf("unknown method: %v", reply)
	}
}
