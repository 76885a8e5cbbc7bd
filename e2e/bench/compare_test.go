//go:build peers

package bench

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/internal/testkit"
)

// The comparison's sizes (one table in the README, "How it compares").
const (
	cmpColdRuns    = 3
	cmpRounds      = 10 // one session: rounds of navigate + snapshot + click + read text
	cmpSessions    = 16 // the concurrent scenario
	cmpLoadRounds  = 5  // rounds per session in the concurrent scenario
	cmpSizeReading = "docs/py-datetime.html"
)

// peer is one server in the comparison: how to start it over stdio, how
// (if at all) to serve many sessions over HTTP, and its four operations.
type peer struct {
	name   string
	argv   []string
	httpA  func(port string) []string // argv serving Streamable HTTP on port; nil = stdio only
	httpRE *regexp.Regexp             // the line announcing the HTTP port
	why    string                     // why there is no concurrent run

	navigate func(url string) (string, map[string]any)
	snapshot func() (string, map[string]any)
	click    func(snap string) (string, map[string]any, error)
	text     func() (string, map[string]any)
}

var cdmButton = regexp.MustCompile(`uid=(\S+) button "go"`)

func peersForCompare(cg string, bin map[string]string, chromium string) []*peer {
	pwArgs := []string{bin["playwright-mcp"], "--headless", "--isolated", "--no-sandbox", "--executable-path", chromium}
	cdmArgs := []string{bin["chrome-devtools-mcp"], "--headless", "--isolated", "--executablePath", chromium,
		"--chromeArg=--no-sandbox", "--chromeArg=--disable-background-networking", "--chromeArg=--disable-component-update",
		"--usageStatistics=false", "--performanceCrux=false"}
	cgArgs := []string{cg, "serve", "--data-dir=" + filepath.Join(os.TempDir(), "chromegate-compare"), "--log-level=info",
		"--allow-domain=127.0.0.1", "--enable-mutations"}
	return []*peer{
		{
			name:   "chromegate",
			argv:   append(slices.Clone(cgArgs), "--isolated"),
			httpA:  func(string) []string { return append(slices.Clone(cgArgs), "--isolated", "--http", "127.0.0.1:0") },
			httpRE: regexp.MustCompile(`chromegate serving over HTTP.* addr=127\.0\.0\.1:(\d+)`),
			navigate: func(u string) (string, map[string]any) {
				return "navigate", map[string]any{"url": u}
			},
			snapshot: func() (string, map[string]any) { return "snapshot", map[string]any{} },
			click: func(string) (string, map[string]any, error) {
				return "click", map[string]any{"selector": "#b"}, nil
			},
			text: func() (string, map[string]any) { return "get_text", map[string]any{} },
		},
		{
			name: "Playwright MCP",
			argv: pwArgs,
			httpA: func(port string) []string {
				return append(slices.Clone(pwArgs), "--host", "127.0.0.1", "--port", port, "--allowed-hosts", "127.0.0.1:"+port)
			},
			httpRE: regexp.MustCompile(`Listening on http://\S+:(\d+)`),
			navigate: func(u string) (string, map[string]any) {
				return "browser_navigate", map[string]any{"url": u}
			},
			snapshot: func() (string, map[string]any) { return "browser_snapshot", map[string]any{} },
			click: func(string) (string, map[string]any, error) {
				return "browser_click", map[string]any{"target": "#b"}, nil
			},
			text: func() (string, map[string]any) {
				return "browser_evaluate", map[string]any{"function": "() => document.body.innerText"}
			},
		},
		{
			name: "Chrome DevTools MCP",
			argv: cdmArgs,
			why:  "stdio only, one browser per process: no concurrent sessions",
			navigate: func(u string) (string, map[string]any) {
				return "navigate_page", map[string]any{"pageId": 1, "type": "url", "url": u}
			},
			snapshot: func() (string, map[string]any) { return "take_snapshot", map[string]any{"pageId": 1} },
			click: func(snap string) (string, map[string]any, error) {
				m := cdmButton.FindStringSubmatch(snap)
				if m == nil {
					return "", nil, fmt.Errorf("no uid for the button in %s", short(snap))
				}
				return "click", map[string]any{"pageId": 1, "uid": m[1]}, nil
			},
			text: func() (string, map[string]any) {
				return "evaluate_script", map[string]any{"pageId": 1, "function": "() => document.body.innerText", "waitForStableDom": false}
			},
		},
	}
}

