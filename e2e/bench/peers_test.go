//go:build peers

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/internal/testkit"
)

// The peers, pinned: `npm view @playwright/mcp version` and `npm view
// chrome-devtools-mcp version` when this was written.
const (
	playwrightMCP = "@playwright/mcp@0.0.83"
	devtoolsMCP   = "chrome-devtools-mcp@1.11.0"
)

// Loop bounds: every measurement is a fixed number of calls.
const (
	coldRuns   = 3
	warmRuns   = 15
	callTimout = 90 * time.Second
)

// The pages whose reading results are compared.
var readPages = []string{
	"article.html", "blog.html", "form.html", "links.html",
	"docs/pg-app-psql.html", "docs/pg-monitoring-stats.html", "docs/py-datetime.html", "docs/pg-sql-keywords.html",
}

// benchPage is the small page the latency loop acts on.
const benchPage = `<!doctype html><html><head><meta charset="utf-8"><title>Bench</title></head><body>
<h1>Bench</h1><button id="b" onclick="this.dataset.n=(+this.dataset.n||0)+1">count</button>
<label>Text <input id="t" type="text"></label><p>Some text to read.</p></body></html>`

// server is one MCP server under test: how to start it and how to call
// each operation on it.
type server struct {
	name string
	argv []string
	// ops maps an operation to its tool call; nil = not offered.
	navigate   func(url string) (string, map[string]any)
	snapshot   func() (string, map[string]any)
	click      func(s *session) (string, map[string]any)
	typeText   func(s *session) (string, map[string]any)
	screenshot func() (string, map[string]any)
	eval       func() (string, map[string]any)
	// prepare runs once after the first navigation of the bench page
	// (reading uids for the ops that need them).
	prepare func(s *session)
}

type session struct {
	t    *testing.T
	cs   *sdk.ClientSession
	cmd  *exec.Cmd
	vars map[string]string
}

func (s *session) call(tool string, args map[string]any) (*sdk.CallToolResult, time.Duration) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimout)
	defer cancel()
	start := time.Now()
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	took := time.Since(start)
	if err != nil {
		s.t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		s.t.Fatalf("%s %v: isError: %s", tool, args, short(text(res)))
	}
	return res, took
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func short(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

func start(t *testing.T, sv *server) *session {
	t.Helper()
	cmd := exec.Command(sv.argv[0], sv.argv[1:]...)
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "PUPPETEER_SKIP_DOWNLOAD=1", "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS=1")
	cmd.Dir = t.TempDir() // peers write screenshots and snapshots under their working directory
	client := sdk.NewClient(&sdk.Implementation{Name: "chromegate-bench", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), callTimout)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start %s: %v", sv.name, err)
	}
	return &session{t: t, cs: cs, cmd: cmd, vars: map[string]string{}}
}

func (s *session) close() { _ = s.cs.Close() }

