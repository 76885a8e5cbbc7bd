package helpers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
)

// fakeForm is a Fake whose RunScript answers the probe with probe (and the
// submit script with {ok:true}), and whose Fill fails for selectors in
// failFill.
func fakeForm(t *testing.T, probe string, failFill map[string]error) *executortest.Fake {
	t.Helper()
	f := executortest.New("fake", "s")
	f.Handle("RunScript", func(ctx context.Context, params any) (any, error) {
		p := params.(executor.ScriptParams)
		v := probe
		if strings.Contains(p.Source, "requestSubmit") {
			v = `{"ok":true}`
		}
		return executor.ScriptResult{PageState: executor.PageState{TabID: f.TabID(0), URL: "about:blank"}, Value: json.RawMessage(v)}, nil
	})
	f.Handle("Fill", func(ctx context.Context, params any) (any, error) {
		p := params.(executor.FillParams)
		if err := failFill[p.Selector]; err != nil {
			return nil, err
		}
		return executor.ActionResult{PageState: executor.PageState{TabID: f.TabID(0), URL: "about:blank"}}, nil
	})
	return f
}

func statuses(r FormResult) []string {
	var out []string
	for _, o := range r.Fields {
		out = append(out, o.Target+" "+o.Kind+" "+o.Status)
	}
	return out
}

