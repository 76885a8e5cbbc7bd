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
	"chrome_status",
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

// Every tool's definition, exactly as tools/list sends it, and its policy
// classification are kept in a snapshot file, so a change to a name,
// description, schema, hint, action or mutating flag shows in review.
// Rewrite them on purpose with UPDATE_GOLDEN=1.
func TestToolSnapshots(t *testing.T) {
	for _, tool := range Tools() {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		snap := struct {
			Tool     *sdk.Tool `json:"tool"` // exactly what tools/list sends
			Action   Action    `json:"action"`
			Mutating bool      `json:"mutating"`
		}{tool.Definition(), tool.Action, tool.Mutating}
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

// toolsListBudget is the size the whole tools/list reply must stay under.
// Playwright MCP's is 20,876 characters for 25 tools; every character is
// read by the model on every session. It grew from 10,000 with the reading
// tools: 12,000 for snapshot and query, 13,000 for extract_links,
// read_as_markdown and fill_form (about 1,750 characters together, most of
// it fill_form's fields schema), 13,500 for page_tools_list and
// page_tool_call (about 700), 14,800 for network_requests and
// network_request (about 1,340, a third of it the resource types a model
// may filter by), 14,820 for how type and fill refer to a secret
// (about 80), 15,800 for state_save, state_load and state_list (about
// 980), 16,220 for dialog_answer (about 410), 17,200 for emulate (about
// 975: one tool for device, position, clock, language, media, CPU and
// network, where each peer has several), 18,430 for console_messages and
// pdf (about 1,230: 634 and 597, a third of pdf's its paper formats),
// 18,475 for how a scoped snapshot shows a part uncut and select_option
// takes the labels shown (about 45), 18,990 for the changes of acting
// calls (about 515: the changes argument of 13 tools, 364, and one
// sentence on snapshot), 19,390 for coordinates (about 395: x,y on
// click, hover and scroll, from_x..to_y on drag, mark_refs on screenshot;
// four tools of their own, as Playwright MCP's vision tools, would cost
// about 1,400), 19,430 for state_save's overwrite (about 40: a save
// replaces a saved login only when asked, which safe mode refuses).
const toolsListBudget = 19_430

// outputSchemasBudget is what the tools' output schemas (outputs.go) add to
// the tools/list reply, beside toolsListBudget: 29,336 characters for 43
// tools when they came (2.5 times the rest). Clients check results with
// them; the tool-calling APIs models are given tools through (name,
// description, input schema) do not take them, so they cost the wire,
// not the model's reading.
const outputSchemasBudget = 29_400

func TestToolsListSize(t *testing.T) {
	// A release version string is longer than the tests' "test"; the reply
	// carries it in _meta.
	h := newHarness(t, func(o *Options) { o.Version = "v1.23.4-rc.1+abcdef1" })
	res, err := h.client.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(surface) {
		t.Fatalf("tools/list has %d tools, want %d", len(res.Tools), len(surface))
	}
	// Measure the bytes the server sent: the result object of the
	// tools/list response.
	var size int
	for _, r := range h.wire.responses() {
		if bytes.Contains(r.Result, []byte(`"tools":[`)) {
			size = len([]rune(string(r.Result)))
		}
	}
	if size == 0 {
		t.Fatal("no tools/list response captured")
	}
	var outputs int
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.OutputSchema)
		outputs += len([]rune(`,"outputSchema":` + string(b)))
	}
	size -= outputs
	t.Logf("tools/list reply: %d characters for %d tools (budget %d), and %d of output schemas (budget %d)", size, len(res.Tools), toolsListBudget, outputs, outputSchemasBudget)
	for _, tool := range Tools() {
		b, _ := json.Marshal(tool.Definition())
		t.Logf("  %-16s %4d", tool.Name, len(b))
	}
	if size >= toolsListBudget {
		t.Errorf("tools/list reply is %d characters without its output schemas, over the %d budget", size, toolsListBudget)
	}
	if outputs >= outputSchemasBudget {
		t.Errorf("the output schemas are %d characters, over the %d budget", outputs, outputSchemasBudget)
	}
}
