package cdp

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// JavaScript dialogs are never answered on the caller's behalf. A dialog
// stays open, its page waiting, until the caller answers it
// (AnswerDialog); meanwhile the page's renderer is blocked: Playwright's
// click (its Input.dispatchMouseEvent), an evaluate and a page.goto that
// raised one do not return until the dialog is answered. So every call on
// a tab races its work against "a dialog opened" (run), and a call on a
// tab with an open dialog fails at once with DIALOG_OPEN.

// dialogGrace is how long a call whose tab just opened a dialog still
// waits for its own work to finish: a dialog a handler opens after the
// action's own work is not a reason to lose the action's result.
const dialogGrace = 100 * time.Millisecond

// elsewhereGrace is how long a call waits on its tab while another tab of
// the session has a dialog open before it says so (at most half the time
// the call has left): a page in the same renderer as that tab (its
// opener, a same-site popup) is blocked by the dialog too, and would
// otherwise sit out the call's deadline.
const elsewhereGrace = time.Second

// graceFor is elsewhereGrace for a call with ctx's deadline.
func graceFor(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return min(elsewhereGrace, time.Until(dl)/2)
	}
	return elsewhereGrace
}

// answerSettle is how long an answer waits for a navigation the page
// starts on it (a confirm's handler that leaves the page), so that the
// landing is decided on the page the answer led to.
const answerSettle = 300 * time.Millisecond

// pendingDialog is the dialog open on a tab.
type pendingDialog struct {
	d   playwright.Dialog
	rec executor.Dialog
}

// callKind says what a dialog the call raises means to it.
type callKind int

const (
	// readCall: the call's result is lost to a dialog it raises (an eval,
	// a read), which fails it with DIALOG_OPEN.
	readCall callKind = iota
	// actCall: the dialog is the action's result (a click on a confirm
	// button, a navigation held by beforeunload), reported open.
	actCall
	// answerCall runs on a tab with an open dialog: it answers it.
	answerCall
)

// dialog returns the dialog open on the tab, if any, with the documents
// that may have opened it (named once, outside dmu: a probe waits on the
// renderers).
func (t *tab) dialog() *executor.Dialog {
	t.dmu.Lock()
	open := t.open
	if open == nil {
		t.dmu.Unlock()
		return nil
	}
	d := open.rec
	t.dmu.Unlock()
	if d.Docs == nil {
		d.Docs = t.src.dialogDocs()
		if d.Docs == nil {
			d.Docs = []executor.Source{} // probed: none blocked
		}
		t.dmu.Lock()
		if t.open == open {
			open.rec.Docs = d.Docs
			for i := range t.dialogs {
				if sameDialog(t.dialogs[i], d) && t.dialogs[i].Action == executor.DialogOpen {
					t.dialogs[i].Docs = d.Docs
				}
			}
		}
		t.dmu.Unlock()
	}
	return &d
}

// sameDialog tells two records of one dialog apart from others.
func sameDialog(a, b executor.Dialog) bool {
	return a.Type == b.Type && a.Message == b.Message && a.Default == b.Default && a.URL == b.URL
}

// takeDialog removes the tab's open dialog and returns it.
func (t *tab) takeDialog() *pendingDialog {
	t.dmu.Lock()
	defer t.dmu.Unlock()
	p := t.open
	t.open = nil
	return p
}

// dropDialog forgets the report of rec (an answer that failed).
func (t *tab) dropDialog(rec executor.Dialog) {
	t.dmu.Lock()
	defer t.dmu.Unlock()
	if i := slices.IndexFunc(t.dialogs, func(d executor.Dialog) bool {
		return sameDialog(d, rec) && d.Action == rec.Action && d.Answer == rec.Answer
	}); i >= 0 {
		t.dialogs = slices.Delete(t.dialogs, i, i+1)
	}
}

// dialogSignal returns a channel closed when the next dialog opens in the
// session.
func (s *Session) dialogSignal() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dsig
}

func (s *Session) signalDialog() {
	s.mu.Lock()
	close(s.dsig)
	s.dsig = make(chan struct{})
	s.mu.Unlock()
}

// dialogElsewhere returns a tab of the session other than t with an open
// dialog, and that dialog.
func (s *Session) dialogElsewhere(t *tab) (*tab, *executor.Dialog) {
	s.mu.Lock()
	order := append([]*tab(nil), s.order...)
	s.mu.Unlock()
	for _, o := range order { // (a closed tab has left order)
		if o == t {
			continue
		}
		if d := o.dialog(); d != nil {
			return o, d
		}
	}
	return nil, nil
}

