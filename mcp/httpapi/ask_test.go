package httpapi

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// askHTTPPolicy asks a person before a navigation to ask.test.
const askHTTPPolicy = `package chromegate

decision := {"allow": true, "reasons": [], "ask": ask}

ask := ["navigation to ask.test needs a person's yes"] if {
	input.phase == "call"
	input.action == "navigate"
	input.target.host == "ask.test"
} else := []
`

// TestAskOverHTTP: over Streamable HTTP the person is asked with
// elicitation at 2025-11-25 (a stateful session) and with an
// input_required result at 2026-07-28 (stateless requests, the answer
// coming back with the retried call); only a yes runs the call; a client
// that cannot ask, and REST, get the denial with the reason.
func TestAskOverHTTP(t *testing.T) {
	t.Parallel()
	e := newHTTPEnvWith(t, func(o *mcp.Options) {
		eng, err := policy.New(t.Context(), policy.WithFS("ask", fstest.MapFS{"p.rego": {Data: []byte(askHTTPPolicy)}}), policy.WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		o.Gate = gate.New(eng, nil)
	}, nil)
	k := e.key(NewKey{Name: "k"})
	connect := func(version string, answer *sdk.ElicitResult) *sdk.ClientSession {
		t.Helper()
		opts := &sdk.ClientOptions{}
		if answer != nil {
			opts.ElicitationHandler = func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				if !strings.Contains(req.Params.Message, "https://ask.test/") {
					t.Errorf("the person was shown %q", req.Params.Message)
				}
				return answer, nil
			}
		}
		tr := &sdk.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: &http.Client{Transport: headerTransport{map[string]string{"Authorization": "Bearer " + k}}}}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "asker", Version: "1"}, opts).Connect(t.Context(), tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("negotiated %s, want %s", got, version)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	yes := &sdk.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}
	no := &sdk.ElicitResult{Action: "decline"}
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		if res := callTool(t, connect(v, yes), "navigate", map[string]any{"url": "https://ask.test/"}); res.IsError {
			t.Errorf("%s, accepted: %s", v, textOf(res))
		}
		if res := callTool(t, connect(v, no), "navigate", map[string]any{"url": "https://ask.test/"}); !res.IsError || !strings.Contains(textOf(res), "the user did not allow it") {
			t.Errorf("%s, declined: %s", v, textOf(res))
		}
		if res := callTool(t, connect(v, nil), "navigate", map[string]any{"url": "https://ask.test/"}); !res.IsError || !strings.Contains(textOf(res), "ask the user to allow it") {
			t.Errorf("%s, a client that cannot ask: %s", v, textOf(res))
		}
	}
	status, _, body := e.do("POST", "/api/v1/command", k, `{"command":"navigate","params":{"url":"https://ask.test/"}}`, nil)
	if status != http.StatusForbidden || !strings.Contains(body, "POLICY_DENIED") || !strings.Contains(body, "no person to ask") {
		t.Errorf("REST: %d %s", status, body)
	}
}
