package cdp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

var _ executor.Pointer = (*Session)(nil)

// HitTest says what is under each point: the element, from the isolated
// world (through same-origin frames), and the document, from the browser
// (DOM.getNodeForLocation, and the frame tree for a frame's URL and
// origin), which also sees into cross-origin and out-of-process frames.
func (s *Session) HitTest(ctx context.Context, p executor.HitParams) ([]executor.Hit, error) {
	var hits []executor.Hit
	_, err := s.onTab(ctx, p.TabID, "hit test", func(c *call) error {
		for _, pt := range p.Points {
			h, err := c.hit(pt, "")
			if err != nil {
				return err
			}
			hits = append(hits, h)
		}
		return nil
	})
	return hits, err
}

// hitInfo is the point script's answer to "hit".
type hitInfo struct {
	VW    int    `json:"vw"`
	VH    int    `json:"vh"`
	Out   bool   `json:"out"`
	Frame bool   `json:"frame"`
	Tag   string `json:"tag"`
	Role  string `json:"role"`
	Name  string `json:"name"`
	Ref   string `json:"ref"`
	// DocURL and Origin are the document's under the point, as far as
	// the script could enter.
	DocURL string `json:"docURL"`
	Origin string `json:"origin"`
	// Unseen: the settled hit waited for the pointer's move in the
	// document the policy's hit found, and it never came.
	Unseen bool `json:"unseen"`
}

// hit tests one point. For the policy, settle is ""; after the pointer
// moved there for an action, it is the action's kind, and the hit first
// lets the page handle what the move started, refusing the action when
// the move never reached the document the policy's hit found.
func (c *call) hit(pt executor.XY, settle string) (executor.Hit, error) {
	raw, err := c.runValue(executor.PointScript, map[string]any{"op": "hit", "x": pt.X, "y": pt.Y, "settle": settle != ""})
	if err != nil {
		return executor.Hit{}, err
	}
	var in hitInfo
	if err := json.Unmarshal(raw, &in); err != nil {
		return executor.Hit{}, executor.Errorf(executor.CodeInternal, "hit test: unexpected answer %s", raw)
	}
	if in.Out {
		return executor.Hit{}, executor.OutsideViewport(pt, in.VW, in.VH)
	}
	if in.Unseen {
		return executor.Hit{}, executor.UnseenErr(settle, pt)
	}
	_, sess, err := c.t.w.context(c)
	if err != nil {
		return executor.Hit{}, err
	}
	h := executor.Hit{XY: pt, Frame: in.Frame, Tag: in.Tag, Role: in.Role, Name: in.Name, Ref: in.Ref}
	if err := executor.FrameAt(func(method string, params map[string]any) (any, error) {
		return sess.Send(method, params)
	}, &h); err != nil {
		return executor.Hit{}, err
	}
	h.Inherit(in.DocURL, in.Origin)
	return h, nil
}

