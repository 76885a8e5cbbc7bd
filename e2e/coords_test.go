package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
)

// coordsSite serves allowed.test's pages with controls at known boxes,
// and other.test's widget, a frame whose whole area is a button that
// tells its server when it is clicked (hits counts them).
type coordsSite struct {
	port string
	hits atomic.Int32
}

const coordsPage = `<!doctype html><title>Coords</title>
<style>body{margin:0} .abs{position:absolute}</style>
<button id="b" class="abs" style="left:40px;top:40px;width:120px;height:40px">Buy now</button>
<span id="tipper" class="abs" style="left:200px;top:40px;width:80px;height:30px" title="">Help</span>
<div id="tip" class="abs" style="left:200px;top:80px;display:none">Tooltip shown</div>
<div id="track" class="abs" style="left:40px;top:140px;width:300px;height:20px;background:#ddd">
 <div id="knob" class="abs" style="left:0;top:0;width:20px;height:20px;background:#333"></div></div>
<div id="sc" class="abs" style="left:40px;top:200px;width:200px;height:100px;overflow:auto">
 <div style="height:1000px">inner content</div></div>
<iframe id="f" class="abs" title="Widget" src="http://other.test:%[1]s/widget" style="left:300px;top:200px;width:200px;height:100px;border:0"></iframe>
<iframe id="same" class="abs" title="Same" style="left:520px;top:40px;width:200px;height:80px;border:0"
 srcdoc="<style>body{margin:0}</style><button style='width:200px;height:80px' onclick='parent.innerClicks.push(event.isTrusted)'>Inner</button>"></iframe>
<div id="card" class="abs" draggable="true" style="left:760px;top:40px;width:60px;height:30px;background:#9cf">Card</div>
<div id="zone" class="abs" style="left:760px;top:140px;width:140px;height:60px;background:#fc9">Drop here</div>
<div style="height:3000px"></div>
<script>
window.clicks = [];
window.dropped = [];
document.getElementById('card').addEventListener('dragstart', (e) => { e.dataTransfer.setData('text/plain', 'card'); });
document.getElementById('zone').addEventListener('dragover', (e) => { e.preventDefault(); });
document.getElementById('zone').addEventListener('drop', (e) => { e.preventDefault(); dropped.push(e.dataTransfer.getData('text/plain')); });
window.innerClicks = [];
document.getElementById('b').addEventListener('click', (e) => { clicks.push({trusted: e.isTrusted, x: e.clientX, y: e.clientY}); });
document.getElementById('tipper').addEventListener('mouseover', () => { document.getElementById('tip').style.display = 'block'; });
let down = false;
const knob = document.getElementById('knob');
knob.addEventListener('mousedown', (e) => { down = e.isTrusted; });
addEventListener('mousemove', (e) => { if (down) knob.style.left = Math.max(0, Math.min(280, e.clientX - 50)) + 'px'; });
addEventListener('mouseup', () => { down = false; });
</script>`

// swapPage moves the denied widget's frame under the pointer as soon as
// the pointer reaches the button: the click would land in the frame.
const swapPage = `<!doctype html><title>Swap</title><style>body{margin:0}</style>
<button id="b" style="position:absolute;left:40px;top:40px;width:120px;height:40px">Free gift</button>
<iframe id="f" title="Widget" src="http://other.test:%[1]s/widget" style="position:absolute;left:400px;top:300px;width:200px;height:100px;border:0"></iframe>
<script>
const f = document.getElementById('f');
const swap = () => { f.style.left = '0px'; f.style.top = '0px'; };
for (const ev of ['mouseover', 'mousemove', 'pointerover', 'pointermove']) document.getElementById('b').addEventListener(ev, swap);
</script>`

