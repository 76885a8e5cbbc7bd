package cdp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of JPEG screenshots
	_ "image/png"  // DecodeConfig of PNG screenshots
	"math"
	"math/big"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/internal/devtools"
	"github.com/playwright-community/playwright-go"
)

// Text reads the visible text (innerText) of the target, or of the page.
func (s *Session) Text(ctx context.Context, p executor.TextParams) (executor.TextResult, error) {
	var text string
	st, err := s.onTab(ctx, p.TabID, "get_text", func(c *call) error {
		if p.Target.IsZero() {
			v, err := c.page.Evaluate(executor.TextScript)
			if err != nil {
				return err
			}
			pair, _ := v.([]any)
			if len(pair) == 2 {
				text, _ = pair[0].(string)
				title, _ := pair[1].(string)
				c.title = &title
			}
			return nil
		}
		if p.Target.Ref != "" {
			var err error
			text, err = c.refText("get_text", p.Target.Ref, "text", false)
			return err
		}
		loc, err := c.locate(p.Target, "get_text")
		if err != nil {
			return err
		}
		text, err = loc.InnerText(playwright.LocatorInnerTextOptions{Timeout: c.to()})
		return c.targetErr(loc, p.Target, "get_text", err)
	})
	if err != nil {
		return executor.TextResult{}, err
	}
	return executor.TextResult{PageState: st, Text: text}, nil
}

// HTML reads the target's inner (or outer) HTML, or the whole document.
func (s *Session) HTML(ctx context.Context, p executor.HTMLParams) (executor.TextResult, error) {
	var html string
	st, err := s.onTab(ctx, p.TabID, "get_html", func(c *call) error {
		if p.Target.IsZero() {
			var err error
			html, err = c.page.Content()
			return err
		}
		if p.Target.Ref != "" {
			var err error
			html, err = c.refText("get_html", p.Target.Ref, "html", p.Outer)
			return err
		}
		loc, err := c.locate(p.Target, "get_html")
		if err != nil {
			return err
		}
		if p.Outer {
			var v any
			v, err = loc.Evaluate("el => el.outerHTML", nil, playwright.LocatorEvaluateOptions{Timeout: c.to()})
			html, _ = v.(string)
		} else {
			html, err = loc.InnerHTML(playwright.LocatorInnerHTMLOptions{Timeout: c.to()})
		}
		return c.targetErr(loc, p.Target, "get_html", err)
	})
	if err != nil {
		return executor.TextResult{}, err
	}
	return executor.TextResult{PageState: st, Text: html}, nil
}

