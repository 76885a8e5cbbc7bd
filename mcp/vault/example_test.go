package vault_test

import (
	"fmt"
	"strings"

	"github.com/chromegate/chromegate/mcp/vault"
)

// A secret declared in a dotenv file, bound to its origin: the model
// writes a reference, the server expands it after the policy allowed it,
// and whatever comes back from the page shows the name again.
func Example() {
	values, err := vault.ParseFile(strings.NewReader("# the operator's\nPASSWORD='correct horse battery'\n"), "secrets.env")
	if err != nil {
		panic(err)
	}
	v, err := vault.New(values)
	if err != nil {
		panic(err)
	}
	name, origins, _ := vault.ParseBinding("PASSWORD=https://Login.Example.com:443")
	_ = v.Bind(name, origins)
	fmt.Println(v.Origins())

	typed, names, _ := v.Expand("<secret:PASSWORD>")
	fmt.Println(names, len(typed))

	page := "Welcome! You signed in with correct%20horse%20battery."
	fmt.Println(v.Redact(page))
	// Output:
	// map[PASSWORD:[https://login.example.com]]
	// [PASSWORD] 21
	// Welcome! You signed in with <secret:PASSWORD>.
}
