package cdp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// act runs an interaction on one target of a tab: fn on the selector's
// Locator, or byRef on a ref (see refs.go).
func (s *Session) act(ctx context.Context, tabID string, target executor.Target, what string,
	fn func(c *call, loc playwright.Locator) error, byRef func(c *call, ref string) error) (executor.ActionResult, error) {
	if err := target.Validate(); err != nil {
		return executor.ActionResult{}, err
	}
	st, err := s.onAction(ctx, tabID, what+" on "+target.String(), func(c *call) error {
		if target.Ref != "" {
			return byRef(c, target.Ref)
		}
		loc, err := c.locate(target, what)
		if err != nil {
			return err
		}
		return c.targetErr(loc, target, what, fn(c, loc))
	})
	if err != nil {
		return executor.ActionResult{}, err
	}
	return executor.ActionResult{PageState: st}, nil
}

// Click clicks the element with real mouse events (after Playwright's
// actionability checks: attached, visible, stable, enabled, not covered).
func (s *Session) Click(ctx context.Context, p executor.ClickParams) (executor.ActionResult, error) {
	var button *playwright.MouseButton
	switch strings.ToLower(p.Button) {
	case "", "left":
		button = playwright.MouseButtonLeft
	case "right":
		button = playwright.MouseButtonRight
	case "middle":
		button = playwright.MouseButtonMiddle
	default:
		return executor.ActionResult{}, executor.Errorf(executor.CodeBadArgs, "button %q is not one of left, right, middle", p.Button)
	}
	if p.Count < 0 || p.Count > 3 {
		return executor.ActionResult{}, executor.Errorf(executor.CodeBadArgs, "count %d is not 1, 2 or 3", p.Count)
	}
	return s.act(ctx, p.TabID, p.Target, "click", func(c *call, loc playwright.Locator) error {
		if handled, err := c.selectorClick(p.Target, button, p.Count); handled {
			return err
		}
		opts := playwright.LocatorClickOptions{Button: button, Timeout: c.to()}
		if p.Count > 1 {
			// Two presses with clickCount 1 then 2: the page also sees a
			// dblclick. (Locator.Dblclick fails in playwright-go v0.6000.0:
			// its options carry a Steps field the frame options lack.)
			opts.ClickCount = playwright.Int(p.Count)
		}
		return loc.Click(opts)
	}, func(c *call, ref string) error {
		return c.refClick(ref, button, p.Count)
	})
}

// Type focuses the element and types text key by key, optionally clearing
// it first and pressing Enter after. With OnlyOrigin, the text goes in
// whole, guarded (insert.go).
func (s *Session) Type(ctx context.Context, p executor.TypeParams) (executor.ActionResult, error) {
	return s.act(ctx, p.TabID, p.Target, "type", func(c *call, loc playwright.Locator) error {
		if err := c.fieldCheck(loc, p.Target, "type", true); err != nil {
			return err
		}
		if p.OnlyOrigin != "" {
			if err := c.locInsert("type", loc, p.Target, insertArg(p.Text, p.OnlyOrigin, p.Shown, p.Clear)); err != nil {
				return err
			}
		} else {
			if p.Clear {
				if err := loc.Clear(playwright.LocatorClearOptions{Timeout: c.to()}); err != nil {
					return err
				}
				if p.Unmark {
					if err := c.locInsert("type", loc, p.Target, unmarkArg); err != nil {
						return err
					}
				}
			}
			if p.Text != "" {
				if err := loc.PressSequentially(p.Text, playwright.LocatorPressSequentiallyOptions{Timeout: c.to()}); err != nil {
					return err
				}
			}
		}
		if p.PressEnter {
			return loc.Press("Enter", playwright.LocatorPressOptions{Timeout: c.to()})
		}
		return nil
	}, func(c *call, ref string) error {
		kb := c.page.Keyboard()
		switch {
		case p.OnlyOrigin != "":
			if err := c.refInsert("type", ref, insertArg(p.Text, p.OnlyOrigin, p.Shown, p.Clear)); err != nil {
				return err
			}
		default:
			if p.Clear {
				if err := c.refFill("type", ref, ""); err != nil {
					return err
				}
				if p.Unmark {
					if err := c.refInsert("type", ref, unmarkArg); err != nil {
						return err
					}
				}
			} else if err := c.refFocusField("type", ref, true); err != nil {
				return err
			}
			if p.Text != "" {
				if err := kb.Type(p.Text); err != nil {
					return err
				}
			}
		}
		if p.PressEnter {
			return kb.Press("Enter")
		}
		return nil
	})
}

