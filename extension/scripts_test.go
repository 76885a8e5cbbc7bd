package extension

import (
	"io/fs"
	"regexp"
	"slices"
	"testing"

	"github.com/chromegate/chromegate/executor"
)

// Every page script the extension asks welcome for is one the server
// sends (executor.ExtensionScripts), and the server sends none it never
// runs: the scripts live once, in executor/scripts.
func TestServerScriptsAreSent(t *testing.T) {
	asked := regexp.MustCompile(`\b(?:serverScript|script)\('([a-z]+)'\)`)
	want := map[string]bool{"element": true} // store.scripts() composes it
	err := fs.WalkDir(FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(FS(), path)
		if err != nil {
			return err
		}
		for _, m := range asked.FindAllStringSubmatch(string(b), -1) {
			want[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sent := executor.ExtensionScripts()
	for name := range want {
		if sent[name] == "" {
			t.Errorf("the extension asks for the %s script, which welcome does not carry", name)
		}
	}
	var names []string
	for name := range sent {
		names = append(names, name)
		if !want[name] {
			t.Errorf("welcome carries the %s script, which the extension never runs", name)
		}
	}
	slices.Sort(names)
	t.Logf("welcome.scripts: %v", names)
}
