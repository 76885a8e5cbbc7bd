package extension_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/chromegate/chromegate/extension"
)

// Install writes the extension out for "Load unpacked"; its id is fixed by
// the manifest key, so the server knows which Origin to expect.
func ExampleInstall() {
	dir, _ := os.MkdirTemp("", "chromegate-ext")
	defer os.RemoveAll(dir)
	if err := extension.Install(dir); err != nil {
		fmt.Println(err)
		return
	}
	_, err := os.Stat(filepath.Join(dir, "manifest.json"))
	fmt.Println(err == nil, extension.ID())
	// Output: true panapbedhlmfgppfnakffbadibcgglbb
}