// Fill sets an input's value in one step (input events included). With
// OnlyOrigin, the value goes in guarded (insert.go).
func (s *Session) Fill(ctx context.Context, p executor.FillParams) (executor.ActionResult, error) {
	return s.act(ctx, p.TabID, p.Target, "fill", func(c *call, loc playwright.Locator) error {
		if err := c.fieldCheck(loc, p.Target, "fill", true); err != nil {
			return err
		}
		if p.OnlyOrigin != "" {
			return c.locInsert("fill", loc, p.Target, insertArg(p.Value, p.OnlyOrigin, p.Shown, true))
		}
		if err := loc.Fill(p.Value, playwright.LocatorFillOptions{Timeout: c.to()}); err != nil || !p.Unmark {
			return err
		}
		return c.locInsert("fill", loc, p.Target, unmarkArg)
	}, func(c *call, ref string) error {
		if p.OnlyOrigin != "" {
			return c.refInsert("fill", ref, insertArg(p.Value, p.OnlyOrigin, p.Shown, true))
		}
		if err := c.refFill("fill", ref, p.Value); err != nil || !p.Unmark {
			return err
		}
		return c.refInsert("fill", ref, unmarkArg)
	})
}

var modifierNames = map[string]string{
	"alt": "Alt", "option": "Alt",
	"control": "Control", "ctrl": "Control",
	"meta": "Meta", "cmd": "Meta", "command": "Meta", "super": "Meta",
	"shift":         "Shift",
	"controlormeta": "ControlOrMeta",
}

// keyCombo joins modifiers and key the way Playwright reads them:
// "Control+Shift+A".
func keyCombo(key string, modifiers []string) (string, error) {
	if key == "" {
		return "", executor.Errorf(executor.CodeBadArgs, "key is empty").
			WithHint("pass a key such as Enter, Tab, ArrowDown, a or F5")
	}
	parts := make([]string, 0, len(modifiers)+1)
	shift := false
	for _, m := range modifiers {
		name, ok := modifierNames[strings.ToLower(m)]
		if !ok {
			return "", executor.Errorf(executor.CodeBadArgs, "modifier %q is not one of Alt, Control, Meta, Shift", m)
		}
		shift = shift || name == "Shift"
		parts = append(parts, name)
	}
	// Playwright types "a" for Shift+a; Shift+KeyA is what a keyboard does.
	if shift && len(key) == 1 && key[0] >= 'a' && key[0] <= 'z' {
		key = "Key" + strings.ToUpper(key)
	}
	return strings.Join(append(parts, key), "+"), nil
}

// Press presses a key (with modifiers) on the target, or on whatever has
// focus when there is no target.
func (s *Session) Press(ctx context.Context, p executor.PressParams) (executor.ActionResult, error) {
	combo, err := keyCombo(p.Key, p.Modifiers)
	if err != nil {
		return executor.ActionResult{}, err
	}
	if err := checkKey(combo); err != nil {
		return executor.ActionResult{}, err
	}
	if !p.Target.IsZero() {
		text := keyTypes(p.Key, p.Modifiers)
		return s.act(ctx, p.TabID, p.Target, "press", func(c *call, loc playwright.Locator) error {
			if err := c.fieldCheck(loc, p.Target, "press", text); err != nil {
				return err
			}
			return loc.Press(combo, playwright.LocatorPressOptions{Timeout: c.to()})
		}, func(c *call, ref string) error {
			if err := c.refFocusField("press", ref, text); err != nil {
				return err
			}
			return c.page.Keyboard().Press(combo)
		})
	}
	st, err := s.onAction(ctx, p.TabID, "press", func(c *call) error {
		return c.page.Keyboard().Press(combo)
	})
	if err != nil {
		return executor.ActionResult{}, err
	}
	return executor.ActionResult{PageState: st}, nil
}

