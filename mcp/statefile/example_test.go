package statefile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/chromegate/chromegate/mcp/statefile"
)

// A state is saved by name for a principal, and read back only by it.
func ExampleStore() {
	dir, _ := os.MkdirTemp("", "state")
	defer os.RemoveAll(dir)
	store := &statefile.Store{Dir: filepath.Join(dir, "state")}

	saved := []byte(`{"cookies":[{"name":"sid","value":"…","domain":"app.example.com","path":"/"}],
	  "origins":[{"origin":"https://app.example.com","localStorage":[{"name":"token","value":"…"}]}]}`)
	if _, err := store.Write("ci", "app-login", saved); err != nil {
		fmt.Println(err)
	}
	st, err := store.Read("ci", "app-login")
	fmt.Println(len(st.Cookies), len(st.Origins), err)

	_, err = store.Read("someone-else", "app-login")
	fmt.Println(err)
	fmt.Println(statefile.CheckName("../app-login"))
	// Output:
	// 1 1 <nil>
	// BAD_ARGS: no saved state is called "app-login" (call state_list for the names saved, or state_save first)
	// BAD_ARGS: state name "../app-login" is not allowed: 1 to 64 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit (a name, not a path) (use a short name such as "app-login"; the server chooses where the file lives)
}
