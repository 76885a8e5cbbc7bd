package mcp

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// The decision latency of the one gate as the server meets it: a call's
// question built from the Call and decided (Before), and a page's
// request decided through the egress boundary's door (DecideRequest,
// cached per policy revision). The policy is the default one with two
// allowed domains, as in policy/bench_test.go.

func benchTool(name string) *Tool {
	for _, t := range Tools() {
		if t.Name == name {
			return t
		}
	}
	panic(name)
}

func benchCalls() map[string]*Call {
	p := Principal{Name: "bench", Roles: []string{"ci"}, Transport: "stdio"}
	page := func(u string) func(context.Context) (executor.Tab, error) {
		return func(context.Context) (executor.Tab, error) { return executor.Tab{URL: u}, nil }
	}
	return map[string]*Call{
		"navigate": {Tool: benchTool("navigate"), Args: map[string]any{"url": "https://www.example.org/a?b=c"}, Principal: p, Page: page("about:blank")},
		"read":     {Tool: benchTool("get_text"), Args: map[string]any{"selector": "main"}, Principal: p, Page: page("https://example.com/docs")},
	}
}

var benchRequest = egress.Request{Session: "s", URL: "https://cdn.example.org/lib.js", Method: "GET", ResourceType: "script",
	Via: egress.ViaProxy, Backend: "cdp", Addr: netip.MustParseAddr("93.184.216.34")}

func benchEngine(b *testing.B) *policy.Engine {
	e, err := policy.New(context.Background(), policy.WithTimeout(10*time.Second),
		policy.WithData(map[string]any{"allow_domains": []string{"example.com", "*.example.org"}}))
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkGatePath: the server's decision of a call (Before) and of a
// page's request, on the branch (the adapter and policy/gate).
func BenchmarkGatePath(b *testing.B) {
	g := gate.New(benchEngine(b), nil)
	s := serverOn(g)
	ctx := context.Background()
	for name, c := range benchCalls() {
		c.srv = s
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := s.before(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := benchRequest
			if v := g.DecideRequest(ctx, &r); !v.Allow {
				b.Fatal(v)
			}
		}
	})
}
