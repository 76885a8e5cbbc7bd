package cdp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// defaultCallTimeout applies when the caller's context has no deadline.
const defaultCallTimeout = 30 * time.Second

// resultGrace is how long a call whose context ended still waits for an
// error already on its way (see await).
const resultGrace = 100 * time.Millisecond

// titleTimeout bounds the title read that ends most calls: a page whose main
// thread is busy must not hold the result.
const titleTimeout = time.Second

// await runs fn on its own goroutine, because playwright-go calls take no
// context, and returns its result; or TIMEOUT when ctx ends first; or
// TARGET_GONE when the browser dies first. A fn left behind finishes on its
// own, bounded by the Playwright timeouts it was given.
//
// It is where the primitives of this backend pass, so it starts each one's
// span when the call is traced (executor.StartPrimitive); what starts
// with the primitive's name, a literal.
func await[T any](ctx context.Context, s *Session, what string, fn func() (T, error)) (v T, err error) {
	ctx, end := executor.StartPrimitive(ctx, "cdp", executor.PrimitiveName(what))
	defer func() { end(err) }()
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, timeoutErr(ctx, what, 0)
	}
	if s.isDone() {
		return zero, s.goneErr(what)
	}
	type result struct {
		v   T
		err error
	}
	start := time.Now()
	ch := make(chan result, 1)
	go func() {
		defer func() {
			// playwright-go can panic on a protocol it did not expect; a
			// failed call must never take the server down.
			if r := recover(); r != nil {
				s.log.Error("panic in a browser call", "what", what, "panic", r, "stack", string(debug.Stack()))
				ch <- result{err: executor.Errorf(executor.CodeInternal, "%s failed: internal error (%v)", what, r)}
			}
		}()
		v, err := fn()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		// The Playwright timeout ends fn just before ctx does; on a loaded
		// machine its (more precise) error may be a moment late. And a call
		// that did finish must not be reported as not done: the caller
		// would repeat it.
		grace := time.NewTimer(resultGrace)
		defer grace.Stop()
		select {
		case r := <-ch:
			return r.v, r.err
		case <-grace.C:
		}
		return zero, timeoutErr(ctx, what, time.Since(start))
	case <-s.done:
		select {
		case r := <-ch:
			if r.err == nil {
				return r.v, nil
			}
		default:
		}
		return zero, s.goneErr(what)
	}
}

// errPageCrashed is the cause of a call's context when its tab's renderer
// crashed.
var errPageCrashed = errors.New("the page crashed")

func timeoutErr(ctx context.Context, what string, took time.Duration) *executor.Error {
	if errors.Is(context.Cause(ctx), errPageCrashed) {
		return executor.Errorf(executor.CodeTargetGone, "%s failed: the page crashed (its renderer ran out of memory or was killed)", what).
			WithHint("close the tab (tab_close) and open a new one (tab_new); a page that crashes again is too heavy to drive").Wrap(ctx.Err())
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return executor.Errorf(executor.CodeTimeout, "%s was cancelled", what).Wrap(ctx.Err())
	}
	return executor.Errorf(executor.CodeTimeout, "%s did not finish within %s", what, took.Round(time.Millisecond)).
		WithHint(executor.DefaultHint(executor.CodeTimeout)).Wrap(ctx.Err())
}

func (s *Session) goneErr(what string) *executor.Error {
	why := "the session was closed"
	if s.in.dead() {
		why = s.in.deathReason()
	}
	return executor.Errorf(executor.CodeTargetGone, "%s failed: %s", what, why).
		WithHint("retry: the next call starts the browser again")
}

// pwTimeout is the Playwright timeout (ms) for a call under ctx: a little
// less than what is left, so Playwright's own, more precise, timeout error
// arrives before the context ends. Playwright reads 0 as "no timeout", so
// the result is at least 1.
func pwTimeout(ctx context.Context) float64 {
	dl, ok := ctx.Deadline()
	if !ok {
		return float64(defaultCallTimeout.Milliseconds())
	}
	left := time.Until(dl)
	// The margin also covers the reply's trip back on a loaded machine:
	// a fifth of the time left, at least half a second when there is a
	// second, at most a second.
	margin := min(max(left/5, min(left/2, 500*time.Millisecond)), time.Second)
	return float64(max((left - margin).Milliseconds(), 1))
}

