// Package e2e drives the built chromegate binary end to end: a real MCP Go
// SDK client over stdio, real headless Chromium through the real Playwright
// driver, and local test sites served by the tests on 127.0.0.1.
package e2e

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
)

// binary is the chromegate executable built once for the whole package.
var binary string

// e2eBackend is the backend the suite drives (CHROMEGATE_E2E_BACKEND):
// "cdp" (the default, a Chromium chromegate launches); "ext", chromegate's
// extension loaded into that browser and paired over CDP, every call going
// through it; "browser-server", a local `playwright run-server` joined with
// --browser-endpoint; "cdp-endpoint", a bare Chromium attached with
// --cdp-endpoint. Which tests run on which backend each test says itself,
// in its first statement (testkit.Backends); `make test` runs the suite
// all four ways.
var e2eBackend = cmp.Or(os.Getenv(testkit.BackendVar), "cdp")

// matrixVar names a file each run of the suite appends its line of the
// test matrix to (testkit.MatrixCounts), for `make test` to print at its end.
const matrixVar = "CHROMEGATE_E2E_MATRIX"

// missing says why the browser tests cannot run here ("" when they can).
var missing string

func TestMain(m *testing.M) {
	if _, err := testkit.RunBackend(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "chromegate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "chromegate")
	build := exec.Command("go", "build", "-o", binary, "../cmd/chromegate")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building chromegate:", err)
		os.Exit(1)
	}
	if _, err := cdp.FindChromium(""); err != nil {
		missing = err.Error()
	} else if _, err := cdp.FindDriver(""); err != nil {
		missing = err.Error()
	}
	if missing == "" {
		if err := startRemote(); err != nil {
			fmt.Fprintln(os.Stderr, "starting the remote browser:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	stopRemote()
	os.RemoveAll(dir)
	reportMatrix()
	os.Exit(code)
}

// reportMatrix prints this run's line of the test matrix, and appends it to
// the file matrixVar names.
func reportMatrix() {
	line := testkit.Matrix().String()
	fmt.Println(line)
	if path := os.Getenv(matrixVar); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, err = fmt.Fprintln(f, line)
			err = cmp.Or(err, f.Close())
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, matrixVar+":", err)
		}
	}
}

// needBrowser fails the test in CI and skips it elsewhere when Chromium or
// the driver is missing: CI must never count a skipped browser test as a pass.
func needBrowser(t testing.TB) {
	t.Helper()
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("browser tests cannot run: %s (CI installs it with `make deps`)", missing)
	}
	t.Skipf("browser tests need Chromium and the driver: %s (run `make deps`)", missing)
}

// server is one running `chromegate serve` with a connected MCP client.
type server struct {
	t       testing.TB
	cmd     *exec.Cmd
	session *sdk.ClientSession
	mark    string // an environment marker inherited by every process it starts
	log     *testkit.Buffer
	dataDir string
	called  map[string]bool // tools called successfully or not, by name
}

// permissive are the flags that let the tests use every tool on 127.0.0.1.
var permissive = []string{
	"--allow-domain=127.0.0.1", "--enable-mutations", "--unsafe-enable-eval", "--enable-downloads",
}

// startServer spawns the binary with args and connects a client to it. The
// server is stopped when the test ends.
func startServer(t testing.TB, args ...string) *server {
	t.Helper()
	return startServerWith(t, nil, args...)
}

// startServerWith is startServer with the client's options (handlers of
// server notifications).
func startServerWith(t testing.TB, copts *sdk.ClientOptions, args ...string) *server {
	t.Helper()
	needBrowser(t)
	s := &server{t: t, log: &testkit.Buffer{}, mark: fmt.Sprintf("e2e-%d-%d", os.Getpid(), time.Now().UnixNano()), dataDir: t.TempDir()}
	persistent := slices.Contains(args, persistentProfile)
	args = slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == persistentProfile })
	withExt := slices.Contains(args, "--with-extension") || (e2eBackend == "ext" && !slices.ContainsFunc(args, notWithExtension))
	full := []string{"serve", "--data-dir=" + s.dataDir, "--log-level=debug"}
	switch {
	case withExt && !slices.Contains(args, "--with-extension"):
		full = append(full, "--with-extension")
	case remoteArgs != nil && !slices.ContainsFunc(args, notWithExtension):
		full = append(full, remoteArgs...)
	case e2eBackend == "cdp-endpoint" && !withExt && !slices.ContainsFunc(args, notWithExtension):
		full = append(full, cdpEndpointFor(t, s.mark))
	case !withExt && !persistent:
		full = append(full, "--isolated")
	}
	full = append(full, args...)
	s.cmd = exec.Command(binary, full...)
	s.cmd.Env = append(os.Environ(), "CHROMEGATE_E2E_MARK="+s.mark)
	s.cmd.Stderr = s.log
	client := sdk.NewClient(&sdk.Implementation{Name: "chromegate-e2e", Version: "1"}, copts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, &sdk.CommandTransport{Command: s.cmd}, nil)
	if err != nil {
		t.Fatalf("connect to chromegate serve: %v\nserver log:\n%s", err, s.log.String())
	}
	s.session = session
	if withExt {
		s.waitPaired()
	}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			t.Logf("server log:\n%s", tail(s.log.String(), 6000))
		}
	})
	return s
}

