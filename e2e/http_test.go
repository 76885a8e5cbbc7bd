package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp/httpapi"
	"github.com/chromegate/chromegate/policy"
)

// httpServer is one `chromegate serve --http` process on a free loopback
// port.
type httpServer struct {
	*server
	url    string
	addr   string
	exited chan struct{} // closed when the process has exited
}

var servingAddr = regexp.MustCompile(`msg="chromegate serving over HTTP".* addr=(127\.0\.0\.1:\d+)`)

// createKey runs `chromegate keys create` in dataDir and returns the key.
func createKey(t testing.TB, dataDir, name string, flags ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(binary, append([]string{"keys", "create", name, "--data-dir", dataDir}, flags...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("keys create %s: %v\n%s", name, err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// startHTTP starts `chromegate serve --http 127.0.0.1:0` on dataDir (where
// keys may have been created) and waits until it listens.
func startHTTP(t testing.TB, dataDir string, args ...string) *httpServer {
	t.Helper()
	return startHTTPEnv(t, dataDir, fmt.Sprintf("e2e-http-%d-%d", os.Getpid(), time.Now().UnixNano()), nil, args...)
}

// startHTTPEnv is startHTTP with the process marker and extra environment
// (KEY=VALUE) given. With --browser-endpoint or --cdp-endpoint in args the
// server is not --isolated (an attached browser has no profile of ours).
func startHTTPEnv(t testing.TB, dataDir, mark string, env []string, args ...string) *httpServer {
	t.Helper()
	needBrowser(t)
	s := &server{t: t, log: &testkit.Buffer{}, mark: mark, dataDir: dataDir}
	full := []string{"serve", "--http", "127.0.0.1:0", "--data-dir=" + dataDir, "--log-level=debug"}
	if !slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--browser-endpoint") || strings.HasPrefix(a, "--cdp-endpoint")
	}) {
		full = append(full, "--isolated")
	}
	full = append(full, args...)
	s.cmd = exec.Command(binary, full...)
	s.cmd.Env = append(append(os.Environ(), "CHROMEGATE_E2E_MARK="+s.mark), env...)
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(exited) }()
	h := &httpServer{server: s, exited: exited}
	deadline := time.Now().Add(30 * time.Second)
	for h.addr == "" {
		if m := servingAddr.FindStringSubmatch(s.log.String()); m != nil {
			h.addr = m[1]
			break
		}
		select {
		case <-exited:
			t.Fatalf("chromegate serve --http exited:\n%s", s.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromegate serve --http did not listen within 30 s:\n%s", s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.url = "http://" + h.addr
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(40 * time.Second):
			_ = s.cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("server log:\n%s", tail(s.log.String(), 8000))
			if dir := os.Getenv("E2E_LOG_DIR"); dir != "" {
				_ = os.WriteFile(filepath.Join(dir, s.mark+".log"), []byte(s.log.String()), 0o644)
			}
		}
	})
	return h
}

type headerRT map[string]string

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session over HTTP with key and extra headers, at
// protocol 2025-11-25: a stateful session with a browser context of its
// own, which these tests are about (connectAt speaks 2026-07-28).
func (h *httpServer) connect(key string, header map[string]string) *sdk.ClientSession {
	h.t.Helper()
	return h.connectAt("2025-11-25", key, header, nil)
}

// rest sends one REST request and returns the status, headers and body.
func (h *httpServer) rest(method, path, key, body string, header map[string]string) (int, http.Header, string) {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func mcpCall(t testing.TB, cs *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s over HTTP: %v", tool, err)
	}
	return res
}

func mustOK(t testing.TB, tool string, res *sdk.CallToolResult) *sdk.CallToolResult {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: %s", tool, resultText(res))
	}
	return res
}