func newCoordsSite(t testing.TB) *coordsSite {
	t.Helper()
	site := &coordsSite{}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.Host, ":")
		w.Header().Set("Content-Type", "text/html")
		switch {
		case host == "other.test" && r.URL.Path == "/widget":
			fmt.Fprint(w, `<!doctype html><style>body{margin:0}</style><button style="width:100%;height:100px" onclick="fetch('/hit')">Pay</button>`)
		case host == "other.test" && r.URL.Path == "/hit":
			site.hits.Add(1)
		case r.URL.Path == "/coords":
			fmt.Fprintf(w, coordsPage, site.port)
		case r.URL.Path == "/swap":
			fmt.Fprintf(w, swapPage, site.port)
		default:
			http.NotFound(w, r)
		}
	})
	_, site.port, _ = strings.Cut(strings.TrimPrefix(testkit.Serve(t, mux), "http://"), ":")
	return site
}

// shotImage decodes a screenshot result's image.
func shotImage(t testing.TB, res *sdk.CallToolResult) image.Image {
	t.Helper()
	for _, c := range res.Content {
		if im, ok := c.(*sdk.ImageContent); ok {
			img, _, err := image.Decode(bytes.NewReader(im.Data))
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no image in %s", short(resultText(res)))
	return nil
}

// hitOf decodes an action's result at a point.
func hitOf(t testing.TB, text string) map[string]any {
	t.Helper()
	content, _, ok := mcp.Unfence(text)
	if !ok {
		t.Fatalf("a result at a point is not fenced: %s", short(text))
	}
	var out struct {
		Hit []map[string]any `json:"hit"`
	}
	if err := json.Unmarshal([]byte(jsonPart(content)), &out); err != nil || len(out.Hit) == 0 {
		t.Fatalf("no hit in %s (%v)", short(content), err)
	}
	return out.Hit[0]
}

// TestCoordinates: click, hover, drag and scroll at points of the
// viewport, as a vision client does, each reaching the page as trusted
// input and saying what it hit.
func TestCoordinates(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	site := newCoordsSite(t)
	s := startServer(t, resolverRules, "--policy="+frameablePolicy(t), "--allow-domain=allowed.test", "--enable-mutations", "--unsafe-enable-eval")
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/coords"})

	t.Run("click", func(t *testing.T) {
		h := hitOf(t, resultText(s.call("click", map[string]any{"x": 100, "y": 60})))
		if h["role"] != "button" || h["name"] != "Buy now" || h["ref"] == "" {
			t.Errorf("hit %v, want the button Buy now with its ref", h)
		}
		if got := s.evalString("JSON.stringify(clicks)"); got != `[{"trusted":true,"x":100,"y":60}]` {
			t.Errorf("the page saw clicks %s, want one trusted click at (100, 60)", got)
		}
		// The ref it names acts.
		s.call("click", map[string]any{"ref": h["ref"]})
		if got := s.evalString("clicks.length"); got != "2" {
			t.Errorf("the hit's ref clicked %s times in all, want 2", got)
		}
		// The pointer rests where the next click goes (the ref's click
		// left it at the button's centre, the first click's point): the
		// move that does not move still reaches the page, and the click
		// is not refused as one whose move went elsewhere.
		for range 2 {
			s.call("click", map[string]any{"x": 100, "y": 60})
		}
		if got := s.evalString("clicks.length"); got != "4" {
			t.Errorf("two more clicks at the resting pointer's point made %s in all, want 4", got)
		}
	})
	t.Run("marks", func(t *testing.T) {
		plain := shotImage(t, s.call("screenshot", nil))
		res := s.call("screenshot", map[string]any{"mark_refs": true})
		marked := shotImage(t, res)
		// The button's box is at (40, 40) 120x40: its left edge is drawn.
		if plain.At(40, 60) == marked.At(40, 60) || plain.At(100, 40) == marked.At(100, 40) {
			t.Errorf("the button's box edge is not drawn: plain %v, marked %v", plain.At(40, 60), marked.At(40, 60))
		}
		if plain.At(100, 75) != marked.At(100, 75) {
			t.Errorf("the image changed inside the button's box, away from the label")
		}
		_, list := pageContent(t, resultText(res))
		if strings.Contains(list, "iframe") || strings.Contains(list, "Pay") {
			t.Errorf("the marks list the cross-origin frame or its content:\n%s", list)
		}
		var ref string
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, `button "Buy now" 40,40 120x40`) {
				ref, _, _ = strings.Cut(line, " ")
			}
		}
		if ref == "" {
			t.Fatalf("the marks list has no line for the button:\n%s", list)
		}
		before := s.evalString("clicks.length")
		s.call("click", map[string]any{"ref": ref})
		if after := s.evalString("clicks.length"); after == before {
			t.Errorf("the marked ref %s did not click the button", ref)
		}
	})
	t.Run("same-origin frame", func(t *testing.T) {
		h := hitOf(t, resultText(s.call("click", map[string]any{"x": 600, "y": 80})))
		if h["name"] != "Inner" || h["ref"] == "" || h["frame"] != "about:srcdoc" {
			t.Errorf("hit %v, want the frame's button Inner with its ref and the frame's URL", h)
		}
		if got := s.evalString("JSON.stringify(innerClicks)"); got != "[true]" {
			t.Errorf("the frame's button saw %s, want one trusted click", got)
		}
	})
	t.Run("hover", func(t *testing.T) {
		s.call("snapshot", nil)
		// The tooltip it opens comes back as the outline's change, as for
		// a hover by ref.
		if txt := resultText(s.call("hover", map[string]any{"x": 220, "y": 50})); !strings.Contains(txt, `"changes":`) {
			t.Errorf("hover at a point returned no outline change: %s", txt)
		}
		if got := s.evalString("getComputedStyle(document.getElementById('tip')).display"); got != "block" {
			t.Errorf("tooltip display %s after hovering at its point", got)
		}
	})
	t.Run("drag", func(t *testing.T) {
		s.call("drag", map[string]any{"from_x": 50, "from_y": 150, "to_x": 250, "to_y": 150})
		if got := s.evalString("parseInt(document.getElementById('knob').style.left)"); got != "200" {
			t.Errorf("knob at %s px after the drag, want 200", got)
		}
	})
	t.Run("html5 drag", func(t *testing.T) {
		// A draggable element dropped on a drop zone: once the drag has
		// started the page gets drag events, not mouse moves, and the
		// drop point is still confirmed before the release.
		s.call("drag", map[string]any{"from_x": 790, "from_y": 55, "to_x": 830, "to_y": 170})
		if got := s.evalString("JSON.stringify(dropped)"); got != `["card"]` {
			t.Errorf("the zone saw drops %s, want the card's", got)
		}
	})
	t.Run("scroll", func(t *testing.T) {
		s.call("scroll", map[string]any{"x": 100, "y": 250, "dy": 300})
		deadline := time.Now().Add(10 * time.Second)
		for s.evalString("document.getElementById('sc').scrollTop") == "0" && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if got := s.evalString("document.getElementById('sc').scrollTop"); got == "0" {
			t.Errorf("the inner scroller under the point did not scroll")
		}
		if got := s.evalString("scrollY"); got != "0" {
			t.Errorf("the page scrolled (scrollY %s): the wheel went past the scroller under the point", got)
		}
	})
	t.Run("outside", func(t *testing.T) {
		txt := s.fail("BAD_ARGS", "click", map[string]any{"x": 5000, "y": 10})
		if !strings.Contains(txt, "outside the viewport") || !strings.Contains(txt, "x") {
			t.Errorf("outside point: %s", txt)
		}
		s.fail("BAD_ARGS", "click", map[string]any{"x": 10})
		s.fail("BAD_ARGS", "click", map[string]any{"x": 10, "y": 10, "selector": "#b"})
		s.fail("BAD_ARGS", "drag", map[string]any{"from_x": 10, "from_y": 10, "to_selector": "#b"})
	})
	t.Run("denied frame", func(t *testing.T) {
		txt := s.fail("POLICY_DENIED", "click", map[string]any{"x": 400, "y": 250})
		if !strings.Contains(txt, "other.test") {
			t.Errorf("the denial names no frame host: %s", txt)
		}
		s.fail("POLICY_DENIED", "hover", map[string]any{"x": 400, "y": 250})
		s.fail("POLICY_DENIED", "drag", map[string]any{"from_x": 50, "from_y": 150, "to_x": 400, "to_y": 250})
		time.Sleep(500 * time.Millisecond)
		if n := site.hits.Load(); n != 0 {
			t.Errorf("the denied frame's server saw %d clicks", n)
		}
	})
}

