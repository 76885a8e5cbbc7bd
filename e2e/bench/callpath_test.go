//go:build callpath

package bench

import (
	"bufio"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCallPath counts the code one click by ref runs, from the tool's
// declaration to the browser, the same way each time (make callpath):
// chromegate is built with coverage, and the same session runs twice on
// the launched headless browser, once without the click and once with it
// (navigate, snapshot, then click by ref). The statements whose counters
// grew between the two runs, in each of three rounds, are the click's: the
// files, functions and statements of this module they lie in are printed,
// those at mcp's top level apart.
func TestCallPath(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildChromegate(t, root, "-covermode=atomic", "-coverpkg=github.com/chromegate/chromegate/...")
	site := pathSite(t, `onclick="this.textContent='pressed'"`)

	// Three rounds; a statement counts when it ran in the click's part of
	// every round, so what ran in the background by chance drops out.
	var ran map[string]int
	for round := 0; round < 3; round++ {
		before := session(t, bin, site, false)
		after := session(t, bin, site, true)
		grew := map[string]int{}
		for block, n := range after {
			if n > before[block] && (ran == nil || ran[block] > 0) {
				grew[block] = 1
			}
		}
		ran = grew
	}
	files, funcs, stmts := map[string]int{}, map[string]bool{}, 0
	for block := range ran {
		file := strings.SplitN(block, ":", 2)[0]
		rel := strings.TrimPrefix(file, "github.com/chromegate/chromegate/")
		stmtsOf, _ := strconv.Atoi(strings.Fields(block)[1])
		stmts += stmtsOf
		files[rel]++
		if f := funcAt(root, rel, block); f != "" {
			funcs[rel+":"+f] = true
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for f := range files {
			if !yield(f) {
				return
			}
		}
	})
	lines, mcpFiles := 0, 0
	for _, f := range names {
		n := lineCount(filepath.Join(root, f))
		lines += n
		if strings.HasPrefix(f, "mcp/") && !strings.Contains(strings.TrimPrefix(f, "mcp/"), "/") {
			mcpFiles++
		}
		fns := 0
		for fn := range funcs {
			if strings.HasPrefix(fn, f+":") {
				fns++
			}
		}
		t.Logf("%-40s %5d lines  %3d functions", f, n, fns)
	}
	t.Logf("click by ref: %d files (%d lines), %d of them at mcp's top level; %d functions; %d statements run",
		len(names), lines, mcpFiles, len(funcs), stmts)
	stack(t, root)
}

// stack prints the call stack of a click by ref at the moment it waits for
// the browser: the page's mousedown handler holds its renderer for two
// seconds, and the server's goroutines are read meanwhile through its
// debug endpoint (--debug-addr). The frames of this module, from the SDK's
// call of the tool to the Playwright call, are the hops; each change of
// file between two of them is counted.
func stack(t *testing.T, root string) {
	bin := buildChromegate(t, root)
	site := pathSite(t, `onmousedown="const t=Date.now(); while (Date.now()-t < 2000) {}"`)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "--data-dir="+dir, "--isolated", "--allow-domain=127.0.0.1", "--enable-mutations", "--debug-addr="+addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, call := connect(t, ctx, cmd)
	defer cs.Close()
	ref := buttonRef(t, call, site)
	done := make(chan struct{})
	go func() { defer close(done); call("click", map[string]any{"ref": ref}) }()
	time.Sleep(time.Second)
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=2")
	if err != nil {
		t.Fatal(err)
	}
	dump, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	<-done
	// Goroutines by id, each with its frames of this module (innermost
	// first) and the goroutine that started it.
	type gr struct {
		frames []string
		parent string
	}
	grs := map[string]gr{}
	leaf := ""
	for _, g := range strings.Split(string(dump), "\n\n") {
		lines := strings.Split(strings.TrimSpace(g), "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "goroutine ") {
			continue
		}
		id := strings.Fields(lines[0])[1]
		var cur gr
		for i := 1; i+1 < len(lines); i += 2 {
			fn, at := strings.TrimSpace(lines[i]), strings.TrimSpace(lines[i+1])
			if strings.HasPrefix(fn, "created by ") {
				if k := strings.LastIndex(fn, " in goroutine "); k >= 0 {
					cur.parent = fn[k+len(" in goroutine "):]
				}
				break
			}
			if !strings.Contains(at, root+"/") {
				continue
			}
			file := strings.TrimPrefix(strings.Fields(at)[0], root+"/")
			if k := strings.LastIndexByte(fn, '('); k > 0 {
				fn = fn[:k]
			}
			cur.frames = append(cur.frames, file+" "+fn[strings.LastIndexByte(fn, '/')+1:])
		}
		grs[id] = cur
		if strings.Contains(g, "playwright-go.(*mouseImpl).Click") {
			leaf = id
		}
	}
	if leaf == "" {
		t.Fatalf("no goroutine waited in Playwright's click:\n%s", dump)
	}
	var frames []string
	for id := leaf; id != ""; id = grs[id].parent {
		g, ok := grs[id]
		if !ok {
			break
		}
		frames = append(frames, g.frames...) // innermost first: each parent's after its child's
	}
	slices.Reverse(frames) // from the SDK's call of the tool to Playwright's
	files, hops, last := map[string]bool{}, 0, ""
	for _, f := range frames {
		file := strings.SplitN(f, ":", 2)[0]
		files[file] = true
		if last != "" && file != last {
			hops++
		}
		last = file
		t.Logf("  %s", f)
	}
	t.Logf("click by ref on the stack: %d frames of this module in %d files, %d hops between files", len(frames), len(files), hops)
}

// session runs navigate and snapshot, and the click by ref when click is
// set, on a coverage binary, and returns its counters by block.
func session(t *testing.T, bin, site string, click bool) map[string]int {
	t.Helper()
	dir := t.TempDir()
	cov := filepath.Join(dir, "cov")
	if err := os.Mkdir(cov, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--data-dir="+filepath.Join(dir, "data"), "--isolated",
		"--allow-domain=127.0.0.1", "--enable-mutations")
	cmd.Env = append(os.Environ(), "GOCOVERDIR="+cov)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, call := connect(t, ctx, cmd)
	ref := buttonRef(t, call, site)
	if click {
		call("click", map[string]any{"ref": ref})
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	_ = cmd.Wait()
	txt := filepath.Join(dir, "cov.txt")
	if out, err := exec.Command("go", "tool", "covdata", "textfmt", "-i="+cov, "-o="+txt).CombinedOutput(); err != nil {
		t.Fatalf("covdata: %v\n%s", err, out)
	}
	f, err := os.Open(txt)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || strings.HasPrefix(line, "mode:") {
			continue
		}
		n, _ := strconv.Atoi(line[i+1:])
		counts[line[:i]] += n
	}
	return counts
}

// funcAt names the function that holds a coverage block
// ("file.go:12.3,14.5 2").
func funcAt(root, rel, block string) string {
	pos := strings.SplitN(strings.SplitN(block, ":", 2)[1], ",", 2)[0]
	line, _ := strconv.Atoi(strings.SplitN(pos, ".", 2)[0])
	p, ok := parsed[rel]
	if !ok {
		fs := token.NewFileSet()
		f, err := parser.ParseFile(fs, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			return ""
		}
		p = parsedFile{fs, f}
		parsed[rel] = p
	}
	fs, f := p.fs, p.f
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if ok && fs.Position(fd.Pos()).Line <= line && line <= fs.Position(fd.End()).Line {
			return fd.Name.Name
		}
	}
	return "(init)"
}

