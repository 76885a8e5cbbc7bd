package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
)

// surface is the tool surface of this issue, in tools/list order.
var surface = []string{
	"tabs_list", "tab_select", "tab_new", "tab_close",
	"navigate", "back", "forward", "reload",
	"click", "type", "fill", "press", "hover", "scroll", "select_option", "set_files", "drag",
	"snapshot", "query", "get_text", "get_html", "screenshot", "wait_for",
	"eval",
	"cookies_get", "cookies_set", "clipboard_write", "download_file",
	"chrome_status", "tool_groups",
	"dialog_answer",
	"network_requests", "network_request",
	"console_messages", "pdf",
	"extract_links", "read_as_markdown", "fill_form",
	"page_tools_list", "page_tool_call",
	"state_save", "state_load", "state_list",
	"emulate",
}

func TestToolTable(t *testing.T) {
	t.Parallel()
	var names []string
	for _, tool := range Tools() {
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff(surface, names); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
}

// Go cannot tell an unset bool from false, so ReadOnly is a pointer and
// this test proves every tool set it on purpose.
func TestEveryToolSetsReadOnly(t *testing.T) {
	t.Parallel()
	for _, tool := range Tools() {
		if tool.ReadOnly == nil {
			t.Errorf("%s: ReadOnly is not set", tool.Name)
		}
	}
}

// What a tool returns is declared with it: the typed client is generated
// from Output, so a tool without one would be missing from the client.
func TestEveryToolDeclaresItsOutput(t *testing.T) {
	t.Parallel()
	for _, tool := range Tools() {
		if tool.Output == nil || tool.Output.Value == nil {
			t.Errorf("%s: Output is not declared", tool.Name)
		}
	}
}

// The rest of a definition a model relies on, checked for every tool.
func TestToolDefinitions(t *testing.T) {
	t.Parallel()
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	actions := []Action{ActionNavigate, ActionRead, ActionInteract, ActionEval, ActionDownload, ActionTabs, ActionStatus, ActionPageTool}
	for _, tool := range Tools() {
		if !snake.MatchString(tool.Name) {
			t.Errorf("%s: name is not snake_case", tool.Name)
		}
		if tool.Title == "" || tool.Description == "" || tool.Handler == nil {
			t.Errorf("%s: title, description and handler are required", tool.Name)
		}
		if !slices.Contains(actions, tool.Action) {
			t.Errorf("%s: action %q is not one of %v", tool.Name, tool.Action, actions)
		}
		if *tool.ReadOnly && tool.Mutating {
			t.Errorf("%s: read-only and mutating", tool.Name)
		}
		// encoding/json escapes <, > and & as \u003c..., six characters each.
		if strings.ContainsAny(tool.Description, "<>&") {
			t.Errorf("%s: description contains <, > or &", tool.Name)
		}
		s := tool.InputSchema
		if s.Type != "object" {
			t.Errorf("%s: schema type %q, want object", tool.Name, s.Type)
		}
		if b, _ := json.Marshal(s.AdditionalProperties); string(b) != "false" {
			t.Errorf("%s: additionalProperties is %s, want false", tool.Name, b)
		}
		for name := range s.Properties {
			if !snake.MatchString(name) {
				t.Errorf("%s: argument %q is not snake_case", tool.Name, name)
			}
		}
		_, hasTab := s.Properties["tab_id"]
		if hasTab != (tool.Action != ActionStatus && tool.Name != "tabs_list" && tool.Name != "tab_new" && !strings.HasPrefix(tool.Name, "cookies_") && !tool.PerOrigin) {
			t.Errorf("%s: tab_id present = %v, unexpected for this tool", tool.Name, hasTab)
		}
	}
}

const snapshotDir = "testdata/tools"

// Every tool's definition, exactly as tools/list sends it, its policy
// classification, its group and the arguments it takes beyond the
// schema sent (the common and the rare ones) are kept in a snapshot file,
// so a change to a name, description, schema, hint, action, mutating flag
// or group shows in review.
// Rewrite them on purpose with UPDATE_GOLDEN=1.
func TestToolSnapshots(t *testing.T) {
	for _, tool := range Tools() {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		def := tool.Definition()
		var also []string
		for _, n := range tool.InputSchema.PropertyOrder {
			if _, sent := def.InputSchema.(*jsonschema.Schema).Properties[n]; !sent {
				also = append(also, n)
			}
		}
		snap := struct {
			Tool     *sdk.Tool `json:"tool"` // exactly what tools/list sends
			Also     []string  `json:"also_takes,omitempty"`
			Group    ListGroup `json:"group"`
			Action   Action    `json:"action"`
			Mutating bool      `json:"mutating"`
		}{def, also, tool.ListGroup, tool.Action, tool.Mutating}
		if err := enc.Encode(snap); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		t.Run(tool.Name, func(t *testing.T) {
			testkit.Golden(t, filepath.Join(snapshotDir, tool.Name+".snap.json"), buf.Bytes())
		})
	}
}

func TestNoStraySnapshots(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(snapshotDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, tool := range Tools() {
		known[tool.Name+".snap.json"] = true
	}
	for _, f := range files {
		if known[filepath.Base(f)] {
			continue
		}
		if testkit.Updating(t) {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is not the snapshot of any tool; delete it (or run with UPDATE_GOLDEN=1)", f)
	}
}

// The budgets of the tools/list reply, in characters (runes) of its whole
// result object as sent: every character is read by the model on every
// turn (Playwright MCP's default list is 20,876 characters for 25 tools).
// The default list is what `chromegate serve` without flags gives: safe
// mode (mutations, eval and downloads off) and DefaultGroups. The all-on
// list has every group, every switch of the policy on and a state dir;
// plugins and live page tools are the operator's and the pages', and the
// output schemas (serve --output-schemas, about 29,000 characters) are for
// clients that validate results, not for the model: they are measured and
// printed beside it. A change that grows a number is a decision to make in
// review: raise the budget here, with why.
const (
	defaultListBudget = 8_000
	allOnListBudget   = 12_000
)

func TestToolsListBudget(t *testing.T) {
	for _, c := range []struct {
		name      string
		configure func(*Options)
		budget    int
	}{
		{"default", func(o *Options) { o.Gate = newPolicyGate(t, map[string]any{}) }, defaultListBudget},
		{"all on", func(o *Options) { o.Tools = ListGroups }, allOnListBudget},
		{"all on with output schemas", func(o *Options) { o.Tools, o.OutputSchemas = ListGroups, true }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A release version string is longer than the tests' "test";
			// the reply carries it in _meta.
			h := newHarness(t, func(o *Options) {
				o.Version = "v1.23.4-rc.1+abcdef1"
				c.configure(o)
			})
			res, err := h.client.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var size int
			for _, r := range h.wire.responses() {
				if bytes.Contains(r.Result, []byte(`"tools":[`)) {
					size = len([]rune(string(r.Result)))
				}
			}
			if size == 0 {
				t.Fatal("no tools/list response captured")
			}
			t.Logf("tools/list, %s: %d characters for %d tools (budget %d)", c.name, size, len(res.Tools), c.budget)
			for _, tool := range res.Tools {
				b, _ := json.Marshal(tool)
				t.Logf("  %-16s %4d", tool.Name, len([]rune(string(b))))
			}
			if c.budget > 0 && size > c.budget {
				t.Errorf("tools/list, %s, is %d characters, over its %d budget", c.name, size, c.budget)
			}
		})
	}
}
