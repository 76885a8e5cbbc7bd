package picture

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"

	"github.com/chromegate/chromegate/executor"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

var (
	paintFill  = color.RGBA{0x44, 0x44, 0x4c, 0xff}
	paintText  = color.RGBA{0xff, 0xff, 0xff, 0xff}
	paintEdge  = color.RGBA{0xb0, 0x10, 0x10, 0xff}
	paintBlank = image.NewUniform(paintFill)
)

// Layer is what painting needs to know of a page measured for a capture:
// its viewport and scroll (CSS pixels), its device scale, and the boxes
// painted over, in its top-level viewport.
type Layer struct {
	ScrollX, ScrollY, Width, DPR float64
	Hidden                       []Hidden
}

// Hidden is a box painted over, and the label said on it.
type Hidden struct {
	executor.Box
	Label string
}

// Paint paints each hidden box of the layers onto an encoded capture and
// encodes it again in its format. A viewport capture's scale is its width
// over the viewport's; a full page's starts at the document's top-left, so
// boxes move by the scroll. The image is decoded within the budget
// (Decoded).
func Paint(ctx context.Context, data []byte, mime string, quality int, full bool, ms ...Layer) ([]byte, error) {
	var out bytes.Buffer
	err := Decoded(ctx, data, func(src image.Image) error {
		img, ok := src.(*image.RGBA)
		if !ok {
			img = image.NewRGBA(src.Bounds())
			draw.Draw(img, img.Bounds(), src, src.Bounds().Min, draw.Src)
		}
		paintHidden(img, full, ms)
		return encodeLike(&out, img, mime, quality)
	})
	return out.Bytes(), err
}

// paintHidden paints each hidden frame of ms onto img.
func paintHidden(img *image.RGBA, full bool, ms []Layer) {
	for _, m := range ms {
		scale := 1.0
		if m.Width > 0 {
			scale = float64(img.Bounds().Dx()) / m.Width
		}
		var ox, oy float64
		if full {
			ox, oy = m.ScrollX, m.ScrollY
			if m.DPR > 0 {
				scale = m.DPR // the page may be wider than the viewport
			}
		}
		for _, h := range m.Hidden {
			r := image.Rect(floor((h.X+ox)*scale), floor((h.Y+oy)*scale),
				ceil((h.X+ox+h.Width)*scale), ceil((h.Y+oy+h.Height)*scale)).Intersect(img.Bounds())
			if h.Width <= 0 || h.Height <= 0 || r.Empty() {
				continue
			}
			paintBox(img, r, h.Label, max(int(scale+0.5), 1))
		}
	}
}

// encodeLike encodes img as mime, a capture's format.
func encodeLike(out *bytes.Buffer, img image.Image, mime string, quality int) error {
	if mime == "image/jpeg" {
		if quality == 0 {
			quality = 80
		}
		return jpeg.Encode(out, img, &jpeg.Options{Quality: quality})
	}
	// speed over size: the image is on its way out already
	return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(out, img)
}

func floor(v float64) int { return int(v) - btoi(v < 0 && v != float64(int(v))) }

func ceil(v float64) int { return int(v) + btoi(v > 0 && v != float64(int(v))) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// paintBox fills r and writes the label at its top-left, each font pixel
// k pixels square, inside a border that says the box is chromegate's.
func paintBox(img *image.RGBA, r image.Rectangle, text string, k int) {
	draw.Draw(img, r, paintBlank, image.Point{}, draw.Src)
	for i := range k {
		rect(img, r.Inset(i), paintEdge)
	}
	face := basicfont.Face7x13
	w, h := font.MeasureString(face, text).Ceil()+4, 13+2
	small := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(small, small.Bounds(), paintBlank, image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.NewUniform(paintText), Face: face, Dot: fixed.P(2, 11)}
	d.DrawString(text)
	at := r.Min.Add(image.Pt(4*k, 4*k))
	for y := range h * k {
		for x := range w * k {
			p := image.Pt(at.X+x, at.Y+y)
			if p.In(r.Inset(k)) {
				img.Set(p.X, p.Y, small.At(x/k, y/k))
			}
		}
	}
}