// Screenshot captures the viewport, an element, or the full page cut at the
// height cap (Truncated and FullHeight then say so).
func (s *Session) Screenshot(ctx context.Context, p executor.ScreenshotParams) (executor.Screenshot, error) {
	typ, mimeType := playwright.ScreenshotTypePng, "image/png"
	var quality *int
	switch strings.ToLower(string(p.Format)) {
	case "", "png":
	case "jpeg", "jpg":
		typ, mimeType = playwright.ScreenshotTypeJpeg, "image/jpeg"
		q := p.Quality
		if q == 0 {
			q = 80
		}
		if q < 1 || q > 100 {
			return executor.Screenshot{}, executor.Errorf(executor.CodeBadArgs, "quality %d is not between 1 and 100", p.Quality)
		}
		quality = &q
	default:
		return executor.Screenshot{}, executor.Errorf(executor.CodeBadArgs, "format %q is not png or jpeg", p.Format)
	}
	hasTarget := !p.Target.IsZero()
	if hasTarget {
		if err := p.Target.Validate(); err != nil {
			return executor.Screenshot{}, err
		}
		if p.FullPage {
			return executor.Screenshot{}, executor.Errorf(executor.CodeBadArgs, "fullPage and target exclude each other").
				WithHint("pass a target for one element, or fullPage for the whole page")
		}
	}
	if p.MaxHeight < 0 {
		return executor.Screenshot{}, executor.Errorf(executor.CodeBadArgs, "maxHeight must not be negative")
	}
	limit := p.MaxHeight
	if limit == 0 {
		limit = s.b.opts.MaxScreenshotHeight
	}
	var (
		data       []byte
		truncated  bool
		fullHeight int
	)
	st, err := s.onTab(ctx, p.TabID, "screenshot", func(c *call) error {
		var err error
		switch {
		case hasTarget && p.Target.Ref != "":
			clip, rerr := c.refRect("screenshot", p.Target.Ref)
			if rerr != nil {
				return rerr
			}
			if err := c.elementPixels(clip.Width, clip.Height); err != nil {
				return err
			}
			data, err = c.page.Screenshot(playwright.PageScreenshotOptions{Clip: &clip, Type: typ, Quality: quality, Timeout: c.to()})
			return err
		case hasTarget:
			loc, rerr := c.locate(p.Target, "screenshot")
			if rerr != nil {
				return rerr
			}
			if box, berr := loc.BoundingBox(playwright.LocatorBoundingBoxOptions{Timeout: c.to()}); berr == nil && box != nil {
				if err := c.elementPixels(box.Width, box.Height); err != nil {
					return err
				}
			}
			data, err = loc.Screenshot(playwright.LocatorScreenshotOptions{Type: typ, Quality: quality, Timeout: c.to()})
			return c.targetErr(loc, p.Target, "screenshot", err)
		case p.FullPage:
			v, err := c.page.Evaluate(executor.DimsScript)
			if err != nil {
				return err
			}
			dims, _ := v.([]any)
			opts := playwright.PageScreenshotOptions{FullPage: playwright.Bool(true), Type: typ, Quality: quality, Timeout: c.to()}
			w, h := s.b.opts.ViewportWidth, limit
			if len(dims) >= 2 {
				w, h = toInt(dims[0]), toInt(dims[1])
			}
			// The page says its size, and may lie: the capture is always
			// clipped, to at most the pixel cap (executor.FullPageClip).
			cw, ch := executor.FullPageClip(w, h, limit, c.shotScale())
			if ch < h || cw < w {
				truncated, fullHeight = true, h
			}
			opts.Clip = &playwright.Rect{X: 0, Y: 0, Width: float64(cw), Height: float64(ch)}
			data, err = c.page.Screenshot(opts)
			return err
		default:
			var emulated bool
			if data, emulated, err = c.emulatedShot(string(*typ), quality); emulated {
				return err
			}
			data, err = c.page.Screenshot(playwright.PageScreenshotOptions{Type: typ, Quality: quality, Timeout: c.to()})
			return err
		}
	})
	if err != nil {
		return executor.Screenshot{}, err
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return executor.Screenshot{}, executor.Errorf(executor.CodeInternal, "the browser returned an image that does not decode: %v", err)
	}
	return executor.Screenshot{PageState: st, Data: data, MIMEType: mimeType, Width: cfg.Width, Height: cfg.Height,
		Truncated: truncated, FullHeight: fullHeight}, nil
}

// shotScale is the device pixels per CSS pixel of the session's captures:
// the emulated scale, else the context's (1).
func (c *call) shotScale() float64 {
	c.s.emu.mu.Lock()
	defer c.s.emu.mu.Unlock()
	if c.s.emu.cur.HasMetrics() && c.s.emu.cur.DeviceScaleFactor > 0 {
		return c.s.emu.cur.DeviceScaleFactor
	}
	return 1
}

// elementPixels refuses an element capture over executor.MaxShotPixels.
func (c *call) elementPixels(w, h float64) error {
	if n := executor.ShotPixels(w, h, c.shotScale()); n > executor.MaxShotPixels {
		return executor.TooManyPixels(fmt.Sprintf("the element's %.0fx%.0f box", w, h), n).
			WithHint("screenshot the viewport, or a smaller element")
	}
	return nil
}

func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(math.Ceil(n))
	}
	return 0
}

// promiseTimeoutMarker is in the message of the error eval.js throws when
// an awaited promise does not settle before the deadline.
const promiseTimeoutMarker = "the promise did not settle within"