func TestFillFormRoutesEachKind(t *testing.T) {
	t.Parallel()
	probe := `{"fields":[
	 {"found":true,"kind":"text","type":"email"},
	 {"found":true,"kind":"textarea","type":"textarea"},
	 {"found":true,"kind":"select","type":"select","options":[{"value":"pro","label":"Pro plan"}]},
	 {"found":true,"kind":"checkbox","type":"checkbox","checked":false},
	 {"found":true,"kind":"checkbox","type":"checkbox","checked":true},
	 {"found":true,"kind":"radio","type":"radio","pick":"#size-m","checked":false},
	 {"found":true,"kind":"text","type":"number"},
	 {"found":true,"kind":"contenteditable","type":"div"},
	 {"found":false},
	 {"found":true,"kind":"file","type":"file"},
	 {"found":true,"kind":"text","type":"text","disabled":true},
	 {"found":true,"kind":"select","type":"select","multiple":true}
	]}`
	f := fakeForm(t, probe, nil)
	f.Fail("HTML", executor.Errorf(executor.CodeSelectorNotFound, "no element matches selector #missing"))
	fields := []FormField{
		{executor.Target{Selector: "#email"}, "a@b.example"},
		{executor.Target{Selector: "#bio"}, "hello"},
		{executor.Target{Selector: "#plan"}, "Pro plan"},
		{executor.Target{Selector: "#terms"}, true},
		{executor.Target{Selector: "#news"}, "on"}, // already checked: no click
		{executor.Target{Selector: "input[name=size]"}, "M"},
		{executor.Target{Selector: "#age"}, 42.0},
		{executor.Target{Selector: "#editor"}, "rich"},
		{executor.Target{Selector: "#missing"}, "x"},
		{executor.Target{Selector: "#upload"}, "f.txt"},
		{executor.Target{Selector: "#locked"}, "x"},
		{executor.Target{Selector: "#tags"}, []any{"a", "b"}},
	}
	r, err := FillForm(t.Context(), f, FormParams{Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"selector #email text filled", "selector #bio textarea filled", "selector #plan select filled",
		"selector #terms checkbox filled", "selector #news checkbox filled", "selector input[name=size] radio filled",
		"selector #age text filled", "selector #editor contenteditable filled",
		"selector #missing  not_found", "selector #upload file rejected", "selector #locked text rejected",
		"selector #tags select filled",
	}
	if diff := cmp.Diff(want, statuses(r)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if r.Filled != 9 || r.Failed != 3 {
		t.Errorf("filled %d failed %d", r.Filled, r.Failed)
	}
	var acts []string
	for _, c := range f.Calls() {
		switch p := c.Params.(type) {
		case executor.FillParams:
			acts = append(acts, "Fill "+p.Selector+"="+p.Value)
		case executor.SelectParams:
			acts = append(acts, "SelectOption "+p.Selector+"="+strings.Join(p.Values, ","))
		case executor.ClickParams:
			acts = append(acts, "Click "+p.Selector)
		case executor.HTMLParams:
			acts = append(acts, "HTML "+p.Target.Selector)
		}
	}
	wantActs := []string{
		"Fill #email=a@b.example", "Fill #bio=hello", "SelectOption #plan=Pro plan", "Click #terms",
		"Click #size-m", "Fill #age=42", "Fill #editor=rich",
		"HTML #missing", // a second look through the backend's selector engine
		"SelectOption #tags=a,b",
	}
	if diff := cmp.Diff(wantActs, acts); diff != "" {
		t.Errorf("primitives (-want +got):\n%s", diff)
	}
	for _, o := range r.Fields {
		if o.Status != StatusFilled && o.Reason == "" {
			t.Errorf("%s: %s without a reason", o.Target, o.Status)
		}
	}
}

func TestFillFormStopOnError(t *testing.T) {
	t.Parallel()
	probe := `{"fields":[{"found":true,"kind":"text","type":"text"},{"found":true,"kind":"text","type":"number"},{"found":true,"kind":"text","type":"text"}]}`
	bad := executor.Errorf(executor.CodeBadArgs, "Cannot type text into input[type=number]")
	fields := []FormField{{executor.Target{Selector: "#a"}, "1"}, {executor.Target{Selector: "#n"}, "abc"}, {executor.Target{Selector: "#c"}, "3"}}

	r, err := FillForm(t.Context(), fakeForm(t, probe, map[string]error{"#n": bad}), FormParams{Fields: fields})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"selector #a text filled", "selector #n text rejected", "selector #c text filled"}, statuses(r)); diff != "" {
		t.Errorf("without stop_on_error (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.Fields[1].Reason, "Cannot type text") {
		t.Errorf("reason %q does not carry the backend's", r.Fields[1].Reason)
	}

	r, err = FillForm(t.Context(), fakeForm(t, probe, map[string]error{"#n": bad}), FormParams{Fields: fields, StopOnError: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"selector #a text filled", "selector #n text rejected", "selector #c  skipped"}, statuses(r)); diff != "" {
		t.Errorf("with stop_on_error (-want +got):\n%s", diff)
	}
}

func TestFillFormSubmit(t *testing.T) {
	t.Parallel()
	fields := []FormField{{executor.Target{Selector: "#q"}, "tides"}}
	tests := []struct {
		name, probe string
		p           FormParams
		want        SubmitOutcome
		lastMethod  string
	}{
		{"the form's submit button", `{"fields":[{"found":true,"kind":"text"}],"submit":{"form":"#f","button":"#f > button:nth-of-type(1)"}}`,
			FormParams{Fields: fields, Submit: true}, SubmitOutcome{Status: "submitted", How: "click"}, "Click"},
		{"requestSubmit without a button", `{"fields":[{"found":true,"kind":"text"}],"submit":{"form":"#f","button":""}}`,
			FormParams{Fields: fields, Submit: true}, SubmitOutcome{Status: "submitted", How: "requestSubmit"}, "RunScript"},
		{"Enter without a form", `{"fields":[{"found":true,"kind":"text"}]}`,
			FormParams{Fields: fields, Submit: true}, SubmitOutcome{Status: "submitted", How: "enter"}, "Press"},
		{"an explicit target", `{"fields":[{"found":true,"kind":"text"}]}`,
			FormParams{Fields: fields, SubmitTarget: executor.Target{Selector: "#go"}}, SubmitOutcome{Status: "submitted", How: "click"}, "Click"},
		{"not after a failure", `{"fields":[{"found":false}]}`,
			FormParams{Fields: fields, Submit: true}, SubmitOutcome{Status: "skipped", Reason: "1 field(s) failed; fix them, then submit"}, "HTML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := fakeForm(t, tt.probe, nil)
			f.Fail("HTML", executor.Errorf(executor.CodeSelectorNotFound, "nothing"))
			r, err := FillForm(t.Context(), f, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Submit == nil {
				t.Fatal("no submit outcome")
			}
			if diff := cmp.Diff(tt.want, *r.Submit); diff != "" {
				t.Errorf("submit (-want +got):\n%s", diff)
			}
			methods := f.Methods()
			// TabInfo may follow when no primitive reported the page.
			if methods[len(methods)-1] == "TabInfo" {
				methods = methods[:len(methods)-1]
			}
			if got := methods[len(methods)-1]; got != tt.lastMethod {
				t.Errorf("last primitive %s, want %s (all: %v)", got, tt.lastMethod, f.Methods())
			}
		})
	}
}

// A Playwright-only selector is probed with its own markup read, and so is
// every field when the probe script cannot run.
func TestFillFormMarkupProbe(t *testing.T) {
	t.Parallel()
	f := fakeForm(t, `{"fields":[{"queryable":false},{"queryable":false},{"queryable":false}]}`, nil)
	f.Fail("RunScript", executor.Errorf(executor.CodeEvalFailed, "no isolated world here"))
	f.Handle("HTML", func(ctx context.Context, params any) (any, error) {
		p := params.(executor.HTMLParams)
		m := map[string]string{
			"e7":          `<select id="plan"><option value="a">A</option></select>`,
			"text=Agree":  `<input type="checkbox" id="agree">`,
			"label=Notes": `<div contenteditable="true">old</div>`,
		}
		key := p.Target.Ref + p.Target.Selector
		return executor.TextResult{PageState: executor.PageState{TabID: f.TabID(0)}, Text: m[key]}, nil
	})
	r, err := FillForm(t.Context(), f, FormParams{Fields: []FormField{
		{executor.Target{Ref: "e7"}, "a"},
		{executor.Target{Selector: "text=Agree"}, true},
		{executor.Target{Selector: "label=Notes"}, "new"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ref e7 select filled", "selector text=Agree checkbox filled", "selector label=Notes contenteditable filled"}, statuses(r)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

// A ref the registry no longer knows is not_found with the reason, and
// never looked up again through the backend.
func TestFillFormExpiredRef(t *testing.T) {
	t.Parallel()
	f := fakeForm(t, `{"fields":[{"found":false,"ref_error":"expired","why":"navigated"},{"found":true,"kind":"text"}]}`, nil)
	r, err := FillForm(t.Context(), f, FormParams{Fields: []FormField{{executor.Target{Ref: "ab3"}, "x"}, {executor.Target{Ref: "cd4"}, "y"}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"ref ab3  not_found", "ref cd4 text filled"}, statuses(r)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if !strings.Contains(r.Fields[0].Reason, "earlier page") {
		t.Errorf("reason %q", r.Fields[0].Reason)
	}
	if diff := cmp.Diff([]string{"RunScript", "Fill"}, f.Methods()); diff != "" {
		t.Errorf("primitives (-want +got):\n%s", diff)
	}
}

// A backend whose RunScript returns nothing useful still gets every field
// looked at, through its markup.
func TestFillFormProbeReturnsNothing(t *testing.T) {
	t.Parallel()
	f := executortest.New("fake", "s")
	r, err := FillForm(t.Context(), f, FormParams{Fields: []FormField{{executor.Target{Selector: "#x"}, "v"}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"selector #x other rejected"}, statuses(r)); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
}

func TestFillFormBadArgs(t *testing.T) {
	t.Parallel()
	f := fakeForm(t, `{"fields":[]}`, nil)
	for _, p := range []FormParams{
		{},
		{Fields: []FormField{{executor.Target{}, "x"}}},
		{Fields: []FormField{{executor.Target{Selector: "#a", Ref: "e1"}, "x"}}},
	} {
		if _, err := FillForm(t.Context(), f, p); executor.AsError(err).Code != executor.CodeBadArgs {
			t.Errorf("%+v: got %v, want BAD_ARGS", p, err)
		}
	}
}

func TestCheckboxValue(t *testing.T) {
	t.Parallel()
	for _, v := range []any{true, "on", "TRUE", "yes", "checked", 1.0} {
		if got, ok := checkboxValue(v); !ok || !got {
			t.Errorf("%v: %v %v, want checked", v, got, ok)
		}
	}
	for _, v := range []any{false, "off", "no", "", 0.0} {
		if got, ok := checkboxValue(v); !ok || got {
			t.Errorf("%v: %v %v, want unchecked", v, got, ok)
		}
	}
	for _, v := range []any{"maybe", 2.0, nil, []any{}} {
		if _, ok := checkboxValue(v); ok {
			t.Errorf("%v accepted", v)
		}
	}
}

// A field whose change navigates the tab ends the call: the later fields
// and the submit are skipped, so nothing is done on a page the policy did
// not decide on.
func TestFillFormStopsWhenTheTabLeaves(t *testing.T) {
	t.Parallel()
	f := fakeForm(t, `{"fields":[{"found":true,"kind":"text","type":"text"},{"found":true,"kind":"text","type":"text"}]}`, nil)
	f.Handle("Fill", func(ctx context.Context, params any) (any, error) {
		return executor.ActionResult{PageState: executor.PageState{TabID: f.TabID(0), URL: "https://elsewhere.test/"}}, nil
	})
	r, err := FillForm(t.Context(), f, FormParams{Submit: true, Fields: []FormField{
		{Target: executor.Target{Selector: "#a"}, Value: "x"},
		{Target: executor.Target{Selector: "#b"}, Value: "y"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Fields[0].Status != StatusFilled || r.Fields[1].Status != StatusSkipped || !strings.Contains(r.Fields[1].Reason, "navigated") {
		t.Fatalf("fields: %+v", r.Fields)
	}
	if r.Submit == nil || r.Submit.Status != "skipped" {
		t.Fatalf("submit after the tab left: %+v", r.Submit)
	}
	fills := 0
	for _, c := range f.Calls() {
		if c.Method == "Fill" {
			fills++
		}
	}
	if fills != 1 {
		t.Fatalf("%d fills, want 1", fills)
	}
}
