package e2e

import (
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/internal/testkit"
)

// TestServeToolsFlag: serve --tools chooses the groups tools/list shows,
// tool_groups turns another on at run time, a tool of a group that is off
// still runs by name, and an unknown group stops the server at start,
// naming the groups.
func TestServeToolsFlag(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	s := startServer(t, append(slices.Clone(permissive), "--tools=core,observe")...)
	names := s.toolNames()
	for _, want := range []string{"navigate", "click", "tool_groups", "console_messages"} {
		if !slices.Contains(names, want) {
			t.Errorf("--tools core,observe does not list %s: %v", want, names)
		}
	}
	if slices.Contains(names, "emulate") || slices.Contains(names, "eval") {
		t.Errorf("--tools core,observe lists a group that is off: %v", names)
	}
	s.call("navigate", map[string]any{"url": site(t) + "/form"})
	if got := s.evalString(`1 + 1`); got != "2" {
		t.Errorf("eval, of a group that is off, by name: %q", got)
	}
	if res := resultText(s.call("tool_groups", map[string]any{"enable": []string{"emulate"}})); !strings.Contains(res, `"emulate":"on: emulate"`) {
		t.Errorf("tool_groups enable: %s", res)
	}
	if names := s.toolNames(); !slices.Contains(names, "emulate") {
		t.Errorf("emulate is not listed once enabled: %v", names)
	}

	var stderr bytes.Buffer
	cmd := exec.Command(binary, "serve", "--tools=core,bogus")
	cmd.Stderr = &stderr
	var exit *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() != 2 ||
		!strings.Contains(stderr.String(), `unknown tool group "bogus"; the groups are core, extract, scripts, state, files, observe, emulate, pages, or all`) {
		t.Errorf("serve --tools=core,bogus: %v\n%s", err, stderr.String())
	}
}
