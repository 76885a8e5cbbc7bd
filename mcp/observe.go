package mcp

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/google/jsonschema-go/jsonschema"
)

// What a page did, for a caller that wants to know why a step failed or to
// keep proof of what it saw: console_messages lists a tab's console and
// uncaught exceptions (the backends' ring, executor/console.go); pdf
// prints the page into the download directory. Both are reads of the
// tab's page, decided by the policy like get_text.

// Console tool limits.
const (
	defaultConsoleLimit = 50
	maxConsoleLimit     = 200
)

// withheldNote says why messages are missing from a listing.
const withheldNote = "messages of pages, frames or scripts outside the policy are not shown"

type consoleMsgOut struct {
	ID        string `json:"id"`
	Level     string `json:"level"`
	Exception bool   `json:"exception,omitempty"`
	Text      string `json:"text"`
	// TextBytes is the whole text's length when the text was cut.
	TextBytes int    `json:"text_bytes,omitempty"`
	Source    string `json:"source,omitempty"` // url:line:column
	Stack     string `json:"stack,omitempty"`
	TimeMs    int64  `json:"time_ms,omitempty"`
	// Page is the document that logged it, when not the tab's current one.
	Page string `json:"page,omitempty"`
}

type consoleOut struct {
	TabID    string          `json:"tab_id"`
	URL      string          `json:"url"`
	Total    int             `json:"total"`
	Levels   map[string]int  `json:"levels"`
	Matched  int             `json:"matched"`
	Offset   int             `json:"offset,omitempty"`
	Next     int             `json:"next,omitempty"`
	Dropped  int             `json:"dropped,omitempty"`
	Withheld int             `json:"withheld,omitempty"`
	Note     string          `json:"note,omitempty"`
	Messages []consoleMsgOut `json:"messages"`
}

type pdfOut struct {
	TabID    string `json:"tab_id"`
	URL      string `json:"url"`
	Path     string `json:"path"`
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	Pages    int    `json:"pages"`
	SHA256   string `json:"sha256"`
}

func msgOut(m executor.ConsoleMessage, current string) consoleMsgOut {
	o := consoleMsgOut{ID: m.ID, Level: m.Level, Exception: m.Exception, Text: m.Text, TextBytes: m.TextBytes,
		Stack: m.Stack, TimeMs: m.TimeMs}
	if m.URL != "" {
		o.Source = m.URL
		if m.Line > 0 {
			o.Source += ":" + strconv.Itoa(m.Line)
			if m.Column > 0 {
				o.Source += ":" + strconv.Itoa(m.Column)
			}
		}
	}
	if m.Page != "" && m.Page != current {
		o.Page = m.Page
	}
	return o
}

// screenConsole drops the messages the caller may not see. A message is
// decided on the document that logged it, as the backend attributed it
// by its execution context (documents.go): a denied frame's, an
// about:srcdoc child's of a denied frame, an earlier page's outside the
// policy (with navigations > 1), one the backend could not attribute.
// The script it names as its source is the page's word only, so it can
// withhold more, never show more: a source of another origin outside the
// policy (a third-party script on an allowed page) is withheld too,
// decided like a dialog's page (dialogOutside). It returns the messages
// kept and how many were withheld.
func (c *Call) screenConsole(ctx context.Context, ms []executor.ConsoleMessage, current string) ([]executor.ConsoleMessage, int) {
	sc := c.sourceScreen()
	seen := map[string]bool{}
	outside := func(u string) bool {
		key := u
		if o := executor.OriginOf(u); o != "null" {
			key = o
		}
		v, ok := seen[key]
		if !ok {
			v = c.srv.dialogOutside(ctx, c, u)
			seen[key] = v
		}
		return v
	}
	withheld := 0
	out := ms[:0:0]
	for _, m := range ms {
		if sc.denied(ctx, m.Doc) {
			withheld++
			continue
		}
		// A source of the logging document's own origin, or none that
		// names an origin (an inline script, eval), adds nothing.
		own := ""
		if m.Doc != nil {
			own = cmp.Or(m.Doc.Origin, executor.OriginOf(m.Doc.URL))
		}
		if own == "" || own == executor.OpaqueOrigin {
			own = executor.OriginOf(current)
		}
		if o := executor.OriginOf(m.URL); o != "null" && o != own && outside(m.URL) {
			withheld++
			continue
		}
		out = append(out, m)
	}
	return out, withheld
}

func consoleMessages(ctx context.Context, c *Call, a consoleMessagesIn) (*Result, error) {
	log, err := c.Executor().Console(ctx, executor.ConsoleParams{TabID: a.TabID, Navigations: max(a.Navigations, 1)})
	if err != nil {
		return nil, err
	}
	ms, withheld := c.screenConsole(ctx, log.Messages, log.URL)
	out := consoleOut{TabID: log.TabID, URL: log.URL, Total: len(ms), Levels: map[string]int{},
		Offset: a.Offset, Dropped: log.Dropped, Withheld: withheld, Messages: []consoleMsgOut{}}
	if withheld > 0 {
		out.Note = withheldNote
	}
	limit := a.Limit
	if limit <= 0 {
		limit = defaultConsoleLimit
	}
	needle := strings.ToLower(a.Text)
	for _, m := range ms {
		out.Levels[m.Level]++
		if len(a.Levels) > 0 && !slices.Contains(a.Levels, m.Level) {
			continue
		}
		if needle != "" && !strings.Contains(strings.ToLower(m.Text), needle) {
			continue
		}
		if out.Matched >= a.Offset && len(out.Messages) < limit {
			out.Messages = append(out.Messages, msgOut(m, log.URL))
		}
		out.Matched++
	}
	if a.Offset+len(out.Messages) < out.Matched {
		out.Next = a.Offset + len(out.Messages)
	}
	// Every word of it is the page's.
	return &Result{Value: out, Untrusted: true, Page: &log.PageState}, nil
}

func pdfHandler(ctx context.Context, c *Call, a pdfIn) (*Result, error) {
	p := executor.PDFParams{TabID: a.TabID, Filename: a.Filename, Format: a.Format, Landscape: a.Landscape,
		Background: a.Background, Scale: a.Scale, Ranges: a.Ranges, MaxBytes: a.MaxBytes, Tenant: c.Principal.Tenant()}
	if _, err := p.PrintParams(); err != nil {
		return nil, err
	}
	if err := c.refusePDF(ctx, a.TabID); err != nil {
		return nil, err
	}
	r, err := c.Executor().PDF(ctx, p)
	if err != nil {
		return nil, err
	}
	// The URL and title are the page's; the file name the server's
	// cleaned form of the caller's.
	return &Result{Value: pdfOut{TabID: r.TabID, URL: r.URL, Path: r.Path, Filename: r.Filename, Size: r.Size,
		Pages: r.Pages, SHA256: r.SHA256}, Untrusted: true, Page: &r.PageState}, nil
}

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
		Description: "Console messages and errors since the page loaded. Filter: levels, text. Also: navigations, offset, limit." + pageTextDoc,
		Rare:        []string{"navigations", "offset", "limit"},
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
		Description: "Save the page as a PDF on the server. Also: format (A4, Letter...), landscape, background, scale, ranges (1-3,5), max_bytes.",
		Rare:        []string{"format", "landscape", "background", "scale", "ranges", "max_bytes"},
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
