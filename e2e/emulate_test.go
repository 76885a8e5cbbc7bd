package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// Emulation (issue 15, item 2): emulate changes how every tab of the
// session behaves — its device, clock, language, media features, position
// and network — read back here the way a page sees them, through get_text.

// envPage prints what the page sees of its device, every 100 ms (a
// viewport or a media feature changes under a live page).
const envPage = `<!doctype html><title>Env</title><meta name="viewport" content="width=device-width, initial-scale=1"><p id="env" style="word-break: break-all"></p><button id="popup" onclick="window.open('/env?popup', '_blank')">popup</button><script>
function show() {
  document.getElementById('env').textContent = 'ENV' + JSON.stringify({
    w: innerWidth, h: innerHeight, dpr: devicePixelRatio,
    tz: Intl.DateTimeFormat().resolvedOptions().timeZone,
    lang: navigator.language,
    dark: matchMedia('(prefers-color-scheme: dark)').matches,
    light: matchMedia('(prefers-color-scheme: light)').matches,
    reduce: matchMedia('(prefers-reduced-motion: reduce)').matches,
    online: navigator.onLine,
    ua: navigator.userAgent,
    touch: navigator.maxTouchPoints,
  }) + 'ENV';
}
show(); setInterval(show, 100);
</script>`

// geoPage asks for the position once it loads.
const geoPage = `<!doctype html><title>Geo</title><p id="geo">asking</p><script>
navigator.geolocation.getCurrentPosition(
  (p) => { document.getElementById('geo').textContent = 'GEO ' + p.coords.latitude + ' ' + p.coords.longitude + ' ' + p.coords.accuracy; },
  (e) => { document.getElementById('geo').textContent = 'GEOERR ' + e.code + ' ' + e.message; },
  {timeout: 10000});
</script>`

// netPage fetches bigSize bytes when its button is clicked and says how
// long that took, or that it failed.
const netPage = `<!doctype html><title>Net</title><p id="out">idle</p><button id="go" onclick="
  const t0 = performance.now();
  document.getElementById('out').textContent = 'fetching';
  fetch('/big?' + Math.random()).then(r => r.arrayBuffer()).then(b => {
    document.getElementById('out').textContent = 'GOT ' + b.byteLength + ' IN ' + Math.round(performance.now() - t0);
  }, e => { document.getElementById('out').textContent = 'FAILED ' + e; });
">go</button>`

const bigSize = 200_000

func emulateSite(t *testing.T) string {
	t.Helper()
	return "http://allowed.test:" + serveMux(t, emulateMux())
}

func emulateMux() *http.ServeMux {
	mux := http.NewServeMux()
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(w, body)
		}
	}
	mux.HandleFunc("/env", html(envPage))
	mux.HandleFunc("/geo", html(geoPage))
	mux.HandleFunc("/net", html(netPage))
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(make([]byte, bigSize))
	})
	return mux
}

type pageEnv struct {
	W, H   int
	DPR    float64
	TZ     string
	Lang   string
	Dark   bool
	Light  bool
	Reduce bool
	Online bool
	UA     string
	Touch  int
}

var envRE = regexp.MustCompile(`ENV(\{.*?\})ENV`)

// readEnv reads the page's env through get_text.
func readEnv(t *testing.T, s *server, tabID string) pageEnv {
	t.Helper()
	args := map[string]any{"selector": "#env"}
	if tabID != "" {
		args["tab_id"] = tabID
	}
	txt := resultText(s.call("get_text", args))
	m := envRE.FindStringSubmatch(txt)
	if m == nil {
		t.Fatalf("no env in the page's text: %s", txt)
	}
	var e pageEnv
	if err := json.Unmarshal([]byte(m[1]), &e); err != nil {
		t.Fatalf("env %s: %v", m[1], err)
	}
	return e
}

// waitEnv reads the env until ok holds (a page sees a change at its next
// tick), failing with the last one read.
func waitEnv(t *testing.T, s *server, tabID, what string, ok func(pageEnv) bool) pageEnv {
	t.Helper()
	var e pageEnv
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(150 * time.Millisecond) {
		if e = readEnv(t, s, tabID); ok(e) {
			return e
		}
	}
	t.Fatalf("%s: the page sees %+v", what, e)
	return e
}

// emulated decodes emulate's result.
func emulated(t *testing.T, s *server, args map[string]any) map[string]any {
	t.Helper()
	var out map[string]any
	res := s.call("emulate", args)
	if err := json.Unmarshal([]byte(jsonPart(resultText(res))), &out); err != nil {
		t.Fatalf("emulate: %v: %s", err, resultText(res))
	}
	return out
}