// Eval evaluates an expression in the page's main world. A page exception
// is a result with OK false; the value is made JSON-safe in the page by
// executor.JSONSafeScript, as the extension's is (undefined is null, NaN
// and the infinities are the strings "NaN", "Infinity", "-Infinity",
// cycles are "[Circular]", Dates ISO strings). With p.ExpectURL it runs
// nothing on a document at another URL, and says so (ErrPageMoved).
func (s *Session) Eval(ctx context.Context, p executor.EvalParams) (executor.EvalResult, error) {
	if strings.TrimSpace(p.Expression) == "" {
		return executor.EvalResult{}, executor.Errorf(executor.CodeBadArgs, "expression is empty")
	}
	var (
		ok      bool
		value   json.RawMessage
		message string
		moved   bool
	)
	st, err := s.onTab(ctx, p.TabID, "eval", func(c *call) error {
		arg := map[string]any{"awaitPromise": p.AwaitPromise, "timeoutMs": c.timeout}
		if p.ExpectURL != "" {
			arg["expect"] = p.ExpectURL
		}
		v, err := c.evalMain(executor.EvalSource(p.Expression), arg)
		bare := false
		var thrown *pageException
		if errors.As(err, &thrown) && !thrown.parse {
			if strings.Contains(thrown.text, promiseTimeoutMarker) {
				return executor.Errorf(executor.CodeTimeout, "eval: the promise did not settle before the deadline").
					WithHint("retry with a larger timeout_ms, or evaluate without awaitPromise")
			}
			message = strings.TrimSpace(strings.TrimPrefix(thrown.text, "Error: "))
			return nil
		}
		if err != nil && (thrown != nil || isSyntaxError(err)) {
			// Statements, not an expression: evaluate them as Playwright
			// would (a promise they produce is awaited either way), then
			// make the value JSON-safe as eval.js does. Nothing ran: the
			// URL is checked on its own first.
			if p.ExpectURL != "" {
				href, herr := c.page.Evaluate("() => window.location.href")
				if herr == nil && href != p.ExpectURL {
					moved = true
					return nil
				}
			}
			bare = true
			v, err = evalBare(c.page, p.Expression)
		}
		if err != nil {
			if c.s.isDone() || connectionGone(err) || errors.Is(err, playwright.ErrTargetClosed) || errors.Is(err, playwright.ErrTimeout) {
				return err
			}
			if strings.Contains(err.Error(), promiseTimeoutMarker) {
				return executor.Errorf(executor.CodeTimeout, "eval: the promise did not settle before the deadline").
					WithHint("retry with a larger timeout_ms, or evaluate without awaitPromise")
			}
			message = pageErrorMessage(err)
			return nil
		}
		if !bare {
			m, _ := v.(map[string]any)
			if m["moved"] == true {
				moved = true
				return nil
			}
			v = m["v"]
			if t, isStr := m["t"].(string); isStr {
				c.title = &t
			}
		}
		raw, err := json.Marshal(jsonValue(v))
		if err != nil {
			return executor.Errorf(executor.CodeEvalFailed, "eval: the result is not representable as JSON: %v", err)
		}
		ok, value = true, raw
		return nil
	})
	if err != nil {
		return executor.EvalResult{}, err
	}
	if moved {
		return executor.EvalResult{}, executor.ErrPageMoved
	}
	return executor.EvalResult{PageState: st, OK: ok, Value: value, Error: message}, nil
}

// evalMain calls source, a function of one argument, with arg in the main
// world of the tab's main frame, and returns its value (by JSON). It goes
// over the tab's own CDP session as one Runtime.evaluate, without
// Playwright's argument and result serialisation: the call's value is
// JSON-safe already (eval.js). An exception the page threw is a
// *pageException. Where that session cannot serve (it cannot be made, or
// the main world's context is between documents), Playwright's evaluate
// does, which waits for the next context.
func (c *call) evalMain(source string, arg any) (any, error) {
	sess, err := c.t.w.session(c)
	if err != nil {
		return c.page.Evaluate(source, arg)
	}
	argJSON, err := json.Marshal(arg)
	if err != nil {
		return nil, err
	}
	res, err := sess.Send("Runtime.evaluate", map[string]any{
		"expression":    "(" + source + ")(" + string(argJSON) + ")",
		"returnByValue": true,
		"awaitPromise":  true,
		"userGesture":   true, // as Playwright's evaluate
	})
	switch {
	case err != nil && c.page.IsClosed():
		return nil, playwright.ErrTargetClosed
	case err != nil && noContextYet(err):
		// Nothing ran: the main world is between documents.
		return c.page.Evaluate(source, arg)
	case err != nil:
		return nil, err
	}
	m, _ := res.(map[string]any)
	if ex, ok := m["exceptionDetails"].(map[string]any); ok {
		return nil, newPageException(ex)
	}
	return devtools.Dig(m, "result", "value"), nil
}

