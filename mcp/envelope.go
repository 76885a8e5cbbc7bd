package mcp

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
)

// Page content reaches the model inside a block fenced by a marker that
// is random for every response:
//
//	«page-3f9a0c1d2e4b»
//	…what the page wrote…
//	«/page-3f9a0c1d2e4b»
//
// A page cannot close the block early: it cannot know the marker, and
// the marker is chosen so that it does not occur in the content. Fake
// closing markers with other tokens are just text inside the block. What
// the markers mean is said once, in the server's instructions and in the
// description of each tool whose answer is page text, not in every
// result: a fenced result costs its content and 41 characters.
//
// Two rules decide what reaches the model, for every tool, result and
// error, on every backend:
//
// Nothing of a denied page reaches the model, in any field. A page the
// policy does not allow (a popup the page opened, a tab that navigated
// itself away, a redirect's target) gives nothing: not its URL's path and
// query, not its title (tab listings show such a tab by id only), not its
// dialogs (a dialog from a page outside the policy is answered by the
// backend and reported at most as "a dialog on a page outside the policy
// was dismissed", without its type or text), and not the timing of a wait
// (wait_for on a tab that is or becomes denied ends as POLICY_DENIED, the
// same whether its condition would have held or not, within one
// waitSlice of the tab getting there). Whenever a call finds its tab on a
// denied page, the tab is sent to about:blank.
//
// Every string a page wrote is fenced or cut, wherever it appears. A
// result is fenced as a whole when it carries any: page text (get_text,
// get_html, eval values and exception messages, the reading tools), a
// title (navigate, tab_new, tabs_list, tab_close, actions), a dialog's
// message, a select's option values, a cookie (its name and value are the
// page's, as are its domain and path), a download's file name. A result
// with none (an empty title, a cookie count, chrome_status) is not fenced:
// the fence marks the page's words, not everything, so that the model
// keeps reading it as a warning. URLs outside a fence are the browser's
// normalised form (percent-encoded: no spaces, quotes, newlines or fence
// markers) of a page the policy allowed.
//
// No operator's secret reaches the model, in any field: every value is
// replaced by <secret:NAME>, in the page's words and the server's alike,
// before a text is cut to size (see secrets.go).
//
// Errors say "CODE: cause" and "Next: what to do" in the server's own
// words only. Page words that explain an error (the element that covers a
// click's target, a select's option labels, a host a redirect led to) are
// executor.Error.Page, shown in a fenced block after the Next line, cut to
// maxErrorPage characters. A hint names a host only when the caller
// named it itself (navigate's url); never one a redirect, a link or a
// page chose, so no page can write "--allow-domain <its words>" into a
// hint. The note on requests the policy blocked (blockedNote) fences the
// hosts, which the page chose. Screenshots are images, not text.
const (
	pageOpen  = "«page-"
	pageClose = "«/page-"
)

// fence wraps page content in a block with a fresh random boundary.
func fence(content string) string {
	var token string
	for {
		var b [6]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
		token = hex.EncodeToString(b[:])
		if !strings.Contains(content, token) {
			break
		}
	}
	return pageOpen + token + "»\n" + content + "\n" + pageClose + token + "»"
}

// Unfence returns the page content of a result text made by fence, and the
// text after the block (a truncation note); ok is false when text is not
// fenced. It is for tests that check what a model reads: clients, REST and
// the server read a result's structured content (Data, ErrorContent), and
// nothing outside tests calls it.
func Unfence(text string) (content, after string, ok bool) {
	openLine, rest, found := strings.Cut(text, "\n")
	if !found || !strings.HasPrefix(openLine, pageOpen) || !strings.HasSuffix(openLine, "»") {
		return "", "", false
	}
	closeLine := pageClose + strings.TrimPrefix(openLine, pageOpen)
	if strings.HasPrefix(rest, closeLine) { // empty content
		return "", strings.TrimPrefix(strings.TrimPrefix(rest, closeLine), "\n"), true
	}
	content, after, found = strings.Cut(rest, "\n"+closeLine)
	if !found {
		return "", "", false
	}
	return content, strings.TrimPrefix(after, "\n"), true
}

