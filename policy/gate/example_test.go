package gate_test

import (
	"context"
	"fmt"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// A navigation asked of the default policy with one allowed domain: the
// allowed host is allowed, another is denied with a reason and a hint for
// the model, and a question the gate does not know is denied too.
func ExampleGate_Decide() {
	ctx := context.Background()
	eng, err := policy.New(ctx, policy.WithData(map[string]any{"allow_domains": []string{"example.com"}}))
	if err != nil {
		panic(err)
	}
	g := gate.New(eng, nil)
	nav := func(url string) gate.Question {
		return gate.Question{Kind: gate.KindCall, Tool: "navigate",
			Class: policy.Class{Action: policy.ActionNavigate, URLArg: "url"},
			Args:  map[string]any{"url": url}, Principal: policy.Principal{Name: "local", Transport: "stdio"}}
	}
	fmt.Println(g.Decide(ctx, nav("https://example.com/")).Allow)
	d := g.Decide(ctx, nav("https://other.example/"))
	fmt.Println(d.Allow, executor.CodeOf(d.Err), d.Reason)
	odd := nav("https://example.com/")
	odd.Kind = "teleport"
	fmt.Println(g.Decide(ctx, odd).Reason)
	// Output:
	// true
	// false POLICY_DENIED navigation to other.example is not allowed: host not in allow_domains
	// policy error: a question of a kind the gate does not know
}
