package policy

// testClasses are the classes of the built-in tools as the policy tests
// need them: test data, written as the MCP server's tool table declares
// them (mcp.Tools is the one source; its tests prove the inputs it builds).
var testClasses = map[string]Class{
	"tabs_list":  {Action: ActionTabs, ReadOnly: true},
	"tab_select": {Action: ActionTabs},
	"tab_new":    {Action: ActionNavigate, ActionWithoutURL: ActionTabs, URLArg: "url"},
	"tab_close":  {Action: ActionTabs, Mutating: true},

	"navigate": {Action: ActionNavigate, URLArg: "url"},
	"back":     {Action: ActionNavigate},
	"forward":  {Action: ActionNavigate},
	"reload":   {Action: ActionNavigate},

	"get_text":         {Action: ActionRead, ReadOnly: true},
	"get_html":         {Action: ActionRead, ReadOnly: true},
	"snapshot":         {Action: ActionRead, ReadOnly: true},
	"query":            {Action: ActionRead, ReadOnly: true},
	"screenshot":       {Action: ActionRead, ReadOnly: true},
	"wait_for":         {Action: ActionRead, ReadOnly: true},
	"extract_links":    {Action: ActionRead, ReadOnly: true},
	"read_as_markdown": {Action: ActionRead, ReadOnly: true},
	"cookies_get":      {Action: ActionRead, ReadOnly: true},
	"network_requests": {Action: ActionRead, ReadOnly: true},
	"network_request":  {Action: ActionRead, ReadOnly: true},
	"console_messages": {Action: ActionRead, ReadOnly: true},
	"pdf":              {Action: ActionRead},

	"click":           {Action: ActionInteract, Mutating: true},
	"type":            {Action: ActionInteract, Mutating: true, Secrets: []string{"text"}},
	"fill":            {Action: ActionInteract, Mutating: true, Secrets: []string{"value"}},
	"press":           {Action: ActionInteract, Mutating: true},
	"hover":           {Action: ActionInteract},
	"scroll":          {Action: ActionInteract},
	"select_option":   {Action: ActionInteract, Mutating: true},
	"set_files":       {Action: ActionInteract, Mutating: true},
	"drag":            {Action: ActionInteract, Mutating: true},
	"fill_form":       {Action: ActionInteract, Mutating: true, Secrets: []string{"fields", "values"}},
	"clipboard_write": {Action: ActionInteract, Mutating: true, Secrets: []string{"text"}},
	"cookies_set":     {Action: ActionInteract, Mutating: true, Secrets: []string{"cookies"}},

	"eval":          {Action: ActionEval, Mutating: true, Hashed: []string{"expression"}},
	"download_file": {Action: ActionDownload, URLArg: "url"},
	"chrome_status": {Action: ActionStatus, ReadOnly: true},

	"page_tools_list": {Action: ActionPageTool, ReadOnly: true},
	"page_tool_call":  {Action: ActionPageTool, Mutating: true, Secrets: []string{"arguments"}},
}

// testInput is NewInput of tool with its class in testClasses (the zero
// Class, an unknown tool, for any other name).
func testInput(phase, tool string, args map[string]any) (Input, error) {
	return NewInput(phase, tool, testClasses[tool], args)
}