// buildChromegate builds the binary with the given build flags.
func buildChromegate(t *testing.T, root string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "chromegate")
	build := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, "./cmd/chromegate")...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// pathSite serves a page with one button, Press, with the given handler
// attribute.
func pathSite(t *testing.T, handler string) string {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><title>Path</title><main><h1>Path</h1><button id="b" %s>Press</button></main>`, handler)
	}))
	t.Cleanup(site.Close)
	return site.URL
}

// connect starts cmd as an MCP server over stdio; call returns a tool's
// text, and fails the test on an error.
func connect(t *testing.T, ctx context.Context, cmd *exec.Cmd) (*sdk.ClientSession, func(string, map[string]any) string) {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "callpath", Version: "1"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, func(name string, args map[string]any) string {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Errorf("%s: %v %v", name, err, res)
			return ""
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
}

// buttonRef navigates to site and returns the Press button's ref from a
// snapshot.
func buttonRef(t *testing.T, call func(string, map[string]any) string, site string) string {
	t.Helper()
	call("navigate", map[string]any{"url": site})
	ref := regexp.MustCompile(`\b(\w+) button Press`).FindStringSubmatch(call("snapshot", nil))
	if ref == nil {
		t.Fatal("no ref for the button")
	}
	return ref[1]
}

type parsedFile struct {
	fs *token.FileSet
	f  *ast.File
}

var parsed = map[string]parsedFile{}

func lineCount(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}
