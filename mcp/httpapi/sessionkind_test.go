package httpapi

import (
	"testing"

	"github.com/chromegate/chromegate/mcp"
)

// TestSessionKindOfKeys: the Manager sessions this package makes — a
// minted handle's, a named context's, an MCP session's — are the kinds
// mcp.SessionKind names them (metrics and traces count by it).
func TestSessionKindOfKeys(t *testing.T) {
	e := newHTTPEnv(t, nil)
	cs := e.mustConnect(e.key(NewKey{Name: "k"}), nil) // a stateful MCP session
	p := mcp.Principal{Name: "k"}
	handle, err := e.handler.mint(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	hk, err := e.handler.contextKey(t.Context(), p, handle)
	if err != nil {
		t.Fatal(err)
	}
	nk, err := e.handler.contextKey(t.Context(), p, "work")
	if err != nil {
		t.Fatal(err)
	}
	mk, err := e.handler.SessionOf(t.Context(), cs.ID(), nil, p)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{hk: "handle", nk: "named", mk: "mcp"} {
		if got := mcp.SessionKind(key); got != want {
			t.Errorf("SessionKind(%q) = %q, want %q", key, got, want)
		}
	}
}