// TestCoordinatesSwapAttack: the page moves a frame of a denied origin
// under the pointer the moment the pointer reaches the allowed button.
// The click is refused and the frame's server sees no click.
func TestCoordinatesSwapAttack(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	site := newCoordsSite(t)
	s := startServer(t, resolverRules, "--policy="+frameablePolicy(t), "--allow-domain=allowed.test", "--enable-mutations", "--unsafe-enable-eval")
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/swap"})
	for range 3 {
		// Not s.fail: were the click let through, the frame's server must
		// still be asked below whether it saw it.
		// Refused either way the swap can go: the page's listeners moved
		// the frame under the point when the pointer reached the button
		// ("came under the point"), or the browser, routing input by what
		// it last drew, still had the frame of the round before there and
		// sent the move to it, so the button's document never saw it.
		r := s.try("click", map[string]any{"x": 100, "y": 60})
		if txt := resultText(r); !r.IsError || !strings.Contains(txt, "POLICY_DENIED") ||
			(!strings.Contains(txt, "came under the point") && !strings.Contains(txt, "never reached the document the policy decided on")) {
			t.Errorf("the click was not refused for the swap: %s", txt)
		}
		// Away first: a frame moved off the button under a resting pointer
		// would bring the button back under it, and the page swaps again.
		s.call("hover", map[string]any{"x": 5, "y": 200})
		s.eval("document.getElementById('f').style.left = '400px'; document.getElementById('f').style.top = '300px'")
	}
	time.Sleep(500 * time.Millisecond)
	if n := site.hits.Load(); n != 0 {
		t.Errorf("the swapped-in frame's server saw %d clicks", n)
	}
}

