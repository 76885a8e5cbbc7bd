package flow_test

import (
	"fmt"

	"github.com/chromegate/chromegate/mcp/flow"
)

// A session reads a mail page, then a call would send part of it, URL
// encoded, to another origin: the flow names where it came from and where
// it goes, never the text.
func Example() {
	t := flow.New()
	t.Read("https://mail.example", "Your recovery code is QX7-PLUM-4431-ORBIT.")
	for _, f := range t.Match("https://evil.example", []flow.Value{{Via: "url", Text: "/c?q=recovery+code+is+QX7-PLUM"}}) {
		fmt.Println(f.FromOrigin, "→", f.ToOrigin, f.Via, f.Length)
	}
	fmt.Println(t.Match("https://mail.example", []flow.Value{{Via: "url", Text: "/search?q=QX7-PLUM-4431-ORBIT"}}))
	// Output:
	// https://mail.example → https://evil.example url 25
	// []
}