// TestEmulateDevicePage: the page sees each emulation at once,
// keeps it across a navigation and in a new tab (emulation is the
// session's), and sees its own device again after reset.
func TestEmulateDevicePage(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	base := emulateSite(t)
	s := startServer(t, resolverRules, "--allow-domain=allowed.test", "--allow-domain=other.test")
	s.call("navigate", map[string]any{"url": base + "/env"})
	before := readEnv(t, s, "")
	if !before.Online || before.TZ == "" || before.W == 0 {
		t.Fatalf("the page before any emulation: %+v", before)
	}

	if got := emulated(t, s, nil); got["note"] == nil {
		t.Errorf("emulate with no arguments before any emulation: want the note, got %v", got)
	}
	// Width and height alone: no user agent, so safe mode allows it.
	emulated(t, s, map[string]any{"width": 500, "height": 400, "scale": 2})
	waitEnv(t, s, "", "a 500x400 viewport at 2x", func(e pageEnv) bool { return e.W == 500 && e.H == 400 && e.DPR == 2 })

	tz := "Asia/Tokyo"
	if before.TZ == tz {
		tz = "America/Sao_Paulo"
	}
	got := emulated(t, s, map[string]any{"timezone": tz, "locale": "de-DE", "color_scheme": "dark", "reduced_motion": "reduce"})
	if got["width"] != float64(500) || got["timezone"] != tz {
		t.Errorf("emulate merges into what is set: %v", got)
	}
	want := func(e pageEnv) bool {
		return e.W == 500 && e.H == 400 && e.TZ == tz && e.Lang == "de-DE" && e.Dark && !e.Light && e.Reduce
	}
	waitEnv(t, s, "", "timezone, locale, dark, reduced motion", want)

	got = emulated(t, s, map[string]any{"color_scheme": "light"})
	waitEnv(t, s, "", "light", func(e pageEnv) bool { return e.Light && !e.Dark && e.TZ == tz })
	emulated(t, s, map[string]any{"color_scheme": "dark"})

	// A navigation keeps it.
	s.call("navigate", map[string]any{"url": base + "/env?again"})
	waitEnv(t, s, "", "after a navigation", want)

	// So does one to another site, in a renderer of its own.
	other := strings.Replace(base, "allowed.test", "other.test", 1)
	s.call("navigate", map[string]any{"url": other + "/env?site"})
	waitEnv(t, s, "", "after a navigation to another site", want)

	// A new tab has it too.
	s.call("tab_new", map[string]any{"url": base + "/env?tab"})
	waitEnv(t, s, "", "in a new tab", want)

	// No arguments: the report.
	got = emulated(t, s, nil)
	if got["timezone"] != tz || got["locale"] != "de-DE" || got["color_scheme"] != "dark" || got["width"] != float64(500) {
		t.Errorf("emulate with no arguments: %v", got)
	}

	// Offline: the page sees it.
	emulated(t, s, map[string]any{"network": "offline"})
	waitEnv(t, s, "", "offline", func(e pageEnv) bool { return !e.Online })

	// Reset: every tab sees its own device again.
	got = emulated(t, s, map[string]any{"reset": true})
	if got["note"] == nil || got["timezone"] != nil {
		t.Errorf("reset: %v", got)
	}
	same := func(e pageEnv) bool {
		size := e.W == before.W && e.H == before.H
		if e2eBackend == "ext" {
			// The extension clears its override and the tab shows the
			// window's own size. The harness's Chromium is Playwright's,
			// whose own viewport (before's) is an override of the same
			// slot, cleared with it; a user's Chrome has none.
			size = e.W != 500 && e.H != 400
		}
		return size && e.DPR == before.DPR && e.TZ == before.TZ && e.Lang == before.Lang &&
			e.Dark == before.Dark && e.Reduce == before.Reduce && e.Online && e.UA == before.UA
	}
	waitEnv(t, s, "", fmt.Sprintf("after reset, the new tab (before: %+v)", before), same)
	for _, id := range otherTabs(t, s) {
		waitEnv(t, s, id, "after reset, the first tab", same)
	}
}