// echoHandler serves /echo?s=TOKEN&i=K: the session's token and round,
// and a button that writes them again when clicked.
func echoHandler(w http.ResponseWriter, r *http.Request) {
	tok := html.EscapeString(r.URL.Query().Get("s") + "-" + r.URL.Query().Get("i"))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>Echo %[1]s</title></head><body>
<h1>Echo</h1><p id="tok">token %[1]s</p>
<button id="b" onclick="document.getElementById('out').textContent='clicked '+document.getElementById('tok').textContent.slice(6)">go</button>
<p id="out">not clicked</p></body></html>`, tok)
}

// caller is one MCP session to a peer.
type caller struct {
	cs *sdk.ClientSession
}

func (c *caller) call(tool string, args map[string]any) (string, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimout)
	defer cancel()
	t0 := time.Now()
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	d := time.Since(t0)
	if err != nil {
		return "", d, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return "", d, fmt.Errorf("%s: isError: %s", tool, short(text(res)))
	}
	return text(res), d, nil
}

// round runs navigate + snapshot + click + read text for token's round i
// and checks the answers belong to it. It returns the latency of each call
// it made; a non-nil error is a lost call (err) or a mixed-up answer
// (mixed true).
func (p *peer) round(c *caller, base, token string, i int) (lat []time.Duration, mixed bool, err error) {
	want := fmt.Sprintf("%s-%d", token, i)
	step := func(name string, args map[string]any) (string, error) {
		txt, d, err := c.call(name, args)
		lat = append(lat, d)
		return txt, err
	}
	if _, err := step(p.navigate(fmt.Sprintf("%s/echo?s=%s&i=%d", base, token, i))); err != nil {
		return lat, false, err
	}
	snap, err := step(p.snapshot())
	if err != nil {
		return lat, false, err
	}
	if !strings.Contains(snap, "token "+want) {
		return lat, true, fmt.Errorf("snapshot of %s: %s", want, short(snap))
	}
	name, args, err := p.click(snap)
	if err != nil {
		return lat, false, err
	}
	if _, err := step(name, args); err != nil {
		return lat, false, err
	}
	txt, err := step(p.text())
	if err != nil {
		return lat, false, err
	}
	if !strings.Contains(txt, "clicked "+want) {
		return lat, true, fmt.Errorf("text of %s: %s", want, short(txt))
	}
	return lat, false, nil
}

func startStdio(t *testing.T, p *peer) (*caller, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(p.argv[0], p.argv[1:]...)
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "PUPPETEER_SKIP_DOWNLOAD=1", "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS=1")
	cmd.Dir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), callTimout)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "chromegate-compare", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	return &caller{cs: cs}, cmd
}

// startHTTPPeer starts p's HTTP mode and returns its /mcp URL, its pid and
// a stop function.
func startHTTPPeer(t *testing.T, p *peer) (string, int, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	argv := p.httpA(free)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "PUPPETEER_SKIP_DOWNLOAD=1")
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		pw.Close()
	}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := p.httpRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case port <- m[1]:
				default:
				}
			}
		}
	}()
	select {
	case pt := <-port:
		return "http://127.0.0.1:" + pt + "/mcp", cmd.Process.Pid, stop
	case <-time.After(60 * time.Second):
		stop()
		t.Fatalf("%s did not announce its HTTP port", p.name)
		return "", 0, nil
	}
}

// treeRSS sums the proportional set size (kB; shared pages split among
// the processes sharing them, so a browser's many processes are not counted
// many times over) of pid and all its descendants: the server and the
// browser it launched.
func treeRSS(pid int) int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			parent[p] = pp
		}
	}
	inTree := func(p int) bool {
		for range 64 {
			if p == pid {
				return true
			}
			pp, ok := parent[p]
			if !ok || pp <= 1 {
				return false
			}
			p = pp
		}
		return false
	}
	total := 0
	for p := range parent {
		if !inTree(p) {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", p))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(l, "Pss:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
				total += kb
			}
		}
	}
	return total
}

// pct is the p-th percentile (0..1) of ds, as testkit computes it for
// every benchmark.
func pct(ds []time.Duration, p float64) time.Duration { return testkit.Percentile(ds, p) }

// row is one peer's line of the table.
type row struct {
	cold, perCall time.Duration
	snapChars     int
	rssMB         int
	load          string
}

// TestCompare is the README's "How it compares" table: each server in the
// same run on the same Chromium and pages — cold start, per-call latency
// of the navigate + snapshot + click + read-text loop, the snapshot size
// of a documentation page, the RSS of the server and its browser, and 16
// concurrent sessions over HTTP (each answer checked against the session
// that asked) where the server can serve them.
func TestCompare(t *testing.T) {
	chromium, err := cdp.FindChromium("")
	if err != nil {
		t.Fatalf("no Chromium: %v", err)
	}
	bin := installPeers(t, filepath.Join(cdp.DefaultCacheDir(), "peers"))
	cg := buildChromegate(t)
	base := servePages(t)
	echo := serveEcho(t)
	peers := peersForCompare(cg, bin, chromium)
	rows := map[string]*row{}
	for _, p := range peers {
		r := &row{}
		rows[p.name] = r
		// Cold start: spawn until the first navigate has returned.
		var cold []time.Duration
		for range cmpColdRuns {
			t0 := time.Now()
			c, _ := startStdio(t, p)
			name, args := p.navigate(echo + "/echo?s=cold&i=0")
			if _, _, err := c.call(name, args); err != nil {
				t.Fatalf("%s cold start: %v", p.name, err)
			}
			cold = append(cold, time.Since(t0))
			_ = c.cs.Close()
		}
		r.cold = pct(cold, 0.5)

		c, cmd := startStdio(t, p)
		var lat []time.Duration
		for i := range cmpRounds {
			l, _, err := p.round(c, echo, "one", i)
			if err != nil {
				t.Fatalf("%s round %d: %v", p.name, i, err)
			}
			lat = append(lat, l...)
		}
		r.perCall = pct(lat, 0.5)
		name, args := p.navigate(base + "/pages/" + cmpSizeReading)
		if _, _, err := c.call(name, args); err != nil {
			t.Fatal(err)
		}
		name, args = p.snapshot()
		snap, _, err := c.call(name, args)
		if err != nil {
			t.Fatal(err)
		}
		r.snapChars = utf8.RuneCountInString(snap)
		r.rssMB = treeRSS(cmd.Process.Pid) / 1024
		_ = c.cs.Close()

		if p.httpA == nil {
			r.load = "— (" + p.why + ")"
			continue
		}
		r.load = concurrent(t, p, echo)
	}

	var out strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&out, "\n%s, %d CPUs (%s), %s; Chromium %s; peers %s, %s\n\n", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), cpuModel(), host, chromium, playwrightMCP, devtoolsMCP)
	w := tabwriter.NewWriter(&out, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintf(w, " server\t cold start\t per call (p50)\t snapshot of %s\t memory (PSS), server + browser\t %d concurrent sessions × %d rounds\t\n", cmpSizeReading, cmpSessions, cmpLoadRounds)
	for _, p := range peers {
		r := rows[p.name]
		fmt.Fprintf(w, " %s\t %s ms\t %s ms\t %d chars\t %d MB\t %s\t\n", p.name, ms(r.cold), ms(r.perCall), r.snapChars, r.rssMB, r.load)
	}
	w.Flush()
	t.Log(out.String())
	fmt.Println(out.String())
}

// concurrent runs cmpSessions HTTP sessions against p's HTTP mode, each
// doing cmpLoadRounds rounds, and describes what happened.
func concurrent(t *testing.T, p *peer, echo string) string {
	url, pid, stop := startHTTPPeer(t, p)
	defer stop()
	r := runConcurrent(t, p, url, pid, echo, cmpSessions, "c")
	return fmt.Sprintf("p50 %s ms, p95 %s ms, %.1f calls/s, %d lost, %d mixed up, peak PSS %d MB",
		ms(r.p50), ms(r.p95), r.perSec, r.lost, r.mixed, r.peakKB/1024)
}

func serveEcho(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", echoHandler)
	return testkit.Serve(t, mux)
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
		}
	}
	return runtime.GOARCH
}
