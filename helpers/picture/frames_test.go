package picture

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"

	"github.com/chromegate/chromegate/executor"
)

// TestPaint: a hidden frame's box, in CSS pixels of the viewport,
// lands on the capture's device pixels — scaled for a 2x capture, moved
// by the scroll for a full page — and nothing outside it changes.
func TestPaint(t *testing.T) {
	t.Parallel()
	page := color.RGBA{250, 240, 10, 255}
	frame := executor.Box{X: 10, Y: 20, Width: 30, Height: 40}
	for _, tt := range []struct {
		name    string
		w, h    int // the capture, device pixels
		full    bool
		pf      Layer
		in, out image.Point // a pixel inside the painted box, one outside
	}{
		{"viewport", 100, 80, false, Layer{Width: 100, DPR: 1}, image.Pt(39, 59), image.Pt(40, 60)},
		{"scale 2", 200, 160, false, Layer{Width: 100, DPR: 2}, image.Pt(79, 119), image.Pt(80, 120)},
		{"full page scrolled", 100, 300, true, Layer{ScrollY: 100, Width: 100, DPR: 1}, image.Pt(11, 121), image.Pt(11, 119)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			img := image.NewRGBA(image.Rect(0, 0, tt.w, tt.h))
			for y := range tt.h {
				for x := range tt.w {
					img.SetRGBA(x, y, page)
				}
			}
			var src bytes.Buffer
			if err := png.Encode(&src, img); err != nil {
				t.Fatal(err)
			}
			tt.pf.Hidden = []Hidden{{frame, "other.test: not allowed"}}
			out, err := Paint(t.Context(), src.Bytes(), "image/png", 0, tt.full, tt.pf)
			if err != nil {
				t.Fatal(err)
			}
			got, err := png.Decode(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if c := color.RGBAModel.Convert(got.At(tt.in.X, tt.in.Y)); c == page {
				t.Errorf("%v inside the frame's box is the page's colour", tt.in)
			}
			if c := color.RGBAModel.Convert(got.At(tt.out.X, tt.out.Y)); c != page {
				t.Errorf("%v outside the frame's box is %v, not the page's", tt.out, c)
			}
		})
	}
}
