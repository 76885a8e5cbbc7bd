package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestStatelessBesideStateful: a 2026-07-28 client (stateless: no
// initialize, no Mcp-Session-Id) and a 2025-11-25 client of the same key
// are served by one /mcp at once, each in a browser context of its own:
// the stateless one in its principal's default context, the stateful one
// in its session's.
func TestStatelessBesideStateful(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "k"})
	bare, err := e.connectAt("2026-07-28", k, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bare.Close() })
	if v := bare.InitializeResult().ProtocolVersion; v != "2026-07-28" || bare.ID() != "" {
		t.Fatalf("the new client negotiated %q with session id %q", v, bare.ID())
	}
	full := e.mustConnect(k, nil)
	if v := full.InitializeResult().ProtocolVersion; v != "2025-11-25" || full.ID() == "" {
		t.Fatalf("the old client negotiated %q with session id %q", v, full.ID())
	}
	callTool(t, bare, "get_text", nil)
	callTool(t, full, "get_text", nil)
	callTool(t, bare, "get_text", nil)
	if _, ok := e.manager.Current("named:k:default"); !ok {
		t.Error("the stateless calls have no default context")
	}
	if _, ok := e.manager.Current("mcp:" + full.ID()); !ok {
		t.Error("the stateful session has no context of its own")
	}
	if n := e.backend.Opens(); n != 2 {
		t.Errorf("two clients opened %d contexts", n)
	}
	// REST without a session name shares the stateless default.
	if status, _, body := e.do("POST", "/api/v1/command", k, `{"command":"get_text"}`, nil); status != 200 || e.backend.Opens() != 2 {
		t.Errorf("REST on the default context: %d %s, opens %d", status, body, e.backend.Opens())
	}
}

// TestSessionHandles: a handle the server mints is the caller's alone:
// another key presenting it is refused in the words an unknown one gets;
// DELETE closes its context; the mints count against the session limit.
func TestSessionHandles(t *testing.T) {
	e := newHTTPEnv(t, func(o *Options) { o.MaxSessionsPerKey = 2 })
	a := e.key(NewKey{Name: "a"})
	b := e.key(NewKey{Name: "b"})
	mint := func(key string) (int, string) {
		status, hdr, body := e.do("POST", "/mcp/sessions", key, "", nil)
		var si sessionInfo
		_ = json.Unmarshal([]byte(body), &si)
		if status == 201 && (si.Session == "" || hdr.Get(SessionHeader) != si.Session || !strings.HasPrefix(si.Session, handlePrefix)) {
			t.Fatalf("mint: %d %s %v", status, body, hdr)
		}
		return status, si.Session
	}
	_, h1 := mint(a)
	own := e.mustConnectAt("2026-07-28", a, map[string]string{SessionHeader: h1})
	callTool(t, own, "get_text", nil)
	if _, ok := e.manager.Current("handle:" + h1); !ok {
		t.Fatal("the handle's calls have no context of their own")
	}
	opens := e.backend.Opens()

	// Another principal presenting the handle: refused, nothing opened.
	thief := e.mustConnectAt("2026-07-28", b, map[string]string{SessionHeader: h1})
	res := callTool(t, thief, "get_text", nil)
	if !res.IsError || !strings.Contains(textOf(res), "unknown, has ended or belongs to another principal") {
		t.Errorf("another key with the handle: %s", textOf(res))
	}
	unknown := e.mustConnectAt("2026-07-28", b, map[string]string{SessionHeader: handlePrefix + "AAAAAAAAAAAAAAAAAAAAAAAAAA"})
	if got := textOf(callTool(t, unknown, "get_text", nil)); got != textOf(res) {
		t.Errorf("an unknown handle is told apart from another's: %q vs %q", got, textOf(res))
	}
	if status, _, _ := e.do("DELETE", "/mcp/sessions/"+h1, b, "", nil); status != 404 {
		t.Errorf("another key deleted the handle: %d", status)
	}
	if e.backend.Opens() != opens {
		t.Error("a refused handle opened a context")
	}
	// The same handle over REST.
	if status, _, body := e.do("POST", "/api/v1/command", a, `{"command":"get_text","session":"`+h1+`"}`, nil); status != 200 || e.backend.Opens() != opens {
		t.Errorf("REST on the handle: %d %s", status, body)
	}

	// The limit counts handles with MCP sessions.
	e.mustConnect(a, nil)
	if status, _ := mint(a); status != 429 {
		t.Errorf("a third context was minted: %d", status)
	}
	if status, _, body := e.do("GET", "/mcp/sessions", a, "", nil); status != 200 || !strings.Contains(body, h1) || strings.Contains(body, `"b"`) {
		t.Errorf("list: %d %s", status, body)
	}
	if status, _, _ := e.do("DELETE", "/mcp/sessions/"+h1, a, "", nil); status != 204 {
		t.Errorf("delete: %d", status)
	}
	eventually(t, "the handle's context to close", func() bool {
		_, ok := e.manager.Current("handle:" + h1)
		return !ok
	})
	if res := callTool(t, own, "get_text", nil); !res.IsError {
		t.Error("a deleted handle still serves")
	}
	if status, _ := mint(a); status != 201 {
		t.Errorf("no room after a delete: %d", status)
	}
}