// Hover moves the mouse over the element.
func (s *Session) Hover(ctx context.Context, p executor.TargetParams) (executor.ActionResult, error) {
	return s.act(ctx, p.TabID, p.Target, "hover", func(c *call, loc playwright.Locator) error {
		return loc.Hover(playwright.LocatorHoverOptions{Timeout: c.to()})
	}, func(c *call, ref string) error {
		p, err := c.refPoint("hover", ref, false)
		if err != nil {
			return err
		}
		return c.page.Mouse().Move(p.X, p.Y)
	})
}

// Scroll brings the target into view, or turns the mouse wheel by (dx, dy)
// CSS pixels over the page.
func (s *Session) Scroll(ctx context.Context, p executor.ScrollParams) (executor.ActionResult, error) {
	if !p.Target.IsZero() {
		return s.act(ctx, p.TabID, p.Target, "scroll", func(c *call, loc playwright.Locator) error {
			return loc.ScrollIntoViewIfNeeded(playwright.LocatorScrollIntoViewIfNeededOptions{Timeout: c.to()})
		}, func(c *call, ref string) error {
			return c.refOp("scroll", ref, "scroll", nil, nil)
		})
	}
	if p.DX == 0 && p.DY == 0 {
		return executor.ActionResult{}, executor.Errorf(executor.CodeBadArgs, "scroll needs a target or a non-zero dx/dy")
	}
	st, err := s.onAction(ctx, p.TabID, "scroll", func(c *call) error {
		start, err := c.page.Evaluate(executor.ScrollPosScript)
		if err != nil {
			return err
		}
		if err := c.page.Mouse().Wheel(float64(p.DX), float64(p.DY)); err != nil {
			return err
		}
		_, err = c.page.Evaluate(executor.ScrollSettleScript, start)
		return err
	})
	if err != nil {
		return executor.ActionResult{}, err
	}
	return executor.ActionResult{PageState: st}, nil
}

// SelectOption chooses options of a <select>; each value matches an
// option's value or its label. It reports the values now selected.
func (s *Session) SelectOption(ctx context.Context, p executor.SelectParams) (executor.ActionResult, error) {
	if len(p.Values) == 0 {
		return executor.ActionResult{}, executor.Errorf(executor.CodeBadArgs, "values is empty").
			WithHint("pass the value or label of at least one option")
	}
	var selected []string
	res, err := s.act(ctx, p.TabID, p.Target, "select_option", func(c *call, loc playwright.Locator) error {
		v, err := loc.Evaluate(executor.SelectScript, p.Values, playwright.LocatorEvaluateOptions{Timeout: c.to()})
		if err != nil {
			return err
		}
		if err := selectCheck(v); err != nil {
			return err
		}
		m, _ := v.(map[string]any)
		selected = toStrings(m["selected"])
		return nil
	}, func(c *call, ref string) error {
		var err error
		selected, err = c.refSelect(ref, p.Values)
		return err
	})
	if err != nil {
		return executor.ActionResult{}, err
	}
	res.Selected = selected
	return res, nil
}