// noContextYet recognises the protocol's answer to an evaluation that
// found no context to run in (as opposed to one destroyed under it).
func noContextYet(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find default execution context") || strings.Contains(s, "Cannot find context")
}

// pageException is an exception a page threw in an eval, as the page
// would print it (the first line). parse: the source did not compile (an
// eval of statements, not an expression); it ran nothing.
type pageException struct {
	text  string
	parse bool
}

func (e *pageException) Error() string { return e.text }

func newPageException(ex map[string]any) *pageException {
	desc, _ := devtools.Dig(ex, "exception", "description").(string)
	class, _ := devtools.Dig(ex, "exception", "className").(string)
	text := devtools.ExceptionText(ex)
	if desc == "" {
		if v, ok := devtools.Dig(ex, "exception", "value").(string); ok {
			text = v // a thrown string
		} else if v := devtools.Dig(ex, "exception", "value"); v != nil {
			text = fmt.Sprint(v)
		}
	}
	// A SyntaxError thrown while running (JSON.parse) has frames; one of
	// compiling has none.
	parse := class == "SyntaxError" && !strings.Contains(desc, "\n    at ")
	return &pageException{text: text, parse: parse}
}

// evalBare evaluates statements in the page and returns their value made
// JSON-safe by the page (executor.JSONSafeScript).
func evalBare(page playwright.Page, statements string) (any, error) {
	h, err := page.EvaluateHandle(statements)
	if err != nil {
		return nil, err
	}
	defer func() { _ = h.Dispose() }()
	return h.Evaluate(executor.JSONSafeScript)
}

func isSyntaxError(err error) bool {
	var pe *playwright.Error
	if errors.As(err, &pe) && pe.Name == "SyntaxError" {
		return true
	}
	return strings.HasPrefix(firstLine(err), "SyntaxError")
}

// pageErrorMessage is the exception as the page would print it, without
// Playwright's prefixes and call log; a plain Error's "Error: " prefix is
// dropped, as the extension drops it (a TypeError keeps its name).
func pageErrorMessage(err error) string {
	msg := firstLine(err)
	var pe *playwright.Error
	if errors.As(err, &pe) {
		msg = pe.Message
		if i := strings.Index(msg, "\n"); i >= 0 {
			msg = msg[:i]
		}
		if pe.Name != "" && pe.Name != "Error" && !strings.HasPrefix(msg, pe.Name) {
			msg = pe.Name + ": " + msg
		}
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(msg), "Error: "))
}

// jsonValue turns what playwright-go decoded into something json.Marshal
// accepts and a model can read.
func jsonValue(v any) any {
	budget := 100_000
	return toJSONValue(v, map[uintptr]bool{}, &budget)
}

func toJSONValue(v any, path map[uintptr]bool, budget *int) any {
	*budget--
	if *budget < 0 {
		return "[truncated]"
	}
	switch x := v.(type) {
	case nil, bool, string, int:
		return x
	case float64:
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "Infinity"
		case math.IsInf(x, -1):
			return "-Infinity"
		}
		return x
	case []any:
		id := reflect.ValueOf(x).Pointer()
		if len(x) > 0 && path[id] {
			return "[Circular]"
		}
		if len(x) > 0 {
			path[id] = true
			defer delete(path, id)
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toJSONValue(e, path, budget)
		}
		return out
	case map[string]any:
		id := reflect.ValueOf(x).Pointer()
		if path[id] {
			return "[Circular]"
		}
		path[id] = true
		defer delete(path, id)
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = toJSONValue(e, path, budget)
		}
		return out
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case *url.URL:
		return x.String()
	case *big.Int:
		return json.Number(x.String())
	case *regexp.Regexp:
		return "/" + x.String() + "/"
	case error:
		return x.Error()
	}
	return fmt.Sprint(v)
}

