package hostname_test

import (
	"fmt"

	"github.com/chromegate/chromegate/policy/hostname"
)

func ExampleMatch() {
	fmt.Println(hostname.Match("*.example.com", "a.b.example.com"))
	fmt.Println(hostname.Match("*.example.com", "example.com"))
	fmt.Println(hostname.Match("*", "127.0.0.1")) // a wildcard never matches an address
	fmt.Println(hostname.Match("::1", "[::1]"))
	// Output:
	// true
	// false
	// false
	// true
}

func ExampleParse() {
	for _, h := range []string{"EXAMPLE.com.", "0x7f.1", "[0:0::1]", "bücher.de"} {
		c, err := hostname.Parse(h, true)
		fmt.Println(c, err)
	}
	// Output:
	// example.com <nil>
	// 127.0.0.1 <nil>
	// [::1] <nil>
	// xn--bcher-kva.de <nil>
}