// onDialog records a dialog as open on its tab and wakes the calls that
// wait on the session. A dialog of no page the session drives is
// dismissed at once.
func (s *Session) onDialog(d playwright.Dialog) {
	rec := executor.Dialog{Type: d.Type(), Message: d.Message(), Action: executor.DialogOpen}
	if rec.Type == "prompt" {
		rec.Default = d.DefaultValue()
	}
	var t *tab
	if p := d.Page(); p != nil {
		rec.URL = p.URL() // the server decides whether the caller may hear of it
		if !s.isDone() && !p.IsClosed() {
			t = s.register(p, false)
		}
	}
	if t != nil {
		t.dmu.Lock()
		// A page blocked on a dialog cannot open another: one the tab
		// still holds was answered by another client of the browser (the
		// extension, DevTools, the user), and the new one takes its place.
		if t.leaving == 0 {
			t.open = &pendingDialog{d: d, rec: rec}
			if len(t.dialogs) >= maxDialogs {
				t.dialogs = t.dialogs[1:]
			}
			t.dialogs = append(t.dialogs, rec)
			t.dmu.Unlock()
			s.signalDialog()
			return
		}
		t.dmu.Unlock()
	}
	// No tab to hold it, or one the server is taking off its page
	// (LeaveDialog): never accepted.
	if err := d.Dismiss(); err != nil {
		s.log.Debug("dismissing a dialog failed", "type", rec.Type, "err", err)
	}
}

// dialogOpenErr is the DIALOG_OPEN error of a call on tab (raised: the
// call itself opened the dialog). The dialog's words are the page's:
// fenced, in Page.
func (s *Session) dialogOpenErr(what string, t *tab, d executor.Dialog, raised bool) *executor.Error {
	id := s.ids.Stamp(t.raw)
	msg := fmt.Sprintf("%s: the page waits for an answer to a %s dialog and can do nothing else until then", what, d.Type)
	if raised {
		msg = fmt.Sprintf("%s opened %s dialog: the page waits for an answer and the call's result is lost", what, executor.DialogArticle(d.Type))
	}
	return executor.Errorf(executor.CodeDialogOpen, "%s", msg).
		WithHint(executor.DialogHint(id, d.Type, what)).WithPage(executor.DialogWords(d))
}

// elsewhereErr is the DIALOG_OPEN error of a call held by a dialog on
// another tab. It names that tab and the dialog's type only: the words
// are told by a call on that tab, decided on its page.
func (s *Session) elsewhereErr(what string, kind callKind, o *tab, d executor.Dialog) *executor.Error {
	id := s.ids.Stamp(o.raw)
	if kind == actCall {
		// The action may have been done (a click that opened the popup
		// whose dialog now holds the page): not one to repeat blindly.
		return executor.Errorf(executor.CodeDialogOpen, "%s may have acted, but tab %s has an open %s dialog, which holds this page too (they share a renderer)", what, id, d.Type).
			WithHint(executor.DialogHint(id, d.Type, "") + "; then check the page before acting again")
	}
	return executor.Errorf(executor.CodeDialogOpen, "%s: tab %s has an open %s dialog, which holds this page too (they share a renderer)", what, id, d.Type).
		WithHint(executor.DialogHint(id, d.Type, what))
}

// run runs fn on the call's tab and returns when fn does, or as soon as a
// dialog blocks the page (see callKind). fn runs on its own goroutine; one
// left behind by a dialog finishes on its own when the dialog is answered,
// or at its Playwright timeout, and its result is dropped: it touches
// nothing but its own call.
func (c *call) run(kind callKind, what string, fn func(c *call) error) error {
	sig := c.s.dialogSignal()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				c.s.log.Error("panic in a browser call", "what", what, "panic", r, "stack", string(debug.Stack()))
				done <- executor.Errorf(executor.CodeInternal, "%s failed: internal error (%v)", what, r)
			}
		}()
		done <- fn(c)
	}()
	finished := func(err error) error {
		if err != nil {
			return c.s.mapErr(what, err)
		}
		return nil
	}
	// A dialog another tab already held when the call began may have kept
	// it from acting; one that opened during an action is the action's
	// consequence (a click that opened a popup that asks something).
	heldBefore, _ := c.s.dialogElsewhere(c.t)
	var grace <-chan time.Time
	for {
		var other *tab
		var od *executor.Dialog
		if grace == nil && kind != answerCall {
			if other, od = c.s.dialogElsewhere(c.t); other != nil {
				timer := time.NewTimer(graceFor(c.ctx))
				defer timer.Stop()
				grace = timer.C
			}
		}
		select {
		case err := <-done:
			return finished(err)
		case <-sig:
			sig = c.s.dialogSignal()
			d := c.t.dialog()
			if d == nil {
				continue // another tab's: the grace above covers it
			}
			timer := time.NewTimer(dialogGrace)
			select {
			case err := <-done:
				timer.Stop()
				if err == nil || kind != readCall {
					return nil // the dialog is in the call's state
				}
			case <-timer.C:
			case <-c.ctx.Done():
				timer.Stop()
			}
			if kind != readCall {
				return nil
			}
			c.t.drainDialogs() // told by the error, not again in a later result
			return c.s.dialogOpenErr(what, c.t, *d, true)
		case <-grace:
			if other, od = c.s.dialogElsewhere(c.t); other != nil && !c.responsive() {
				if kind == actCall && heldBefore == nil {
					return nil // acted; the next call on the page is told
				}
				return c.s.elsewhereErr(what, kind, other, *od)
			}
			grace = nil
		case <-c.ctx.Done():
			// fn's own, more precise, error may be a moment behind (see
			// await).
			timer := time.NewTimer(resultGrace)
			defer timer.Stop()
			select {
			case err := <-done:
				return finished(err)
			case <-timer.C:
			}
			return timeoutErr(c.ctx, what, time.Since(c.start))
		}
	}
}

