package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers/picture"
)

// screenshot's mark_refs: each interactive element that shows in the
// viewport gets its box and its ref drawn onto the image, after the
// capture, here in Go: nothing is put into the page, which could see or
// alter it. The boxes come from chromegate's isolated world, with the
// outline's refs, so a vision client can act by the ref it reads.

// maxMarks caps the boxes drawn: past it, labels would cover the page.
const maxMarks = 80

// markedShotOut is screenshot's result with marks: the image's scale
// (image pixels per CSS pixel, the device scale factor) and how many
// elements were marked, and left out past the cap. The marks follow as
// text, a line each: ref role "name" x,y wxh in CSS pixels.
type markedShotOut struct {
	shotOut
	Scale  float64 `json:"scale,omitempty"`
	Marked int     `json:"marked,omitempty"`
	More   int     `json:"more,omitempty"`
}

// checkShot checks screenshot's arguments: mark_refs marks the viewport.
func checkShot(args map[string]any) error {
	if m, _ := args["mark_refs"].(bool); m {
		if full, _ := args["full_page"].(bool); full || !targetOf(args, "").IsZero() {
			return badArgs("mark_refs marks the viewport").WithHint("drop full_page and the target, or mark_refs")
		}
	}
	return checkScreenshot(args)
}

// marked is screenshot's handler: plain, or with refs' boxes drawn when
// mark_refs is set.
func marked(plain func(context.Context, *Call) (*Result, error)) func(context.Context, *Call) (*Result, error) {
	return func(ctx context.Context, c *Call) (*Result, error) {
		if m, _ := c.Args["mark_refs"].(bool); !m {
			return plain(ctx, c)
		}
		return markedShot(ctx, c, plain)
	}
}

func markedShot(ctx context.Context, c *Call, plain func(context.Context, *Call) (*Result, error)) (*Result, error) {
	pt, ok := c.Executor().(executor.Pointer)
	if !ok {
		return nil, executor.Errorf(executor.CodeBadArgs, "the %s backend cannot mark refs", c.Executor().Backend())
	}
	marks, err := pt.Marks(ctx, c.TabID(), maxMarks)
	if err != nil {
		return nil, err
	}
	r, err := plain(ctx, c)
	if err != nil || r.Image == nil {
		return r, err
	}
	so, _ := r.Value.(shotOut)
	q, _ := c.Args["quality"].(float64)
	data, scale, err := picture.DrawMarks(ctx, r.Image.Data, r.Image.MIMEType, int(q), marks)
	if e := (*executor.Error)(nil); errors.As(err, &e) {
		return nil, err
	}
	if err != nil {
		return nil, executor.Errorf(executor.CodeInternal, "mark refs: %v", err)
	}
	r.Image.Data = data
	var b strings.Builder
	for _, m := range marks.Marks {
		fmt.Fprintf(&b, "%s %s %q %d,%d %dx%d\n", m.Ref, m.Role, m.Name, m.X, m.Y, m.W, m.H)
	}
	r.Value = markedShotOut{shotOut: so, Scale: scale, Marked: len(marks.Marks), More: marks.More}
	r.Text = b.String()
	r.Untrusted = true // the names are the page's
	return r, nil
}
