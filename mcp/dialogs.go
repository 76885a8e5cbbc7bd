package mcp

import (
	"context"
	"errors"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy/gate"
)

// JavaScript dialogs are decided, never defaulted: the backends leave a
// dialog open (executor.Dialog) and the model answers it with
// dialog_answer, an interaction on the dialog's page that the policy
// decides (input.dialog names it). The server dismisses, never accepts,
// a dialog of a page outside the policy, and accepts alerts itself only
// when the operator said so (Options.AcceptAlerts).

// maxAutoAnswers bounds the dialogs the server answers itself during one
// call (a page's own dialogs outside the policy, alerts with
// AcceptAlerts): a page that opens them in a loop gets its next one left
// open, and the call returns.
const maxAutoAnswers = 20

func dialogAnswer(ctx context.Context, c *Call, a dialogAnswerIn) (*Result, error) {
	ps, err := c.Executor().AnswerDialog(ctx, executor.DialogParams{TabID: a.TabID, Accept: a.Accept, PromptText: a.PromptText})
	if err != nil {
		return nil, err
	}
	p := c.pageOf(ctx, ps)
	return pageResult(p, p, ps), nil
}

// dialogNext is what a model is told to call about a dialog left open.
func dialogNext(typ string) string {
	if typ == "beforeunload" {
		return "the navigation waits: dialog_answer accept=true leaves the page, false stays"
	}
	if typ == "prompt" {
		return "the page waits: dialog_answer accept=true with prompt_text, or false"
	}
	return "the page waits: dialog_answer accept=true or false"
}

// dialogsOf screens the dialogs a backend recorded on ps's tab. One opened
// by a page the caller could not have navigated to (a popup, a tab that
// navigated itself away, a page the backend could not name), or by a
// frame whose document the caller may not read (dialogDenied), keeps
// nothing but the note that it happened, and is dismissed if it is
// still open.
// Dialogs are queued per tab between calls, so without this a denied
// page's alert would reach the model in the next allowed call's result.
// With AcceptAlerts an open alert of an allowed page is accepted here.
func (c *Call) dialogsOf(ctx context.Context, ps executor.PageState) []dialogOut {
	queue := ps.Dialogs
	var out []dialogOut
	answers := 0
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		outside := c.srv.dialogDenied(ctx, c, d)
		auto := d.Action == executor.DialogOpen && answers < maxAutoAnswers &&
			(outside || (c.srv.opts.AcceptAlerts && d.Type == "alert"))
		if auto {
			answers++
			next, err := c.Executor().AnswerDialog(ctx, executor.DialogParams{TabID: ps.TabID, Accept: !outside})
			if err == nil && len(next.Dialogs) > 0 {
				d = next.Dialogs[0] // the one answered, as answered
				queue = append(queue, next.Dialogs[1:]...)
			} else if err != nil {
				c.srv.log.Debug("answering a dialog for the caller failed", "tab", ps.TabID, "err", err)
			}
		}
		if outside {
			out = append(out, dialogOut{Note: outsideDialog})
			continue
		}
		o := dialogOut{Type: d.Type, Message: d.Message, Default: d.Default, Action: d.Action, Answer: d.Answer}
		if d.Action == executor.DialogOpen {
			o.Next = dialogNext(d.Type)
		}
		out = append(out, o)
	}
	return out
}

// tabDialog reports the dialog open on t for tab_new: screened and
// answered as a result's (dialogsOf).
func (c *Call) tabDialog(ctx context.Context, t executor.Tab) []dialogOut {
	if t.Dialog == nil {
		return nil
	}
	return c.dialogsOf(ctx, executor.PageState{TabID: t.ID, URL: t.URL, Dialogs: []executor.Dialog{*t.Dialog}})
}

// dismissOutside dismisses, after a call failed with DIALOG_OPEN, every
// dialog of a page outside the policy that could have held it (a popup
// the page opened to a blob: document shares the page's renderer, and
// its dialog blocks the page too). Never accepted, and never named: the
// model hears only that the call is to be repeated. It reports whether
// it dismissed any.
func (s *Server) dismissOutside(ctx context.Context, c *Call, ex executor.Executor, err error) bool {
	if executor.CodeOf(err) != executor.CodeDialogOpen {
		return false
	}
	// Even when the call's deadline has passed: a held call used it up.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), blankTimeout)
	defer cancel()
	tabs, terr := ex.Tabs(ctx)
	if terr != nil {
		return false
	}
	dismissed := false
	for _, t := range tabs {
		if t.Dialog == nil {
			continue
		}
		if !s.dialogDenied(ctx, c, *t.Dialog) && !s.dialogOutside(ctx, c, t.URL) {
			continue
		}
		if _, aerr := ex.AnswerDialog(ctx, executor.DialogParams{TabID: t.ID, Accept: false}); aerr == nil {
			dismissed = true
		} else {
			s.log.Debug("dismissing a dialog outside the policy failed", "tab", t.ID, "err", aerr)
		}
	}
	return dismissed
}

