package mcp

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The facts a constructor sets hang together: what one implies of
// another is checked here, once for every tool.
func TestToolFacts(t *testing.T) {
	t.Parallel()
	uses := map[Use]string{}
	for _, tool := range Tools() {
		nav := tool.Action == ActionNavigate
		if want := nav || len(tool.Targets) > 0; want && !tool.TimeoutArg {
			// A model must be able to keep a click on a missing
			// element, or a slow load, from taking the whole deadline.
			t.Errorf("%s waits (a target or a load) but offers no timeout_ms", tool.Name)
		}
		if tool.WaitUntilArg != nav {
			t.Errorf("%s: wait_until offered = %v, loads a page = %v", tool.Name, tool.WaitUntilArg, nav)
		}
		if (tool.MayLoad || tool.MayLoadIf != "") && !tool.Changes {
			t.Errorf("%s may load a page but returns no changes: the landing wait is for changes", tool.Name)
		}
		if tool.MayLoadIf != "" {
			if p, ok := tool.InputSchema.Properties[tool.MayLoadIf]; !ok || p.Type != "boolean" {
				t.Errorf("%s: MayLoadIf %q is not a boolean argument", tool.Name, tool.MayLoadIf)
			}
		}
		if tool.AnswersDialog && !tool.MayLoad {
			t.Errorf("%s answers a dialog, which may load a page, but is not MayLoad", tool.Name)
		}
		if tool.CallsPageTool && tool.Action != ActionPageTool {
			t.Errorf("%s calls a page tool but its action is %s", tool.Name, tool.Action)
		}
		if tool.Use != UseNone {
			if other, dup := uses[tool.Use]; dup {
				t.Errorf("%s and %s both have use %d", other, tool.Name, tool.Use)
			}
			uses[tool.Use] = tool.Name
		}
		if tool.Group == nil {
			t.Errorf("%s has no Group: the README's tool table would leave it out", tool.Name)
		}
	}
	for _, u := range []Use{UseOutline, UseShot, UseRestore} {
		if _, ok := uses[u]; !ok {
			t.Errorf("no tool has use %d", u)
		}
	}
}

// toolNameCheck matches a test or a lookup of one tool by its name:
// Name == "click", s.tools["snapshot"], s.entry("state_load").
var toolNameCheck = regexp.MustCompile(`Name [!=]= "[a-z_]+"|tools\["[a-z_]+"\]|entry\("[a-z_]+"\)`)

// No stage tests a tool's name: what it needs to know of a tool is a
// field the tool's constructor sets.
func TestNoToolNameChecks(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := toolNameCheck.FindString(line); m != "" {
				t.Errorf("%s:%d: %s: make it a field of the tool (tool.go)", f, i+1, m)
			}
		}
	}
}