// TestCoordinatesSafeMode: without mutations a click at a point is refused
// like a click by ref, before anything is hit-tested; hover still works.
func TestCoordinatesSafeMode(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	site := newCoordsSite(t)
	s := startServer(t, resolverRules, "--allow-domain=allowed.test")
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/coords"})
	byRef := s.fail("POLICY_DENIED", "click", map[string]any{"selector": "#b"})
	atPoint := s.fail("POLICY_DENIED", "click", map[string]any{"x": 100, "y": 60})
	if byRef != atPoint {
		t.Errorf("a click at a point is not refused like one by selector:\n%s\n%s", byRef, atPoint)
	}
	s.call("hover", map[string]any{"x": 220, "y": 50})
}

// TestCoordinatesDeviceScale: under emulate's device scale factor 2 a
// screenshot has two pixels per CSS pixel and says so (scale); points stay
// CSS pixels, so a box read off the marked image, divided by the scale,
// is where the click lands; the marks are drawn twice as thick.
func TestCoordinatesDeviceScale(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	site := newCoordsSite(t)
	s := startServer(t, resolverRules, "--policy="+frameablePolicy(t), "--allow-domain=allowed.test", "--enable-mutations", "--unsafe-enable-eval")
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/coords"})
	s.call("emulate", map[string]any{"width": 800, "height": 600, "scale": 2})
	deadline := time.Now().Add(20 * time.Second)
	for s.evalString("innerWidth + 'x' + devicePixelRatio") != "800x2" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	plain := shotImage(t, s.call("screenshot", nil))
	// On cdp Playwright's own screenshot re-applied its viewport, dropping
	// the emulation: the screenshot must leave it in force.
	if got := s.evalString("innerWidth + 'x' + devicePixelRatio"); got != "800x2" {
		t.Errorf("after a screenshot the page is %s, want 800x2", got)
	}
	res := s.call("screenshot", map[string]any{"mark_refs": true})
	marked := shotImage(t, res)
	if w := marked.Bounds().Dx(); w != 1600 {
		t.Fatalf("the image is %d pixels wide, want 1600 (800 CSS pixels at scale 2)", w)
	}
	if head, _ := pageContent(t, resultText(res)); head["scale"] != float64(2) {
		t.Errorf("the result says scale %v, want 2", head["scale"])
	}
	// The button's left edge at CSS x=40 is image x=80..83 (two CSS pixels
	// of line at scale 2).
	for _, x := range []int{80, 83} {
		if plain.At(x, 120) == marked.At(x, 120) {
			t.Errorf("image pixel (%d, 120) on the button's edge is not drawn", x)
		}
	}
	h := hitOf(t, resultText(s.call("click", map[string]any{"x": 100, "y": 60})))
	if h["name"] != "Buy now" {
		t.Errorf("a click at CSS (100, 60) hit %v", h)
	}
	if got := s.evalString("JSON.stringify(clicks)"); got != `[{"trusted":true,"x":100,"y":60}]` {
		t.Errorf("the page saw %s", got)
	}
}