// TestEmulateDeviceIdentity: a phone preset carries its user agent, touch
// and a mobile viewport; the user agent needs mutations.
func TestEmulateDeviceIdentity(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	base := emulateSite(t)
	s := startServer(t, resolverRules, "--allow-domain=allowed.test", "--enable-mutations")
	s.call("navigate", map[string]any{"url": base + "/env"})
	got := emulated(t, s, map[string]any{"device": "Pixel 7"})
	if got["device"] != "Pixel 7" || got["mobile"] != true {
		t.Errorf("emulate Pixel 7: %v", got)
	}
	waitEnv(t, s, "", "Pixel 7", func(e pageEnv) bool {
		return e.W == 412 && e.DPR == 2.625 && strings.Contains(e.UA, "Pixel 7") && e.Touch > 0
	})
	emulated(t, s, map[string]any{"user_agent": "chromegate-test-agent/1.0", "color_scheme": "dark"})
	waitEnv(t, s, "", "a user agent", func(e pageEnv) bool { return e.UA == "chromegate-test-agent/1.0" && e.W == 412 })
	// A popup the page opens is a tab of the session: it has the
	// emulation too (its document sees it by the time it is read).
	s.call("click", map[string]any{"selector": "#popup"})
	popup := popupOf(t, s)
	if popup == "" {
		t.Fatal("the popup is not listed")
	}
	waitEnv(t, s, popup, "the popup", func(e pageEnv) bool { return e.W == 412 && e.Dark && e.DPR == 2.625 })
	s.call("tab_close", map[string]any{"tab_id": popup})
	emulated(t, s, map[string]any{"reset": true, "device": "Desktop 1080p"})
	waitEnv(t, s, "", "Desktop 1080p", func(e pageEnv) bool {
		return e.W == 1920 && e.H == 1080 && e.DPR == 1 && !strings.Contains(e.UA, "Pixel") && e.Touch == 0
	})
}

// TestEmulateGeolocation: the page gets the position set, on the origin
// the call was decided on; a page of another origin is not granted it.
// Browsers give a position to secure pages only: 127.0.0.1 and localhost
// are; an http page of a name is refused with the reason. Through the
// extension no permission is granted (the user's Chrome keeps its own):
// the position is emulated, and a page that may not ask gets the
// browser's refusal, never the position.
func TestEmulateGeolocation(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	port := serveMux(t, emulateMux())
	base := "http://127.0.0.1:" + port
	s := startServer(t, resolverRules, "--allow-domain=allowed.test", "--allow-domain=127.0.0.1", "--allow-domain=localhost", "--enable-mutations")
	// Through the extension the permissions are the user's. Over CDP or a
	// browser server chromegate makes a context of its own: its to grant.
	ext := e2eBackend == "ext"
	if !ext {
		s.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/env"})
		if txt := s.fail("BAD_ARGS", "emulate", map[string]any{"latitude": 1, "longitude": 2}); !strings.Contains(txt, "secure page") {
			t.Errorf("a position for an http page: %s", txt)
		}
	}
	s.call("navigate", map[string]any{"url": base + "/env"})
	got := emulated(t, s, map[string]any{"latitude": 48.8584, "longitude": 2.2945, "accuracy": 25})
	if want := map[bool]any{false: base, true: nil}[ext]; got["geolocation_origin"] != want {
		t.Errorf("the position is granted to %v, want %v", got["geolocation_origin"], want)
	}
	s.call("navigate", map[string]any{"url": base + "/geo"})
	txt := waitText(t, s, "#geo", "GEO")
	switch {
	case !ext && !strings.Contains(txt, "GEO 48.8584 2.2945 25"):
		t.Errorf("the page's position: %s", txt)
	case ext && !strings.Contains(txt, "GEO 48.8584 2.2945 25") && !strings.Contains(txt, "GEOERR 1"):
		t.Errorf("without a grant, want the position or the browser's refusal: %s", txt)
	}
	// Another origin: never granted (the permission is the one origin's).
	other := "http://localhost:" + port
	s.call("navigate", map[string]any{"url": other + "/geo"})
	txt = waitText(t, s, "#geo", "GEO")
	if !strings.Contains(txt, "GEOERR 1") {
		t.Errorf("a page of another origin: want the browser's refusal, got %s", txt)
	}
}

// waitText polls the text of selector until it contains prefix.
func waitText(t *testing.T, s *server, selector, prefix string) string {
	t.Helper()
	var txt string
	for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		txt = resultText(s.call("get_text", map[string]any{"selector": selector}))
		if strings.Contains(txt, prefix) {
			return txt
		}
	}
	t.Fatalf("%s never showed %q: %s", selector, prefix, txt)
	return ""
}

var gotRE = regexp.MustCompile(`GOT (\d+) IN (\d+)`)

