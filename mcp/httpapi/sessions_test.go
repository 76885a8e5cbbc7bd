package httpapi

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPSessionBoundToKey: a session id is not a credential: another key
// presenting it is refused.
func TestHTTPSessionBoundToKey(t *testing.T) {
	e := newHTTPEnv(t, nil)
	a := e.key(NewKey{Name: "a"})
	b := e.key(NewKey{Name: "b"})
	status, hdr, body := e.do("POST", "/mcp", a, mcpInit, mcpHeaders)
	id := hdr.Get("Mcp-Session-Id")
	if status != 200 || len(id) < 20 {
		t.Fatalf("initialize: %d %q %s", status, id, body)
	}
	status, _, _ = e.do("POST", "/mcp", b, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, with(mcpHeaders, "Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25"))
	if status != 403 {
		t.Errorf("another key with the session id: %d", status)
	}
}

// TestHTTPSessionContexts: every MCP session has a browser session of its
// own, closed when the MCP session ends; a named session outlives it and
// belongs to its key.
func TestHTTPSessionContexts(t *testing.T) {
	// Idle long enough that a busy machine does not reap the named session
	// between two of its calls; the end of the test waits for the reaping.
	e := newHTTPEnv(t, func(o *Options) { o.NamedSessionIdle = 2 * time.Second })
	k := e.key(NewKey{Name: "k"})
	k2 := e.key(NewKey{Name: "k2"})
	one := e.mustConnect(k, nil)
	two := e.mustConnect(k, nil)
	callTool(t, one, "get_text", nil)
	callTool(t, two, "get_text", nil)
	if e.backend.Opens() != 2 {
		t.Fatalf("two sessions opened %d executors", e.backend.Opens())
	}
	id := one.ID()
	if _, ok := e.manager.Current("mcp:" + id); !ok {
		t.Fatalf("no executor for mcp:%s", id)
	}
	if err := one.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the closed session's executor to close", func() bool {
		_, ok := e.manager.Current("mcp:" + id)
		return !ok
	})
	if _, ok := e.manager.Current("mcp:" + two.ID()); !ok {
		t.Error("closing one session closed the other's executor")
	}

	named := e.mustConnect(k, map[string]string{SessionHeader: "work"})
	callTool(t, named, "get_text", nil)
	if err := named.Close(); err != nil {
		t.Fatal(err)
	}
	again := e.mustConnect(k, map[string]string{SessionHeader: "work"})
	before := e.backend.Opens()
	callTool(t, again, "get_text", nil)
	if e.backend.Opens() != before {
		t.Error("coming back to a named session opened a new executor")
	}
	// The same name with another key is another context.
	callTool(t, e.mustConnect(k2, map[string]string{SessionHeader: "work"}), "get_text", nil)
	if e.backend.Opens() != before+1 {
		t.Error("two keys share a named session")
	}
	// REST with the same name reaches the same context as MCP.
	if status, _, body := e.do("POST", "/api/v1/command", k, `{"command":"get_text","session":"work"}`, nil); status != 200 || e.backend.Opens() != before+1 {
		t.Errorf("REST on the named session: %d %s, opens %d", status, body, e.backend.Opens())
	}
	// Idle named contexts are reclaimed.
	eventually(t, "the idle named session to close", func() bool {
		_, ok := e.manager.Current("named:k:work")
		return !ok
	})
}

// TestHTTPSessionTimeout: an MCP session idle for SessionTimeout is closed
// by the server, and its browser context with it.
func TestHTTPSessionTimeout(t *testing.T) {
	e := newHTTPEnv(t, func(o *Options) { o.SessionTimeout = 300 * time.Millisecond })
	k := e.key(NewKey{Name: "k"})
	cs := e.mustConnect(k, nil)
	callTool(t, cs, "get_text", nil)
	id := cs.ID()
	if _, ok := e.manager.Current("mcp:" + id); !ok {
		t.Fatal("no executor for the session")
	}
	eventually(t, "the idle session's executor to close", func() bool {
		_, ok := e.manager.Current("mcp:" + id)
		return !ok
	})
	if mcpN := e.handler.sessionCounts()["mcp"]; mcpN != 0 {
		t.Errorf("%d MCP sessions left", mcpN)
	}
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "get_text", Arguments: map[string]any{}}); err == nil {
		t.Error("a call on the timed-out session succeeded")
	}
}

// TestHTTPMaxSessionsPerKey: a key cannot open more MCP sessions (browser
// contexts) than its limit; closing one makes room; other keys are not
// affected.
func TestHTTPMaxSessionsPerKey(t *testing.T) {
	e := newHTTPEnv(t, func(o *Options) { o.MaxSessionsPerKey = 2 })
	k := e.key(NewKey{Name: "k"})
	other := e.key(NewKey{Name: "other"})
	first := e.mustConnect(k, nil)
	e.mustConnect(k, nil)
	if cs, err := e.connect(k, nil); err == nil {
		cs.Close()
		t.Fatal("a third session was opened")
	} else if !strings.Contains(err.Error(), "k already has 2 MCP sessions open") {
		t.Errorf("the refusal: %v", err)
	}
	e.mustConnect(other, nil)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "room for a new session", func() bool {
		cs, err := e.connect(k, nil)
		if err == nil {
			cs.Close()
		}
		return err == nil
	})
}