// TestHTTPSecurity is the security table against the built binary: the
// hardening, keys, ACLs, rate limits and body limit, and no key in the log.
func TestHTTPSecurity(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	base := site(t)
	dir := t.TempDir()
	good := createKey(t, dir, "ci", "--role", "ci")
	reader := createKey(t, dir, "reader", "--allow-tools", "get_*")
	slow := createKey(t, dir, "slow", "--rate", "2/min")
	doomed := createKey(t, dir, "doomed")
	h := startHTTP(t, dir, append([]string{"--max-body-bytes", "4096"}, permissive...)...)
	port := h.addr[strings.LastIndex(h.addr, ":")+1:]
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	accept := map[string]string{"Accept": "application/json, text/event-stream"}
	plus := func(kv ...string) map[string]string {
		m := map[string]string{"Accept": accept["Accept"]}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// `chromegate keys revoke` while the server runs: refused from the next
	// request on.
	if out, err := exec.Command(binary, "keys", "revoke", "doomed", "--data-dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("keys revoke: %v %s", err, out)
	}
	tests := []struct {
		name, method, path, key, body string
		header                        map[string]string
		want                          int
	}{
		{"Host evil.example", "POST", "/mcp", good, init, plus("Host", "evil.example:"+port), 403},
		{"Host evil.example on REST", "GET", "/api/v1/status", good, "", map[string]string{"Host": "evil.example"}, 403},
		{"foreign Origin on POST", "POST", "/mcp", good, init, plus("Origin", "https://evil.example"), 403},
		{"foreign Origin on GET", "GET", "/mcp", good, "", map[string]string{"Accept": "text/event-stream", "Origin": "https://evil.example"}, 403},
		{"Origin null", "POST", "/mcp", good, init, plus("Origin", "null"), 403},
		{"Sec-Fetch-Site cross-site", "POST", "/api/v1/command", good, `{"command":"tabs_list"}`, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"no key", "POST", "/mcp", "", init, accept, 401},
		{"wrong key", "POST", "/mcp", "cgk_" + strings.Repeat("x", 43), init, accept, 401},
		{"revoked key", "POST", "/mcp", doomed, init, accept, 401},
		{"revoked key on REST", "GET", "/api/v1/status", doomed, "", nil, 401},
		{"body over the limit", "POST", "/api/v1/command", good, `{"command":"get_text","params":{"selector":"` + strings.Repeat("a", 5000) + `"}}`, nil, 413},
		{"body over the limit on MCP", "POST", "/mcp", good, strings.Replace(init, `"raw"`, `"`+strings.Repeat("a", 5000)+`"`, 1), accept, 413},
		{"a good key", "GET", "/api/v1/status", good, "", nil, 200},
	}
	for _, tc := range tests {
		status, hdr, body := h.rest(tc.method, tc.path, tc.key, tc.body, tc.header)
		if status != tc.want {
			t.Errorf("%s: status %d, want %d: %s", tc.name, status, tc.want, body)
		}
		if hdr.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: CORS header %q", tc.name, hdr.Get("Access-Control-Allow-Origin"))
		}
	}

	// A key limited to get_* sees only those tools (get_html's group,
	// extract, is off), and is denied click.
	rc := h.connect(reader, nil)
	lr, err := rc.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lr.Tools {
		names = append(names, tl.Name)
	}
	if diff := gocmp.Diff([]string{"get_text"}, names); diff != "" {
		t.Errorf("tools/list of a get_* key (-want +got):\n%s", diff)
	}
	if res := mcpCall(t, rc, "click", map[string]any{"selector": "#counter"}); !res.IsError || !strings.HasPrefix(resultText(res), "POLICY_DENIED") {
		t.Errorf("click with a get_* key: %s", resultText(res))
	}
	if status, _, body := h.rest("POST", "/api/v1/command", reader, `{"command":"navigate","params":{"url":"`+base+`/form"}}`, nil); status != 403 || !strings.Contains(body, "POLICY_DENIED") {
		t.Errorf("REST navigate with a get_* key: %d %s", status, body)
	}

	// Over the rate: an error with a retry hint (MCP), 429 + Retry-After (REST).
	sc := h.connect(slow, nil)
	mustOK(t, "navigate", mcpCall(t, sc, "navigate", map[string]any{"url": base + "/form"}))
	mustOK(t, "get_text", mcpCall(t, sc, "get_text", map[string]any{"selector": "#para"}))
	res := mcpCall(t, sc, "get_text", map[string]any{"selector": "#para"})
	if txt := resultText(res); !res.IsError || !strings.HasPrefix(txt, "RATE_LIMITED:") || !regexp.MustCompile(`Next: retry in \d+ s`).MatchString(txt) {
		t.Errorf("over the rate over MCP: %s", txt)
	}
	status, hdr, body := h.rest("POST", "/api/v1/command", slow, `{"command":"tabs_list"}`, nil)
	if status != 429 || hdr.Get("Retry-After") == "" || !strings.Contains(body, `"code":"RATE_LIMITED"`) {
		t.Errorf("over the rate over REST: %d %v %s", status, hdr, body)
	}

	// The good key works over both, and the server kept serving throughout.
	gc := h.connect(good, nil)
	mustOK(t, "navigate", mcpCall(t, gc, "navigate", map[string]any{"url": base + "/form"}))
	if status, _, body := h.rest("POST", "/api/v1/command", good, `{"command":"tabs_list"}`, nil); status != 200 {
		t.Errorf("REST with a good key: %d %s", status, body)
	}

	log := h.log.String()
	if !strings.Contains(log, "principal=reader") {
		t.Fatalf("the access log is missing; nothing was checked:\n%s", tail(log, 2000))
	}
	for name, k := range map[string]string{"ci": good, "reader": reader, "slow": slow, "doomed": doomed} {
		if strings.Contains(log, k) || strings.Contains(log, strings.TrimPrefix(k, httpapi.KeyPrefix)) {
			t.Errorf("the key of %s appears in the server's log", name)
		}
	}
}

