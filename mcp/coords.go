package mcp

import (
	"context"
	"fmt"
	"sync"

	"github.com/chromegate/chromegate/executor"
)

// Coordinates: click, hover, scroll and drag also take a point of the
// viewport (x,y; drag from_x,from_y to to_x,to_y) in place of a target,
// for clients that work from screenshots. A point is CSS pixels of the
// viewport: a screenshot's pixel divided by the device scale factor
// (screenshot's result says the scale when it is not 1).
//
// The arguments sit on the existing tools rather than in tools of their
// own (Playwright MCP's browser_mouse_click_xy, Chrome DevTools MCP's
// click_at): they cost tools/list about a sixth of what four more tools
// would, and a model finds the point form where it finds the ref form.
//
// The policy decides a point like the same action by ref, on the document
// under the point (Call.Points, read from the browser), with input.point;
// the backend checks that document again after the pointer moved there and
// before a button goes down (executor.Pointer).

// atPoint is the handler of a tool that acts on a target or at points:
// byTarget for a target, pointAction for a point.
func atPoint[In interface{ move() pointMove }](byTarget func(context.Context, *Call, In) (*Result, error)) func(context.Context, *Call, In) (*Result, error) {
	return func(ctx context.Context, c *Call, a In) (*Result, error) {
		if pre := pointPrefixes(c.Tool); len(pre) > 0 && hasPoint(c.Args, pre[0]) {
			return pointAction(ctx, c, a.move())
		}
		return byTarget(ctx, c, a)
	}
}

// pointMove is what an action at a point takes of its tool's input,
// besides the points.
type pointMove struct {
	TabID         string
	Button        string
	Count, DX, DY int
}

// pointPrefixes are the prefixes of t's targets that may be points, in
// target order.
func pointPrefixes(t *Tool) []string {
	var out []string
	for _, ta := range t.Targets {
		if ta.Point {
			out = append(out, ta.Prefix)
		}
	}
	return out
}

// checkScrollAt checks scroll's arguments: a point to scroll at needs
// dx/dy; a target or none is checkScroll's.
func checkScrollAt(args map[string]any) error {
	if !hasPoint(args, "") {
		return checkScroll(args)
	}
	_, dx := args["dx"]
	_, dy := args["dy"]
	if !dx && !dy {
		return badArgs("a point to scroll at, but no dx/dy").WithHint("pass dx and/or dy in pixels with x,y")
	}
	return nil
}

// checkDrag checks that a drag goes from a point to a point or from a
// target to a target.
func checkDrag(args map[string]any) error {
	if hasPoint(args, "from_") != hasPoint(args, "to_") {
		return badArgs("a drag goes from a point to a point, or from a target to a target").
			WithHint("pass from_x,from_y and to_x,to_y, or from_ref/from_selector and to_ref/to_selector")
	}
	return nil
}

// hasPoint reports whether args hold prefix+"x" or prefix+"y".
func hasPoint(args map[string]any, prefix string) bool {
	_, x := args[prefix+"x"]
	_, y := args[prefix+"y"]
	return x || y
}

// checkPoint checks a target that may be a point: exactly one of a target
// or a whole point. It reports whether the point stands for the target.
func checkPoint(args map[string]any, ta TargetArg) (bool, error) {
	if !ta.Point || !hasPoint(args, ta.Prefix) {
		return false, nil
	}
	x, y := ta.Prefix+"x", ta.Prefix+"y"
	_, hx := args[x]
	_, hy := args[y]
	if !hx || !hy {
		return true, badArgs("%s and %s go together", x, y).WithHint(fmt.Sprintf("pass both %s and %s (CSS pixels of the viewport)", x, y))
	}
	if !targetOf(args, ta.Prefix).IsZero() {
		return true, badArgs("both a target and a point (%s,%s) are set", x, y).
			WithHint(fmt.Sprintf("pass %sref, %sselector or %s,%s: one of them", ta.Prefix, ta.Prefix, x, y))
	}
	return true, nil
}

