package mcp

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
)

// Page tools: the tools web pages register (WebMCP), listed and called.
// Each tool is one constructor: its declaration, its class, the facts the
// call path needs; the handlers
// live with the feature (pagetools.go).

// groupPageTools is the README row of these tools.
var groupPageTools = &ToolGroup{Name: "page tools (WebMCP)", Note: "and one live tool per page tool"}

func pageToolsListTool() *Tool {
	return newTool(Tool{
		Name: "page_tools_list", Title: "List page tools",
		Group:       groupPageTools,
		Output:      &Output{Value: pageToolsOut{}},
		Description: "Tools that pages registered (WebMCP): name, origin, annotations, input_schema, live_tool.",
		ReadOnly:    yes(), Idempotent: true, Action: ActionPageTool,
	}, pageToolsList)
}

// pageToolCallTool is page_tool_call, the generic caller of page tools.
// Every live page tool, and every page resource or prompt, is this tool
// to the policy (see PolicyGate.input), so its class is theirs.
func pageToolCallTool() *Tool {
	return newTool(Tool{
		Name: "page_tool_call", Title: "Call page tool",
		Group:       groupPageTools,
		Output:      &Output{Value: pageToolCallOut{}, Text: true},
		Description: "Call a page-registered tool (page_tools_list) with arguments per its input_schema.",
		// A page tool may do anything; the policy may relax this for
		// tools that declare readOnlyHint.
		ReadOnly: no(), Action: ActionPageTool, Mutating: true, Secrets: []string{"arguments"},
		CallsPageTool: true, CutHint: pageToolCutHint, TimeoutArg: true,
	}, pageToolCall)
}

// pageToolCallIn is page_tool_call's input. Arguments is the page tool's
// input, checked against the page's schema.
type pageToolCallIn struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	TabID     string         `json:"tab_id,omitempty"`
	Surface   string         `json:"surface,omitempty"`
}

func (pageToolCallIn) shape(s *jsonschema.Schema) {
	s.Properties["arguments"] = &jsonschema.Schema{Type: "object"}
	setEnum(s, "surface", string(executor.SurfaceWebMCP), string(executor.SurfaceMCPB), string(executor.SurfaceInPage))
}

// pageToolCutHint is what a cut result of a page tool asks for.
const pageToolCutHint = "ask the page tool for less, if its input_schema allows"
