package e2e

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"image"
	"image/color"
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
)

// Pixels and keys of a denied frame (issue 27, findings 7 and 9). The
// fixture: a page of allowed.test (yellow) that frames other.test/frame,
// which the operator lets pages load and the model may not read. The
// frame paints itself a colour nothing else on the page has, and holds a
// form whose submission its server hears.
var (
	pixPage  = [3]uint8{250, 240, 10}
	pixFrame = [3]uint8{13, 247, 162}
	pixPaint = [3]uint8{0x44, 0x44, 0x4c}
)

type pixSite struct {
	port    string
	tlsPort string // the same site over https (a self-signed certificate)
	okPort  string // the same site on another port: another origin
	mu      sync.Mutex
	subs    []string
}

func (p *pixSite) submitted() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.subs)
}

// newPixSite serves /page?frames=N on allowed.test: N frames of
// other.test (1 unless said), and other.test's /frame.
func newPixSite(t testing.TB) *pixSite {
	p := &pixSite{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/page":
			n := 1
			fmt.Sscan(r.URL.Query().Get("frames"), &n)
			src := "http://other.test:" + p.port
			if r.URL.Query().Get("tls") != "" {
				src = "https://other.test:" + p.tlsPort
			}
			var b strings.Builder
			fmt.Fprintf(&b, `<!doctype html><title>Pixels</title><style>body{margin:0;background:rgb(%d,%d,%d)}</style>
<div style="height:60px">Page text</div><input id="own" aria-label="Own">`, pixPage[0], pixPage[1], pixPage[2])
			for i := range n {
				fmt.Fprintf(&b, `<iframe id="ad%d" title="widget" src="%s/frame?i=%d" style="display:block;width:300px;height:200px;border:0;margin:20px"></iframe>`,
					i, src, i)
			}
			if n > 0 {
				fmt.Fprintf(&b, `<iframe id="ok" title="allowed" src="http://allowed.test:%s/ok" style="display:block;width:200px;height:100px;border:0;margin:20px"></iframe>`, p.okPort)
			}
			b.WriteString(`<div style="height:1200px"></div>`)
			fmt.Fprint(w, b.String())
		case "/plain":
			fmt.Fprintf(w, `<!doctype html><title>Plain</title><style>body{margin:0;background:rgb(%d,%d,%d)}</style><p>Plain page</p>`, pixPage[0], pixPage[1], pixPage[2])
		case "/frame":
			fmt.Fprintf(w, `<!doctype html><title>Frame</title><body style="margin:0;background:rgb(%d,%d,%d)">
<form action="/submit" method="get"><input id="q" name="q" aria-label="Q"></form></body>`, pixFrame[0], pixFrame[1], pixFrame[2])
		case "/ok":
			fmt.Fprint(w, `<!doctype html><title>OK</title><body style="margin:0;background:rgb(200,30,220)">`)
		case "/submit":
			p.mu.Lock()
			p.subs = append(p.subs, r.URL.RawQuery)
			p.mu.Unlock()
			fmt.Fprint(w, "submitted")
		default:
			http.NotFound(w, r)
		}
	})
	_, p.port, _ = strings.Cut(strings.TrimPrefix(testkit.Serve(t, mux), "http://"), ":")
	_, p.okPort, _ = strings.Cut(strings.TrimPrefix(testkit.Serve(t, mux), "http://"), ":")
	ts := httptest.NewTLSServer(mux)
	t.Cleanup(ts.Close)
	_, p.tlsPort, _ = strings.Cut(strings.TrimPrefix(ts.URL, "https://"), ":")
	return p
}

// pixEgress are the egress modes the denied-frame tests run in: the
// default proxy, for a frame over plain http and for one over https (the
// proxy sees only a CONNECT tunnel to the host, which the test's policy
// lets pages load), and Playwright routing.
var pixEgress = []struct {
	name  string
	query string
	flags []string
}{
	{"proxy", "", nil},
	{"proxy-https", "?tls=1", []string{"--browser-arg=--ignore-certificate-errors"}},
	{"route", "", []string{"--egress-via=route"}},
}

