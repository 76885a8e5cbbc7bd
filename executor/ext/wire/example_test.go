package wire_test

import (
	"encoding/json"
	"fmt"

	"github.com/chromegate/chromegate/executor/ext/wire"
)

func ExampleDecode() {
	f, err := wire.Decode([]byte(`{"v":1,"type":"result","id":"c7","data":{"ok":true}}`))
	fmt.Println(f.Type, f.ID, string(f.Data), err)

	// Field names are matched with their case: "Token" is not "token".
	_, err = wire.Decode([]byte(`{"v":1,"type":"hello","Token":"x"}`))
	fmt.Println(err)

	tab := "42"
	out, _ := json.Marshal(wire.Frame{V: wire.Version, Type: wire.TypeCommand, ID: "c8", Method: wire.MethodClick, TabID: &tab})
	fmt.Println(string(out))
	// Output:
	// result c7 {"ok":true} <nil>
	// frame field "Token" differs from "token" only in case
	// {"v":1,"type":"command","id":"c8","method":"click","tabId":"42"}
}