// call is one primitive running on one tab.
type call struct {
	s       *Session
	t       *tab
	page    playwright.Page
	ctx     context.Context
	timeout float64 // ms, for every Playwright option
	start   time.Time
	title   *string // set when the primitive already read the title
	fromURL string  // the tab's URL when the call began
}

func (s *Session) newCall(ctx context.Context, t *tab) *call {
	return &call{s: s, t: t, page: t.page, ctx: ctx, timeout: pwTimeout(ctx), start: time.Now(), fromURL: t.page.URL()}
}

func (c *call) to() *float64 { return playwright.Float(c.timeout) }

// onTab runs fn on a tab ("" = the selected tab) and returns the tab's
// state afterwards, with the dialogs the page opened meanwhile. A dialog
// fn raises fails it with DIALOG_OPEN (see readCall); onAction is onTab
// for an action, whose dialog is its result.
func (s *Session) onTab(ctx context.Context, tabID, what string, fn func(c *call) error) (executor.PageState, error) {
	return s.onTabAs(ctx, tabID, what, readCall, fn)
}

// onAction is onTab for an action or a navigation: a dialog it raises is
// reported open in its state (actCall).
func (s *Session) onAction(ctx context.Context, tabID, what string, fn func(c *call) error) (executor.PageState, error) {
	return s.onTabAs(ctx, tabID, what, actCall, fn)
}

