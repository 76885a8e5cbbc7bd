package mcp

import "github.com/chromegate/chromegate/executor"

// Result is what a handler returns; dispatch turns it into the MCP result
// (the envelope: compact JSON text, page text, an image, the untrusted
// marker, the size cap).
type Result struct {
	// Value, if non-nil, is sent first as compact JSON.
	Value any
	// Text, if non-empty, follows Value on the next line, verbatim: page
	// text or markup, which would be unreadable and larger as a JSON string.
	Text string
	// Head, if set, is what the model reads in place of Value's JSON (eval:
	// the value alone); the structured content is still Value (lean.go).
	Head any
	// Tail, if set, is page text the model reads between the head and
	// Text, which the structured content carries inside Value: an acting
	// call's outline or change, a line each (changes.go).
	Tail string
	// Image, if set, is sent as an MCP image after the text.
	Image *Image
	// Untrusted marks a result carrying free-form text that a page wrote
	// (see fence).
	Untrusted bool
	// IsError marks a result that reports a failure the page gave (a page
	// tool that threw): an isError result with the page's words, fenced.
	IsError bool
	// Landed is the page a navigation reached. Dispatch asks Gate.Landed
	// about it before anything of the page is returned.
	Landed *executor.PageState
	// TotalChars, when set, says that Text was already cut while it was
	// read (a page tool's result bounded in the page): the length of the
	// whole. The result then ends with the truncation note.
	TotalChars int
	// Page is the page a call left the tab on, or read. When its URL is
	// not the one the Gate decided on (a click followed a link, a form
	// posted, the page navigated itself while it was read), dispatch
	// treats it as a landing too, and nothing of a page that lands outside
	// the policy is returned. Every handler whose executor result carries
	// a PageState sets it.
	Page *executor.PageState

	// seen is the outline the result shows the caller of its tab (a
	// snapshot's, or an acting call's change): changesStage keeps it as what
	// the caller last saw (changes.go).
	seen *seenOutline
	// head is the head as the caller reads it, rendered once (leanHead).
	head []byte
	// fenced is the text the envelope put inside the fence, redacted and
	// cut as sent: what the model was shown of the page (feed).
	fenced string
	// readURL is where the page text shown came from, when it is not the
	// page (a network body: its request's URL); see provenance.go.
	readURL string
}

// Image is an encoded image result.
type Image struct {
	Data     []byte
	MIMEType string
}