// BenchmarkCoordinates: a click at a point against the same click by ref
// (the point's hit test and the check after the move are its cost), and a
// screenshot with marks against one without (time and bytes). Medians.
func BenchmarkCoordinates(b *testing.B) {
	needBrowser(b)
	site := newCoordsSite(b)
	s := startServer(b, resolverRules, "--allow-domain=allowed.test", "--enable-mutations", "--log-level=error")
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/coords"})
	ref := hitOf(b, resultText(s.call("click", map[string]any{"x": 100, "y": 60})))["ref"]
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"click-ref", "click", map[string]any{"ref": ref}},
		{"click-xy", "click", map[string]any{"x": 100, "y": 60}},
		{"shot", "screenshot", map[string]any{}},
		{"shot-marked", "screenshot", map[string]any{"mark_refs": true}},
	}
	times := make([][]time.Duration, len(cases))
	size := make([]int, len(cases))
	for b.Loop() {
		for i, c := range cases {
			start := time.Now()
			res := s.call(c.tool, c.args)
			times[i] = append(times[i], time.Since(start))
			size[i] = 0
			for _, ct := range res.Content {
				switch v := ct.(type) {
				case *sdk.ImageContent:
					size[i] += len(v.Data)
				case *sdk.TextContent:
					size[i] += len(v.Text)
				}
			}
		}
	}
	for i, c := range cases {
		b.ReportMetric(float64(median(times[i]).Microseconds())/1000, c.name+"-ms")
		b.ReportMetric(float64(size[i]), c.name+"-bytes")
	}
}

// TestCoordinatesRecorded: a recorded click at a point keeps the point and
// what it hit (the element's role and name), as a click by ref keeps its
// element.
func TestCoordinatesRecorded(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	site := newCoordsSite(t)
	root := filepath.Join(t.TempDir(), "rec")
	s := startServer(t, resolverRules, "--allow-domain=allowed.test", "--enable-mutations", "--record="+root)
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + site.port + "/coords"})
	s.call("click", map[string]any{"x": 100, "y": 60})
	s.stop()
	b, err := os.ReadFile(filepath.Join(root, "local", "default", "calls.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct {
			Tool   string         `json:"tool"`
			Args   map[string]any `json:"args"`
			Target *struct {
				Role string `json:"role"`
				Name string `json:"name"`
			} `json:"target"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Tool != "click" {
			continue
		}
		if e.Args["x"] != float64(100) || e.Target == nil || e.Target.Role != "button" || e.Target.Name != "Buy now" {
			t.Errorf("the recorded click at a point: %s", line)
		}
		return
	}
	t.Fatalf("no click in the record:\n%s", b)
}
