package mcp

import (
	"context"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
	"github.com/chromegate/chromegate/helpers/picture"
)

// Pixels are decided on the document that painted them. A capture of a
// page (screenshot, with or without mark_refs, and the record's shots)
// shows the documents of its frames too; each frame of another origin is
// decided as the snapshot decides it (Call.FrameDecider: the URL and
// security origin the frame's document reports, reached by the browser's
// frame identity through FrameReader), and the box of every frame that
// is not allowed, or that could not be decided, is painted over with a
// labelled box ("other.test: not allowed") after the capture, here in
// Go, before the image leaves the server. Nothing is put into the page.
// The boxes are the frame elements' border boxes, measured in
// chromegate's isolated world just before and just after the capture;
// both are painted, so a frame the page moves while it is captured is
// covered where it was and where it went. A capture whose pixels cannot
// be placed is refused (POLICY_DENIED): an element's capture while such
// a frame shows anywhere on the page, and a PDF while such a frame is in
// the document at all (print styles may show a hidden one; nothing is
// painted on a PDF).

// pixelsDenied is the error of a capture whose pixels cannot be placed.
func pixelsDenied(what string, pf helpers.FrameBoxes) error {
	label := "a frame"
	if len(pf.Hidden) > 0 {
		label = pf.Hidden[0].Label
	}
	return executor.Errorf(executor.CodePolicyDenied, "%s: the page shows a frame the policy does not allow, which cannot be painted over here; nothing was captured", what).
		WithHint("take a screenshot of the viewport (its frames the policy denies are painted over), or read the page with snapshot").
		WithPage(label) // the host is the frame's choice
}

// guardedShot captures through capture and paints over every frame of
// another origin c may not read, measured before and after the capture.
// full says the capture is the full page (from the document's top-left);
// element, that it is one element's, which is refused while such a frame
// shows.
func (c *Call) guardedShot(ctx context.Context, ex executor.Executor, tabID string, full, element bool, quality int,
	capture func() (executor.Screenshot, error)) (executor.Screenshot, error) {
	decide := helpers.MemoDecider(c.FrameDecider())
	t0 := time.Now()
	before, err := helpers.HiddenFrames(ctx, ex, tabID, decide)
	if err != nil {
		return executor.Screenshot{}, err
	}
	if element && before.Visible() {
		return executor.Screenshot{}, pixelsDenied("screenshot of an element", before)
	}
	t1 := time.Now()
	s, err := capture()
	if err != nil {
		return s, err
	}
	if s.TabID != "" {
		tabID = s.TabID
	}
	t2 := time.Now()
	after, err := helpers.HiddenFrames(ctx, ex, tabID, decide)
	if err != nil {
		return executor.Screenshot{}, err
	}
	after.ChangedSince(before)
	if element && after.Visible() {
		return executor.Screenshot{}, pixelsDenied("screenshot of an element", after)
	}
	if !before.Visible() && !after.Visible() {
		return s, nil
	}
	t3 := time.Now()
	data, err := picture.Paint(ctx, s.Data, s.MIMEType, quality, full, before.Layer, after.Layer)
	if e := executor.AsError(err); e != nil && e.Code != "" {
		return executor.Screenshot{}, err // over the pixel cap, or no memory to decode it in
	}
	if err != nil {
		return executor.Screenshot{}, executor.Errorf(executor.CodeInternal, "screenshot: the frames the policy denies could not be painted over: %v", err)
	}
	c.srv.log.Debug("frames painted over", "frames", len(after.Hidden), "labels", helpers.Labels(before, after), "measure_ms", ms(t1.Sub(t0)+t3.Sub(t2)),
		"capture_ms", ms(t2.Sub(t1)), "paint_ms", ms(time.Since(t3)))
	s.Data = data
	return s, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// refusePDF refuses a PDF of a page that holds a frame of another origin
// c may not read, shown or not.
func (c *Call) refusePDF(ctx context.Context, tabID string) error {
	pf, err := helpers.HiddenFrames(ctx, c.Executor(), tabID, c.FrameDecider())
	if err != nil {
		return err
	}
	if len(pf.Hidden) > 0 {
		return executor.Errorf(executor.CodePolicyDenied, "pdf: the page holds a frame the policy does not allow; a PDF cannot be painted over, so none was made").
			WithHint("take a screenshot instead (frames the policy denies are painted over there), or read the page with snapshot").
			WithPage(pf.Hidden[0].Label)
	}
	return nil
}

// shotCall is the call a record's shot of tab is decided as: a
// screenshot by c's caller, so that each frame is decided as a read
// whatever c did (a navigate is decided on its target, not on a page).
func (s *Server) shotCall(c *Call, ex executor.Executor, tab string) *Call {
	e, ok := s.tools["screenshot"]
	if !ok {
		return c // screenshot is one of the server's own tools: not reached
	}
	rc := &Call{Tool: e.tool, Args: map[string]any{"tab_id": tab}, Session: c.Session, Principal: c.Principal, Plugin: c.Plugin, srv: s, ex: ex, mark: c.mark}
	rc.Page = rc.pageFunc(ex)
	return rc
}
