package helpers

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/chromegate/chromegate/executor"
)

var (
	//go:embed scripts/formprobe.js
	formProbeJS string
	//go:embed scripts/formsubmit.js
	formSubmitJS string

	// The probe finds fields by ref too, so it carries the ref registry.
	formProbeSource  = executor.WithRefs(withoutComments(formProbeJS))
	formSubmitSource = executor.WithRefs(withoutComments(formSubmitJS))
)

// withoutComments drops a script's leading comment lines, which would
// otherwise travel with every call.
func withoutComments(src string) string {
	lines := strings.Split(src, "\n")
	for len(lines) > 0 && strings.HasPrefix(strings.TrimSpace(lines[0]), "//") {
		lines = lines[1:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// MaxFormFields bounds one FillForm call.
const MaxFormFields = 100

// fieldTimeout bounds the work on one field, so a field that never becomes
// actionable (hidden, covered) costs seconds, not the whole call.
const fieldTimeout = 5 * time.Second

// shadowLook bounds the second look, through the backend's selector engine,
// for a CSS selector the probe did not find.
const shadowLook = time.Second

// Field outcomes.
const (
	StatusFilled   = "filled"
	StatusNotFound = "not_found"
	StatusRejected = "rejected"
	// StatusSkipped is a field not attempted because an earlier one failed
	// and StopOnError was set.
	StatusSkipped = "skipped"
)

// FormField is one field to fill: a target and the value to give it.
//
// Value is a string for text-like inputs, textareas, contenteditable
// elements, selects (an option's value or label) and radios (the value or
// label of the radio of the group to check, or true to check the targeted
// radio itself); a bool (or "on"/"off", "true"/"false", "yes"/"no") for a
// checkbox; a number for number and range inputs; a list of strings for a
// multiple select.
type FormField struct {
	executor.Target
	Value any `json:"value"`
}

// FormParams fills Fields in order and optionally submits.
type FormParams struct {
	TabID  string      `json:"tabId,omitempty"`
	Fields []FormField `json:"fields"`
	// Submit submits the form of the last field found, by clicking its
	// submit button, else by requestSubmit, else by pressing Enter in
	// the field. SubmitTarget instead clicks that element. Neither runs
	// when a field failed: a half-filled form is not sent.
	Submit       bool            `json:"submit,omitempty"`
	SubmitTarget executor.Target `json:"submitTarget,omitzero"`
	// StopOnError stops at the first field that is not filled; the rest
	// are reported as skipped.
	StopOnError bool `json:"stopOnError,omitempty"`
	// OnlyOrigin guards every text fill of the call (a field value held an
	// operator's secret): see executor.FillParams.OnlyOrigin.
	OnlyOrigin string `json:"onlyOrigin,omitempty"`
	// Shown, if set, gives what a text field reads as once a value is
	// filled into it ("" for a value without a secret), and Unmark says
	// that a plain value takes a secret's mark off (executor.SecretMark).
	Shown  func(value string) string `json:"-"`
	Unmark bool                      `json:"-"`
}

// FieldOutcome is what happened to one field. Reason may quote the page
// (option labels): untrusted.
type FieldOutcome struct {
	Index  int    `json:"index"`
	Target string `json:"target"`
	Kind   string `json:"kind,omitempty"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// SubmitOutcome is what happened to the submission.
type SubmitOutcome struct {
	Status string `json:"status"`        // submitted | skipped | failed
	How    string `json:"how,omitempty"` // click | requestSubmit | enter
	Reason string `json:"reason,omitempty"`
}

// FormResult reports every field, in the order given.
type FormResult struct {
	executor.PageState
	Fields []FieldOutcome `json:"fields"`
	Filled int            `json:"filled"`
	Failed int            `json:"failed"`
	Submit *SubmitOutcome `json:"submit,omitempty"`
}

// probeField is what formprobe.js reports about one field.
type probeField struct {
	Queryable *bool    `json:"queryable"`
	Found     bool     `json:"found"`
	Kind      string   `json:"kind"`
	Type      string   `json:"type"`
	Disabled  bool     `json:"disabled"`
	Readonly  bool     `json:"readonly"`
	Checked   *bool    `json:"checked"`
	Multiple  bool     `json:"multiple"`
	Options   []option `json:"options"`
	Pick      string   `json:"pick"`
	Label     string   `json:"label"`
	// fromMarkup marks a probe made from the element's outer HTML: its
	// checked state is the markup's default, not the live one.
	fromMarkup bool
	// RefError and Why say why a ref did not resolve (see
	// executor.RefError).
	RefError string `json:"ref_error"`
	Why      string `json:"why"`
	// readErr is why the markup read failed.
	readErr string
}

type option struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

type probeResult struct {
	Fields []probeField `json:"fields"`
	Submit *struct {
		Form   string `json:"form"`
		Button string `json:"button"`
	} `json:"submit"`
	// url is the page the fields were probed on: the page the gate
	// decided the call on.
	url string
}

// FillForm fills each field according to its kind, with the executor's
// trusted-input primitives: Fill for text-like inputs, textareas and
// contenteditable elements, SelectOption for selects, Click for checkboxes
// (only when the state must change) and radios. One RunScript first reads
// every field's kind and live state in a single pass, in the isolated world
// (page scripts cannot see or alter it); a field its CSS engine cannot find
// (a Playwright-only selector, an element in a shadow root) is read with
// its own HTML primitive instead. It never stops at the first failure unless
// StopOnError is set; a missing field is not_found, one that cannot take
// the value is rejected, each with the reason.
func FillForm(ctx context.Context, ex executor.Executor, p FormParams) (FormResult, error) {
	if len(p.Fields) == 0 {
		return FormResult{}, executor.Errorf(executor.CodeBadArgs, "fields is empty").
			WithHint(`pass fields: [{"selector": "#email", "value": "me@example.com"}, ...]`)
	}
	if len(p.Fields) > MaxFormFields {
		return FormResult{}, executor.Errorf(executor.CodeBadArgs, "%d fields is more than %d", len(p.Fields), MaxFormFields)
	}
	for i, f := range p.Fields {
		if err := f.Target.Validate(); err != nil {
			return FormResult{}, executor.Errorf(executor.CodeBadArgs, "fields[%d]: %s", i, executor.AsError(err).Message).
				WithHint("give each field exactly one of selector or ref, and a value")
		}
	}
	if !p.SubmitTarget.IsZero() {
		if err := p.SubmitTarget.Validate(); err != nil {
			return FormResult{}, err
		}
	}

	probe, err := probeFields(ctx, ex, p)
	if err != nil {
		return FormResult{}, err
	}
	out := FormResult{Fields: make([]FieldOutcome, len(p.Fields))}
	var page executor.PageState
	stopped, left := false, false
	lastFound := -1
	for i, f := range p.Fields {
		o := &out.Fields[i]
		*o = FieldOutcome{Index: i, Target: f.Target.String()}
		switch {
		case left:
			// The policy decided this call on the page it began on; a
			// field whose change navigated the tab ends the call, so
			// nothing is typed into a page nobody decided on.
			o.Status, o.Reason = StatusSkipped, "an earlier field navigated the tab to another page"
			out.Failed++
			continue
		case stopped:
			o.Status, o.Reason = StatusSkipped, "an earlier field failed and stop_on_error is set"
			continue
		}
		pf := probe.Fields[i]
		switch {
		case pf.Queryable != nil && !*pf.Queryable:
			pf = probeMarkup(ctx, ex, p.TabID, f.Target, fieldTimeout)
		case !pf.Found && pf.RefError != "":
			pf.readErr = executor.RefError(f.Ref, pf.RefError, pf.Why).Message
		case !pf.Found:
			// document.querySelector does not see into shadow roots; the
			// backend's selector engine may. A short look costs a missing
			// field a second, not the field's whole time.
			if m := probeMarkup(ctx, ex, p.TabID, f.Target, shadowLook); m.Found {
				pf = m
			}
		}
		o.Kind = pf.Kind
		if pf.Found {
			lastFound = i
		}
		fctx, cancel := context.WithTimeout(ctx, fieldTimeout)
		ps, status, reason := fillOne(fctx, ex, p, f, pf)
		cancel()
		if ctx.Err() != nil {
			return FormResult{}, executor.AsError(ctx.Err())
		}
		o.Status, o.Reason = status, reason
		if ps.TabID != "" {
			page = ps
			left = probe.url != "" && ps.URL != probe.url
		}
		if status == StatusFilled {
			out.Filled++
		} else {
			out.Failed++
			stopped = p.StopOnError
		}
	}

	switch {
	case !p.Submit && p.SubmitTarget.IsZero():
	case out.Failed > 0:
		out.Submit = &SubmitOutcome{Status: "skipped", Reason: fmt.Sprintf("%d field(s) failed; fix them, then submit", out.Failed)}
	default:
		ps, so := submit(ctx, ex, p, probe, lastFound)
		out.Submit = so
		if ps.TabID != "" {
			page = ps
		}
	}
	if page.TabID == "" {
		tab, err := ex.TabInfo(ctx, p.TabID)
		if err != nil {
			return FormResult{}, err
		}
		page = executor.PageState{TabID: tab.ID, URL: tab.URL, Title: tab.Title}
	}
	out.PageState = page
	return out, nil
}

// probeFields runs formprobe.js over every field, in one RunScript. Fields
// it cannot see (a selector that is not plain CSS) are marked not
// queryable, for probeMarkup; when the script cannot run at all, every
// field is.
func probeFields(ctx context.Context, ex executor.Executor, p FormParams) (*probeResult, error) {
	type in struct {
		Selector string `json:"selector,omitempty"`
		Ref      string `json:"ref,omitempty"`
		Value    any    `json:"value"`
	}
	args := struct {
		Fields []in `json:"fields"`
		Submit bool `json:"submit"`
	}{Submit: p.Submit}
	for _, f := range p.Fields {
		args.Fields = append(args.Fields, in{Selector: f.Selector, Ref: f.Ref, Value: f.Value})
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, executor.Errorf(executor.CodeBadArgs, "a field value is not JSON: %v", err)
	}
	sr, err := ex.RunScript(ctx, executor.ScriptParams{TabID: p.TabID, Source: formProbeSource, Arg: raw})
	var res probeResult
	if err == nil {
		err = json.Unmarshal(sr.Value, &res)
	}
	if err == nil && len(res.Fields) == len(p.Fields) {
		res.url = sr.URL
		return &res, nil
	}
	if err != nil {
		switch executor.AsError(err).Code {
		case executor.CodeTimeout, executor.CodeTargetGone, executor.CodeTabNotFound, executor.CodeStaleTab, executor.CodeDetached:
			return nil, err
		}
	}
	// The script did not run (a backend without isolated worlds): read
	// each field's markup instead.
	no := false
	res = probeResult{Fields: make([]probeField, len(p.Fields))}
	for i := range res.Fields {
		res.Fields[i].Queryable = &no
	}
	tab, err := ex.TabInfo(ctx, p.TabID)
	if err != nil {
		return nil, err
	}
	res.url = tab.URL
	return &res, nil
}

// probeMarkup reads one field's outer HTML to learn its kind. Its checked
// state is the markup's default, which the page may have changed.
func probeMarkup(ctx context.Context, ex executor.Executor, tabID string, t executor.Target, timeout time.Duration) probeField {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tr, err := ex.HTML(pctx, executor.HTMLParams{TabID: tabID, Target: t, Outer: true})
	if err != nil {
		return probeField{fromMarkup: true, readErr: executor.AsError(err).Message}
	}
	frag, err := parseFragment(tr.Text)
	if err != nil {
		return probeField{Found: false, fromMarkup: true}
	}
	el := findFirst(frag, func(*html.Node) bool { return true })
	if el == nil {
		return probeField{Found: false, fromMarkup: true}
	}
	pf := probeField{Found: true, fromMarkup: true, Type: el.Data}
	_, pf.Disabled = attr(el, "disabled")
	_, pf.Readonly = attr(el, "readonly")
	switch el.DataAtom {
	case atom.Textarea:
		pf.Kind = "textarea"
	case atom.Select:
		pf.Kind = "select"
		_, pf.Multiple = attr(el, "multiple")
	case atom.Input:
		typ, _ := attr(el, "type")
		pf.Type = strings.ToLower(typ)
		switch pf.Type {
		case "checkbox", "radio", "file", "hidden":
			pf.Kind = pf.Type
			_, checked := attr(el, "checked")
			pf.Checked = &checked
		case "submit", "reset", "button", "image":
			pf.Kind = "button"
		default:
			pf.Kind = "text"
		}
	case atom.Button:
		pf.Kind = "button"
	default:
		if v, ok := attr(el, "contenteditable"); ok && !strings.EqualFold(v, "false") {
			pf.Kind = "contenteditable"
		} else {
			pf.Kind = "other"
		}
	}
	return pf
}

// fillOne acts on one field and reports the outcome.
func fillOne(ctx context.Context, ex executor.Executor, p FormParams, f FormField, pf probeField) (executor.PageState, string, string) {
	tabID, only := p.TabID, p.OnlyOrigin
	tp := executor.TargetParams{TabID: tabID, Target: f.Target}
	if !pf.Found {
		reason := "no element matches " + f.Target.String()
		if pf.readErr != "" {
			reason = pf.readErr // the read's own error says why
		}
		return executor.PageState{}, StatusNotFound, reason
	}
	if pf.Disabled {
		return executor.PageState{}, StatusRejected, "the element is disabled"
	}
	if pf.Readonly && pf.Kind != "checkbox" && pf.Kind != "radio" && pf.Kind != "select" {
		return executor.PageState{}, StatusRejected, "the element is read-only"
	}
	switch pf.Kind {
	case "text", "textarea", "contenteditable":
		s, ok := scalarString(f.Value)
		if !ok {
			return executor.PageState{}, StatusRejected, fmt.Sprintf("a %s takes a string or a number, not %s", pf.Type, jsonType(f.Value))
		}
		fp := executor.FillParams{TargetParams: tp, Value: s, OnlyOrigin: only}
		if p.Shown != nil {
			fp.Shown = p.Shown(s)
		}
		fp.Unmark = p.Unmark && fp.Shown == ""
		if only != "" && fp.Shown == "" {
			fp.Unmark = false // the guarded insert of a plain value unmarks
		}
		ar, err := ex.Fill(ctx, fp)
		return outcome(ar.PageState, err)

	case "select":
		vals, ok := stringList(f.Value)
		if !ok || len(vals) == 0 {
			return executor.PageState{}, StatusRejected, "a select takes an option's value or label (a list for a multiple select), not " + jsonType(f.Value)
		}
		if len(vals) > 1 && !pf.Multiple && !pf.fromMarkup {
			return executor.PageState{}, StatusRejected, "this select takes one option, not a list"
		}
		ar, err := ex.SelectOption(ctx, executor.SelectParams{TargetParams: tp, Values: vals})
		return outcome(ar.PageState, err)

	case "checkbox":
		want, ok := checkboxValue(f.Value)
		if !ok {
			return executor.PageState{}, StatusRejected, fmt.Sprintf("a checkbox takes true or false (or \"on\"/\"off\"), not %s", jsonString(f.Value))
		}
		if pf.Checked != nil && *pf.Checked == want {
			return executor.PageState{}, StatusFilled, "" // already so
		}
		return clickOrLabel(ctx, ex, tp, pf.Label)

	case "radio":
		if pf.fromMarkup {
			if b, ok := f.Value.(bool); !ok || !b {
				return executor.PageState{}, StatusRejected, "this radio was addressed by ref or a non-CSS selector: target the radio to check and pass true"
			}
			return clickOrLabel(ctx, ex, tp, "")
		}
		if pf.Pick == "" {
			return executor.PageState{}, StatusRejected, fmt.Sprintf("no radio of the group has the value or label %s; the choices are %s", jsonString(f.Value), choices(pf.Options))
		}
		if pf.Checked != nil && *pf.Checked {
			return executor.PageState{}, StatusFilled, ""
		}
		if pf.Disabled {
			return executor.PageState{}, StatusRejected, "that radio is disabled"
		}
		return clickOrLabel(ctx, ex, executor.TargetParams{TabID: tabID, Target: executor.Target{Selector: pf.Pick}}, pf.Label)

	case "file":
		return executor.PageState{}, StatusRejected, "a file input takes files: use set_files"
	case "hidden":
		return executor.PageState{}, StatusRejected, "a hidden input is not for the user to fill"
	case "button":
		return executor.PageState{}, StatusRejected, "a button takes no value: use click (or submit)"
	default:
		return executor.PageState{}, StatusRejected, fmt.Sprintf("a <%s> is not a form field or contenteditable", pf.Type)
	}
}

// clickOrLabel clicks the element; when that fails and it has a label (a
// styled checkbox hides the box and shows the label), the label instead.
func clickOrLabel(ctx context.Context, ex executor.Executor, tp executor.TargetParams, label string) (executor.PageState, string, string) {
	if label == "" {
		ar, err := ex.Click(ctx, executor.ClickParams{TargetParams: tp})
		return outcome(ar.PageState, err)
	}
	// The box itself gets half the field's time, so the label still can.
	half := ctx
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		half, cancel = context.WithTimeout(ctx, time.Until(d)/2)
		defer cancel()
	}
	ar, err := ex.Click(half, executor.ClickParams{TargetParams: tp})
	if err == nil {
		return outcome(ar.PageState, nil)
	}
	ar, lerr := ex.Click(ctx, executor.ClickParams{TargetParams: executor.TargetParams{TabID: tp.TabID, Target: executor.Target{Selector: label}}})
	if lerr != nil {
		return outcome(ar.PageState, err)
	}
	return outcome(ar.PageState, nil)
}

func outcome(ps executor.PageState, err error) (executor.PageState, string, string) {
	if err == nil {
		return ps, StatusFilled, ""
	}
	e := executor.AsError(err)
	reason := e.Message
	if e.Hint != "" {
		reason += " (" + e.Hint + ")"
	}
	if e.Code == executor.CodeSelectorNotFound {
		return ps, StatusNotFound, reason
	}
	return ps, StatusRejected, reason
}

// submit sends the form after every field was filled.
func submit(ctx context.Context, ex executor.Executor, p FormParams, probe *probeResult, lastFound int) (executor.PageState, *SubmitOutcome) {
	click := func(t executor.Target, how string) (executor.PageState, *SubmitOutcome) {
		ar, err := ex.Click(ctx, executor.ClickParams{TargetParams: executor.TargetParams{TabID: p.TabID, Target: t}})
		if err != nil {
			return executor.PageState{}, &SubmitOutcome{Status: "failed", How: how, Reason: executor.AsError(err).Message}
		}
		return ar.PageState, &SubmitOutcome{Status: "submitted", How: how}
	}
	if !p.SubmitTarget.IsZero() {
		return click(p.SubmitTarget, "click")
	}
	if s := probe.Submit; s != nil {
		if s.Button != "" {
			return click(executor.Target{Selector: s.Button}, "click")
		}
		raw, _ := json.Marshal(map[string]string{"form": s.Form}) // strings always marshal
		sr, err := ex.RunScript(ctx, executor.ScriptParams{TabID: p.TabID, Source: formSubmitSource, Arg: raw})
		if err == nil {
			var r struct {
				OK bool `json:"ok"`
			}
			if json.Unmarshal(sr.Value, &r) == nil && r.OK {
				return sr.PageState, &SubmitOutcome{Status: "submitted", How: "requestSubmit"}
			}
		}
	}
	if lastFound < 0 {
		return executor.PageState{}, &SubmitOutcome{Status: "failed", Reason: "no field was found, so there is no form to submit"}
	}
	ar, err := ex.Press(ctx, executor.PressParams{TabID: p.TabID, Target: p.Fields[lastFound].Target, Key: "Enter"})
	if err != nil {
		return executor.PageState{}, &SubmitOutcome{Status: "failed", How: "enter", Reason: executor.AsError(err).Message}
	}
	return ar.PageState, &SubmitOutcome{Status: "submitted", How: "enter"}
}

// Value conversions.

func scalarString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case int:
		return strconv.Itoa(v), true
	case json.Number:
		return v.String(), true
	}
	return "", false
}

func stringList(v any) ([]string, bool) {
	if s, ok := scalarString(v); ok {
		return []string{s}, true
	}
	var items []any
	switch v := v.(type) {
	case []any:
		items = v
	case []string:
		return v, true
	default:
		return nil, false
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, ok := scalarString(it)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func checkboxValue(v any) (bool, bool) {
	switch v := v.(type) {
	case bool:
		return v, true
	case float64:
		return v != 0, v == 0 || v == 1
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "on", "yes", "checked", "1":
			return true, true
		case "false", "off", "no", "unchecked", "0", "":
			return false, true
		}
	}
	return false, false
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64, int:
		return "a number"
	case string:
		return "a string"
	case []any, []string:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return capRunes(string(b), 80)
}

func choices(opts []option) string {
	if len(opts) == 0 {
		return "(none)"
	}
	parts := make([]string, 0, len(opts))
	for _, o := range opts {
		s := strconv.Quote(o.Value)
		if o.Label != "" && o.Label != o.Value {
			s += " (" + capRunes(o.Label, 40) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
