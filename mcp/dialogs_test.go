package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy/gate"
)

const deleteAll = "Delete all 1,204 records? This cannot be undone."

// answers lists the AnswerDialog calls the fake saw.
func answers(h *harness) []executor.DialogParams {
	var out []executor.DialogParams
	for _, c := range h.fake().Calls() {
		if c.Method == "AnswerDialog" {
			out = append(out, c.Params.(executor.DialogParams))
		}
	}
	return out
}

// dialogHarness is a server under the default policy with data, its fake
// tab on https://a.test/ holding the confirm of the issue open.
func dialogHarness(t *testing.T, data map[string]any) (*harness, string) {
	t.Helper()
	h := newHarness(t, func(o *Options) { o.Gate = newPolicyGate(t, data) })
	f := h.fake()
	tab := f.TabID(0)
	if _, err := f.Navigate(t.Context(), executor.NavigateParams{TabID: tab, URL: "https://a.test/"}); err != nil {
		t.Fatal(err)
	}
	if err := f.OpenDialog(tab, executor.Dialog{Type: "confirm", Message: deleteAll, URL: "https://a.test/"}); err != nil {
		t.Fatal(err)
	}
	return h, tab
}

// The default policy decides an answer as an interaction on the dialog's
// page: accepting needs mutations, dismissing does not, and the operator
// can refuse accepting by the dialog's words (input.dialog).
func TestDialogAnswerIsDecided(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		data   map[string]any
		accept bool
		code   string // "" = answered
	}{
		{"accept in safe mode", map[string]any{"allow_domains": []string{"a.test"}}, true, "POLICY_DENIED"},
		{"dismiss in safe mode", map[string]any{"allow_domains": []string{"a.test"}}, false, ""},
		{"accept with mutations", map[string]any{"allow_domains": []string{"a.test"}, "enable_mutations": true}, true, ""},
		{"accept refused by its words", map[string]any{"allow_domains": []string{"a.test"}, "enable_mutations": true, "refuse_dialogs": []string{`(?i)\bdelete`}}, true, "POLICY_DENIED"},
		{"dismiss of refused words", map[string]any{"allow_domains": []string{"a.test"}, "refuse_dialogs": []string{`(?i)\bdelete`}}, false, ""},
		{"on a page outside the policy", map[string]any{"allow_domains": []string{"b.test"}, "enable_mutations": true}, true, "POLICY_DENIED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, _ := dialogHarness(t, tc.data)
			res := h.call("dialog_answer", map[string]any{"accept": tc.accept})
			got := textOf(res)
			if tc.code != "" {
				if !res.IsError || !strings.HasPrefix(got, tc.code) {
					t.Fatalf("want %s, got: %s", tc.code, got)
				}
				if tc.data["allow_domains"].([]string)[0] == "a.test" && len(answers(h)) != 0 {
					t.Errorf("a denied answer reached the browser: %v", answers(h))
				}
				return
			}
			if res.IsError {
				t.Fatalf("answer failed: %s", got)
			}
			want := executor.DialogDismissed
			if tc.accept {
				want = executor.DialogAccepted
			}
			if !strings.Contains(got, `"action":"`+want+`"`) || !strings.Contains(got, deleteAll) || !fenced(got) {
				t.Errorf("the answer's result: %s", got)
			}
			if diff := cmp.Diff([]executor.DialogParams{{Accept: tc.accept}}, answers(h)); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
		})
	}
}

