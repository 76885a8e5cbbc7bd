package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
)

// connectAt opens an MCP client over HTTP at protocol version (2026-07-28
// is stateless: no initialize, no Mcp-Session-Id), with key, extra headers
// and client options.
func (h *httpServer) connectAt(version, key string, header map[string]string, opts *sdk.ClientOptions) *sdk.ClientSession {
	h.t.Helper()
	hdr := headerRT{}
	for k, v := range header {
		hdr[k] = v
	}
	if key != "" {
		hdr["Authorization"] = "Bearer " + key
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e-" + version, Version: "1"}, opts).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: h.url + "/mcp", HTTPClient: &http.Client{Transport: hdr}},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		h.t.Fatalf("connect over HTTP at %s: %v", version, err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		h.t.Fatalf("asked for %s, negotiated %s", version, got)
	}
	h.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// cookieSite serves /set?v=X (sets cookie v=X) and /echo (shows the
// cookies it got) on 127.0.0.1.
func cookieSite(t testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if v := r.URL.Query().Get("v"); r.URL.Path == "/set" && v != "" {
			http.SetCookie(w, &http.Cookie{Name: "v", Value: v, Path: "/"})
			fmt.Fprintf(w, "<title>set %s</title><p>set %s</p>", v, v)
			return
		}
		var got []string
		for _, c := range r.Cookies() {
			got = append(got, c.Name+"="+c.Value)
		}
		fmt.Fprintf(w, "<title>echo</title><p>cookies: [%s]</p>", strings.Join(got, " "))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestTwoRevisionsOneServer: a 2026-07-28 client (the go-sdk's, stateless)
// and a 2025-11-25 client drive one server at once, each in a browser
// context of its own, and neither sees the other's tabs or cookies; a
// handle minted by one key is refused to another.
func TestTwoRevisionsOneServer(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	site := cookieSite(t)
	dir := t.TempDir()
	alice := createKey(t, dir, "alice")
	bob := createKey(t, dir, "bob")
	h := startHTTP(t, dir, "--allow-domain=127.0.0.1")

	bare := h.connectAt("2026-07-28", alice, nil, nil)
	full := h.connectAt("2025-11-25", alice, nil, nil)
	if bare.ID() != "" || full.ID() == "" {
		t.Fatalf("session ids: new %q, old %q", bare.ID(), full.ID())
	}
	// Both at once.
	done := make(chan *sdk.CallToolResult, 2)
	go func() { done <- mcpCall(t, bare, "navigate", map[string]any{"url": site + "/set?v=new"}) }()
	go func() { done <- mcpCall(t, full, "navigate", map[string]any{"url": site + "/set?v=old"}) }()
	for range 2 {
		mustOK(t, "navigate", <-done)
	}
	for name, c := range map[string]*sdk.ClientSession{"new": bare, "old": full} {
		mustOK(t, "navigate", mcpCall(t, c, "navigate", map[string]any{"url": site + "/echo"}))
		text := resultText(mustOK(t, "get_text", mcpCall(t, c, "get_text", nil)))
		if !strings.Contains(text, "cookies: [v="+name+"]") {
			t.Errorf("the %s client's page: %q (wants its own cookie only)", name, text)
		}
		tabs := resultText(mustOK(t, "tabs_list", mcpCall(t, c, "tabs_list", nil)))
		if other := map[string]string{"new": "set?v=old", "old": "set?v=new"}[name]; strings.Contains(tabs, other) {
			t.Errorf("the %s client sees the other's tab: %s", name, tabs)
		}
	}

	// A minted handle: a third context, alice's alone.
	status, hdr, body := h.rest("POST", "/mcp/sessions", alice, "", nil)
	var minted struct{ Session string }
	if status != 201 || json.Unmarshal([]byte(body), &minted) != nil || minted.Session == "" || hdr.Get("X-Chromegate-Session") != minted.Session {
		t.Fatalf("mint: %d %s", status, body)
	}
	third := h.connectAt("2026-07-28", alice, map[string]string{"X-Chromegate-Session": minted.Session}, nil)
	mustOK(t, "navigate", mcpCall(t, third, "navigate", map[string]any{"url": site + "/echo"}))
	if text := resultText(mustOK(t, "get_text", mcpCall(t, third, "get_text", nil))); !strings.Contains(text, "cookies: []") {
		t.Errorf("the minted context has cookies: %q", text)
	}
	// Bob presenting alice's handle: refused, and told nothing of it.
	thief := h.connectAt("2026-07-28", bob, map[string]string{"X-Chromegate-Session": minted.Session}, nil)
	res := mcpCall(t, thief, "get_text", nil)
	if !res.IsError || !strings.Contains(resultText(res), "belongs to another principal") || strings.Contains(resultText(res), "cookies") {
		t.Errorf("bob with alice's handle: %s", resultText(res))
	}
	if status, _, _ := h.rest("DELETE", "/mcp/sessions/"+minted.Session, bob, "", nil); status != 404 {
		t.Errorf("bob deleted alice's handle: %d", status)
	}
	if status, _, _ := h.rest("DELETE", "/mcp/sessions/"+minted.Session, alice, "", nil); status != 204 {
		t.Errorf("alice could not delete her handle: %d", status)
	}
	if res := mcpCall(t, third, "get_text", nil); !res.IsError {
		t.Error("a deleted handle still serves")
	}
}
