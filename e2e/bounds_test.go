package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/png"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds (issue 27, rule 3): nothing a page or a model sends makes the
// server allocate without bound. These tests attack from the model's side
// (a prompt-injected model in safe mode) and the page's.

// markPage is a page with enough interactive elements that mark_refs has
// boxes to draw over the whole viewport.
func markPage() string {
	var b strings.Builder
	b.WriteString(`<!doctype html><title>Marks</title><body style="margin:0">`)
	for i := range 60 {
		fmt.Fprintf(&b, `<button style="position:absolute;left:%d%%;top:%d%%">b%d</button>`, (i%10)*10, (i/10)*16, i)
	}
	b.WriteString(`<div style="width:100000px;height:100000px"></div>`)
	return b.String()
}

// vmHWM reads a process's peak resident set size in bytes from
// /proc/PID/status (0 when it cannot be read).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// maxServerRSS is the peak RSS the server may reach under the attack:
// generous (two of the largest decodes at once take 200 MB), but far
// below what the attack took before (1.2 GB for one call, 4 GB for four).
const maxServerRSS = 600 << 20

// TestImageMemoryBounded is finding 10 of issue 27: in safe mode, a
// model emulates the largest viewport at a high scale and asks for marked
// screenshots, four at once, while the server runs under a GOMEMLIMIT
// budget. The viewport over the pixel cap is refused with the limit
// named; at the cap, four marked screenshots and full-page captures of a
// 100000-pixel page run within the budget; the server stays alive and
// another client's session is served after.
func TestImageMemoryBounded(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	mux := http.NewServeMux()
	mux.HandleFunc("/marks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, markPage())
	})
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Plain</title><p id="p">still served</p>`)
	})
	site := "http://127.0.0.1:" + serveMux(t, mux)
	// Safe mode: no --enable-mutations.
	h := startHTTPEnv(t, t.TempDir(), fmt.Sprintf("e2e-http-bounds-%d", os.Getpid()), []string{"GOMEMLIMIT=256MiB"},
		"--allow-domain=127.0.0.1")
	pid := h.server.cmd.Process.Pid
	attacker, bystander := h.connect("", nil), h.connect("", nil)
	mustOK(t, "navigate", mcpCall(t, bystander, "navigate", map[string]any{"url": site + "/plain"}))
	mustOK(t, "navigate", mcpCall(t, attacker, "navigate", map[string]any{"url": site + "/marks"}))

	t.Run("the finding's viewport is refused, naming the limit", func(t *testing.T) {
		res := mcpCall(t, attacker, "emulate", map[string]any{"width": 7680, "height": 4320, "scale": 2.13})
		txt := resultText(res)
		if !res.IsError || !strings.Contains(txt, "BAD_ARGS") || !strings.Contains(txt, "25 Mpx") || !strings.Contains(txt, "scale") {
			t.Errorf("emulate 7680x4320 at 2.13: want BAD_ARGS naming the 25 Mpx limit and a smaller scale, got isError=%v: %s", res.IsError, short(txt))
		}
		if !res.IsError {
			// What the finding did next: four marked screenshots at once.
			fourMarkedShots(t, attacker)
		}
	})
	// The most the cap allows: 7680 x 3255 at scale 1 is 24,998,400 pixels.
	mustOK(t, "emulate", mcpCall(t, attacker, "emulate", map[string]any{"width": 7680, "height": 3255, "scale": 1}))
	t.Run("four marked screenshots at the cap at once", func(t *testing.T) { fourMarkedShots(t, attacker) })

	t.Run("a full page of 100000 x 100000 CSS pixels is cut to the cap", func(t *testing.T) {
		for _, scale := range []float64{1, 5} {
			w, hh := 1280, 720
			if scale == 5 {
				w, hh = 1000, 1000 // 25 Mpx at scale 5
			}
			mustOK(t, "emulate", mcpCall(t, attacker, "emulate", map[string]any{"width": w, "height": hh, "scale": scale}))
			res := mcpCall(t, attacker, "screenshot", map[string]any{"full_page": true, "max_height": 100000})
			mustOK(t, "screenshot", res)
			iw, ih := imageSize(t, res)
			if iw*ih > 25_000_000 {
				t.Errorf("full page at scale %g: %dx%d = %d pixels, over the cap", scale, iw, ih, iw*ih)
			}
			if !strings.Contains(resultText(res), `"truncated":true`) {
				t.Errorf("full page at scale %g: not marked truncated: %s", scale, short(resultText(res)))
			}
		}
	})

	t.Run("the server is alive and serves another client", func(t *testing.T) {
		res := mustOK(t, "get_text", mcpCall(t, bystander, "get_text", map[string]any{"selector": "#p"}))
		if !strings.Contains(resultText(res), "still served") {
			t.Errorf("the other client's page: %s", short(resultText(res)))
		}
	})

	peak := vmHWM(pid)
	t.Logf("server peak RSS (VmHWM) under the attack: %d MB (GOMEMLIMIT=256MiB)", peak>>20)
	if peak > maxServerRSS {
		t.Errorf("the server's peak RSS is %d MB, over %d MB", peak>>20, maxServerRSS>>20)
	}
}

// fourMarkedShots takes four marked screenshots at once: each is an image
// within the pixel cap, or an error with a code.
func fourMarkedShots(t *testing.T, cs *sdk.ClientSession) {
	t.Helper()
	var wg sync.WaitGroup
	results := make([]*sdk.CallToolResult, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			results[i], errs[i] = cs.CallTool(ctx, &sdk.CallToolParams{Name: "screenshot", Arguments: map[string]any{"mark_refs": true}})
		})
	}
	wg.Wait()
	for i, res := range results {
		if errs[i] != nil {
			t.Errorf("screenshot %d: %v", i, errs[i])
			continue
		}
		if res.IsError {
			// Refused for memory is a bound too; it must say so.
			if txt := resultText(res); !strings.Contains(txt, "TIMEOUT") && !strings.Contains(txt, "BAD_ARGS") {
				t.Errorf("screenshot %d: an error without a code: %s", i, short(txt))
			}
			continue
		}
		w, h := imageSize(t, res)
		if n := w * h; n > 25_000_000 {
			t.Errorf("screenshot %d: %dx%d = %d pixels, over the cap", i, w, h, n)
		}
	}
}

// imageSize decodes the size of a result's image.
func imageSize(t *testing.T, res *sdk.CallToolResult) (int, int) {
	t.Helper()
	for _, c := range res.Content {
		if img, ok := c.(*sdk.ImageContent); ok {
			cfg, _, err := image.DecodeConfig(bytes.NewReader(img.Data))
			if err != nil {
				t.Fatalf("the result's image: %v", err)
			}
			return cfg.Width, cfg.Height
		}
	}
	t.Fatalf("no image in the result: %s", short(resultText(res)))
	return 0, 0
}

// deniedLoopPage fetches two denied hosts in eight loops for the given
// seconds, then shows how many fetches it made.
const deniedLoopPage = `<!doctype html><title>Loop</title><p id="out">looping</p><script>
let n = 0;
const until = Date.now() + %d * 1000;
let running = 0;
function go(u) {
  if (Date.now() > until) {
    if (--running === 0) document.getElementById('out').textContent = 'DONE ' + n;
    return;
  }
  n++;
  fetch(u + '?' + n).catch(() => {}).finally(() => go(u));
}
for (let i = 0; i < 4; i++) {
  running += 2;
  go('http://127.0.0.1:%s/x');
  go('http://other.test:%s/x');
}
</script>`

// deniedLoopSeconds is how long the page loops.
const deniedLoopSeconds = 5

// TestDecisionLogBounded is finding 15 of issue 27: a page that loops
// denied fetches (thousands a second) used to write a decision-log line
// for each. Now the log holds a bounded number of lines for them — the
// first denial of each host, then one line a window with the count of
// the rest, written at the window's end or at shutdown — and the counts
// add up to the denials.
func TestDecisionLogBounded(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	target := newCountingServer(t, "target")
	mux := http.NewServeMux()
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, deniedLoopPage, deniedLoopSeconds, target.port, target.port)
	})
	port := serveMux(t, mux)
	logPath := filepath.Join(t.TempDir(), "decisions.jsonl")
	s := startServer(t, resolverRules, "--allow-domain=allowed.test", "--decision-log="+logPath)
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/loop"})
	var fetches int
	deadline := time.Now().Add(deniedLoopSeconds*time.Second + 30*time.Second)
	for time.Now().Before(deadline) {
		txt := resultText(s.call("get_text", map[string]any{"selector": "#out"}))
		if i := strings.Index(txt, "DONE "); i >= 0 {
			fmt.Sscanf(txt[i+len("DONE "):], "%d", &fetches)
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if fetches == 0 {
		t.Fatal("the page's loop did not finish")
	}
	if n := target.reached(); n != 0 {
		t.Errorf("the denied host was reached %d times", n)
	}
	s.stop() // shutdown writes the last counts

	var lines, denials int
	var size int64
	deadline = time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(logPath)
		if err != nil {
			t.Fatal(err)
		}
		size, lines, denials = int64(len(b)), 0, 0
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e struct {
				Phase string `json:"phase"`
				Count int    `json:"count"`
			}
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("a broken line %q: %v", l, err)
			}
			if e.Phase == "request" {
				lines++
				denials += max(e.Count, 1)
			}
		}
		// The page's fetches, and any it began as the loop ended, are all
		// counted once the server has shut down.
		if denials >= fetches || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the page made %d denied fetches in %d s; the decision log has %d request lines counting %d denials, %d bytes",
		fetches, deniedLoopSeconds, lines, denials, size)
	// Two hosts, at most two windows each in the loop's time, two lines a
	// window; doubled for a hook that sees a request twice.
	if lines > 16 {
		t.Errorf("%d request lines for %d denied fetches: not aggregated", lines, fetches)
	}
	if denials < fetches {
		t.Errorf("the lines count %d denials, fewer than the page's %d fetches", denials, fetches)
	}
}

// TestCapturesBoundedByPixels: a page 100000 CSS pixels square and a
// model that emulates the largest viewport at a high scale cannot make a
// capture over the 25 Mpx cap on any backend: the viewport is refused
// naming the limit, a full page is cut to the cap at scale 1 and 5 and
// says it is truncated, and a screenshot of the huge element is refused.
func TestCapturesBoundedByPixels(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	mux := http.NewServeMux()
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Huge</title><body style="margin:0"><div id="huge" style="width:100000px;height:100000px;background:linear-gradient(red,blue)"></div>`)
	})
	port := serveMux(t, mux)
	s := startServer(t, resolverRules, "--allow-domain=allowed.test")
	s.call("navigate", map[string]any{"url": "http://allowed.test:" + port + "/huge"})

	txt := s.fail("BAD_ARGS", "emulate", map[string]any{"width": 7680, "height": 4320, "scale": 2.13})
	if !strings.Contains(txt, "25 Mpx") || !strings.Contains(txt, "at most 0.86") {
		t.Errorf("the refusal does not name the limit and the scale that fits: %s", txt)
	}
	for _, em := range []map[string]any{{"width": 1280, "height": 720, "scale": 1}, {"width": 1000, "height": 1000, "scale": 5}} {
		s.call("emulate", em)
		t.Logf("emulating %v", em)
		res := s.call("screenshot", map[string]any{"full_page": true, "max_height": 100000})
		w, h := imageSize(t, res)
		if w*h > 25_000_000 || h < 100 {
			t.Errorf("full page at %v: %dx%d = %d pixels, want at most the cap (and not nothing)", em, w, h, w*h)
		}
		if !strings.Contains(resultText(res), `"truncated":true`) {
			t.Errorf("full page at %v: not marked truncated: %s", em, short(resultText(res)))
		}
		if txt := s.fail("BAD_ARGS", "screenshot", map[string]any{"selector": "#huge"}); !strings.Contains(txt, "25 Mpx") {
			t.Errorf("the huge element at %v: %s", em, txt)
		}
	}
}