// With AcceptAlerts the server accepts an alert of an allowed page, as it
// opens or when a call finds one, and nothing else: a confirm stays open.
func TestAcceptAlerts(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.AcceptAlerts = true })
	f := h.fake()
	tab := f.TabID(0)
	f.Handle("Click", func(context.Context, any) (any, error) {
		if err := f.OpenDialog(tab, executor.Dialog{Type: "alert", Message: "saved", URL: "about:blank"}); err != nil {
			return nil, err
		}
		return executor.ActionResult{PageState: executor.PageState{TabID: tab, URL: "about:blank", Dialogs: []executor.Dialog{
			{Type: "alert", Message: "saved", Action: "open", URL: "about:blank"},
		}}}, nil
	})
	got := textOf(h.call("click", map[string]any{"selector": "#save"}))
	if !strings.Contains(got, `{"type":"alert","message":"saved","action":"accepted"}`) {
		t.Errorf("the alert is not accepted: %s", got)
	}
	// An alert found open before a call is accepted first.
	if err := f.OpenDialog(tab, executor.Dialog{Type: "alert", Message: "later", URL: "about:blank"}); err != nil {
		t.Fatal(err)
	}
	f.ResetCalls()
	if res := h.call("get_text", nil); res.IsError {
		t.Fatalf("get_text: %s", textOf(res))
	}
	if m := f.Methods(); !strings.Contains(strings.Join(m, " "), "AnswerDialog Text") {
		t.Errorf("the alert was not answered before the read: %v", m)
	}
	// A confirm is the model's to answer.
	f.Handle("Click", func(context.Context, any) (any, error) {
		return executor.ActionResult{PageState: executor.PageState{TabID: tab, URL: "about:blank", Dialogs: []executor.Dialog{
			{Type: "confirm", Message: deleteAll, Action: "open", URL: "about:blank"},
		}}}, nil
	})
	f.ResetCalls()
	got = textOf(h.call("click", map[string]any{"selector": "#delete"}))
	if !strings.Contains(got, `"action":"open"`) || len(answers(h)) != 0 {
		t.Errorf("a confirm was answered for the model: %s %v", got, answers(h))
	}
	// A read whose own alert blocked it: the alert is accepted, and the
	// model told to call again.
	f.Handle("Text", func(context.Context, any) (any, error) {
		if err := f.OpenDialog(tab, executor.Dialog{Type: "alert", Message: "from the read", URL: "about:blank"}); err != nil {
			return nil, err
		}
		return nil, executor.Errorf(executor.CodeDialogOpen, "get_text opened an alert dialog").WithPage(`alert: "from the read"`)
	})
	got = textOf(h.call("get_text", nil))
	if !strings.HasPrefix(got, "DIALOG_OPEN") || !strings.Contains(got, "the alert was accepted") {
		t.Errorf("a read's own alert: %s", got)
	}
}

// Without AcceptAlerts nothing is answered for the model, whatever the
// dialog.
func TestNoDialogAnsweredByDefault(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	f := h.fake()
	tab := f.TabID(0)
	f.Handle("Click", func(context.Context, any) (any, error) {
		return executor.ActionResult{PageState: executor.PageState{TabID: tab, URL: "about:blank", Dialogs: []executor.Dialog{
			{Type: "alert", Message: "hi", Action: "open", URL: "about:blank"},
			{Type: "prompt", Message: "name?", Default: "anon", Action: "open", URL: "about:blank"},
		}}}, nil
	})
	got := textOf(h.call("click", map[string]any{"selector": "#x"}))
	for _, want := range []string{
		`{"type":"alert","message":"hi","action":"open","next":"the page waits: dialog_answer accept=true or false"}`,
		`{"type":"prompt","message":"name?","default":"anon","action":"open","next":"the page waits: dialog_answer accept=true with prompt_text, or false"}`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %s:\n%s", want, got)
		}
	}
	if len(answers(h)) != 0 {
		t.Errorf("answered for the model: %v", answers(h))
	}
}

// The server's own way off a page outside the policy dismisses the page's
// dialogs (LeaveDialog): a page cannot hold its tab there with one.
func TestBlankLeavesDialogs(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		o.Gate = gateFunc{landed: func(_ context.Context, q gate.Question) error {
			if strings.Contains(q.URL, "evil") {
				return deny("landed on evil")
			}
			return nil
		}}
	})
	h.call("navigate", map[string]any{"url": "https://evil.test/"})
	var blanks []executor.NavigateParams
	for _, c := range h.fake().Calls() {
		if p, ok := c.Params.(executor.NavigateParams); ok && p.URL == "about:blank" {
			blanks = append(blanks, p)
		}
	}
	if len(blanks) != 1 || !blanks[0].LeaveDialog {
		t.Errorf("the tab was not sent away leaving its dialogs: %+v", blanks)
	}
}