// Point acts at a point with trusted mouse input, checking the document
// under it again after the pointer moved there and before any button
// goes down (see executor.Pointer).
func (s *Session) Point(ctx context.Context, p executor.PointParams) (executor.PointResult, error) {
	button, err := mouseButton(p.Button)
	if err != nil {
		return executor.PointResult{}, err
	}
	if len(p.Expect) == 0 || (p.Kind == executor.PointDrag && (p.To == nil || len(p.Expect) < 2)) {
		return executor.PointResult{}, executor.Errorf(executor.CodeInternal, "%s at a point without the documents the policy decided on", p.Kind)
	}
	var hits []executor.Hit
	st, err := s.onAction(ctx, p.TabID, p.Kind+" at a point", func(c *call) error {
		m := c.page.Mouse()
		check := func(pt executor.XY, want executor.Hit) error {
			h, err := c.hit(pt, p.Kind)
			if err != nil {
				return err
			}
			hits = append(hits, h)
			if !h.Same(want) {
				return executor.MovedErr(p.Kind, pt)
			}
			return nil
		}
		if err := m.Move(p.At.X, p.At.Y); err != nil {
			return err
		}
		if err := check(p.At, p.Expect[0]); err != nil {
			return err
		}
		switch p.Kind {
		case executor.PointHover:
			return nil
		case executor.PointScroll:
			start, err := c.page.Evaluate(executor.ScrollPosScript)
			if err != nil {
				return err
			}
			if err := m.Wheel(float64(p.DX), float64(p.DY)); err != nil {
				return err
			}
			// The page's own scroll position may not move (an inner
			// scroller under the point did): settle on the page's, or
			// after a short while.
			_, _ = c.page.Evaluate(executor.ScrollSettleScript, start)
			return nil
		case executor.PointClick:
			for i := 1; i <= max(p.Count, 1); i++ {
				if err := m.Down(playwright.MouseDownOptions{Button: button, ClickCount: playwright.Int(i)}); err != nil {
					return err
				}
				if err := m.Up(playwright.MouseUpOptions{Button: button, ClickCount: playwright.Int(i)}); err != nil {
					return err
				}
			}
			return nil
		case executor.PointDrag:
			if err := m.Down(); err != nil {
				return err
			}
			if err := m.Move(p.At.X+5, p.At.Y+5, playwright.MouseMoveOptions{Steps: playwright.Int(2)}); err != nil {
				return err
			}
			if err := m.Move(p.To.X, p.To.Y, playwright.MouseMoveOptions{Steps: playwright.Int(5)}); err != nil {
				return err
			}
			if err := check(*p.To, p.Expect[1]); err != nil {
				// Released where it started, a document the policy
				// allowed, so no button stays down.
				_ = m.Move(p.At.X, p.At.Y)
				_ = m.Up()
				return err
			}
			return m.Up()
		}
		return executor.Errorf(executor.CodeBadArgs, "unknown pointer action %q", p.Kind)
	})
	if err != nil {
		return executor.PointResult{}, err
	}
	return executor.PointResult{ActionResult: executor.ActionResult{PageState: st}, Hits: hits}, nil
}

// Marks reads the boxes of the interactive elements in the viewport.
func (s *Session) Marks(ctx context.Context, tabID string, most int) (executor.Marks, error) {
	var m executor.Marks
	_, err := s.onTab(ctx, tabID, "mark refs", func(c *call) error {
		raw, err := c.runValue(executor.PointScript, map[string]any{"op": "marks", "max": most})
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &m)
	})
	return m, err
}

func mouseButton(b string) (*playwright.MouseButton, error) {
	switch strings.ToLower(b) {
	case "", "left":
		return playwright.MouseButtonLeft, nil
	case "right":
		return playwright.MouseButtonRight, nil
	case "middle":
		return playwright.MouseButtonMiddle, nil
	}
	return nil, executor.Errorf(executor.CodeBadArgs, "button %q is not one of left, right, middle", b)
}

// emulatedShot captures the viewport through the tab's emulation session
// while emulate sets the device metrics: Playwright's own screenshot
// re-applies its context viewport (1280x720 at scale 1 by default), which
// would both drop the emulation and give an image whose pixels no longer
// match the page's CSS pixels times its device scale factor. Here the
// image is the emulated viewport at its scale, as the extension's is.
func (c *call) emulatedShot(format string, quality *int) ([]byte, bool, error) {
	c.s.emu.mu.Lock()
	metrics := c.s.emu.cur.HasMetrics()
	c.s.emu.mu.Unlock()
	if !metrics {
		return nil, false, nil
	}
	sess, err := c.t.emuSession()
	if err != nil {
		return nil, true, err
	}
	params := map[string]any{"format": format}
	if quality != nil {
		params["quality"] = *quality
	}
	res, err := sess.Send("Page.captureScreenshot", params)
	if err != nil {
		return nil, true, err
	}
	b64, _ := asMap(res)["data"].(string)
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(data) == 0 {
		return nil, true, fmt.Errorf("Page.captureScreenshot gave no image")
	}
	return data, true, nil
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
