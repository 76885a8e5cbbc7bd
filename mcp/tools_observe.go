package mcp

import "github.com/chromegate/chromegate/executor"

// Observing a page: its console, and the page as a PDF. Each tool is one constructor: its
// declaration, its class, the facts the call path needs; the handlers
// live with the feature (observe.go).

func consoleMessagesTool() *Tool {
	return &Tool{
		Name: "console_messages", Title: "Console messages",
		Output:      &Output{Value: consoleOut{}},
		Description: "A tab's console messages and uncaught errors since its last navigation, with source and stack. Use to see why a page failed. Filter by levels, text; page by offset/limit.",
		InputSchema: object(nil,
			prop{"levels", array("", enum("", executor.ConsoleLevels...), 0)},
			prop{"text", str("")},
			prop{"navigations", intRange("", 1, executor.MaxConsoleNavigations)},
			prop{"offset", intRange("", 0, executor.MaxConsoleEntries)},
			prop{"limit", intRange("", 1, maxConsoleLimit)},
			tabIDProp()),
		ReadOnly: yes(), Idempotent: true, Action: ActionRead,
		CutHint: "filter by levels or text, or pass a smaller limit",
		Handler: consoleMessages,
	}
}

func pdfTool() *Tool {
	return &Tool{
		Name: "pdf", Title: "Save as PDF",
		Output:      &Output{Value: pdfOut{}},
		Description: "Save the tab's page as a PDF file on the server. Returns path, pages, size. ranges: \"1-3,5\".",
		InputSchema: object(nil,
			prop{"filename", str("")},
			prop{"format", enum("", executor.PDFFormats...)},
			prop{"landscape", boolean("")},
			prop{"background", boolean("")},
			prop{"scale", number("")},
			prop{"ranges", str("")},
			prop{"max_bytes", intRange("", 1, executor.MaxPDFBytes)},
			tabIDProp()),
		ReadOnly: no(), Destructive: no(), Action: ActionRead,
		Handler: pdfHandler,
	}
}