// fetchBig clicks the net page's button and returns how long the page's
// fetch took, or the failure.
func fetchBig(t *testing.T, s *server) (time.Duration, string) {
	t.Helper()
	s.call("click", map[string]any{"selector": "#go"})
	txt := waitText(t, s, "#out", "")
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		txt = resultText(s.call("get_text", map[string]any{"selector": "#out"}))
		if strings.Contains(txt, "FAILED") {
			return 0, txt
		}
		if m := gotRE.FindStringSubmatch(txt); m != nil {
			if m[1] != strconv.Itoa(bigSize) {
				t.Fatalf("the page got %s bytes, want %d", m[1], bigSize)
			}
			ms, _ := strconv.Atoi(m[2])
			return time.Duration(ms) * time.Millisecond, ""
		}
	}
	t.Fatalf("the fetch never ended: %s", txt)
	return 0, ""
}

// TestEmulateNetwork: offline fails a page's fetch; slow-3g (50 KB/s)
// makes 200 KB take over 2 s, by the throttling alone (unthrottled it
// is a loopback fetch); none restores it.
func TestEmulateNetwork(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	base := emulateSite(t)
	s := startServer(t, resolverRules, "--allow-domain=allowed.test", "--enable-mutations")
	s.call("navigate", map[string]any{"url": base + "/net"})
	if _, failed := fetchBig(t, s); failed != "" {
		t.Fatalf("online: %s", failed)
	}
	emulated(t, s, map[string]any{"network": "offline"})
	if _, failed := fetchBig(t, s); failed == "" {
		t.Errorf("offline: the page's fetch succeeded")
	}
	emulated(t, s, map[string]any{"network": "slow-3g"})
	d, failed := fetchBig(t, s)
	if failed != "" {
		t.Fatalf("slow-3g: %s", failed)
	}
	// 200 KB at 50 KB/s is 4 s, plus 2 s of latency: well over 2 s.
	if d < 2*time.Second {
		t.Errorf("slow-3g: %d bytes took %v, want over 2s", bigSize, d)
	}
	emulated(t, s, map[string]any{"network": "none", "cpu_throttling": 4})
	emulated(t, s, map[string]any{"cpu_throttling": 1})
	if _, failed := fetchBig(t, s); failed != "" {
		t.Errorf("after network none: %s", failed)
	}
}

// TestEmulateRefusals: what no browser can emulate is BAD_ARGS naming the
// allowed values, before the policy; in safe mode the policy refuses a
// user agent, a position or a phone, and allows the rest.
func TestEmulateRefusals(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	base := emulateSite(t)
	s := startServer(t, resolverRules, "--allow-domain=allowed.test")
	// On about:blank: nothing to decide on.
	s.fail("POLICY_DENIED", "emulate", map[string]any{"width": 500, "height": 500})
	s.call("navigate", map[string]any{"url": base + "/env"})
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"device": "Nokia 3310"}, "Pixel 7"},
		{map[string]any{"network": "carrier-pigeon"}, "slow-3g"},
		{map[string]any{"width": 50000, "height": 500}, "100 to 7680"},
		{map[string]any{"width": 500}, "both width and height"},
		{map[string]any{"scale": 40, "width": 500, "height": 500}, "0.25 to 5"},
		{map[string]any{"cpu_throttling": 0.5}, "1 (none) to 20"},
		{map[string]any{"latitude": 91, "longitude": 0}, "latitude -90 to 90"},
		{map[string]any{"latitude": 10}, "both latitude and longitude"},
		{map[string]any{"timezone": "Mars/Olympus Mons"}, "IANA"},
		{map[string]any{"locale": "not a locale!"}, "BCP 47"},
		{map[string]any{"color_scheme": "sepia"}, ""},
		// A header a page's requests would carry: one line, or nothing.
		{map[string]any{"user_agent": "a\r\nX-Injected: 1"}, "one line"},
	} {
		txt := s.fail("BAD_ARGS", "emulate", c.args)
		if !strings.Contains(txt, c.want) {
			t.Errorf("emulate %v: want %q in: %s", c.args, c.want, txt)
		}
	}
	for _, a := range []map[string]any{
		{"user_agent": "spoof"},
		{"latitude": 1, "longitude": 2},
		{"device": "iPhone 13"},
	} {
		txt := s.fail("POLICY_DENIED", "emulate", a)
		if !strings.Contains(txt, "mutations") {
			t.Errorf("emulate %v in safe mode: %s", a, txt)
		}
	}
	// Nothing of the refused calls took.
	if got := emulated(t, s, nil); got["note"] == nil {
		t.Errorf("after refusals: %v", got)
	}
	emulated(t, s, map[string]any{"device": "Desktop 720p", "color_scheme": "dark"})
	waitEnv(t, s, "", "Desktop 720p, dark", func(e pageEnv) bool { return e.W == 1280 && e.H == 720 && e.Dark })
}
