package pairing_test

import (
	"fmt"
	"time"

	"github.com/chromegate/chromegate/executor/ext/pairing"
)

func ExampleCodes() {
	var codes pairing.Codes
	code, _ := codes.Mint(2 * time.Minute)
	fmt.Println(len(code), code[4:5])
	fmt.Println(codes.Use(code)) // the user typed it into the popup
	fmt.Println(codes.Use(code)) // single use
	// Output:
	// 9 -
	// true
	// false
}