func selectCheck(v any) error {
	m, _ := v.(map[string]any)
	if msg, _ := m["error"].(string); msg != "" {
		why, _ := m["why"].(string)
		if why == "" {
			why = msg
		}
		page, _ := m["page"].(string)
		return executor.Errorf(executor.CodeBadArgs, "select_option: %s", why).WithPage(page)
	}
	// The options are the page's words: they are shown fenced, never in
	// the message or the hint.
	avail := strings.Join(toStrings(m["available"]), ", ")
	if more, _ := m["more"].(bool); more {
		avail += ", …"
	}
	if amb := toStrings(m["ambiguous"]); len(amb) > 0 {
		return executor.Errorf(executor.CodeBadArgs, "select_option: the cut label %q stands for several options", amb[0]).
			WithHint("pass one option's whole label or its value; snapshot with the select's ref lists them whole").
			WithPage("the options it may stand for: " + avail)
	}
	missing := toStrings(m["missing"])
	if len(missing) == 0 {
		return nil
	}
	return executor.Errorf(executor.CodeBadArgs, "select_option: no option has the value or label %q", strings.Join(missing, `", "`)).
		WithHint("pass the value or label of one of the options; the closest are listed below, and snapshot with the select's ref lists them all").
		WithPage("the closest options: " + avail)
}

func toStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// SetFiles sets the files of an <input type=file>. Every path must exist on
// the server; an empty list clears the input.
func (s *Session) SetFiles(ctx context.Context, p executor.SetFilesParams) (executor.ActionResult, error) {
	paths, err := executor.ConfinePaths(executor.TenantRoots(s.b.opts.UploadDirs, p.Tenant), p.Paths)
	if err != nil {
		return executor.ActionResult{}, err
	}
	return s.act(ctx, p.TabID, p.Target, "set_files", func(c *call, loc playwright.Locator) error {
		return loc.SetInputFiles(paths, playwright.LocatorSetInputFilesOptions{Timeout: c.to()})
	}, func(c *call, ref string) error {
		return c.refSetFiles(ref, paths)
	})
}

// Drag drags one element onto another with real mouse events.
func (s *Session) Drag(ctx context.Context, p executor.DragParams) (executor.ActionResult, error) {
	if err := p.From.Validate(); err != nil {
		return executor.ActionResult{}, executor.Errorf(executor.CodeBadArgs, "from: %s", executor.AsError(err).Message).WithHint(executor.AsError(err).Hint)
	}
	if err := p.To.Validate(); err != nil {
		return executor.ActionResult{}, executor.Errorf(executor.CodeBadArgs, "to: %s", executor.AsError(err).Message).WithHint(executor.AsError(err).Hint)
	}
	st, err := s.onAction(ctx, p.TabID, "drag", func(c *call) error {
		if p.From.Ref != "" || p.To.Ref != "" {
			from, err := c.targetPoint("drag (from)", p.From)
			if err != nil {
				return err
			}
			to, err := c.targetPoint("drag (to)", p.To)
			if err != nil {
				return err
			}
			return c.dragPoints(from, to)
		}
		from, err := c.locate(p.From, "drag (from)")
		if err != nil {
			return err
		}
		to, err := c.locate(p.To, "drag (to)")
		if err != nil {
			return err
		}
		err = from.DragTo(to, playwright.LocatorDragToOptions{Timeout: c.to()})
		if err == nil || !errors.Is(err, playwright.ErrTimeout) {
			return err
		}
		// The call log mixes both ends: ask the page which one is missing.
		for _, end := range []struct {
			name string
			loc  playwright.Locator
			t    executor.Target
		}{{"from", from, p.From}, {"to", to, p.To}} {
			if n, cerr := end.loc.Count(); cerr == nil && n == 0 {
				return c.notFound("drag ("+end.name+")", end.t, err)
			}
		}
		return executor.Errorf(executor.CodeTimeout, "drag: the elements were found but the drag did not finish within %s (%s)",
			time.Since(c.start).Round(time.Millisecond), whyNotActionable(err)).
			WithHint("they may be hidden or covered; scroll to them first").Wrap(err)
	})
	if err != nil {
		return executor.ActionResult{}, err
	}
	return executor.ActionResult{PageState: st}, nil
}