// dialogOutside says whether a dialog of the page at url is one the
// caller may not hear of: a page outside the policy, one the backend
// could not name, or one whose URL does not carry its origin (a blob: or
// about:blank document a page wrote, which its page may not be decided
// on while the dialog blocks it): told by a note, and dismissed.
func (s *Server) dialogOutside(ctx context.Context, c *Call, url string) bool {
	q := toolQuestion(gate.KindDialog, c.Tool, nil, c.Principal)
	q.URL = url
	c.screened(&q)
	return !s.ask(ctx, q).Allow
}

// dialogDenied says whether dialog d is one the caller may not hear of:
// its page is outside (dialogOutside), or a document that may have
// opened it (a denied frame of an allowed page, an about:srcdoc child of
// one), as the backend named them by their frames, is denied
// (documents.go).
func (s *Server) dialogDenied(ctx context.Context, c *Call, d executor.Dialog) bool {
	if s.dialogOutside(ctx, c, d.URL) {
		return true
	}
	for _, doc := range d.Docs {
		if c.DocumentDenied(ctx, doc.URL, doc.Origin) {
			return true
		}
	}
	return false
}

// heldOutsideErr is the error of a call a dialog of a page outside the
// policy held, once that dialog is dismissed.
func heldOutsideErr(c *Call) error {
	return executor.Errorf(executor.CodeDialogOpen, "%s was held by a dialog on a page outside the policy, which was dismissed", c.Tool.Name).
		WithHint("call " + c.Tool.Name + " again if it is still needed: it may or may not have acted")
}

// acceptAlertFirst answers, with AcceptAlerts, an alert the call's tab
// holds before the call runs, so the call is not refused for it. The
// alert is the page's own (the gate has just decided the call on it).
func (s *Server) acceptAlertFirst(ctx context.Context, c *Call, ex executor.Executor) {
	if !s.opts.AcceptAlerts || !needsPage(c) || c.Page == nil || c.Tool.AnswersDialog {
		return
	}
	t, err := c.Page(ctx) // read once per call: the gate's read, if it made one
	if err != nil || t.Dialog == nil || t.Dialog.Type != "alert" {
		return
	}
	for range maxAutoAnswers {
		ps, err := ex.AnswerDialog(ctx, executor.DialogParams{TabID: t.ID, Accept: true})
		if err != nil || !hasOpenDialog(ps, "alert") {
			return
		}
	}
}

func hasOpenDialog(ps executor.PageState, typ string) bool {
	for _, d := range ps.Dialogs {
		if d.Action == executor.DialogOpen && d.Type == typ {
			return true
		}
	}
	return false
}

// alertRaised handles, with AcceptAlerts, a DIALOG_OPEN a call's own
// alert caused (a read or an eval that opened one): the alert is
// accepted, and the error says so and to call again.
func (s *Server) alertRaised(ctx context.Context, c *Call, ex executor.Executor, err error) error {
	var e *executor.Error
	if !s.opts.AcceptAlerts || !errors.As(err, &e) || e.Code != executor.CodeDialogOpen {
		return err
	}
	t, terr := ex.TabInfo(ctx, c.TabID())
	if terr != nil || t.Dialog == nil || t.Dialog.Type != "alert" {
		return err
	}
	if _, aerr := ex.AnswerDialog(ctx, executor.DialogParams{TabID: t.ID, Accept: true}); aerr != nil {
		return err
	}
	return e.WithHint("the alert was accepted (the server answers alerts); call " + c.Tool.Name + " again")
}

// dialogsStage accepts an alert that would hold the call before it runs;
// after a failure, it dismisses a dialog of a page outside the policy that
// held the call (a read runs again, once; anything else may have acted, and
// is the model's to repeat), and says which alert a page raised.
func (s *Server) dialogsStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		s.acceptAlertFirst(ctx, c, c.ex)
		r, err := next(ctx, c)
		if err != nil && s.dismissOutside(ctx, c, c.ex, err) {
			if t := c.Tool; t.ReadOnly != nil && *t.ReadOnly {
				r, err = s.handle(ctx, c)
			} else {
				err = heldOutsideErr(c)
			}
		}
		if err != nil {
			return nil, s.alertRaised(ctx, c, c.ex, err)
		}
		return r, nil
	}
}

// Dialogs: answer the JavaScript dialog a page waits on. Each tool is one
// constructor: its declaration, its class, the facts the call path needs;
// the handlers
// live with the feature (dialogs.go).

// groupDialogs is the README row of these tools.
var groupDialogs = &ToolGroup{Name: "dialogs"}

func dialogAnswerTool() *Tool {
	return newTool(Tool{
		Name: "dialog_answer", Title: "Answer dialog",
		Group:       groupDialogs,
		Output:      &Output{Value: pageOut{}},
		Description: "Answer an open dialog: accept (OK) or not; prompt_text answers a prompt.",
		// Mutating and destructive: accepting a confirm may delete,
		// pay or send, and leaving a page may lose its form.
		// prompt_text may be a password a prompt asks for.
		ReadOnly: no(), Action: ActionInteract, Mutating: true, Secrets: []string{"prompt_text"},
		Changes: true, MayLoad: true, AnswersDialog: true,
	}, dialogAnswer)
}

// dialogAnswerIn is dialog_answer's input. PromptText is nil when not
// given: a prompt then gets its default.
type dialogAnswerIn struct {
	Accept     bool    `json:"accept"`
	PromptText *string `json:"prompt_text,omitempty"`
	tabIn
}
