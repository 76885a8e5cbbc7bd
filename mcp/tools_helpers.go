package mcp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
)

// Helpers: the tools backed by package helpers. Each reads or acts on the
// tab's current page only, through the executor of the gated call: none
// navigates or reads another URL, so the one Gate decision (and the
// landing check of a form submission) covers everything they do.

// groupHelpers is the README row of these tools.
var groupHelpers = &ToolGroup{Name: "helpers"}

func extractLinksTool() *Tool {
	return newTool(Tool{
		Name: "extract_links", Title: "Extract links",
		Group:       groupHelpers,
		Output:      &Output{Value: linksOut{}, Text: true},
		Description: "Links (of selector/ref): url, text. include/exclude: host patterns. Also: same_origin_only, non_http, limit." + pageTextDoc,
		Rare:        []string{"same_origin_only", "non_http", "limit"},
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		Targets:    []TargetArg{{}},
		TimeoutArg: true,
	}, extractLinks)
}

// extractLinksIn is extract_links' input.
type extractLinksIn struct {
	targetIn
	SameOriginOnly bool     `json:"same_origin_only,omitempty"`
	Include        []string `json:"include,omitempty"`
	Exclude        []string `json:"exclude,omitempty"`
	NonHTTP        bool     `json:"non_http,omitempty"`
	Limit          int      `json:"limit,omitempty"`
	tabIn
}

func readAsMarkdownTool() *Tool {
	return newTool(Tool{
		Name: "read_as_markdown", Title: "Read as Markdown",
		Group:       groupHelpers,
		Output:      &Output{Value: markdownOut{}, Text: true},
		Description: "Main content (or selector/ref) as Markdown; long pages: offset=next." + pageTextDoc,
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		Targets:    []TargetArg{{}},
		TimeoutArg: true,
	}, readAsMarkdown)
}

// readAsMarkdownIn is read_as_markdown's input.
type readAsMarkdownIn struct {
	targetIn
	MaxChars int `json:"max_chars,omitempty"`
	Offset   int `json:"offset,omitempty"`
	tabIn
}

func fillFormTool() *Tool {
	return newTool(Tool{
		Name: "fill_form", Title: "Fill form",
		Group:       groupHelpers,
		Output:      &Output{Value: formOut{}},
		Description: "Fill fields (value: text, option, true/false, list); submit: send. Also: submit_selector, submit_ref, stop_on_error.",
		Rare:        []string{"submit_selector", "submit_ref", "stop_on_error"},
		ReadOnly:    no(), Destructive: no(), Action: ActionInteract, Mutating: true, Secrets: []string{"fields"}, SecretRefs: []string{"fields[].value"},
		Targets:    []TargetArg{{Prefix: "submit_"}},
		Check:      checkFillForm,
		TimeoutArg: true,
	}, fillForm)
}

// fillFormIn is fill_form's input: the fields, then how to submit.
type fillFormIn struct {
	Fields         []formFieldIn `json:"fields"`
	Submit         bool          `json:"submit,omitempty"`
	SubmitSelector string        `json:"submit_selector,omitempty"`
	SubmitRef      string        `json:"submit_ref,omitempty"`
	StopOnError    bool          `json:"stop_on_error,omitempty"`
	tabIn
}

// formFieldIn is one field of fill_form: a target and the value to give
// it, of any JSON type.
type formFieldIn struct {
	Selector string          `json:"selector,omitempty"`
	Ref      string          `json:"ref,omitempty"`
	Value    json.RawMessage `json:"value"`
}

func (fillFormIn) shape(s *jsonschema.Schema) {
	setMinItems(s, "fields", 1)
	propOf(s, "fields").Items.Properties["value"] = &jsonschema.Schema{}
}

