package cdp

import (
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// Refs name elements in the registry of chromegate's isolated world (see
// executor.ElementScript). Playwright has no handle for an element found
// there, so an action on a ref works the way the extension backend does:
// the isolated world checks the element and says where it is, and the
// action is trusted input at that point. That is also faster than a
// Locator action, whose checks take several round trips.

// refOp runs one operation of the element script on ref and decodes its
// result into out. A failure the script reports becomes the contract's
// error.
func (c *call) refOp(what, ref, op string, extra map[string]any, out any) error {
	if !executor.ValidRef(ref) {
		return executor.RefError(ref, "malformed", "")
	}
	arg := map[string]any{"op": op, "ref": ref}
	for k, v := range extra {
		arg[k] = v
	}
	raw, err := c.runRef(ref, executor.ElementScript, arg)
	if err != nil {
		return err
	}
	var fail struct {
		Error string `json:"error"`
		Why   string `json:"why"`
		Page  string `json:"page"` // the page's markup that explains it: shown fenced
	}
	_ = json.Unmarshal(raw, &fail)
	switch fail.Error {
	case "":
	case "timeout":
		return executor.Errorf(executor.CodeTimeout, "%s: the element of ref %s did not become actionable within %s (%s)",
			what, ref, time.Since(c.start).Round(time.Millisecond), fail.Why).
			WithHint("it may be hidden, disabled or covered; scroll to it, close what covers it, or wait_for it").WithPage(fail.Page)
	case "notfillable", "notselect":
		return executor.Errorf(executor.CodeBadArgs, "%s on ref %s: %s", what, ref, fail.Why).WithPage(fail.Page)
	case "expired":
		if fail.Why == "navigated" && !issuedToken(strings.TrimRight(ref, "0123456789")) {
			return executor.RefError(ref, "unknown", "")
		}
		return executor.RefError(ref, fail.Error, fail.Why)
	case "malformed", "unknown":
		return executor.RefError(ref, fail.Error, fail.Why)
	default:
		return executor.Errorf(executor.CodeInternal, "%s on ref %s: the element script failed: %s %s", what, ref, fail.Error, fail.Why)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return executor.Errorf(executor.CodeInternal, "%s on ref %s: unexpected result %s", what, ref, raw)
	}
	return nil
}

type point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// refPoint waits (in the page, until the call's deadline) until the ref's
// element can take a click or a hover, and returns where.
func (c *call) refPoint(what, ref string, click bool) (point, error) {
	var p point
	left := time.Duration(c.timeout)*time.Millisecond - time.Since(c.start)
	err := c.refOp(what, ref, "point", map[string]any{"button": click, "timeoutMs": max(left.Milliseconds(), 1)}, &p)
	if err != nil {
		return p, err
	}
	if fd := c.t.fd.get(executor.RefToken(ref)); fd != nil {
		// A point of a frame's viewport, brought to the page's through
		// each frame element, each of which must be where the point is
		// (a page around the frame that covers it gets nothing).
		p, _, err = c.toPage(fd, p.X, p.Y, true, true)
		// The browser routes input into another renderer's frame by what
		// was last drawn: right after a load (or a frame's move) it may
		// still send the pointer to the page around the frame, on the
		// headless shell 3 first hovers in 40 (TestFrameRefsEveryTool).
		// Two frames of the top document drawn first (about 30 ms); a
		// frame of the page's own renderer is hit-tested by it, and needs
		// no wait.
		if err == nil && c.otherRenderer(fd) {
			_, err = c.runValue(executor.PointScript, map[string]any{"op": "drawn"})
		}
	}
	return p, err
}

// otherRenderer says whether fd's document is in another renderer process
// than the page's (an out-of-process frame, or a frame inside one).
func (c *call) otherRenderer(fd *frameDoc) bool {
	_, main, err := c.t.w.context(c)
	return err != nil || fd.sess != main
}

// refClick clicks the ref's element with trusted mouse events.
func (c *call) refClick(ref string, button *playwright.MouseButton, count int) error {
	p, err := c.refPoint("click", ref, true)
	if err != nil {
		return err
	}
	opts := playwright.MouseClickOptions{Button: button}
	if count > 1 {
		opts.ClickCount = playwright.Int(count)
	}
	return c.page.Mouse().Click(p.X, p.Y, opts)
}

// refFocusField focuses the ref's element for keys, failing (BAD_ARGS)
// when it is a disabled field, or a read-only one and the keys would type
// (text); see fieldCheck.
func (c *call) refFocusField(what, ref string, text bool) error {
	edit := "key"
	if text {
		edit = "text"
	}
	return c.refOp(what, ref, "focus", map[string]any{"edit": edit}, nil)
}

// refFill replaces the element's value: set directly for inputs whose
// value is not typed (dates, colours, ranges), else inserted over the
// selected content as one trusted input event, as Playwright's fill does.
func (c *call) refFill(what, ref, value string) error {
	var r struct {
		Done   bool `json:"done"`
		Insert bool `json:"insert"`
	}
	if err := c.refOp(what, ref, "fill", map[string]any{"value": value}, &r); err != nil {
		return err
	}
	if r.Done {
		return nil
	}
	if value == "" {
		return c.page.Keyboard().Press("Delete")
	}
	return c.page.Keyboard().InsertText(value)
}

// refText reads the element's innerText, or its inner or outer HTML.
func (c *call) refText(what, ref, op string, outer bool) (string, error) {
	var r struct {
		Text string `json:"text"`
	}
	err := c.refOp(what, ref, op, map[string]any{"outer": outer}, &r)
	return r.Text, err
}

// refSelect chooses options of the ref's <select> and reports the values
// now selected.
func (c *call) refSelect(ref string, values []string) ([]string, error) {
	var r struct {
		Selected []string `json:"selected"`
		Missing  []string `json:"missing"`
	}
	var raw map[string]any
	if err := c.refOp("select_option", ref, "select", map[string]any{"values": values}, &raw); err != nil {
		return nil, err
	}
	if err := selectCheck(raw); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(raw)
	_ = json.Unmarshal(b, &r)
	if r.Selected == nil {
		r.Selected = []string{}
	}
	return r.Selected, nil
}

// refSetFiles sets the files of the ref's <input type=file> through the
// protocol, which needs the element itself: the isolated world hands it
// over as a remote object, never through the page.
func (c *call) refSetFiles(ref string, paths []string) error {
	if !executor.ValidRef(ref) {
		return executor.RefError(ref, "malformed", "")
	}
	arg := map[string]any{"op": "element", "ref": ref}
	r, err := c.inRef(ref, scriptFunction(executor.ElementScript), false, arg)
	if err != nil {
		return err
	}
	objectID, _ := r["objectId"].(string)
	if r["subtype"] != "node" || objectID == "" {
		// Not an element: the script's {error, why}.
		return c.refOp("set_files", ref, "state", nil, nil)
	}
	sess, err := c.sessionOf(ref)
	if err != nil {
		return err
	}
	defer func() { _, _ = sess.Send("Runtime.releaseObject", map[string]any{"objectId": objectID}) }()
	if paths == nil {
		paths = []string{}
	}
	_, err = sess.Send("DOM.setFileInputFiles", map[string]any{"files": paths, "objectId": objectID})
	if err != nil {
		return executor.Errorf(executor.CodeBadArgs, "set_files on ref %s: %s", ref, firstLine(err)).
			WithHint("the ref must name an <input type=file>").Wrap(err)
	}
	return nil
}

// refRect scrolls the ref's element into view and returns its box in the
// viewport.
func (c *call) refRect(what, ref string) (playwright.Rect, error) {
	var r struct {
		X, Y, Width, Height float64
	}
	if err := c.refOp(what, ref, "rect", nil, &r); err != nil {
		return playwright.Rect{}, err
	}
	if fd := c.t.fd.get(executor.RefToken(ref)); fd != nil {
		p, _, err := c.toPage(fd, r.X, r.Y, false, true)
		if err != nil {
			return playwright.Rect{}, err
		}
		r.X, r.Y = p.X, p.Y
	}
	if r.Width <= 0 || r.Height <= 0 {
		return playwright.Rect{}, executor.Errorf(executor.CodeTimeout, "%s: the element of ref %s has no size (it is not visible)", what, ref).
			WithHint("wait_for it to be visible, or take a new snapshot")
	}
	return playwright.Rect{X: math.Floor(r.X), Y: math.Floor(r.Y), Width: math.Ceil(r.Width), Height: math.Ceil(r.Height)}, nil
}

// refState reports whether the ref's element is still in the page, and
// visible. A ref of an earlier document is an error, not "gone".
func (c *call) refState(ref string) (attached, visible bool, err error) {
	var r struct {
		Attached bool `json:"attached"`
		Visible  bool `json:"visible"`
	}
	err = c.refOp("wait_for", ref, "state", nil, &r)
	return r.Attached, r.Visible, err
}

// targetPoint is where a drag end is: the ref's element when the target
// is a ref, else the centre of the selector's element after scrolling it
// into view.
func (c *call) targetPoint(what string, t executor.Target) (point, error) {
	if t.Ref != "" {
		return c.refPoint(what, t.Ref, false)
	}
	loc, err := c.locate(t, what)
	if err != nil {
		return point{}, err
	}
	if err := loc.ScrollIntoViewIfNeeded(playwright.LocatorScrollIntoViewIfNeededOptions{Timeout: c.to()}); err != nil {
		return point{}, c.targetErr(loc, t, what, err)
	}
	box, err := loc.BoundingBox(playwright.LocatorBoundingBoxOptions{Timeout: c.to()})
	if err != nil {
		return point{}, c.targetErr(loc, t, what, err)
	}
	if box == nil {
		return point{}, executor.Errorf(executor.CodeTimeout, "%s: the element matching %s is not visible", what, t)
	}
	return point{box.X + box.Width/2, box.Y + box.Height/2}, nil
}

// dragPoints drags with trusted mouse events from one point to another,
// in steps, so the page sees the moves a hand makes (and Chromium starts
// an HTML drag).
func (c *call) dragPoints(from, to point) error {
	m := c.page.Mouse()
	if err := m.Move(from.X, from.Y); err != nil {
		return err
	}
	if err := m.Down(); err != nil {
		return err
	}
	if err := m.Move(from.X+5, from.Y+5, playwright.MouseMoveOptions{Steps: playwright.Int(2)}); err != nil {
		return err
	}
	if err := m.Move(to.X, to.Y, playwright.MouseMoveOptions{Steps: playwright.Int(5)}); err != nil {
		return err
	}
	return m.Up()
}
