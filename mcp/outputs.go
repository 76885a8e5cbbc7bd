package mcp

import (
	"encoding/json"

	"github.com/chromegate/chromegate/helpers"
)

// outputs declares what each built-in tool returns. A handler's Result.Value
// is of this type (TestEveryToolThroughTheClient decodes every result into
// it, refusing unknown fields), and the typed client's result types are
// generated from it. A new tool must be added here.
var outputs = map[string]Output{
	"tabs_list":  {Value: tabsOut{}},
	"tab_select": {Value: tabOut{}},
	"tab_new":    {Value: tabOut{}},
	"tab_close":  {Value: tabCloseOut{}},

	"navigate": {Value: pageOut{}},
	"back":     {Value: pageOut{}},
	"forward":  {Value: pageOut{}},
	"reload":   {Value: pageOut{}},

	"click":         {Value: actionOut{}},
	"type":          {Value: actionOut{}},
	"fill":          {Value: actionOut{}},
	"press":         {Value: actionOut{}},
	"hover":         {Value: actionOut{}},
	"scroll":        {Value: actionOut{}},
	"select_option": {Value: actionOut{}},
	"set_files":     {Value: actionOut{}},
	"drag":          {Value: actionOut{}},

	"snapshot":   {Value: snapshotOut{}, Text: true},
	"query":      {Value: queryOut{}},
	"get_text":   {Value: textOut{}, Text: true},
	"get_html":   {Value: textOut{}, Text: true},
	"screenshot": {Value: shotOut{}, Image: true},
	"wait_for":   {Value: waitOut{}},

	"network_requests": {Value: networkRequestsOut{}},
	"network_request":  {Value: networkRequestOut{}, Text: true},

	"eval": {Value: evalOut{}},

	"cookies_get":     {Value: cookiesOut{}},
	"cookies_set":     {Value: setOut{}},
	"clipboard_write": {Value: writtenOut{}},
	"download_file":   {Value: downloadOut{}},

	"chrome_status": {Value: map[string]any{}},

	"extract_links":    {Value: linksOut{}, Text: true},
	"read_as_markdown": {Value: markdownOut{}, Text: true},
	"fill_form":        {Value: formOut{}},

	"page_tools_list": {Value: pageToolsOut{}},
	"page_tool_call":  {Value: pageToolCallOut{}, Text: true},
}

// withOutputs sets each tool's Output from outputs.
func withOutputs(tools []*Tool) []*Tool {
	for _, t := range tools {
		if o, ok := outputs[t.Name]; ok {
			t.Output = &o
		}
	}
	return tools
}

// The JSON results of the tools that share none with others.

type cookiesOut struct {
	Cookies []cookie `json:"cookies"`
}

type downloadOut struct {
	Path     string `json:"path"`
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	MIMEType string `json:"mime_type,omitempty"`
	SHA256   string `json:"sha256"`
	URL      string `json:"url"`
}

type evalOut struct {
	pageOut
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value,omitempty"`
	Error string          `json:"error,omitempty"`
}

type formOut struct {
	pageOut
	Filled int                    `json:"filled"`
	Failed int                    `json:"failed"`
	Fields []helpers.FieldOutcome `json:"fields"`
	Submit *helpers.SubmitOutcome `json:"submit,omitempty"`
}

type linksOut struct {
	pageOut
	Total int    `json:"total"`
	Shown int    `json:"shown"`
	Note  string `json:"note,omitempty"`
}

type markdownOut struct {
	pageOut
	Source string `json:"source"`
	Offset int    `json:"offset,omitempty"`
	Total  int    `json:"total_chars"`
	Next   int    `json:"next,omitempty"`
}

type queryOut struct {
	pageOut
	Showing string              `json:"showing"`
	Items   []helpers.QueryItem `json:"items"`
}

type setOut struct {
	Set int `json:"set"`
}

type snapshotOut struct {
	URL     string      `json:"url"`
	Title   string      `json:"title,omitempty"`
	Dialogs []dialogOut `json:"dialogs,omitempty"`
	Lines   int         `json:"lines,omitempty"`
	Next    int         `json:"next,omitempty"`
}

type tabCloseOut struct {
	Closed string   `json:"closed"`
	Tabs   []tabOut `json:"tabs"`
}

type tabsOut struct {
	Tabs []tabOut `json:"tabs"`
	// Hidden counts the tabs whose URL and title are left out because they
	// show pages outside the policy; Note says so in words.
	Hidden int    `json:"hidden,omitempty"`
	Note   string `json:"note,omitempty"`
}

type waitOut struct {
	pageOut
	ElapsedMs int64 `json:"elapsed_ms"`
}

type writtenOut struct {
	Written int `json:"written"`
}