func extractLinks(ctx context.Context, c *Call, a extractLinksIn) (*Result, error) {
	lr, err := helpers.ExtractLinks(ctx, c.Executor(), helpers.LinksParams{
		TabID: a.TabID, Scope: a.target(), SameOriginOnly: a.SameOriginOnly,
		Include: a.Include, Exclude: a.Exclude, NonHTTP: a.NonHTTP, Limit: a.Limit,
	})
	if err != nil {
		return nil, err
	}
	// One link a line, as Markdown: the texts are the page's words.
	var b strings.Builder
	for _, l := range lr.Links {
		b.WriteString("- [")
		b.WriteString(linkTextEscaper.Replace(l.Text))
		b.WriteString("](")
		b.WriteString(l.URL)
		b.WriteString(")")
		if l.Ref != "" {
			b.WriteString(" ref=" + l.Ref)
		}
		b.WriteByte('\n')
	}
	return &Result{Value: linksOut{c.pageOf(ctx, lr.PageState), lr.Total, len(lr.Links), lr.Note()},
		Text: strings.TrimSuffix(b.String(), "\n"), Untrusted: true, Page: &lr.PageState}, nil
}

var linkTextEscaper = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`)

func readAsMarkdown(ctx context.Context, c *Call, a readAsMarkdownIn) (*Result, error) {
	mr, err := helpers.ReadAsMarkdown(ctx, c.Executor(), helpers.MarkdownParams{
		TabID: a.TabID, Target: a.target(), MaxChars: a.MaxChars, Offset: a.Offset,
	})
	if err != nil {
		return nil, err
	}
	text := mr.Markdown
	if m := mr.Marker(); m != "" {
		text += "\n\n" + m
	}
	return &Result{Value: markdownOut{c.pageOf(ctx, mr.PageState), mr.Source, mr.Offset, mr.Total, mr.Next},
		Text: text, Untrusted: true, Page: &mr.PageState}, nil
}

func checkFillForm(args map[string]any) error {
	fields, _ := args["fields"].([]any)
	for i, f := range fields {
		m, _ := f.(map[string]any)
		if err := targetOf(m, "").Validate(); err != nil {
			return badArgs("fields[%d]: %s", i, executor.AsError(err).Message).
				WithHint(`give each field exactly one of selector or ref: {"selector": "#email", "value": "me@example.com"}`)
		}
	}
	if _, ok := args["fields"]; ok && len(fields) > helpers.MaxFormFields {
		return badArgs("%d fields is more than %d", len(fields), helpers.MaxFormFields).WithHint("fill the form in several calls")
	}
	if submit, _ := args["submit"].(bool); submit && !targetOf(args, "submit_").IsZero() {
		return badArgs("submit and submit_selector/submit_ref are exclusive").
			WithHint("pass submit: true to submit the last field's form, or the submit button's selector or ref")
	}
	return nil
}

func fillForm(ctx context.Context, c *Call, a fillFormIn) (*Result, error) {
	only, err := c.secretOrigin()
	if err != nil {
		return nil, err
	}
	p := helpers.FormParams{
		TabID: a.TabID, Submit: a.Submit, StopOnError: a.StopOnError,
		SubmitTarget: executor.Target{Selector: a.SubmitSelector, Ref: a.SubmitRef},
		OnlyOrigin:   only,
		Shown:        c.fieldShown,
		Unmark:       c.unmarks(),
	}
	for _, f := range a.Fields {
		var v any
		if err := json.Unmarshal(f.Value, &v); err != nil {
			return nil, badArgs("a field value is not JSON: %v", err)
		}
		p.Fields = append(p.Fields, helpers.FormField{Target: executor.Target{Selector: f.Selector, Ref: f.Ref}, Value: v})
	}
	fr, err := helpers.FillForm(ctx, c.Executor(), p)
	if err != nil {
		return nil, err
	}
	// Reasons may quote the page (an option's label, a validation
	// message), so a result with any is page content.
	page := c.pageOf(ctx, fr.PageState)
	untrusted := page.written()
	for _, f := range fr.Fields {
		untrusted = untrusted || f.Reason != ""
	}
	if fr.Submit != nil && fr.Submit.Reason != "" {
		untrusted = true
	}
	return &Result{Value: formOut{page, fr.Filled, fr.Failed, fr.Fields, fr.Submit},
		Untrusted: untrusted, Page: &fr.PageState}, nil
}
