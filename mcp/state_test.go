package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/policy"
)

// Each origin of a storage-state call is decided on its own: an origin
// outside allow_domains is denied, with the policy's reason, even when the
// call itself was allowed.
func TestStateOriginDecisions(t *testing.T) {
	t.Parallel()
	g := newPolicyGate(t, map[string]any{"allow_domains": []any{"app.test"}, "enable_mutations": true})
	var load *Tool
	for _, tool := range Tools() {
		if tool.Name == "state_load" {
			load = tool
		}
	}
	srv := &Server{opts: Options{Gate: g}}
	c := &Call{Tool: load, Args: map[string]any{"name": "x"}, Principal: LocalPrincipal, srv: srv}
	ctx := context.Background()
	if err := gateBefore(ctx, g, c); err != nil {
		t.Fatalf("the call itself: %v", err)
	}
	decide := c.originDecider(policy.StateLoad, policy.StateTool)
	if err := decide(ctx, "http://app.test:8080"); err != nil {
		t.Errorf("app.test: %v", err)
	}
	for _, o := range []string{"http://evil.test:8080", "http://test", "https://127.0.0.1:1", "javascript:alert(1)"} {
		err := decide(ctx, o)
		if err == nil {
			t.Errorf("%s was allowed", o)
			continue
		}
		if !strings.Contains(err.Error(), "POLICY_DENIED") && !strings.Contains(err.Error(), "not") {
			t.Errorf("%s: %v", o, err)
		}
	}
}