func startPix(t testing.TB, flags ...string) (*server, *pixSite) {
	site := newPixSite(t)
	args := append([]string{xframeRules, "--policy=" + xframePolicy(t), "--allow-domain=allowed.test", "--enable-mutations", "--unsafe-enable-eval"}, flags...)
	return startServer(t, args...), site
}

// colourCount counts an image's pixels within tol of c, per channel.
func colourCount(img image.Image, c [3]uint8, tol int) int {
	return colourCounts(img, tol, c)[0]
}

// colourCounts counts, in one pass, the pixels of img within tol of each
// of cs. The decoders' own pixel types are read from their slices: a
// screenshot has a million pixels, and img.At boxes each one (seconds per
// image under the race detector).
func colourCounts(img image.Image, tol int, cs ...[3]uint8) []int {
	n := make([]int, len(cs))
	count := func(r, g, b uint8) {
		for i, c := range cs {
			if near(uint32(r), c[0], tol) && near(uint32(g), c[1], tol) && near(uint32(b), c[2], tol) {
				n[i]++
			}
		}
	}
	b := img.Bounds()
	switch m := img.(type) {
	case *image.RGBA:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Max.X, y)]
			for i := 0; i+3 < len(row); i += 4 {
				count(row[i], row[i+1], row[i+2])
			}
		}
	case *image.NRGBA: // a screenshot is opaque: no alpha to apply
		for y := b.Min.Y; y < b.Max.Y; y++ {
			row := m.Pix[m.PixOffset(b.Min.X, y):m.PixOffset(b.Max.X, y)]
			for i := 0; i+3 < len(row); i += 4 {
				count(row[i], row[i+1], row[i+2])
			}
		}
	case *image.YCbCr:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				count(color.YCbCrToRGB(m.Y[m.YOffset(x, y)], m.Cb[m.COffset(x, y)], m.Cr[m.COffset(x, y)]))
			}
		}
	default:
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r, g, bl, _ := img.At(x, y).RGBA()
				count(uint8(r>>8), uint8(g>>8), uint8(bl>>8))
			}
		}
	}
	return n
}

func near(v uint32, c uint8, tol int) bool {
	d := int(v) - int(c)
	return d <= tol && d >= -tol
}

// checkPainted fails when img shows the denied frame's pixels, lacks the
// painted box (at least most of one frame's area at the image's scale,
// cssW CSS pixels wide) or lacks the page's own.
func checkPainted(t *testing.T, what string, data []byte, cssW float64, tol int) {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: the image does not decode: %v", what, err)
	}
	scale := 1.0
	if cssW > 0 {
		scale = float64(img.Bounds().Dx()) / cssW
	}
	frameArea := int(300 * 200 * scale * scale)
	counts := colourCounts(img, tol, pixFrame, pixPaint, pixPage)
	if n := counts[0]; n > frameArea/1000 {
		t.Errorf("%s shows %d pixels of the denied frame", what, n)
	}
	// the allowed frame (a third of the denied one's area) is not painted
	if n := counts[1]; n < frameArea/2 || n > frameArea*6/5 {
		t.Errorf("%s: %d pixels of the painted box, want most of the denied frame's %d and no more", what, n, frameArea)
	}
	if n := counts[2]; n < frameArea/2 {
		t.Errorf("%s: only %d pixels of the allowed page's own", what, n)
	}
	if t.Failed() && os.Getenv("CHROMEGATE_E2E_KEEP") != "" {
		p := filepath.Join(os.Getenv("CHROMEGATE_E2E_KEEP"), strings.ReplaceAll(what, " ", "-"))
		_ = os.WriteFile(p, data, 0o600)
		t.Logf("%s kept in %s", what, p)
	}
}

func imageOf(t *testing.T, res *sdk.CallToolResult) []byte {
	t.Helper()
	for _, c := range res.Content {
		if im, ok := c.(*sdk.ImageContent); ok {
			return im.Data
		}
	}
	t.Fatalf("no image in %s", short(resultText(res)))
	return nil
}

