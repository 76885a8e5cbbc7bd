package mcp

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/url"
	"strings"
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

//go:embed pixels.js
var pixelsJS string

var pixelsSource = executor.WithRefs(pixelsJS)

// Bounds of the frames one capture decides: past them every further
// frame of another origin is painted over, undecided.
const (
	maxPixelFrames     = 64
	maxPixelFrameDepth = 6
)

// hiddenFrame is a frame whose pixels are painted over: its border box in
// the tab's top-level viewport (CSS pixels) and the label said on it.
type hiddenFrame = picture.Hidden

// frameScan is a document's answer to pixels.js's frames op.
type frameScan struct {
	Error   string  `json:"error"`
	URL     string  `json:"url"`
	Origin  string  `json:"origin"`
	ScrollX float64 `json:"scrollX"`
	ScrollY float64 `json:"scrollY"`
	Width   float64 `json:"width"`
	Height  float64 `json:"height"`
	DPR     float64 `json:"dpr"`
	Frames  []struct {
		Ref        string
		X, Y, W, H float64
		CX, CY     float64
	} `json:"frames"`
}

// pageFrames is what a capture needs to know of a tab's page: its
// viewport and scroll, the frames painted over, and the frames of other
// origins shown, each by its element's ref and its document's token.
type pageFrames struct {
	picture.Layer
	Height float64
	Shown  map[[2]string]executor.Box
}

// changedSince paints over each frame pf shows that before did not show
// with the same document: one that came, or navigated, while the page
// was captured, when what it showed then was decided on neither side.
func (pf *pageFrames) changedSince(before pageFrames) {
	for k, box := range pf.Shown {
		if _, ok := before.Shown[k]; !ok {
			pf.Hidden = append(pf.Hidden, hiddenFrame{Box: box, Label: "frame: changed while captured"})
		}
	}
}