func (s *Session) onTabAs(ctx context.Context, tabID, what string, kind callKind, fn func(c *call) error) (executor.PageState, error) {
	if _, err := s.ids.Raw(tabID); err != nil {
		return executor.PageState{}, err
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	return await(cctx, s, what, func() (executor.PageState, error) {
		t, err := s.resolveTab(tabID)
		if err != nil {
			return executor.PageState{}, err
		}
		if d := t.dialog(); d != nil && kind != answerCall {
			t.drainDialogs() // told by the error
			return executor.PageState{}, s.dialogOpenErr(what, t, *d, false)
		}
		stop := context.AfterFunc(t.crashed, func() { cancel(errPageCrashed) })
		defer stop()
		c := s.newCall(cctx, t)
		if err := c.run(kind, what, fn); err != nil {
			return executor.PageState{}, err
		}
		return c.state(), nil
	})
}

// state reads the tab's URL (local) and title and drains its dialogs. The
// title costs one bounded round trip, skipped when the primitive already
// read it, or when the call stayed on the same URL and the title is known
// (a click or a read seldom renames the page; a navigation always re-reads).
func (c *call) state() executor.PageState {
	st := executor.PageState{TabID: c.s.ids.Stamp(c.t.raw), URL: c.page.URL()}
	switch known := c.t.lastTitle(); {
	case c.title != nil:
		st.Title = c.t.seenTitle(*c.title)
	case st.URL == c.fromURL && known != "", c.t.dialog() != nil:
		// (a page that waits on a dialog answers nothing)
		st.Title = known
	default:
		st.Title = c.t.seenTitle(boundedTitle(c.ctx, c.page))
	}
	st.Dialogs = c.t.drainDialogs()
	return st
}

// boundedTitle reads a page's title, giving up after titleTimeout: the
// title is a nicety, never a reason for a call to hang or fail.
func boundedTitle(ctx context.Context, p playwright.Page) string {
	ch := make(chan string, 1)
	go func() {
		t, _ := p.Title()
		ch <- t
	}()
	timer := time.NewTimer(titleTimeout)
	defer timer.Stop()
	select {
	case t := <-ch:
		return t
	case <-timer.C:
	case <-ctx.Done():
	}
	return ""
}

// resolve turns a selector target into a Locator. A ref has no Locator:
// its element lives in the isolated world's registry, and every primitive
// acts on it there and with trusted input at its point (refs.go), before
// it would call resolve.
func (c *call) resolve(t executor.Target) (playwright.Locator, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if t.Ref != "" {
		return nil, executor.Errorf(executor.CodeInternal, "a ref reached the selector path")
	}
	return c.page.Locator(t.Selector).First(), nil
}

// locate resolves a selector target and checks, before anything is read
// from or done to the element, that it is in the tab's main frame: the
// policy decided the call on the main frame's document, and a Playwright
// selector can step into a frame (internal:control=enter-frame, what
// frameLocator builds). Target.Validate refuses that step by name; this
// check holds whatever the spelling, on the element Playwright itself
// resolved: its owner frame is the driver's record of the execution
// context the element lives in, which no page script can change. The
// frames a selector walks through are fixed by its text, so the element
// the action then resolves again is in the same frame.
func (c *call) locate(t executor.Target, what string) (playwright.Locator, error) {
	loc, err := c.resolve(t)
	if err != nil {
		return nil, err
	}
	return loc, c.inMainFrame(loc, t, what)
}

// mayEnterFrame reports whether Playwright could resolve sel in another
// frame: only a chain can, since its parser steps into a frame only
// between the parts of a chain (or of a nested selector's chain), and
// both are written with ">>". A selector without it — nearly every one —
// skips the check and its round trips.
func mayEnterFrame(sel string) bool { return strings.Contains(sel, ">>") }

// inMainFrame waits (until the call's deadline) for loc's element and
// fails with BAD_ARGS when it is not in the main frame; see locate.
func (c *call) inMainFrame(loc playwright.Locator, t executor.Target, what string) error {
	if !mayEnterFrame(t.Selector) {
		return nil
	}
	h, err := loc.ElementHandle(playwright.LocatorElementHandleOptions{Timeout: c.to()})
	if err != nil {
		return c.targetErr(loc, t, what, err)
	}
	// The handle only pins the element in the page until the next
	// navigation; letting it go need not hold up the call.
	defer func() { go func() { _ = h.Dispose() }() }()
	f, err := h.OwnerFrame()
	if err != nil {
		return c.s.mapErr(what, err)
	}
	if f != c.page.MainFrame() {
		return executor.Errorf(executor.CodeBadArgs, "%s: selectors cannot enter frames; %s matched an element inside a frame", what, t).
			WithHint("act on the page's own elements; for a same-origin frame take a snapshot and use its refs")
	}
	return nil
}

// targetErr explains a failed action on a target. A Playwright timeout
// means either that nothing matched (SELECTOR_NOT_FOUND) or that the
// element never became actionable (TIMEOUT, with Playwright's last word on
// why); one Count round trip tells which.
func (c *call) targetErr(loc playwright.Locator, t executor.Target, what string, err error) error {
	if err == nil {
		return nil
	}
	var xe *executor.Error
	if errors.As(err, &xe) {
		return xe
	}
	if errors.Is(err, playwright.ErrTimeout) && !c.s.isDone() {
		waited := time.Since(c.start).Round(time.Millisecond)
		found, known := resolvedInLog(err)
		if !known {
			// No call log to read: ask the page.
			n, cerr := loc.Count()
			found, known = n > 0, cerr == nil
		}
		if known && !found {
			return c.notFound(what, t, err)
		}
		if known {
			msg := fmt.Sprintf("%s: the element matching %s did not become actionable within %s", what, t, waited)
			line := whyNotActionable(err)
			if why := notActionable(line); why != "" {
				msg += " (" + why + ")"
			}
			return executor.Errorf(executor.CodeTimeout, "%s", msg).
				WithHint("it may be hidden, disabled or covered; scroll to it, close what covers it, or wait_for it").
				WithPage(line).Wrap(err)
		}
	}
	return c.s.mapErr(what, err)
}

func (c *call) notFound(what string, t executor.Target, err error) error {
	return executor.Errorf(executor.CodeSelectorNotFound, "%s: nothing matches %s (waited %s)",
		what, t, time.Since(c.start).Round(time.Millisecond)).
		WithHint("check the selector, or wait_for it to appear first").Wrap(err)
}

// resolvedInLog reads Playwright's call log: an action that found its
// element logs "locator resolved to <...>". known is false without a log.
func resolvedInLog(err error) (found, known bool) {
	s := err.Error()
	i := strings.Index(s, "Call log:")
	if i < 0 {
		return false, false
	}
	return strings.Contains(s[i:], "resolved to"), true
}

// mapErr turns a playwright-go error into an *executor.Error.
func (s *Session) mapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var xe *executor.Error
	if errors.As(err, &xe) {
		return xe
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return executor.AsError(err)
	}
	if connectionGone(err) {
		s.in.markDead("the Playwright driver went away")
	}
	if s.isDone() {
		return s.goneErr(what).Wrap(err)
	}
	msg := firstLine(err)
	switch {
	case errors.Is(err, playwright.ErrTimeout):
		return executor.Errorf(executor.CodeTimeout, "%s timed out: %s", what, msg).Wrap(err)
	case errors.Is(err, playwright.ErrTargetClosed):
		if s.in.browser != nil && !s.in.browser.IsConnected() {
			s.in.markDead("the browser disconnected")
			return s.goneErr(what).Wrap(err)
		}
		return executor.Errorf(executor.CodeTabNotFound, "%s failed: the tab was closed", what).
			WithHint("call tabs_list to see the open tabs").Wrap(err)
	case isSelectorError(msg):
		return executor.Errorf(executor.CodeBadArgs, "%s: invalid selector: %s", what, msg).
			WithHint("use a CSS selector, or a Playwright selector such as text=Sign in or role=button[name=\"OK\"]").Wrap(err)
	}
	return executor.Errorf(executor.CodeBadArgs, "%s failed: %s", what, msg).
		WithHint("check the target and the state of the page, then retry").Wrap(err)
}