// persistentProfile, among startServer's args, asks for the persistent
// profile in the server's data dir instead of --isolated; it is not passed on.
const persistentProfile = "(e2e: persistent profile)"

// notWithExtension names the flags a server cannot load the extension with.
func notWithExtension(arg string) bool {
	return arg == "--no-extension" || arg == "--no-cdp-fallback" || strings.HasPrefix(arg, "--cdp-endpoint") ||
		strings.HasPrefix(arg, "--executable-path")
}

// extStatus is the extension part of chrome_status.
type extStatus struct {
	Connected  bool     `json:"connected"`
	Paired     bool     `json:"paired"`
	ExtVersion string   `json:"extension_version"`
	Listening  string   `json:"listening"`
	LastDispl  any      `json:"last_displacement"`
	Attached   []string `json:"attached_tabs"`
}

// status returns chrome_status's JSON.
func (s *server) status() (browserBackend string, ext extStatus) {
	s.t.Helper()
	var st struct {
		Browser struct {
			Backend string `json:"backend"`
		} `json:"browser"`
		Extension extStatus `json:"extension"`
	}
	if err := json.Unmarshal([]byte(jsonPart(resultText(s.call("chrome_status", nil)))), &st); err != nil {
		s.t.Fatalf("chrome_status: %v", err)
	}
	return st.Browser.Backend, st.Extension
}

