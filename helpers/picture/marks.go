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
	markLine  = color.RGBA{0xe0, 0x10, 0x70, 0xff}
	markLabel = color.RGBA{0xff, 0xff, 0xff, 0xff}
)

// DrawMarks draws each mark's box and ref onto an encoded viewport image
// and encodes it again in its format. The image's scale is its width over
// the viewport's (the device scale factor); lines and labels grow with it
// so they read the same at 1 and 2. The image is decoded within the
// server's budget (Decoded) and drawn on in place: only a JPEG, whose
// decoded planes cannot be drawn on, is copied.
func DrawMarks(ctx context.Context, data []byte, mime string, quality int, m executor.Marks) (out []byte, scale float64, err error) {
	err = Decoded(ctx, data, func(src image.Image) error {
		img, ok := src.(draw.Image)
		if !ok {
			rgba := image.NewRGBA(src.Bounds())
			draw.Draw(rgba, rgba.Bounds(), src, src.Bounds().Min, draw.Src)
			img = rgba
		}
		out, scale, err = drawMarksOn(img, mime, quality, m)
		return err
	})
	return out, scale, err
}

func drawMarksOn(img draw.Image, mime string, quality int, m executor.Marks) ([]byte, float64, error) {
	var err error
	scale := 1.0
	if m.ViewportW > 0 {
		scale = float64(img.Bounds().Dx()) / float64(m.ViewportW)
	}
	k := max(int(scale+0.5), 1)
	px := func(v int) int { return int(float64(v) * scale) }
	for _, mk := range m.Marks {
		r := image.Rect(px(mk.X), px(mk.Y), px(mk.X+mk.W), px(mk.Y+mk.H)).Intersect(img.Bounds())
		if r.Empty() {
			continue
		}
		for i := range 2 * k {
			rect(img, r.Inset(i), markLine)
		}
		label(img, r.Min, mk.Ref, k)
	}
	var out bytes.Buffer
	if mime == "image/jpeg" {
		if quality == 0 {
			quality = 80
		}
		err = jpeg.Encode(&out, img, &jpeg.Options{Quality: quality})
	} else {
		err = png.Encode(&out, img)
	}
	return out.Bytes(), scale, err
}

// rect draws r's outline, one pixel wide.
func rect(img draw.Image, r image.Rectangle, c color.Color) {
	if r.Empty() {
		return
	}
	for x := r.Min.X; x < r.Max.X; x++ {
		img.Set(x, r.Min.Y, c)
		img.Set(x, r.Max.Y-1, c)
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		img.Set(r.Min.X, y, c)
		img.Set(r.Max.X-1, y, c)
	}
}

// label draws text in white on the mark's colour at the box's top-left
// corner (above it when there is room), each font pixel k pixels square.
func label(img draw.Image, at image.Point, text string, k int) {
	face := basicfont.Face7x13
	w := font.MeasureString(face, text).Ceil() + 4
	h := 13 + 2
	small := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(small, small.Bounds(), image.NewUniform(markLine), image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.NewUniform(markLabel), Face: face, Dot: fixed.P(2, 11)}
	d.DrawString(text)
	y0 := at.Y - h*k
	if y0 < img.Bounds().Min.Y {
		y0 = at.Y
	}
	for y := range h * k {
		for x := range w * k {
			p := image.Pt(at.X+x, y0+y)
			if p.In(img.Bounds()) {
				img.Set(p.X, p.Y, small.At(x/k, y/k))
			}
		}
	}
}