// hiddenFrames finds, in the tab's page as it is now, every frame of
// another origin the caller may not read (c's FrameDecider), however deep
// in allowed frames. A frame that cannot be reached or decided is hidden
// too (fail closed).
func (c *Call) hiddenFrames(ctx context.Context, ex executor.Executor, tabID string, decide helpers.FrameDecider) (pageFrames, error) {
	top, err := scanFrames(ctx, ex, tabID, "")
	if err != nil {
		return pageFrames{}, err
	}
	pf := pageFrames{Layer: picture.Layer{ScrollX: top.ScrollX, ScrollY: top.ScrollY, Width: top.Width, DPR: top.DPR}, Height: top.Height,
		Shown: map[[2]string]executor.Box{}}
	fr, _ := ex.(executor.FrameReader)
	seen := 0
	var visit func(s frameScan, ox, oy float64, clip *executor.Box, depth int) error
	visit = func(s frameScan, ox, oy float64, clip *executor.Box, depth int) error {
		for _, f := range s.Frames {
			box := clipBox(executor.Box{X: ox + f.X, Y: oy + f.Y, Width: f.W, Height: f.H}, clip)
			seen++
			if fr == nil || seen > maxPixelFrames || depth >= maxPixelFrameDepth {
				pf.Hidden = append(pf.Hidden, hiddenFrame{Box: box, Label: "frame: not shown"})
				continue
			}
			doc, err := fr.FrameDocument(ctx, executor.FrameParams{TabID: tabID, Ref: f.Ref})
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				pf.Hidden = append(pf.Hidden, hiddenFrame{Box: box, Label: "frame: not shown"})
				continue
			}
			if strings.HasPrefix(doc.URL, "chrome-error:") {
				// the browser's error page, as the snapshot's "not loaded"
				pf.Hidden = append(pf.Hidden, hiddenFrame{Box: box, Label: "frame: not loaded"})
				continue
			}
			if err := decide(ctx, doc.URL, doc.Origin); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				pf.Hidden = append(pf.Hidden, hiddenFrame{Box: box, Label: hostLabel(doc.URL) + ": not allowed"})
				continue
			}
			inner, err := scanFrames(ctx, ex, tabID, doc.Doc)
			if err == nil && (inner.URL != doc.URL || inner.Origin != doc.Origin) {
				err = decide(ctx, inner.URL, inner.Origin) // it navigated since: decided again
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				pf.Hidden = append(pf.Hidden, hiddenFrame{Box: box, Label: "frame: not shown"})
				continue
			}
			pf.Shown[[2]string{f.Ref, doc.Doc}] = box
			content := clipBox(executor.Box{X: ox + f.CX, Y: oy + f.CY, Width: f.W - (f.CX - f.X), Height: f.H - (f.CY - f.Y)}, &box)
			if err := visit(inner, ox+f.CX, oy+f.CY, &content, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := visit(top, 0, 0, nil, 0); err != nil {
		return pageFrames{}, err
	}
	return pf, nil
}

// memoDecider is d remembering its answers, for the frames of one
// capture: decided by URL and origin, the same document is decided once.
func memoDecider(d helpers.FrameDecider) helpers.FrameDecider {
	seen := map[[2]string]error{}
	return func(ctx context.Context, rawURL, origin string) error {
		k := [2]string{rawURL, origin}
		if err, ok := seen[k]; ok {
			return err
		}
		err := d(ctx, rawURL, origin)
		if ctx.Err() == nil {
			seen[k] = err
		}
		return err
	}
}

// scanFrames runs pixels.js's frames op in the main document, or in the
// frame document with token doc.
func scanFrames(ctx context.Context, ex executor.Executor, tabID, doc string) (frameScan, error) {
	r, err := ex.RunScript(ctx, executor.ScriptParams{TabID: tabID, Source: pixelsSource, Doc: doc, Arg: json.RawMessage(`{"op":"frames"}`)})
	if err != nil {
		return frameScan{}, err
	}
	var s frameScan
	err = json.Unmarshal(r.Value, &s)
	if err == nil && s.Error == "frames" {
		return s, executor.Errorf(executor.CodePolicyDenied, "the page shows more frames than a capture can place; nothing was captured").
			WithHint("read the page with snapshot")
	}
	if err != nil || s.Error != "" {
		return frameScan{}, executor.Errorf(executor.CodeInternal, "the page's frames could not be listed: %s", r.Value)
	}
	return s, nil
}

// clipBox is b cut to clip (nil: b).
func clipBox(b executor.Box, clip *executor.Box) executor.Box {
	if clip == nil {
		return b
	}
	x0, y0 := max(b.X, clip.X), max(b.Y, clip.Y)
	x1, y1 := min(b.X+b.Width, clip.X+clip.Width), min(b.Y+b.Height, clip.Y+clip.Height)
	return executor.Box{X: x0, Y: y0, Width: max(x1-x0, 0), Height: max(y1-y0, 0)}
}

// hostLabel names a frame's place on its box: its host, as the
// snapshot's placeholder does.
func hostLabel(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "frame"
}

// visible reports whether any hidden frame has pixels.
func (pf pageFrames) visible() bool {
	for _, h := range pf.Hidden {
		if h.Width > 0 && h.Height > 0 {
			return true
		}
	}
	return false
}

// pixelsDenied is the error of a capture whose pixels cannot be placed.
func pixelsDenied(what string, pf pageFrames) error {
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
	decide := memoDecider(c.FrameDecider())
	t0 := time.Now()
	before, err := c.hiddenFrames(ctx, ex, tabID, decide)
	if err != nil {
		return executor.Screenshot{}, err
	}
	if element && before.visible() {
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
	after, err := c.hiddenFrames(ctx, ex, tabID, decide)
	if err != nil {
		return executor.Screenshot{}, err
	}
	after.changedSince(before)
	if element && after.visible() {
		return executor.Screenshot{}, pixelsDenied("screenshot of an element", after)
	}
	if !before.visible() && !after.visible() {
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
	c.srv.log.Debug("frames painted over", "frames", len(after.Hidden), "labels", labels(before, after), "measure_ms", ms(t1.Sub(t0)+t3.Sub(t2)),
		"capture_ms", ms(t2.Sub(t1)), "paint_ms", ms(time.Since(t3)))
	s.Data = data
	return s, nil
}

// labels lists what the hidden frames of ms are painted as.
func labels(ms ...pageFrames) []string {
	var out []string
	for _, m := range ms {
		for _, h := range m.Hidden {
			out = append(out, h.Label)
		}
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// refusePDF refuses a PDF of a page that holds a frame of another origin
// c may not read, shown or not.
func (c *Call) refusePDF(ctx context.Context, tabID string) error {
	pf, err := c.hiddenFrames(ctx, c.Executor(), tabID, c.FrameDecider())
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