// WaitFor polls (every 100 ms, never waiting on a lifecycle event that may
// already have fired) until the target is attached (or visible), or gone,
// or the text is in the page (or gone from it).
func (s *Session) WaitFor(ctx context.Context, p executor.WaitParams) (executor.WaitResult, error) {
	hasTarget, hasText := !p.Target.IsZero(), p.Text != ""
	if hasTarget == hasText {
		return executor.WaitResult{}, executor.Errorf(executor.CodeBadArgs, "pass exactly one of target or text")
	}
	if hasTarget {
		if err := p.Target.Validate(); err != nil {
			return executor.WaitResult{}, err
		}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultCallTimeout)
		defer cancel()
	}
	desc := p.Describe()
	start := time.Now()
	st, err := s.onTab(ctx, p.TabID, "wait_for "+desc, func(c *call) error {
		var loc playwright.Locator
		if hasTarget && p.Target.Ref != "" {
			ref := p.Target.Ref
			return c.pollWait(ctx, start, desc, func() (bool, error) {
				attached, visible, err := c.refState(ref)
				switch {
				case err != nil:
					return false, err
				case p.Gone:
					return !visible, nil
				case p.Visible:
					return visible, nil
				}
				return attached, nil
			})
		}
		if hasTarget {
			var err error
			if loc, err = c.resolve(p.Target); err != nil {
				return err
			}
		}
		// An element found is checked to be in the main frame before
		// the wait reports it (see locate); one gone is nothing read.
		found := func(ok bool, err error) (bool, error) {
			if !ok || err != nil {
				return ok, err
			}
			return true, c.inMainFrame(loc, p.Target, "wait_for")
		}
		check := func() (bool, error) {
			switch {
			case hasText:
				v, err := c.page.Evaluate(executor.HasTextScript, p.Text)
				found, _ := v.(bool)
				return found != p.Gone, err
			case p.Gone:
				visible, err := loc.IsVisible()
				return !visible, err
			case p.Visible:
				return found(loc.IsVisible())
			default:
				n, err := loc.Count()
				return found(n > 0, err)
			}
		}
		return c.pollWait(ctx, start, desc, check)
	})
	if err != nil {
		return executor.WaitResult{}, err
	}
	return executor.WaitResult{PageState: st, ElapsedMs: time.Since(start).Milliseconds()}, nil
}

// pollWait calls check every 100 ms until it reports done, a fatal error,
// or the call's deadline (a little before the context's, so the error
// names what was waited for).
func (c *call) pollWait(ctx context.Context, start time.Time, desc string, check func() (bool, error)) error {
	deadline := c.start.Add(time.Duration(c.timeout) * time.Millisecond)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		done, err := check()
		switch {
		case err == nil && done:
			return nil
		case err != nil && fatalWaitErr(c.s, err):
			return err
		case err != nil:
			lastErr = err // e.g. a navigation replaced the document mid-check
		}
		if time.Now().After(deadline) {
			e := executor.Errorf(executor.CodeTimeout, "waited %s for %s", time.Since(start).Round(time.Millisecond), desc).
				WithHint("retry with a larger timeout_ms, or check the condition with get_text or screenshot")
			if lastErr != nil {
				e = e.Wrap(lastErr)
			}
			return e
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return timeoutErr(ctx, "wait_for "+desc, time.Since(start))
		case <-c.s.done:
			return c.s.goneErr("wait_for")
		}
	}
}

func fatalWaitErr(s *Session, err error) bool {
	var xe *executor.Error
	return errors.As(err, &xe) || s.isDone() || connectionGone(err) ||
		errors.Is(err, playwright.ErrTargetClosed) || isSelectorError(firstLine(err))
}