// TestHTTPIsolation: two MCP sessions over HTTP, in parallel, each set a
// cookie and open tabs; neither sees the other's.
func TestHTTPIsolation(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	base := site(t)
	dir := t.TempDir()
	key := createKey(t, dir, "k")
	h := startHTTP(t, dir, permissive...)
	type seen struct {
		cookies, page, tabs string
		ntabs               int
	}
	results := map[string]*seen{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sessions := map[string]*sdk.ClientSession{}
	for _, who := range []string{"alice", "bob"} {
		sessions[who] = h.connect(key, nil)
	}
	for who, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// t.Fatal may not run on this goroutine: failures are reported
			// with t.Error and end the goroutine.
			call := func(tool string, args map[string]any) (string, bool) {
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
				if err != nil || res.IsError {
					t.Errorf("%s for %s: %v %s", tool, who, err, resultText(res))
					return "", false
				}
				return resultText(res), true
			}
			steps := []struct {
				tool string
				args map[string]any
			}{
				{"navigate", map[string]any{"url": base + "/form"}},
				{"cookies_set", map[string]any{"cookies": []any{map[string]any{"name": "who", "value": who, "url": base}}}},
				{"tab_new", map[string]any{"url": base + "/other?" + who}},
				{"tab_new", map[string]any{"url": base + "/cookies"}},
			}
			for _, st := range steps {
				if _, ok := call(st.tool, st.args); !ok {
					return
				}
			}
			s := &seen{}
			var ok1, ok2, ok3 bool
			s.cookies, ok1 = call("cookies_get", map[string]any{"urls": []any{base}})
			s.page, ok2 = call("get_text", map[string]any{})
			s.tabs, ok3 = call("tabs_list", map[string]any{})
			if !ok1 || !ok2 || !ok3 {
				return
			}
			var tl struct {
				Tabs []any `json:"tabs"`
			}
			_ = json.Unmarshal([]byte(jsonPart(s.tabs)), &tl)
			s.ntabs = len(tl.Tabs)
			mu.Lock()
			results[who] = s
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for who, other := range map[string]string{"alice": "bob", "bob": "alice"} {
		s := results[who]
		if !strings.Contains(s.cookies, `"value":"`+who+`"`) || strings.Contains(s.cookies, `"value":"`+other+`"`) {
			t.Errorf("%s's cookies: %s", who, s.cookies)
		}
		if !strings.Contains(s.page, "who="+who) || strings.Contains(s.page, "who="+other) {
			t.Errorf("%s's page saw the cookies: %s", who, s.page)
		}
		if s.ntabs != 3 || !strings.Contains(s.tabs, "/other?"+who) || strings.Contains(s.tabs, "/other?"+other) {
			t.Errorf("%s's tabs (%d): %s", who, s.ntabs, s.tabs)
		}
	}
	// Ending a session closes its context, and only its own.
	id := sessions["alice"].ID()
	if err := sessions["alice"].Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, func() bool {
		return strings.Contains(h.log.String(), `msg="closed a session's browser context" session=mcp:`+id)
	})
	mustOK(t, "tabs_list", mcpCall(t, sessions["bob"], "tabs_list", nil))
}

