package mcp

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
)

// Observing a page: its console, and the page as a PDF. Each tool is one
// constructor: its declaration, its class, the facts the call path needs;
// the handlers
// live with the feature (observe.go).

// groupObserve is the README row of these tools.
var groupObserve = &ToolGroup{Name: "console, PDF", Note: "[see what happened](#console-and-pdf)"}

func consoleMessagesTool() *Tool {
	return newTool(Tool{
		Name: "console_messages", Title: "Console messages",
		Group:       groupObserve,
		Output:      &Output{Value: consoleOut{}},
		Description: "A tab's console messages and uncaught errors since its last navigation, with source and stack. Use to see why a page failed. Filter by levels, text; page by offset/limit.",
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		CutHint: "filter by levels or text, or pass a smaller limit",
	}, consoleMessages)
}

// consoleMessagesIn is console_messages' input: filters and a page of
// the log.
type consoleMessagesIn struct {
	Levels      []string `json:"levels,omitempty"`
	Text        string   `json:"text,omitempty"`
	Navigations int      `json:"navigations,omitempty"`
	Offset      int      `json:"offset,omitempty"`
	Limit       int      `json:"limit,omitempty"`
	tabIn
}

func (consoleMessagesIn) shape(s *jsonschema.Schema) {
	setEnum(s, "levels", executor.ConsoleLevels...)
	setRange(s, "navigations", 1, executor.MaxConsoleNavigations)
	setRange(s, "offset", 0, executor.MaxConsoleEntries)
	setRange(s, "limit", 1, maxConsoleLimit)
}

func pdfTool() *Tool {
	return newTool(Tool{
		Name: "pdf", Title: "Save as PDF",
		Group:       groupObserve,
		Output:      &Output{Value: pdfOut{}},
		Description: "Save the tab's page as a PDF file on the server. Returns path, pages, size. ranges: \"1-3,5\".",
		ReadOnly:    no(), Destructive: no(), Action: ActionRead,
	}, pdfHandler)
}

// pdfIn is pdf's input.
type pdfIn struct {
	Filename   string  `json:"filename,omitempty"`
	Format     string  `json:"format,omitempty"`
	Landscape  bool    `json:"landscape,omitempty"`
	Background bool    `json:"background,omitempty"`
	Scale      float64 `json:"scale,omitempty"`
	Ranges     string  `json:"ranges,omitempty"`
	MaxBytes   int64   `json:"max_bytes,omitempty"`
	tabIn
}

func (pdfIn) shape(s *jsonschema.Schema) {
	setEnum(s, "format", executor.PDFFormats...)
	setRange(s, "max_bytes", 1, executor.MaxPDFBytes)
}