// The policy input names the dialog the page waits on.
func TestPolicyInputNamesTheDialog(t *testing.T) {
	t.Parallel()
	eng := newPolicyGate(t, map[string]any{"allow_domains": []string{"a.test"}, "enable_mutations": true, "refuse_dialogs": []string{"records"}})
	c := callFor(t, "dialog_answer", map[string]any{"accept": true}, "https://a.test/")
	c.Page = func(context.Context) (executor.Tab, error) {
		return executor.Tab{URL: "https://a.test/", Dialog: &executor.Dialog{Type: "confirm", Message: deleteAll, Action: "open"}}, nil
	}
	if err := gateBefore(t.Context(), eng, c); executor.CodeOf(err) != executor.CodePolicyDenied {
		t.Errorf("the refused words did not reach the policy: %v", err)
	}
	c.Page = func(context.Context) (executor.Tab, error) {
		return executor.Tab{URL: "https://a.test/", Dialog: &executor.Dialog{Type: "confirm", Message: "Save?", Action: "open"}}, nil
	}
	if err := gateBefore(t.Context(), eng, c); err != nil {
		t.Errorf("an accept of other words: %v", err)
	}
}

// A call held by a dialog of a page outside the policy on another tab (a
// blob: popup of the page shares its renderer): the dialog is dismissed,
// never named, and a read runs again.
func TestDialogsOutsideThePolicyAreDismissedWhenTheyHoldACall(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		o.Gate = newPolicyGate(t, map[string]any{"allow_domains": []string{"a.test"}, "enable_mutations": true})
	})
	f := h.fake()
	page := f.TabID(0)
	if _, err := f.Navigate(t.Context(), executor.NavigateParams{TabID: page, URL: "https://a.test/"}); err != nil {
		t.Fatal(err)
	}
	popup, err := f.NewTab(t.Context(), executor.NewTabParams{URL: "https://other.test/popup"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.SelectTab(t.Context(), page); err != nil {
		t.Fatal(err)
	}
	if err := f.OpenDialog(popup.ID, executor.Dialog{Type: "confirm", Message: "SECRET pay now?", URL: "https://other.test/popup"}); err != nil {
		t.Fatal(err)
	}
	held := func(tool string) func(context.Context, any) (any, error) {
		return func(context.Context, any) (any, error) {
			if info, _ := f.TabInfo(context.Background(), popup.ID); info.Dialog != nil {
				return nil, executor.Errorf(executor.CodeDialogOpen, "%s: tab %s has an open confirm dialog, which holds this page too", tool, popup.ID)
			}
			return executor.TextResult{PageState: executor.PageState{TabID: page, URL: "https://a.test/"}, Text: "free"}, nil
		}
	}
	f.Handle("Text", held("get_text"))
	got := textOf(h.call("get_text", nil))
	if !strings.Contains(got, "free") || strings.Contains(got, "SECRET") {
		t.Errorf("the read did not run again once the popup's dialog was dismissed: %s", got)
	}
	if diff := cmp.Diff([]executor.DialogParams{{TabID: popup.ID, Accept: false}}, answers(h)); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	// An action is not repeated for the model.
	if err := f.OpenDialog(popup.ID, executor.Dialog{Type: "confirm", Message: "SECRET pay now?", URL: "https://other.test/popup"}); err != nil {
		t.Fatal(err)
	}
	f.Handle("Click", held("click"))
	res := h.call("click", map[string]any{"selector": "#x"})
	got = textOf(res)
	if !res.IsError || !strings.HasPrefix(got, "DIALOG_OPEN: click was held by a dialog on a page outside the policy, which was dismissed") || strings.Contains(got, "SECRET") {
		t.Errorf("a held action: %s", got)
	}
}
