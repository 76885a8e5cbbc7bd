package mcp

import (
	"encoding/json"

	"github.com/chromegate/chromegate/helpers"
)

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