func TestPeers(t *testing.T) {
	chromium, err := cdp.FindChromium("")
	if err != nil {
		t.Fatalf("no Chromium: %v", err)
	}
	dir := filepath.Join(cdp.DefaultCacheDir(), "peers")
	bin := installPeers(t, dir)
	cg := buildChromegate(t)
	base := servePages(t)

	servers := configs(cg, bin, chromium)

	// (a) Size of the page-reading result, per page.
	sizes := map[string]map[string]string{} // page -> column -> cell
	var cols []string
	readers := []struct {
		col  string
		sv   *server
		tool string
		args map[string]any
	}{
		{"playwright-mcp browser_snapshot", servers[1], "browser_snapshot", map[string]any{}},
		{"devtools-mcp take_snapshot", servers[3], "take_snapshot", map[string]any{"pageId": 1}},
		{"chromegate snapshot", servers[0], "snapshot", map[string]any{}},
		{"chromegate read_as_markdown", servers[0], "read_as_markdown", map[string]any{}},
	}
	counts := map[string]map[string]int{}
	for _, r := range readers {
		cols = append(cols, r.col)
		s := start(t, r.sv)
		for _, page := range readPages {
			name, args := r.sv.navigate(base + "/pages/" + page)
			s.call(name, args)
			res, _ := s.call(r.tool, r.args)
			txt := text(res)
			n := utf8.RuneCountInString(txt)
			cell := fmt.Sprint(n)
			if m := regexp.MustCompile(`"(total_chars|lines)":(\d+)`).FindStringSubmatch(txt); m != nil && strings.Contains(txt, `"next":`) {
				cell += " (cut; " + m[1] + " " + m[2] + ")"
			}
			if sizes[page] == nil {
				sizes[page], counts[page] = map[string]string{}, map[string]int{}
			}
			sizes[page][r.col], counts[page][r.col] = cell, n
		}
		s.close()
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n(a) characters of the page-reading result (text content), ratio = peer / chromegate snapshot\n\n")
	w := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "page\tHTML bytes\t%s\tPW/cg\tCDM/cg\t\n", strings.Join(cols, "\t"))
	for _, page := range readPages {
		st, _ := os.Stat(filepath.Join("..", "testdata", "pages", page))
		row := []string{page, fmt.Sprint(st.Size())}
		for _, c := range cols {
			row = append(row, sizes[page][c])
		}
		cgn := float64(counts[page]["chromegate snapshot"])
		row = append(row, ratio(float64(counts[page][cols[0]]), cgn), ratio(float64(counts[page][cols[1]]), cgn))
		fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
	}
	w.Flush()

	// (b) Median latency per operation and server.
	ops := []string{"cold start", "navigate", "click", "type", "snapshot", "screenshot", "eval"}
	med := map[string]map[string]time.Duration{}
	for _, sv := range servers {
		med[sv.name] = measure(t, sv, base)
	}
	fmt.Fprintf(&out, "\n(b) median latency over MCP stdio, ms (cold start: %d runs, others: %d calls); ratio = best peer / chromegate\n\n", coldRuns, warmRuns)
	w = tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := []string{"op"}
	for _, sv := range servers {
		hdr = append(hdr, sv.name)
	}
	fmt.Fprintln(w, strings.Join(append(hdr, "best peer/cg"), "\t")+"\t")
	for _, op := range ops {
		row := []string{op}
		best := time.Duration(0)
		for i, sv := range servers {
			d, ok := med[sv.name][op]
			if !ok {
				row = append(row, "—")
				continue
			}
			row = append(row, ms(d))
			if i > 0 && (best == 0 || d < best) {
				best = d
			}
		}
		cgd := med[servers[0].name][op]
		row = append(row, ratio(float64(best), float64(cgd)))
		fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
	}
	w.Flush()
	fmt.Fprintf(&out, "\nclick: chromegate and Playwright MCP by CSS selector, Chrome DevTools MCP by snapshot uid; chromegate by ref: %s ms\n", ms(med[servers[0].name]["click by ref"]))
	fmt.Fprintf(&out, "type: chromegate type (key by key), Playwright MCP browser_type (fills), Chrome DevTools MCP fill by uid; chromegate fill: %s ms\n", ms(med[servers[0].name]["fill"]))
	fmt.Fprintf(&out, "eval: chromegate eval, Playwright MCP browser_evaluate, Chrome DevTools MCP evaluate_script (slim: evaluate)\n")
	fmt.Fprintf(&out, "Chromium: %s; peers: %s, %s\n", chromium, playwrightMCP, devtoolsMCP)
	t.Log(out.String())
	fmt.Println(out.String())
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func ms(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000)
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// measure runs the latency loop of one server.
func measure(t *testing.T, sv *server, base string) map[string]time.Duration {
	out := map[string]time.Duration{}
	page := base + "/bench"
	// Cold start: spawn until the first navigate has returned.
	var cold []time.Duration
	for range coldRuns {
		t0 := time.Now()
		s := start(t, sv)
		name, args := sv.navigate(page)
		s.call(name, args)
		cold = append(cold, time.Since(t0))
		s.close()
	}
	out["cold start"] = median(cold)

	s := start(t, sv)
	defer s.close()
	name, args := sv.navigate(page)
	s.call(name, args)
	if sv.prepare != nil {
		sv.prepare(s)
	}
	loop := func(op string, call func() (string, map[string]any)) {
		var ds []time.Duration
		for range warmRuns {
			name, args := call()
			_, d := s.call(name, args)
			ds = append(ds, d)
		}
		out[op] = median(ds)
	}
	i := 0
	loop("navigate", func() (string, map[string]any) {
		i++
		return sv.navigate(fmt.Sprintf("%s?n=%d", page, i))
	})
	if sv.prepare != nil {
		sv.prepare(s) // uids belong to the last document
	}
	if sv.click != nil {
		loop("click", func() (string, map[string]any) { return sv.click(s) })
	}
	if sv.typeText != nil {
		loop("type", func() (string, map[string]any) { return sv.typeText(s) })
	}
	if sv.snapshot != nil {
		loop("snapshot", sv.snapshot)
	}
	loop("screenshot", sv.screenshot)
	loop("eval", sv.eval)
	if sv.name == "chromegate" {
		ref := s.vars["ref"]
		loop("click by ref", func() (string, map[string]any) { return "click", map[string]any{"ref": ref} })
		loop("fill", func() (string, map[string]any) { return "fill", map[string]any{"selector": "#t", "value": "hello"} })
	}
	return out
}

var (
	cgRef   = regexp.MustCompile(`(?m)^ *([a-z]+[0-9]+) button count$`)
	cdmUID  = regexp.MustCompile(`uid=(\S+) button "count"`)
	cdmText = regexp.MustCompile(`uid=(\S+) textbox "Text"`)
)

// configs are the servers, chromegate first; each peer with its defaults
// and with its fastest settings.
func configs(cg string, bin map[string]string, chromium string) []*server {
	pwArgs := []string{bin["playwright-mcp"], "--headless", "--isolated", "--no-sandbox", "--executable-path", chromium}
	cdmArgs := []string{bin["chrome-devtools-mcp"], "--headless", "--isolated", "--executablePath", chromium,
		"--chromeArg=--no-sandbox", "--chromeArg=--disable-background-networking", "--chromeArg=--disable-component-update",
		"--usageStatistics=false", "--performanceCrux=false"}
	screenshotPW := func() (string, map[string]any) { return "browser_take_screenshot", map[string]any{"scale": "css"} }
	pw := func(name string, extra ...string) *server {
		return &server{
			name:     name,
			argv:     append(slices.Clone(pwArgs), extra...),
			navigate: func(u string) (string, map[string]any) { return "browser_navigate", map[string]any{"url": u} },
			snapshot: func() (string, map[string]any) { return "browser_snapshot", map[string]any{} },
			click:    func(*session) (string, map[string]any) { return "browser_click", map[string]any{"target": "#b"} },
			typeText: func(*session) (string, map[string]any) {
				return "browser_type", map[string]any{"target": "#t", "text": "hello"}
			},
			screenshot: screenshotPW,
			eval:       func() (string, map[string]any) { return "browser_evaluate", map[string]any{"function": "() => 1+1"} },
		}
	}
	cdmPrepare := func(s *session) {
		res, _ := s.call("take_snapshot", map[string]any{"pageId": 1})
		txt := text(res)
		if m := cdmUID.FindStringSubmatch(txt); m != nil {
			s.vars["button"] = m[1]
		} else {
			s.t.Fatalf("no uid for the button in:\n%s", short(txt))
		}
		if m := cdmText.FindStringSubmatch(txt); m != nil {
			s.vars["text"] = m[1]
		} else {
			s.t.Fatalf("no uid for the text box in:\n%s", short(txt))
		}
	}
	return []*server{
		{
			name: "chromegate",
			argv: []string{cg, "serve", "--isolated", "--data-dir=" + filepath.Join(os.TempDir(), "chromegate-bench"), "--log-level=error",
				"--allow-domain=127.0.0.1", "--enable-mutations", "--unsafe-enable-eval"},
			navigate: func(u string) (string, map[string]any) { return "navigate", map[string]any{"url": u} },
			snapshot: func() (string, map[string]any) { return "snapshot", map[string]any{} },
			click:    func(*session) (string, map[string]any) { return "click", map[string]any{"selector": "#b"} },
			typeText: func(*session) (string, map[string]any) {
				return "type", map[string]any{"selector": "#t", "text": "hello", "clear": true}
			},
			screenshot: func() (string, map[string]any) { return "screenshot", map[string]any{} },
			eval:       func() (string, map[string]any) { return "eval", map[string]any{"expression": "1+1"} },
			prepare: func(s *session) {
				res, _ := s.call("snapshot", map[string]any{})
				txt := text(res)
				m := cgRef.FindStringSubmatch(txt)
				if m == nil {
					s.t.Fatalf("no ref for the button in:\n%s", short(txt))
				}
				s.vars["ref"] = m[1]
			},
		},
		pw("playwright-mcp"),
		pw("playwright-mcp fast", "--timeout-settle", "0", "--snapshot-mode", "none"),
		{
			name: "devtools-mcp",
			argv: cdmArgs,
			navigate: func(u string) (string, map[string]any) {
				return "navigate_page", map[string]any{"pageId": 1, "type": "url", "url": u}
			},
			snapshot: func() (string, map[string]any) { return "take_snapshot", map[string]any{"pageId": 1} },
			click: func(s *session) (string, map[string]any) {
				return "click", map[string]any{"pageId": 1, "uid": s.vars["button"]}
			},
			typeText: func(s *session) (string, map[string]any) {
				return "fill", map[string]any{"pageId": 1, "uid": s.vars["text"], "value": "hello"}
			},
			screenshot: func() (string, map[string]any) { return "take_screenshot", map[string]any{"pageId": 1} },
			eval: func() (string, map[string]any) {
				return "evaluate_script", map[string]any{"pageId": 1, "function": "() => 1+1", "waitForStableDom": false}
			},
			prepare: cdmPrepare,
		},
		{
			// --slim has navigate, evaluate and screenshot only.
			name:       "devtools-mcp slim",
			argv:       append(slices.Clone(cdmArgs), "--slim"),
			navigate:   func(u string) (string, map[string]any) { return "navigate", map[string]any{"url": u} },
			screenshot: func() (string, map[string]any) { return "screenshot", map[string]any{} },
			eval:       func() (string, map[string]any) { return "evaluate", map[string]any{"script": "1+1"} },
		},
	}
}

// installPeers installs the pinned peers into dir (once) and returns their
// executables by name.
func installPeers(t *testing.T, dir string) map[string]string {
	t.Helper()
	bin := map[string]string{
		"playwright-mcp":      filepath.Join(dir, "node_modules", ".bin", "playwright-mcp"),
		"chrome-devtools-mcp": filepath.Join(dir, "node_modules", ".bin", "chrome-devtools-mcp"),
	}
	want := map[string]string{
		filepath.Join(dir, "node_modules", "@playwright", "mcp", "package.json"):  strings.TrimPrefix(playwrightMCP, "@playwright/mcp@"),
		filepath.Join(dir, "node_modules", "chrome-devtools-mcp", "package.json"): strings.TrimPrefix(devtoolsMCP, "chrome-devtools-mcp@"),
	}
	installed := true
	for path, version := range want {
		var pkg struct{ Version string }
		b, err := os.ReadFile(path)
		installed = installed && err == nil && json.Unmarshal(b, &pkg) == nil && pkg.Version == version
	}
	if !installed {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("npm", "install", "--prefix", dir, "--no-audit", "--no-fund", "--save-exact", playwrightMCP, devtoolsMCP)
		cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "PUPPETEER_SKIP_DOWNLOAD=1")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("npm install the peers: %v", err)
		}
	}
	return bin
}

func buildChromegate(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "chromegate")
	cmd := exec.Command("go", "build", "-o", out, "../../cmd/chromegate")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("build chromegate: %v", err)
	}
	return out
}

// servePages serves the fixture pages under /pages/ and the latency page
// at /bench, on loopback.
func servePages(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/pages/", http.StripPrefix("/pages/", http.FileServer(http.Dir(filepath.Join("..", "testdata", "pages")))))
	mux.HandleFunc("/bench", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, benchPage)
	})
	return testkit.Serve(t, mux)
}
