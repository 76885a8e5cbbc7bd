package policy_test

import (
	"context"
	"fmt"

	"github.com/chromegate/chromegate/policy"
)

// The dispatch gate: build the input from the tool's class (which the
// tool's declaration carries), decide, and refuse the call with the
// policy's reasons and a hint when it is denied.
func Example() {
	ctx := context.Background()
	engine, err := policy.New(ctx, policy.WithData(map[string]any{
		"allow_domains": []string{"example.com", "*.example.com"}, // --allow-domain
	}))
	if err != nil {
		panic(err)
	}
	navigate := policy.Class{Action: policy.ActionNavigate, URLArg: "url"}
	eval := policy.Class{Action: policy.ActionEval, Mutating: true, Hashed: []string{"expression"}}
	for _, url := range []string{"https://docs.example.com/a", "https://other.test/", "http://2130706433/"} {
		in, err := policy.NewInput(policy.PhaseCall, "navigate", navigate, map[string]any{"url": url})
		if err != nil {
			panic(err) // BAD_ARGS in the real gate
		}
		in.Principal = policy.Principal{Name: "local", Transport: "stdio"}
		d := engine.Decide(ctx, in)
		if d.Allow {
			fmt.Println("allowed:", in.Target.Host)
			continue
		}
		fmt.Println(policy.DeniedError(d, in).Message)
	}

	// tools/list: eval is hidden while it is off.
	list, _ := policy.NewInput(policy.PhaseList, "eval", eval, nil)
	fmt.Println("eval listed:", engine.Decide(ctx, list).Allow)
	// Output:
	// allowed: docs.example.com
	// navigation to other.test is not allowed: host not in allow_domains
	// navigation to 127.0.0.1 is not allowed: 127.0.0.1 is a loopback address, allowed only when listed exactly in allow_domains
	// eval listed: false
}

func ExampleParseTarget() {
	for _, raw := range []string{"HTTP://Bücher.DE.:80/x", "http://0x7f.1:8080/", "http://[::ffff:169.254.169.254]/", "javascript:alert(1)"} {
		t, err := policy.ParseTarget(raw)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s host=%q port=%d class=%s\n", t.URL, t.Host, t.Port, t.IPClass)
	}
	// Output:
	// http://xn--bcher-kva.de/x host="xn--bcher-kva.de" port=80 class=unresolved
	// http://127.0.0.1:8080/ host="127.0.0.1" port=8080 class=loopback
	// http://[::ffff:a9fe:a9fe]/ host="[::ffff:a9fe:a9fe]" port=80 class=link_local
	// javascript:alert(1) host="" port=0 class=none
}