// waitPaired waits until the extension is connected and calls use it.
func (s *server) waitPaired() {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, ext := s.status(); ext.Connected {
			return
		}
		if time.Now().After(deadline) {
			var keep []string
			for _, l := range strings.Split(s.log.String(), "\n") {
				if !strings.Contains(l, "tool=chrome_status") {
					keep = append(keep, l)
				}
			}
			s.t.Fatalf("the extension did not pair within 30 s\nserver log:\n%s", tail(strings.Join(keep, "\n"), 6000))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *server) stop() {
	if s.session != nil {
		_ = s.session.Close()
		s.session = nil
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// call runs a tool that must succeed and returns its result.
func (s *server) call(tool string, args map[string]any) *sdk.CallToolResult {
	s.t.Helper()
	res := s.try(tool, args)
	if res.IsError {
		s.t.Fatalf("%s %v: unexpected error: %s", tool, args, resultText(res))
	}
	return res
}

// try runs a tool and returns whatever it returned; a protocol error fails
// the test.
func (s *server) try(tool string, args map[string]any) *sdk.CallToolResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	if s.called == nil {
		s.called = map[string]bool{}
	}
	s.called[tool] = true
	res, err := s.session.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s %v: protocol error: %v", tool, args, err)
	}
	if !res.IsError {
		checkStructured(s.t, s.session, tool, res) // structured_test.go
	}
	return res
}

// fail runs a tool that must fail with code and returns the error text.
func (s *server) fail(code, tool string, args map[string]any) string {
	s.t.Helper()
	res := s.try(tool, args)
	txt := resultText(res)
	if !res.IsError {
		s.t.Fatalf("%s %v: want isError %s, got success: %s", tool, args, code, short(txt))
	}
	if !strings.Contains(txt, code) {
		s.t.Fatalf("%s %v: want code %s, got: %s", tool, args, code, txt)
	}
	return txt
}

// eval evaluates expr in the page and decodes its value.
func (s *server) eval(expr string) any {
	s.t.Helper()
	res := s.call("eval", map[string]any{"expression": expr})
	var out struct {
		OK    bool            `json:"ok"`
		Value json.RawMessage `json:"value"`
		Error string          `json:"error"`
	}
	// The text shows the value alone (mcp/lean.go); the structured
	// content has ok, value and error.
	if err := json.Unmarshal(structuredData(res), &out); err != nil {
		s.t.Fatalf("eval %q: result is not JSON: %v\n%s", expr, err, resultText(res))
	}
	if !out.OK {
		s.t.Fatalf("eval %q threw: %s", expr, out.Error)
	}
	var v any
	if len(out.Value) > 0 {
		if err := json.Unmarshal(out.Value, &v); err != nil {
			s.t.Fatalf("eval %q: value: %v", expr, err)
		}
	}
	return v
}

// evalString evaluates expr and formats the value as a string.
func (s *server) evalString(expr string) string {
	s.t.Helper()
	switch v := s.eval(expr).(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
}

// jsonPart takes the page content out of its fence and drops anything
// before the first JSON value.
func jsonPart(s string) string {
	if content, _, ok := mcp.Unfence(s); ok {
		s = content
	}
	if i := strings.IndexAny(s, "{["); i >= 0 {
		s = s[i:]
	}
	// The first JSON value: an outline or change may follow it as lines
	// (mcp/lean.go).
	var raw json.RawMessage
	if err := json.NewDecoder(strings.NewReader(s)).Decode(&raw); err == nil {
		return string(raw)
	}
	return s
}

// structuredData is the data of a successful result's structured content:
// its value with every field, as clients and REST read it.
func structuredData(res *sdk.CallToolResult) json.RawMessage {
	b, _ := json.Marshal(res.StructuredContent)
	var d struct {
		Data json.RawMessage `json:"data"`
	}
	_ = json.Unmarshal(b, &d)
	return d.Data
}

func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			if strings.HasPrefix(t.Text, mcp.BlockedNotePrefix) {
				continue // see blockedText
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// blockedText is the server's note on the requests the policy blocked
// while the call ran, "" when none were.
func blockedText(res *sdk.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok && strings.HasPrefix(t.Text, mcp.BlockedNotePrefix) {
			return t.Text
		}
	}
	return ""
}

func short(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// procs lists the pids of live processes that carry this server's marker.
func (s *server) procs() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte("CHROMEGATE_E2E_MARK="+s.mark+"\x00")) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			// A zombie has exited; only its parent's wait is missing.
			if f := strings.Fields(string(st)); len(f) > 2 && f[2] == "Z" {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// browserPID is the main Chromium process this server launched (the one
// without a --type= flag), or 0.
func (s *server) browserPID() int {
	for _, pid := range s.procs() {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		switch filepath.Base(args[0]) {
		case "chromium", "chrome", "chromium-browser", "headless_shell", "chromium-headless-shell", "chrome-headless-shell":
		default:
			continue // not a browser (chromegate itself is named chrom…)
		}
		if !bytes.Contains(cmdline, []byte("--type=")) {
			return pid
		}
	}
	return 0
}

// killBrowser SIGKILLs the main Chromium process.
func (s *server) killBrowser() {
	s.t.Helper()
	pid := s.browserPID()
	if pid == 0 {
		s.t.Fatal("no chromium process found to kill")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		s.t.Fatalf("kill chromium %d: %v", pid, err)
	}
}

// waitTabAt polls tabs_list until a tab's url (not its title: a loading
// tab's title already names where it is going) starts with prefix.
func (s *server) waitTabAt(prefix string) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list struct {
			Tabs []struct {
				URL string `json:"url"`
			} `json:"tabs"`
		}
		if err := json.Unmarshal([]byte(jsonPart(resultText(s.call("tabs_list", nil)))), &list); err != nil {
			s.t.Fatalf("tabs_list: %v", err)
		}
		for _, tab := range list.Tabs {
			if strings.HasPrefix(tab.URL, prefix) {
				return
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no tab reached %s within 10 s", prefix)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitTabHidden polls tabs_list until a tab shows a page outside the
// policy (which the egress boundary kept from loading): it is listed by id
// only, with nothing of its URL or title. It returns the tab's id.
func (s *server) waitTabHidden() string {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list struct {
			Tabs []struct {
				TabID string `json:"tab_id"`
				URL   string `json:"url"`
				Title string `json:"title"`
				Note  string `json:"note"`
			} `json:"tabs"`
		}
		if err := json.Unmarshal([]byte(jsonPart(resultText(s.call("tabs_list", nil)))), &list); err != nil {
			s.t.Fatalf("tabs_list: %v", err)
		}
		for _, tab := range list.Tabs {
			if tab.Note != "" {
				if tab.URL != "" || tab.Title != "" {
					s.t.Fatalf("a tab outside the policy shows %q %q", tab.URL, tab.Title)
				}
				return tab.TabID
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no tab left the policy within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
