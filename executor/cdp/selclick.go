package cdp

import (
	"encoding/json"
	"os"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// A click on a plain CSS selector takes a ref's path: the isolated world
// finds the element (executor.SelectorPointScript), checks it as it checks
// a ref's (attached, visible, enabled, still, topmost at its point) and
// says where; the click is trusted mouse input there, watched by the same
// world (element.js's guard), which stops a press that lands on anything
// but the element and says so, and the click is tried again. That is
// Playwright's actionability and hit-target check in two round trips
// instead of a Locator's several and its animation-frame waits. Any other
// selector, or one that matches nothing in the light DOM yet, takes the
// Locator.

// locatorClicks turns the path off (CHROMEGATE_SELECTOR_CLICK=locator):
// every selector click through the Locator, to measure one against the
// other in the same run.
var locatorClicks = os.Getenv("CHROMEGATE_SELECTOR_CLICK") == "locator"

// selectorClick clicks the element of the selector target t as refClick
// clicks a ref's. handled is false when the Locator must do it (see
// above); nothing has been done to the page then.
func (c *call) selectorClick(t executor.Target, button *playwright.MouseButton, count int) (handled bool, err error) {
	if locatorClicks || !executor.FastSelector(t.Selector) {
		return false, nil
	}
	for {
		left := time.Duration(c.timeout)*time.Millisecond - time.Since(c.start)
		raw, err := c.runValue(executor.SelectorPointScript, map[string]any{
			"selector": t.Selector, "button": true, "guard": true, "timeoutMs": max(left.Milliseconds(), 1),
		})
		if err != nil {
			return true, err
		}
		var r struct {
			X, Y     *float64
			Ref      string
			Fallback string
			Error    string
			Why      string
			Page     string
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return true, executor.Errorf(executor.CodeInternal, "click on %s: unexpected result %s", t, raw)
		}
		switch {
		case r.Fallback != "":
			return false, nil
		case r.Error == "timeout":
			return true, c.notActionableErr(t, r.Why, r.Page)
		case r.Error != "" || r.X == nil || r.Y == nil:
			return true, executor.Errorf(executor.CodeInternal, "click on %s: the element script failed: %s %s", t, r.Error, r.Why)
		}
		opts := playwright.MouseClickOptions{Button: button}
		if count > 1 {
			opts.ClickCount = playwright.Int(count)
		}
		if err := c.page.Mouse().Click(*r.X, *r.Y, opts); err != nil {
			return true, err
		}
		// (A dialog the click opened holds the page, and this read with
		// it: the call has returned with the dialog in its state, see
		// call.run, and its context is done when the read returns.)
		missed, page := c.clickMissed()
		if !missed || c.ctx.Err() != nil {
			return true, nil
		}
		if time.Since(c.start) >= time.Duration(c.timeout)*time.Millisecond {
			return true, c.notActionableErr(t, "another element received the click at the element's point", page)
		}
		// As Playwright does: the press reached nothing of the page;
		// check and click again.
		select {
		case <-c.ctx.Done():
			return true, c.ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// clickMissed reports whether the guarded click just sent pressed on
// something other than the element (so it was stopped), and what. A
// document that went away with the click (it navigated) took its guard
// along: the click landed.
func (c *call) clickMissed() (bool, string) {
	raw, err := c.runValue(executor.GuardedScript, nil)
	if err != nil {
		return false, ""
	}
	var g struct {
		Verdict string `json:"verdict"`
		Page    string `json:"page"`
	}
	_ = json.Unmarshal(raw, &g)
	return g.Verdict == "missed", g.Page
}

// notActionableErr is the TIMEOUT of a selector's element that did not
// become actionable in time, worded as targetErr words the Locator's.
func (c *call) notActionableErr(t executor.Target, why, page string) error {
	msg := "click: the element matching " + t.String() + " did not become actionable within " + time.Since(c.start).Round(time.Millisecond).String()
	if why != "" {
		msg += " (" + why + ")"
	}
	return executor.Errorf(executor.CodeTimeout, "%s", msg).
		WithHint("it may be hidden, disabled or covered; scroll to it, close what covers it, or wait_for it").WithPage(page)
}
