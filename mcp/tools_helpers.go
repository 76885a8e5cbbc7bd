package mcp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
)

func extractLinksTool() *Tool {
	return &Tool{
		Name: "extract_links", Title: "Extract links",
		Output:      &Output{Value: linksOut{}, Text: true},
		Description: "Page links (or in selector/ref): absolute url, text, deduped. include/exclude: host patterns (*.example.com). limit: 200.",
		InputSchema: object(nil, props(targetProps(""), []prop{
			{"same_origin_only", boolean("")},
			{"include", strList("", 0)},
			{"exclude", strList("", 0)},
			{"non_http", boolean("")},
			{"limit", integer("")},
			tabIDProp(),
		})...),
		ReadOnly: yes(), Idempotent: true, Action: ActionRead,
		Targets:    []TargetArg{{}},
		TimeoutArg: true,
		Handler:    extractLinks,
	}
}

func readAsMarkdownTool() *Tool {
	return &Tool{
		Name: "read_as_markdown", Title: "Read as Markdown",
		Output:      &Output{Value: markdownOut{}, Text: true},
		Description: "Main content (or selector/ref) as Markdown, without menus, ads, banners. Long pages: call again with offset=next.",
		InputSchema: object(nil, props(targetProps(""), []prop{
			{"max_chars", integer("")},
			{"offset", integer("")},
			tabIDProp(),
		})...),
		ReadOnly: yes(), Idempotent: true, Action: ActionRead,
		Targets:    []TargetArg{{}},
		TimeoutArg: true,
		Handler:    readAsMarkdown,
	}
}

func fillFormTool() *Tool {
	return &Tool{
		Name: "fill_form", Title: "Fill form",
		Output: &Output{Value: formOut{}},
		Description: "Fill many fields. value: text, option or radio value/label, true/false (checkbox), list (multi-select). " +
			"submit: send the form. Each field: filled, not_found or rejected.",
		InputSchema: object([]string{"fields"}, props([]prop{
			{"fields", array("", object([]string{"value"},
				prop{"selector", str("")}, prop{"ref", str("")}, prop{"value", &jsonschema.Schema{}},
			), 1)},
			{"submit", boolean("")},
		}, targetProps("submit_"), []prop{
			{"stop_on_error", boolean("")},
			tabIDProp(),
		})...),
		ReadOnly: no(), Destructive: no(), Action: ActionInteract, Mutating: true, Secrets: []string{"fields"}, SecretRefs: []string{"fields[].value"},
		Targets:    []TargetArg{{Prefix: "submit_"}},
		Check:      checkFillForm,
		TimeoutArg: true,
		Handler:    fillForm,
	}
}

func extractLinks(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		SameOriginOnly bool     `json:"same_origin_only"`
		Include        []string `json:"include"`
		Exclude        []string `json:"exclude"`
		NonHTTP        bool     `json:"non_http"`
		Limit          int      `json:"limit"`
	}](c)
	if err != nil {
		return nil, err
	}
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

func readAsMarkdown(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		MaxChars int `json:"max_chars"`
		Offset   int `json:"offset"`
	}](c)
	if err != nil {
		return nil, err
	}
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

func fillForm(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		TabID  string `json:"tab_id"`
		Fields []struct {
			Selector string          `json:"selector"`
			Ref      string          `json:"ref"`
			Value    json.RawMessage `json:"value"`
		} `json:"fields"`
		Submit      bool   `json:"submit"`
		SubmitSel   string `json:"submit_selector"`
		SubmitRef   string `json:"submit_ref"`
		StopOnError bool   `json:"stop_on_error"`
	}](c)
	if err != nil {
		return nil, err
	}
	only, err := c.secretOrigin()
	if err != nil {
		return nil, err
	}
	p := helpers.FormParams{
		TabID: a.TabID, Submit: a.Submit, StopOnError: a.StopOnError,
		SubmitTarget: executor.Target{Selector: a.SubmitSel, Ref: a.SubmitRef},
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