// envelope turns a handler's Result into the MCP result: its head (compact
// JSON, as lean.go sizes it), then the page text on the next lines, capped
// in size, fenced when it holds a page's words, then the image if any; and
// the whole result as structured content (Data, see outputs.go), cut
// where the text is cut.
func (s *Server) envelope(t *Tool, r *Result) (*sdk.CallToolResult, error) {
	head := r.head
	if head == nil {
		if r.Head != nil {
			b, err := marshalHead(r.Head)
			if err != nil {
				return nil, err
			}
			head = b
		} else if r.Value != nil {
			b, err := marshalHead(r.Value)
			if err != nil {
				return nil, err
			}
			head = b
		}
	}
	if string(head) == "{}" && (r.Tail != "" || r.Text != "") {
		head = nil // nothing to say before the page's lines
	}
	var b strings.Builder
	b.Write(head)
	for _, page := range []string{r.Tail, r.Text} {
		if page == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		// Page text may be a window of a longer text (an offset, a cut
		// the page made): a value cut at its edge is redacted too.
		b.WriteString(s.opts.Secrets.RedactEdges(s.opts.Secrets.Redact(page)))
	}
	// Redacted before it is cut, and its end again after: the cap must not
	// split a value into a part Redact no longer knows.
	text, cut := capText(s.opts.Secrets.Redact(b.String()), s.opts.MaxResultChars, truncationHint(t))
	if cut != "" {
		text = s.opts.Secrets.RedactEdges(text)
	}
	if r.TotalChars > 0 {
		// Cut before it got here: the note gives the whole's length.
		cut = fmt.Sprintf("…[truncated: showed %d of about %d characters; %s]", min(utf8.RuneCountInString(text), s.opts.MaxResultChars), r.TotalChars, truncationHint(t))
	}
	d := s.structured(r, string(head), text, cut)
	if r.Untrusted && (r.Text != "" || r.Tail != "" || pageWords(head)) {
		r.fenced = text // what the model reads as the page's (provenance.go)
		text = fence(text)
	}
	if cut != "" {
		text += "\n" + cut // the server's note, outside the page's block
	}
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: r.IsError, StructuredContent: d}
	if r.Image != nil {
		res.Content = append(res.Content, &sdk.ImageContent{Data: r.Image.Data, MIMEType: r.Image.MIMEType})
	}
	return res, nil
}

// structured is the structured content of r, whose text shows (before its
// fence) shown, starting with head: the value, when the text shows its
// head and tail whole, and the page text that follows them, as far as the
// text shows it. A value the cap cut into is left out (the text shows its
// start, truncated says so).
func (s *Server) structured(r *Result, head, shown, cut string) *Data {
	d := &Data{Untrusted: r.Untrusted, Truncated: cut}
	if r.Image != nil {
		d.Image = &ImageData{MIMEType: r.Image.MIMEType}
	}
	if r.Value == nil {
		d.Text = shown
		return d
	}
	// shown is head, tail and text, each on lines of its own.
	rest, ok := shown, true
	sep := ""
	tail := ""
	if r.Tail != "" {
		tail = s.opts.Secrets.Redact(s.opts.Secrets.RedactEdges(s.opts.Secrets.Redact(r.Tail)))
	}
	for _, part := range []string{s.opts.Secrets.Redact(head), tail} {
		if part == "" {
			continue
		}
		if rest, ok = strings.CutPrefix(rest, sep+part); !ok || rest != "" && rest[0] != '\n' {
			return d
		}
		sep = "\n"
	}
	d.Value = r.Value
	if r.Text != "" {
		d.Text = strings.TrimPrefix(rest, sep)
	}
	return d
}

func truncationHint(t *Tool) string {
	if t.CutHint != "" {
		return t.CutHint
	}
	return "narrow the selector or use get_text on a smaller element"
}

// capText cuts s to max characters (runes). When it cuts, note is a visible
// marker that says how much was shown and what to do about it.
func capText(s string, max int, hint string) (out, note string) {
	if len(s) <= max { // bytes ≥ runes, so this is the common fast path
		return s, ""
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s, ""
	}
	cut := 0
	for range max {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return s[:cut], fmt.Sprintf("…[truncated: showed %d of %d characters; %s]", max, n, hint)
}

// maxErrorPage caps the page's words shown with an error.
const maxErrorPage = 500

// ErrorContent is the structured content of an isError result dispatch
// made: the error its text tells the model, as the value it was rendered
// from ({"error": {"code", "message", "hint", "retry_after_ms", "page"}}).
// Error.Page holds the page's words; on the wire (MarshalJSON) they are
// fenced as in the text: a client may show structured content to the
// model instead of the text. REST and the Go client read it; nobody reads
// the text back.
type ErrorContent struct {
	Error *executor.Error `json:"error"`
}

// MarshalJSON writes the error with its page's words fenced.
func (c *ErrorContent) MarshalJSON() ([]byte, error) {
	e := c.Error
	if e != nil && e.Page != "" {
		fenced := *e
		fenced.Page = fence(e.Page)
		e = &fenced
	}
	return json.Marshal(struct {
		Error *executor.Error `json:"error"`
	}{e})
}

// ResultError returns the error of an isError result dispatch made, or nil
// for any other result (a success, or a page tool's own failure, which is
// a result the page gave). Its Page is the page's words, unfenced.
func ResultError(res *sdk.CallToolResult) *executor.Error {
	if res == nil || !res.IsError {
		return nil
	}
	if c, ok := res.StructuredContent.(*ErrorContent); ok && c.Error != nil {
		e := *c.Error
		return &e
	}
	return nil
}

// errorResult is the isError result for e: "CODE: cause", then "Next: what
// to do", then the page's words that explain it, fenced; and the same
// fields as structured content (see ErrorContent).
func (s *Server) errorResult(e *executor.Error) *sdk.CallToolResult {
	shown := *e
	shown.Hint = cmp.Or(e.Hint, executor.DefaultHint(e.Code))
	shown.Message, shown.Hint = s.opts.Secrets.Redact(shown.Message), s.opts.Secrets.Redact(shown.Hint)
	shown.Page, _ = capText(s.opts.Secrets.Redact(e.Page), maxErrorPage, "")
	shown.Page = s.opts.Secrets.RedactEdges(shown.Page)
	shown.Err = nil
	text := fmt.Sprintf("%s: %s\nNext: %s", shown.Code, shown.Message, shown.Hint)
	if cut, note := capText(text, s.opts.MaxResultChars, "the error message was cut"); note != "" {
		text = cut + "\n" + note
	}
	if shown.Page != "" {
		text += "\n" + fence(shown.Page)
	}
	// The structured message is bounded like the text (whose note says
	// the whole length). The page's words are fenced there too, as it is
	// sent (ErrorContent.MarshalJSON).
	shown.Message, _ = capText(shown.Message, s.opts.MaxResultChars, "")
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}},
		StructuredContent: &ErrorContent{Error: &shown}}
}