// connectionGone recognises playwright-go's errors for a dead driver.
func connectionGone(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Connection closed") || strings.Contains(s, "could not read protocol") ||
		strings.Contains(s, "could not send message") || strings.Contains(s, "transport closed")
}

func isSelectorError(msg string) bool {
	for _, m := range []string{"while parsing", "is not a valid selector", "Unknown engine", "Unexpected token", "Invalid selector", "Unsupported token", "Malformed selector"} {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// notActionable says in the server's words what a line of Playwright's
// call log reports. The line itself quotes the page's markup ("<div
// id=…>…</div> intercepts pointer events"): it is shown fenced, never in
// the message.
func notActionable(line string) string {
	switch {
	case line == "":
		return ""
	case strings.Contains(line, "intercepts pointer events"):
		return "another element is on top of it"
	case strings.Contains(line, "not visible"):
		return "it is not visible"
	case strings.Contains(line, "not enabled"), strings.Contains(line, "disabled"):
		return "it is disabled"
	case strings.Contains(line, "not stable"):
		return "it is moving"
	case strings.Contains(line, "outside of the viewport"):
		return "it is outside the viewport"
	}
	return "see the browser's log line below"
}

// whyNotActionable picks from Playwright's call log the last line that
// says what stood in the way ("element is not visible", "<div> intercepts
// pointer events"), else the last line.
func whyNotActionable(err error) string {
	s := err.Error()
	i := strings.Index(s, "Call log:")
	if i < 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(s[i+len("Call log:"):]), "\n")
	pick := ""
	for j := len(lines) - 1; j >= 0 && pick == ""; j-- {
		l := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[j]), "- "))
		if strings.Contains(l, "element is") || strings.Contains(l, "intercepts pointer events") || strings.Contains(l, "not stable") {
			pick = l
		}
	}
	if pick == "" {
		pick = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[len(lines)-1]), "- "))
	}
	if len(pick) > 200 {
		pick = pick[:200] + "…"
	}
	return pick
}

// checkURL accepts an absolute URL (policy decides which schemes and hosts
// are allowed, before the call reaches here).
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || (u.Opaque == "" && u.Host == "" && u.Scheme != "about" && u.Scheme != "file" && u.Path == "") {
		return executor.Errorf(executor.CodeBadArgs, "%q is not an absolute URL", raw).
			WithHint("pass a full URL such as https://example.com/")
	}
	return nil
}

func badWaitUntil(w executor.WaitUntil) error {
	return executor.Errorf(executor.CodeBadArgs, "waitUntil %q is not one of load, domcontentloaded, networkidle", w)
}
