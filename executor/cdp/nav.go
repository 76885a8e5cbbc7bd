package cdp

import (
	"context"
	"errors"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

func waitState(w executor.WaitUntil) *playwright.WaitUntilState {
	switch w {
	case executor.WaitDOMContentLoaded:
		return playwright.WaitUntilStateDomcontentloaded
	case executor.WaitNetworkIdle:
		return playwright.WaitUntilStateNetworkidle
	}
	return playwright.WaitUntilStateLoad
}

func milestone(w executor.WaitUntil) string {
	if w == "" {
		return string(executor.WaitLoad)
	}
	return string(w)
}

// navErr explains a failed navigation: a timeout is TIMEOUT (the page may
// still be usable), a network error (net::ERR_*) or an invalid URL is
// BAD_ARGS, since the model chose the URL.
func (c *call) navErr(what, target string, w executor.WaitUntil, err error) error {
	if err == nil {
		return nil
	}
	if c.s.isDone() || connectionGone(err) {
		return c.s.mapErr(what, err)
	}
	msg := firstLine(err)
	if errors.Is(err, playwright.ErrTimeout) {
		return executor.Errorf(executor.CodeTimeout, "%s %s did not reach %q in time", what, target, milestone(w)).
			WithHint("the page may be usable anyway: try get_text or wait_for; or retry with waitUntil domcontentloaded").Wrap(err)
	}
	if errors.Is(err, playwright.ErrTargetClosed) {
		return c.s.mapErr(what, err)
	}
	if i := strings.Index(msg, "net::ERR_"); i >= 0 {
		code := msg[i:]
		if j := strings.IndexAny(code, " \t"); j >= 0 {
			code = code[:j]
		}
		return executor.Errorf(executor.CodeBadArgs, "%s %s failed: %s", what, target, code).
			WithHint("check the URL; is the server up?").Wrap(err)
	}
	if strings.Contains(msg, "Download is starting") {
		return executor.Errorf(executor.CodeBadArgs, "%s %s started a download instead of loading a page", what, target).
			WithHint("use download_file with this URL").Wrap(err)
	}
	return executor.Errorf(executor.CodeBadArgs, "%s %s failed: %s", what, target, msg).
		WithHint("check the URL").Wrap(err)
}

// gotoURL navigates the call's tab and returns the main response's status.
func (c *call) gotoURL(u string, w executor.WaitUntil) (int, error) {
	resp, err := c.page.Goto(u, playwright.PageGotoOptions{WaitUntil: waitState(w), Timeout: c.to()})
	if err != nil {
		return 0, c.navErr("navigation to", u, w, err)
	}
	if resp == nil {
		return 0, nil
	}
	return resp.Status(), nil
}

// Navigate loads a URL and waits for the milestone (load by default).
func (s *Session) Navigate(ctx context.Context, p executor.NavigateParams) (executor.NavResult, error) {
	if !p.WaitUntil.Valid() {
		return executor.NavResult{}, badWaitUntil(p.WaitUntil)
	}
	if err := checkURL(p.URL); err != nil {
		return executor.NavResult{}, err
	}
	var status int
	kind := actCall
	if p.LeaveDialog {
		kind = answerCall
	}
	st, err := s.onTabAs(ctx, p.TabID, "navigate", kind, func(c *call) error {
		c.fromURL = "" // a navigation always re-reads the title
		if p.LeaveDialog {
			return c.leave(func() (err error) {
				status, err = c.gotoURL(p.URL, p.WaitUntil)
				return err
			})
		}
		var err error
		status, err = c.gotoURL(p.URL, p.WaitUntil)
		return err
	})
	if err != nil {
		return executor.NavResult{}, err
	}
	return executor.NavResult{PageState: st, Status: status}, nil
}

// history runs back, forward or reload. With no history in that direction
// the result is the current page, not an error.
func (s *Session) history(ctx context.Context, what string, p executor.HistoryParams,
	fn func(c *call) (playwright.Response, error)) (executor.NavResult, error) {
	if !p.WaitUntil.Valid() {
		return executor.NavResult{}, badWaitUntil(p.WaitUntil)
	}
	var status int
	st, err := s.onAction(ctx, p.TabID, what, func(c *call) error {
		c.fromURL = "" // a navigation always re-reads the title
		resp, err := fn(c)
		if err != nil {
			return c.navErr(what, "of "+c.page.URL(), p.WaitUntil, err)
		}
		if resp != nil {
			status = resp.Status()
		}
		return nil
	})
	if err != nil {
		return executor.NavResult{}, err
	}
	return executor.NavResult{PageState: st, Status: status}, nil
}

// Back goes one step back in the tab's history.
func (s *Session) Back(ctx context.Context, p executor.HistoryParams) (executor.NavResult, error) {
	return s.history(ctx, "back", p, func(c *call) (playwright.Response, error) {
		resp, err := c.page.GoBack(playwright.PageGoBackOptions{WaitUntil: playwright.WaitUntilStateCommit, Timeout: c.to()})
		if err != nil {
			return nil, err
		}
		return resp, c.historyMilestone(p.WaitUntil)
	})
}

// Forward goes one step forward in the tab's history.
func (s *Session) Forward(ctx context.Context, p executor.HistoryParams) (executor.NavResult, error) {
	return s.history(ctx, "forward", p, func(c *call) (playwright.Response, error) {
		resp, err := c.page.GoForward(playwright.PageGoForwardOptions{WaitUntil: playwright.WaitUntilStateCommit, Timeout: c.to()})
		if err != nil {
			return nil, err
		}
		return resp, c.historyMilestone(p.WaitUntil)
	})
}

// historyMilestone waits, after a history step committed, for the
// document to reach the milestone. A page restored from the back/forward
// cache (on in a browser chromegate only attached to) fires no new load
// event, so the document's own readyState is asked instead of waiting for
// one.
func (c *call) historyMilestone(w executor.WaitUntil) error {
	cond := "document.readyState === 'complete'"
	switch w {
	case executor.WaitDOMContentLoaded:
		cond = "document.readyState !== 'loading'"
	case executor.WaitNetworkIdle:
		return c.page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateNetworkidle, Timeout: c.to()})
	}
	_, err := c.page.WaitForFunction(cond, nil, playwright.PageWaitForFunctionOptions{Polling: playwright.Float(50), Timeout: c.to()})
	return err
}

// Reload reloads the tab.
func (s *Session) Reload(ctx context.Context, p executor.HistoryParams) (executor.NavResult, error) {
	return s.history(ctx, "reload", p, func(c *call) (playwright.Response, error) {
		return c.page.Reload(playwright.PageReloadOptions{WaitUntil: waitState(p.WaitUntil), Timeout: c.to()})
	})
}
