package mcp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
)

// Keys go where the focus is. A key pressed without a target reaches the
// document that holds the focus, which need not be the tab's page: a Tab
// moves the focus into a frame of another origin as readily as onto a
// button. So such a press is decided on the focused document, found by
// following the focus from the page down (document.activeElement being a
// frame element → that frame's document → …), each frame of another
// origin reached by the browser's frame identity (FrameReader) and
// decided as a call by a ref of it would be (Call.FrameDecider). It is
// refused, and nothing pressed, when that document is not allowed or
// cannot be reached.

// maxFocusDepth bounds the frames followed to the focus.
const maxFocusDepth = 8

// focusAllowed decides c, a key press without a target, on the document
// that holds the tab's focus.
func (c *Call) focusAllowed(ctx context.Context, tabID string) error {
	ex := c.Executor()
	fr, _ := ex.(executor.FrameReader)
	decide := c.FrameDecider()
	doc := ""
	for range maxFocusDepth {
		r, err := ex.RunScript(ctx, executor.ScriptParams{TabID: tabID, Source: helpers.FrameboxesSource, Doc: doc, Arg: json.RawMessage(`{"op":"focus"}`)})
		if err != nil {
			if doc != "" && ctx.Err() == nil {
				return focusDenied(c, "the focused frame could not be reached")
			}
			return err
		}
		var at struct {
			Ref   string `json:"ref"`
			Doc   bool   `json:"doc"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(r.Value, &at); err != nil || at.Error != "" {
			return focusDenied(c, "the focus could not be followed")
		}
		if at.Ref == "" {
			return nil
		}
		if fr == nil {
			return focusDenied(c, "the focus is in a frame of another origin")
		}
		d, err := fr.FrameDocument(ctx, executor.FrameParams{TabID: tabID, Ref: at.Ref})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return focusDenied(c, "the focused frame could not be reached")
		}
		if strings.HasPrefix(d.URL, "chrome-error:") {
			return focusDenied(c, "the focus is in a frame that did not load")
		}
		if err := decide(ctx, d.URL, d.Origin); err != nil {
			if e := executor.AsError(err); e != nil {
				return e.WithHint("the focus is in a frame the policy does not allow: press with a target (a ref or selector of the page), or click an element of the page first")
			}
			return err
		}
		doc = d.Doc
	}
	return focusDenied(c, "the focus is in frames nested too deep")
}

func focusDenied(c *Call, why string) error {
	return executor.Errorf(executor.CodePolicyDenied, "%s without a target: %s; nothing was pressed", c.Tool.Name, why).
		WithHint("press with a target (a ref or selector of the page), or click an element of the page first")
}