// TestNewProtocolEdges: at 2026-07-28 a removed method is 404 with
// -32601; server/discover answers; a request from the server's own
// origin is not cross-origin.
func TestNewProtocolEdges(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "k"})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	hdr := with(mcpHeaders, "Mcp-Protocol-Version", "2026-07-28")
	status, _, body := e.do("POST", "/mcp", k, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{`+meta+`}}`, with(hdr, "Mcp-Method", "ping"))
	if status != 404 || !strings.Contains(body, "-32601") {
		t.Errorf("ping at 2026-07-28: %d %s", status, body)
	}
	status, _, body = e.do("POST", "/mcp", k, `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{`+meta+`}}`, with(hdr, "Mcp-Method", "server/discover"))
	if status != 200 || !strings.Contains(body, `"2026-07-28"`) || !strings.Contains(body, `"ttlMs":600000`) || !strings.Contains(body, `"cacheScope":"public"`) {
		t.Errorf("discover: %d %s", status, body)
	}
	// A list depends on who asks and on the pages open: private, not
	// cached on a timer.
	status, _, body = e.do("POST", "/mcp", k, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{`+meta+`}}`, with(hdr, "Mcp-Method", "tools/list"))
	if status != 200 || !strings.Contains(body, `"ttlMs":0`) || !strings.Contains(body, `"cacheScope":"private"`) {
		t.Errorf("tools/list: %d %.300s", status, body)
	}
	// At 2025-11-25 a stream is primed with an event id, from which a
	// client whose connection dropped resumes (Last-Event-ID).
	status, _, body = e.do("POST", "/mcp", k, mcpInit, mcpHeaders)
	if status != 200 || !strings.Contains(body, "event: prime") || !strings.Contains(body, "id: ") {
		t.Errorf("a 2025-11-25 stream is not primed: %d %s", status, body)
	}
	origin := "http://" + strings.TrimPrefix(e.url, "http://")
	status, _, body = e.do("POST", "/mcp", k, mcpInit, with(mcpHeaders, "Origin", origin))
	if status != 200 {
		t.Errorf("the server's own origin: %d %s", status, body)
	}
}

// TestListenStream: subscriptions/listen at 2026-07-28 opens with
// notifications/subscriptions/acknowledged, and an open listen stream
// neither counts as a call in flight nor holds up shutdown.
func TestListenStream(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "k"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}`
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/mcp", strings.NewReader(body))
	for k, v := range with(mcpHeaders, "Authorization", "Bearer "+k, "Content-Type", "application/json", "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen") {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	first := ""
	for first == "" && sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			first = d
		}
	}
	if !strings.Contains(first, `"notifications/subscriptions/acknowledged"`) || !strings.Contains(first, `"toolsListChanged":true`) {
		t.Fatalf("first frame: %d %q", resp.StatusCode, first)
	}
	if e.handler.inFlight() != 0 {
		t.Error("a listen stream counts as a call in flight")
	}
	// shutdown fails the test if Serve has not returned (the drain
	// waiting on the stream would hold it for the 30 s deadline).
	if err := e.shutdown(); err != nil {
		t.Fatal(err)
	}
}