// points are the call's points, in target order ("" or from_, then to_).
func points(c *Call) []executor.XY {
	var out []executor.XY
	for _, pre := range pointPrefixes(c.Tool) {
		if !hasPoint(c.Args, pre) {
			continue
		}
		x, _ := c.Args[pre+"x"].(float64)
		y, _ := c.Args[pre+"y"].(float64)
		out = append(out, executor.XY{X: x, Y: y})
	}
	return out
}

// pointsFunc memoises the hit test of the call's points: what the Gate
// decided on is what the handler expects under them.
func (c *Call) pointsFunc(ex executor.Executor) func(context.Context) ([]executor.Hit, error) {
	var (
		once sync.Once
		hits []executor.Hit
		err  error
	)
	return func(ctx context.Context) ([]executor.Hit, error) {
		once.Do(func() {
			pt, ok := ex.(executor.Pointer)
			if !ok {
				err = executor.Errorf(executor.CodeBadArgs, "the %s backend cannot act at coordinates", ex.Backend()).WithHint("act by ref (snapshot)")
				return
			}
			hits, err = pt.HitTest(ctx, executor.HitParams{TabID: c.TabID(), Points: points(c)})
			if err == nil && len(hits) != len(points(c)) {
				err = executor.Errorf(executor.CodeInternal, "hit test gave %d answers for %d points", len(hits), len(points(c)))
			}
		})
		return hits, err
	}
}

// hitOut is what was under a point: the element (its role, name and ref,
// the page's words) and, on a frame, the frame's URL.
type hitOut struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	Role  string  `json:"role,omitempty"`
	Name  string  `json:"name,omitempty"`
	Ref   string  `json:"ref,omitempty"`
	Tag   string  `json:"tag,omitempty"`
	Frame string  `json:"frame,omitempty"`
}

// pointOut is an action's result with, for an action at a point, what it
// hit.
type pointOut struct {
	actionOut
	Hit []hitOut `json:"hit,omitempty"`
}

func pointAction(ctx context.Context, c *Call, a pointMove) (*Result, error) {
	pt, ok := c.Executor().(executor.Pointer)
	if !ok || c.Points == nil {
		return nil, executor.Errorf(executor.CodeBadArgs, "the %s backend cannot act at coordinates", c.Executor().Backend()).WithHint("act by ref (snapshot)")
	}
	hits, err := c.Points(ctx)
	if err != nil {
		return nil, err
	}
	pts := points(c)
	p := executor.PointParams{TabID: a.TabID, Kind: c.Tool.Name, At: pts[0], Button: a.Button, Count: a.Count, DX: a.DX, DY: a.DY, Expect: hits}
	if len(pts) > 1 {
		p.To = &pts[1]
	}
	pr, err := pt.Point(ctx, p)
	if err != nil {
		return nil, err
	}
	pg := c.pageOf(ctx, pr.PageState)
	out := pointOut{actionOut: actionOut{pageOut: pg}}
	names := hitReader{c: c, tab: pr.PageState.TabID} // documents.go
	for _, h := range pr.Hits {
		o := hitOut{X: h.X, Y: h.Y, Role: h.Role, Ref: h.Ref, Tag: h.Tag}
		if h.Name != "" && names.mayRead(ctx, h) {
			o.Name = h.Name
		}
		if !h.MainFrame {
			o.Frame = h.URL
		}
		out.Hit = append(out.Hit, o)
	}
	r := pageResult(out, pg, pr.PageState)
	r.Untrusted = true // the names and the frame's URL are the page's
	return r, nil
}

// pointRef is the ref of the element under a call's first point, as the
// Gate's hit test found it, for the call's record; "" when there is none.
func pointRef(ctx context.Context, c *Call) string {
	if c.Points == nil {
		return ""
	}
	hits, err := c.Points(ctx)
	if err != nil || len(hits) == 0 || hits[0].Frame {
		return ""
	}
	return hits[0].Ref
}