// TestDeniedFramePixels: a screenshot of a page with a denied frame —
// viewport, PNG and JPEG, with mark_refs, full page after a scroll —
// shows a painted box where the frame is and none of the frame's pixels;
// the page's own pixels are intact. An element's screenshot and a PDF,
// which cannot be painted over, are refused; the outline names the frame
// as the box does.
func TestDeniedFramePixels(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	for _, mode := range pixEgress {
		t.Run(mode.name, func(t *testing.T) {
			s, site := startPix(t, mode.flags...)
			s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/page" + mode.query})
			_, outline := s.snapshotOf(nil)
			if !strings.Contains(outline, "other.test: not allowed") {
				t.Fatalf("the outline does not deny the frame:\n%s", outline)
			}
			vw := 1280.0
			if w, ok := s.eval("window.innerWidth").(float64); ok {
				vw = w
			}
			checkPainted(t, "a screenshot", imageOf(t, s.call("screenshot", nil)), vw, 3)
			checkPainted(t, "a JPEG screenshot", imageOf(t, s.call("screenshot", map[string]any{"format": "jpeg", "quality": 90})), vw, 24)
			checkPainted(t, "a screenshot with mark_refs", imageOf(t, s.call("screenshot", map[string]any{"mark_refs": true})), vw, 3)
			s.call("scroll", map[string]any{"dy": 70})
			checkPainted(t, "a full-page screenshot", imageOf(t, s.call("screenshot", map[string]any{"full_page": true})), vw, 3)
			txt := s.fail("POLICY_DENIED", "screenshot", map[string]any{"selector": "#own"})
			if !strings.Contains(txt, "other.test: not allowed") {
				t.Errorf("the element's screenshot's refusal does not name the frame: %s", txt)
			}
			s.fail("POLICY_DENIED", "pdf", nil)
			// a page without a denied frame is captured as it was
			s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/plain"})
			img, _, err := image.Decode(bytes.NewReader(imageOf(t, s.call("screenshot", nil))))
			if err != nil || colourCount(img, pixPaint, 3) > 0 {
				t.Errorf("a page with no frame has painted pixels (%v)", err)
			}
			s.call("pdf", nil)
		})
	}
}

// TestDeniedFrameRecordShots: the record's screenshot of an acting call
// (one hover) and the report that embeds it show the painted box, not the
// denied frame.
func TestDeniedFrameRecordShots(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	for _, mode := range pixEgress {
		t.Run(mode.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "rec")
			s, site := startPix(t, append([]string{"--record=" + root}, mode.flags...)...)
			s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/page" + mode.query})
			s.call("hover", map[string]any{"selector": "#own"})
			vw := 1280.0
			if w, ok := s.eval("window.innerWidth").(float64); ok {
				vw = w
			}
			s.stop()
			dir := filepath.Join(root, "local", "default")
			shots, _ := filepath.Glob(filepath.Join(dir, "shots", "*.jpg"))
			if len(shots) == 0 {
				t.Fatalf("the record holds no shots")
			}
			for _, p := range shots {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				checkPainted(t, "the record's shot "+filepath.Base(p), b, vw, 28)
			}
			report := filepath.Join(t.TempDir(), "report.html")
			runChromegate(t, "report", "-o", report, dir)
			page, _ := os.ReadFile(report)
			inline := regexp.MustCompile(`data:image/jpeg;base64,([^"]+)`).FindAllSubmatch(page, -1)
			if len(inline) == 0 {
				t.Fatalf("the report embeds no shot")
			}
			for _, m := range inline {
				b, err := base64.StdEncoding.DecodeString(html.UnescapeString(string(m[1])))
				if err != nil {
					t.Fatal(err)
				}
				checkPainted(t, "the report's shot", b, vw, 28)
			}
		})
	}
}