// Data is the structured content of a successful tool result (see
// outputs.go for the shape and its rules), and REST's answer to a command
// besides "ok". Value is the tool's value ("data"), Text the page text that
// followed it, Untrusted says a page wrote some of it, Truncated is the
// server's note when the result was cut to --max-result-chars, Blocked
// the note on the page's requests the policy refused, Image the image
// that follows as content of its own (its bytes only in REST's answer).
type Data struct {
	Value     any        `json:"data,omitempty"`
	Text      string     `json:"text,omitempty"`
	Untrusted bool       `json:"untrusted,omitempty"`
	Truncated string     `json:"truncated,omitempty"`
	Image     *ImageData `json:"image,omitempty"`
	Blocked   string     `json:"blocked,omitempty"`
}

// ImageData is the image of a result; Data is base64 in JSON, and only in
// REST's answer (over MCP the bytes are the image content's).
type ImageData struct {
	Data     []byte `json:"data,omitempty"`
	MIMEType string `json:"mime_type"`
}

// ResultData returns the structured content of a successful MCP tool
// result dispatch made (ok false for any other): the value the result's
// text was rendered from, with the image's bytes from its image content.
// REST answers with it, so REST and MCP carry the same data by
// construction.
func ResultData(res *sdk.CallToolResult) (Data, bool) {
	if res == nil || res.IsError {
		return Data{}, false
	}
	var d Data
	switch c := res.StructuredContent.(type) {
	case *Data:
		d = *c
	case nil:
		return Data{}, false
	default:
		// Redacted (secrets.go): the same fields, as JSON; the value
		// stays JSON, in its order.
		var w struct {
			Data
			Value json.RawMessage `json:"data,omitempty"`
		}
		b, err := json.Marshal(c)
		if err != nil || json.Unmarshal(b, &w) != nil {
			return Data{}, false
		}
		d = w.Data
		if w.Value != nil {
			d.Value = w.Value
		}
	}
	if d.Image != nil {
		img := *d.Image
		for _, c := range res.Content {
			if c, ok := c.(*sdk.ImageContent); ok {
				img.Data = c.Data
				break
			}
		}
		d.Image = &img
	}
	return d, true
}

// envelopeStage renders the call's outcome as its MCP reply (Call.reply)
// and logs it; the egress note, if any, follows the result as a content of
// its own, so the result's JSON and its fence stay as they are. Arguments
// that are not a JSON object are the protocol's error, not a reply. Before
// rendering, the head is sized for the caller (leanHead, lean.go); after,
// what the fence holds, a result's or an error's, goes to the session's
// provenance (feed, provenance.go).
func (s *Server) envelopeStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		start := time.Now()
		r, err := next(ctx, c)
		if rpc := (*jsonrpc.Error)(nil); errors.As(err, &rpc) {
			return nil, err
		}
		if ir := asInputRequired(err); ir != nil {
			c.reply = ir.reply() // a 2026-07-28 question for the user (asking.go)
			return nil, err
		}
		if err == nil {
			s.leanHead(ctx, c, r)
		}
		c.reply = s.finish(c.Tool, c.Session, start, r, err)
		if err == nil {
			s.feed(ctx, c, r)
		} else if e := executor.AsError(err); e.Page != "" {
			s.feedError(ctx, c, e)
		}
		if c.note != "" {
			c.reply.Content = append(c.reply.Content, &sdk.TextContent{Text: c.note})
			if d, ok := c.reply.StructuredContent.(*Data); ok {
				d.Blocked = c.note
			}
		}
		return r, err
	}
}