// TestHTTPRESTMatchesMCP: the same call over REST and MCP gives the same
// data and the same policy decision (read back from the decision log), for
// an allowed call and a denied one.
func TestHTTPRESTMatchesMCP(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	base := site(t)
	dir := t.TempDir()
	key := createKey(t, dir, "agent", "--role", "ci")
	dlog := dir + "/decisions.jsonl"
	h := startHTTP(t, dir, append([]string{"--decision-log", dlog}, permissive...)...)
	cs := h.connect(key, map[string]string{httpapi.SessionHeader: "shared"})
	mustOK(t, "navigate", mcpCall(t, cs, "navigate", map[string]any{"url": base + "/form"}))

	calls := []struct {
		tool string
		args map[string]any
		deny bool
	}{
		{"get_text", map[string]any{"selector": "#para"}, false},
		{"snapshot", map[string]any{}, false},
		{"navigate", map[string]any{"url": "https://not-allowed.example/"}, true},
	}
	for _, c := range calls {
		before := decisions(t, dlog)
		res := mcpCall(t, cs, c.tool, c.args)
		viaMCP := decisions(t, dlog)[len(before):]
		body, _ := json.Marshal(map[string]any{"command": c.tool, "params": c.args, "session": "shared"})
		status, _, rb := h.rest("POST", "/api/v1/command", key, string(body), nil)
		viaREST := decisions(t, dlog)[len(before)+len(viaMCP):]

		if c.deny {
			var ans struct {
				OK    bool `json:"ok"`
				Error struct {
					Code, Message, Hint string
				} `json:"error"`
			}
			_ = json.Unmarshal([]byte(rb), &ans)
			mcpText := resultText(res)
			if !res.IsError || status != 403 || ans.Error.Code != "POLICY_DENIED" || mcpText != fmt.Sprintf("POLICY_DENIED: %s\nNext: %s", ans.Error.Message, ans.Error.Hint) {
				t.Errorf("%s: MCP %q, REST %d %s", c.tool, mcpText, status, rb)
			}
		} else {
			// REST's answer is the MCP result's structured content.
			var restData, mcpData map[string]any
			if err := json.Unmarshal([]byte(rb), &restData); err != nil || status != 200 || restData["ok"] != true {
				t.Fatalf("REST %s: %d %s", c.tool, status, rb)
			}
			delete(restData, "ok")
			b, _ := json.Marshal(mustOK(t, c.tool, res).StructuredContent)
			_ = json.Unmarshal(b, &mcpData)
			if diff := gocmp.Diff(mcpData, restData); diff != "" || mcpData["data"] == nil {
				t.Errorf("%s: REST and MCP results differ (-mcp +rest):\n%s", c.tool, diff)
			}
		}
		if len(viaMCP) == 0 || len(viaMCP) != len(viaREST) {
			t.Fatalf("%s: %d decisions over MCP, %d over REST", c.tool, len(viaMCP), len(viaREST))
		}
		for i := range viaMCP {
			m, r := viaMCP[i], viaREST[i]
			if m.Transport != "http" || r.Transport != "rest" || m.Principal != "agent" || r.Principal != "agent" {
				t.Errorf("%s: principals %s/%s over %s/%s", c.tool, m.Principal, r.Principal, m.Transport, r.Transport)
			}
			if m.Allow == c.deny {
				t.Errorf("%s: decision %v", c.tool, m.Allow)
			}
			m.Time, r.Time, m.EvalMicros, r.EvalMicros, m.Transport, r.Transport = time.Time{}, time.Time{}, 0, 0, "", ""
			if diff := gocmp.Diff(m, r); diff != "" {
				t.Errorf("%s: decisions differ (-mcp +rest):\n%s", c.tool, diff)
			}
		}
	}
}

// decisions reads the call-phase lines of the decision log.
func decisions(t *testing.T, path string) []policy.LogEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []policy.LogEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e policy.LogEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("decision log line %q: %v", sc.Text(), err)
		}
		if e.Phase == policy.PhaseCall {
			out = append(out, e)
		}
	}
	return out
}

// TestHTTPGracefulShutdown: SIGTERM while a call is in flight lets it
// finish and answer; then the server exits and leaves no process behind.
func TestHTTPGracefulShutdown(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	arrived := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/held", func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		time.Sleep(1500 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Held</title><p id="p">served after a wait</p>`)
	})
	base := "http://127.0.0.1:" + serveMux(t, mux)
	dir := t.TempDir()
	key := createKey(t, dir, "k")
	h := startHTTP(t, dir, permissive...)
	cs := h.connect(key, nil)
	mustOK(t, "tabs_list", mcpCall(t, cs, "tabs_list", nil)) // the browser is up

	type result struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "navigate", Arguments: map[string]any{"url": base + "/held"}})
		done <- result{res, err}
	}()
	select {
	case <-arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("the navigation never reached the page")
	}
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res.IsError || !strings.Contains(resultText(r.res), `"title":"Held"`) {
		t.Fatalf("the call in flight at SIGTERM: %v %v", r.err, r.res)
	}
	select {
	case <-h.exited:
	case <-time.After(40 * time.Second):
		t.Fatal("the server did not exit after SIGTERM")
	}
	if code := h.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	waitFor(t, 15*time.Second, func() bool { return len(h.procs()) == 0 })
}