// TestDeniedFrameKeys: Tab moves the focus from the page into the denied
// frame; a key pressed without a target then, and Enter, are refused and
// the frame's form is never submitted. A press on the page's own element
// still works.
func TestDeniedFrameKeys(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	for _, mode := range pixEgress {
		t.Run(mode.name, func(t *testing.T) {
			s, site := startPix(t, mode.flags...)
			s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/page" + mode.query})
			s.call("click", map[string]any{"selector": "#own"})
			s.call("press", map[string]any{"key": "a"}) // the page's own input has the focus
			if v := s.evalString("document.getElementById('own').value"); v != "a" {
				t.Errorf("a key without a target on the page's own input: value %q", v)
			}
			s.call("press", map[string]any{"key": "Tab"}) // into the frame
			txt := s.fail("POLICY_DENIED", "press", map[string]any{"key": "x"})
			if strings.Contains(txt, "nothing was pressed") == false && !strings.Contains(txt, "not allowed") {
				t.Errorf("the refusal does not say why: %s", txt)
			}
			s.fail("POLICY_DENIED", "press", map[string]any{"key": "Enter"})
			time.Sleep(500 * time.Millisecond) // a submission would have arrived by now
			if subs := site.submitted(); len(subs) > 0 {
				t.Errorf("the denied frame's form was submitted: %q", subs)
			}
			// a target on the page takes the keys back to the page
			s.call("press", map[string]any{"selector": "#own", "key": "b"})
			if v := s.evalString("document.getElementById('own').value"); !strings.Contains(v, "b") {
				t.Errorf("a press on the page's own input: value %q", v)
			}
		})
	}
}

// BenchmarkScreenshotFrames prints the median time of a viewport
// screenshot on a page of 5 denied cross-origin frames (all painted) and
// an allowed one, and on the same page without frames: the cost of
// deciding and painting them (make bench; one round is 30 screenshots).
func BenchmarkScreenshotFrames(b *testing.B) {
	for range b.N {
		screenshotFramesCost(b)
	}
}

func screenshotFramesCost(t testing.TB) {
	s, site := startPix(t)
	median := func(url string) time.Duration {
		s.call("navigate", map[string]any{"url": url})
		var ds []time.Duration
		for range 15 {
			start := time.Now()
			s.call("screenshot", nil)
			ds = append(ds, time.Since(start))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	base := "http://allowed.test:" + site.port
	plain := median(base + "/page?frames=0")
	framed := median(base + "/page?frames=5")
	t.Logf("screenshot median: %v without frames, %v with 5 denied cross-origin frames and 1 allowed (+%v)", plain, framed, framed-plain)
	for _, l := range strings.Split(s.log.String(), "\n") {
		if strings.Contains(l, "frames painted over") {
			t.Log(l) // where the time goes
		}
	}
}

// opaqueImage hides an image's type: colourCounts reads it through At.
type opaqueImage struct{ image.Image }

// TestColourCountsAgree: the typed pixel loops count what At shows, for
// the decoders' types (PNG's RGBA and NRGBA, JPEG's YCbCr).
func TestColourCountsAgree(t *testing.T) {
	testkit.Backends(t, testkit.CDP) // no browser: once is enough
	rect := image.Rect(3, 5, 203, 105)
	rgba, nrgba := image.NewRGBA(rect), image.NewNRGBA(rect)
	ycc := image.NewYCbCr(rect, image.YCbCrSubsampleRatio420)
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		for x := rect.Min.X; x < rect.Max.X; x++ {
			c := color.RGBA{uint8(x * 7), uint8(y * 3), uint8(x ^ y), 255}
			if (x/10+y/10)%3 == 0 {
				c = color.RGBA{pixPaint[0], pixPaint[1], pixPaint[2], 255}
			}
			rgba.Set(x, y, c)
			nrgba.Set(x, y, c)
			yy, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
			ycc.Y[ycc.YOffset(x, y)] = yy
			ycc.Cb[ycc.COffset(x, y)], ycc.Cr[ycc.COffset(x, y)] = cb, cr
		}
	}
	for _, img := range []image.Image{rgba, nrgba, ycc} {
		got := colourCounts(img, 3, pixPaint, pixPage, pixFrame)
		want := colourCounts(opaqueImage{img}, 3, pixPaint, pixPage, pixFrame)
		if !slices.Equal(got, want) || got[0] == 0 {
			t.Errorf("%T: counted %v, At shows %v", img, got, want)
		}
	}
}