// leave runs fn, a navigation off the tab's page, with the tab's dialog
// dismissed, and every dialog the page opens meanwhile (LeaveDialog).
func (c *call) leave(fn func() error) error {
	c.t.dmu.Lock()
	c.t.leaving++
	c.t.dmu.Unlock()
	defer func() {
		c.t.dmu.Lock()
		c.t.leaving--
		c.t.dmu.Unlock()
	}()
	if pd := c.t.takeDialog(); pd != nil {
		if err := pd.d.Dismiss(); err != nil {
			c.s.log.Debug("dismissing a dialog to leave its page failed", "err", err)
		}
	}
	return fn()
}

// probeTimeout bounds the probe of whether a page answers at all.
const probeTimeout = 300 * time.Millisecond

// responsive says whether the call's page answers a script now: a page in
// another renderer than the tab holding a dialog goes on, and its call
// with it (a slow wait is not a held one). A probe the page does not
// answer is left behind; it returns when the dialog is answered.
func (c *call) responsive() bool {
	ch := make(chan error, 1)
	go func() {
		_, err := c.page.Evaluate("1")
		ch <- err
	}()
	timer := time.NewTimer(probeTimeout)
	defer timer.Stop()
	select {
	case err := <-ch:
		return err == nil
	case <-timer.C:
		return false
	}
}

// AnswerDialog accepts or dismisses the dialog open on a tab. An accepted
// prompt takes PromptText (its default when nil). The result is the page
// once it has gone on: an accepted beforeunload's pending navigation has
// committed; a navigation an accepted confirm's handler starts is waited
// for a moment.
func (s *Session) AnswerDialog(ctx context.Context, p executor.DialogParams) (executor.PageState, error) {
	return s.onTabAs(ctx, p.TabID, "dialog_answer", answerCall, func(c *call) error {
		pd := c.t.takeDialog()
		if pd == nil {
			return executor.Errorf(executor.CodeBadArgs, "no dialog is open on this tab").
				WithHint("nothing to answer: go on with the page (a dialog closed by the page, or answered already, is gone)")
		}
		c.fromURL = "" // the answer may lead anywhere: re-read the title
		rec := pd.rec
		from := c.page.URL()
		switch {
		case !p.Accept:
			rec.Action = executor.DialogDismissed
		case rec.Type == "prompt":
			rec.Action, rec.Answer = executor.DialogAccepted, rec.Default
			if p.PromptText != nil {
				rec.Answer = *p.PromptText
			}
		default:
			rec.Action = executor.DialogAccepted
		}
		// Recorded before it is sent: the answer lets the page run on,
		// and a dialog it opens next must be reported after this one.
		c.t.addDialog(rec)
		var err error
		switch {
		case !p.Accept:
			err = pd.d.Dismiss()
		case rec.Type == "prompt":
			err = pd.d.Accept(rec.Answer)
		default:
			err = pd.d.Accept()
		}
		if err != nil {
			c.t.dropDialog(rec)
			if strings.Contains(err.Error(), "No dialog is showing") {
				return executor.Errorf(executor.CodeBadArgs, "the dialog on this tab is gone (the page closed it, or it was answered)").
					WithHint("nothing to answer: go on with the page")
			}
			return err
		}
		wait := answerSettle
		if p.Accept && rec.Type == "beforeunload" {
			wait = time.Duration(c.timeout) * time.Millisecond // the held navigation goes on
		}
		moved := func(u string) bool { return u != from }
		if err := c.page.WaitForURL(moved, playwright.PageWaitForURLOptions{
			WaitUntil: playwright.WaitUntilStateCommit, Timeout: playwright.Float(float64(wait.Milliseconds())),
		}); err != nil {
			return nil // no navigation: the page stays
		}
		if err := c.page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateLoad, Timeout: c.to()}); err != nil {
			s.log.Debug("the page an answer led to did not load", "err", err)
		}
		return nil
	})
}
