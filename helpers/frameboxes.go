package helpers

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers/picture"
)

// A capture shows the documents of a page's frames, and each is the
// caller's to see only when the policy says so. HiddenFrames finds, in
// chromegate's isolated world (scripts/frameboxes.js), every frame
// element's border box, reaches each frame's document by the browser's
// frame identity (executor.FrameReader) and decides it with the caller's
// FrameDecider, however deep in allowed frames; every frame that is not
// allowed, or cannot be reached or decided, is listed to be painted over
// (package picture). Nothing is put into the page.

//go:embed scripts/frameboxes.js
var frameboxesJS string

// FrameboxesSource is scripts/frameboxes.js, with the ref registry: its
// "frames" op lists a document's frame elements, its "focus" op the frame
// element that holds the focus.
var FrameboxesSource = executor.WithRefs(frameboxesJS)

// Bounds of the frames one capture decides: past them every further
// frame of another origin is painted over, undecided.
const (
	maxPixelFrames     = 64
	maxPixelFrameDepth = 6
)

// frameScan is a document's answer to frameboxes.js's frames op.
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

// FrameBoxes is what a capture needs to know of a tab's page: its
// viewport and scroll, the frames painted over, and the frames of other
// origins shown, each by its element's ref and its document's token.
type FrameBoxes struct {
	picture.Layer
	Height float64
	Shown  map[[2]string]executor.Box
}

// ChangedSince paints over each frame pf shows that before did not show
// with the same document: one that came, or navigated, while the page
// was captured, when what it showed then was decided on neither side.
func (pf *FrameBoxes) ChangedSince(before FrameBoxes) {
	for k, box := range pf.Shown {
		if _, ok := before.Shown[k]; !ok {
			pf.Hidden = append(pf.Hidden, picture.Hidden{Box: box, Label: "frame: changed while captured"})
		}
	}
}

// HiddenFrames finds, in the tab's page as it is now, every frame of
// another origin the caller may not read (decide), however deep
// in allowed frames. A frame that cannot be reached or decided is hidden
// too (fail closed).
func HiddenFrames(ctx context.Context, ex executor.Executor, tabID string, decide FrameDecider) (FrameBoxes, error) {
	top, err := scanFrames(ctx, ex, tabID, "")
	if err != nil {
		return FrameBoxes{}, err
	}
	pf := FrameBoxes{Layer: picture.Layer{ScrollX: top.ScrollX, ScrollY: top.ScrollY, Width: top.Width, DPR: top.DPR}, Height: top.Height,
		Shown: map[[2]string]executor.Box{}}
	fr, _ := ex.(executor.FrameReader)
	seen := 0
	var visit func(s frameScan, ox, oy float64, clip *executor.Box, depth int) error
	visit = func(s frameScan, ox, oy float64, clip *executor.Box, depth int) error {
		for _, f := range s.Frames {
			box := clipBox(executor.Box{X: ox + f.X, Y: oy + f.Y, Width: f.W, Height: f.H}, clip)
			seen++
			if fr == nil || seen > maxPixelFrames || depth >= maxPixelFrameDepth {
				pf.Hidden = append(pf.Hidden, picture.Hidden{Box: box, Label: "frame: not shown"})
				continue
			}
			doc, err := fr.FrameDocument(ctx, executor.FrameParams{TabID: tabID, Ref: f.Ref})
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				pf.Hidden = append(pf.Hidden, picture.Hidden{Box: box, Label: "frame: not shown"})
				continue
			}
			if strings.HasPrefix(doc.URL, "chrome-error:") {
				// the browser's error page, as the snapshot's "not loaded"
				pf.Hidden = append(pf.Hidden, picture.Hidden{Box: box, Label: "frame: not loaded"})
				continue
			}
			if err := decide(ctx, doc.URL, doc.Origin); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				pf.Hidden = append(pf.Hidden, picture.Hidden{Box: box, Label: hostLabel(doc.URL) + ": not allowed"})
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
				pf.Hidden = append(pf.Hidden, picture.Hidden{Box: box, Label: "frame: not shown"})
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
		return FrameBoxes{}, err
	}
	return pf, nil
}

// MemoDecider is d remembering its answers, for the frames of one
// capture: decided by URL and origin, the same document is decided once.
func MemoDecider(d FrameDecider) FrameDecider {
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

// scanFrames runs frameboxes.js's frames op in the main document, or in the
// frame document with token doc.
func scanFrames(ctx context.Context, ex executor.Executor, tabID, doc string) (frameScan, error) {
	r, err := ex.RunScript(ctx, executor.ScriptParams{TabID: tabID, Source: FrameboxesSource, Doc: doc, Arg: json.RawMessage(`{"op":"frames"}`)})
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

// Visible reports whether any hidden frame has pixels.
func (pf FrameBoxes) Visible() bool {
	for _, h := range pf.Hidden {
		if h.Width > 0 && h.Height > 0 {
			return true
		}
	}
	return false
}

// Labels lists what the hidden frames of ms are painted as.
func Labels(ms ...FrameBoxes) []string {
	var out []string
	for _, m := range ms {
		for _, h := range m.Hidden {
			out = append(out, h.Label)
		}
	}
	return out
}
