package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

// httpEnv is a mcp.Server over a fake backend behind the HTTP handler, serving
// on a real loopback listener.
type httpEnv struct {
	t       testing.TB
	url     string
	addr    string
	keys    *KeyStore
	backend *executortest.Backend
	manager *executor.Manager
	server  *mcp.Server
	handler *Handler
	log     *testkit.Buffer
	stop    context.CancelFunc
	served  chan error
}

func newHTTPEnv(t testing.TB, configure func(*Options)) *httpEnv {
	t.Helper()
	return newHTTPEnvWith(t, nil, configure)
}

func newHTTPEnvWith(t testing.TB, server func(*mcp.Options), configure func(*Options)) *httpEnv {
	t.Helper()
	e := &httpEnv{t: t, backend: executortest.NewBackend("fake")}
	log, buf := bufLogger()
	e.log = buf
	e.manager = executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{e.backend}})
	so := mcp.Options{Manager: e.manager, Gate: gatetest.AllowAll, Version: "test", Logger: log}
	if server != nil {
		server(&so)
	}
	s, err := mcp.NewServer(so)
	if err != nil {
		t.Fatal(err)
	}
	e.server = s
	e.keys, err = OpenKeyStore(filepath.Join(t.TempDir(), "data", "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	e.url = "http://" + e.addr
	opts := Options{Addr: e.addr, Keys: e.keys, Logger: log, MaxBodyBytes: 64 << 10}
	if configure != nil {
		configure(&opts)
	}
	e.handler, err = New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	e.served = make(chan error, 1)
	go func() { e.served <- e.handler.Serve(ctx, ln, 10*time.Second) }()
	t.Cleanup(func() {
		e.shutdown()
		_ = e.manager.Close()
	})
	return e
}

// shutdown stops the server and waits for Serve to return.
func (e *httpEnv) shutdown() error {
	e.stop()
	select {
	case err, ok := <-e.served:
		if ok {
			close(e.served)
		}
		return err
	case <-time.After(20 * time.Second):
		e.t.Error("Serve did not return after shutdown")
		return nil
	}
}

func (e *httpEnv) key(nk NewKey) string {
	e.t.Helper()
	k, _, err := e.keys.Create(nk, time.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return k
}

// do sends one request; header "Host" sets the Host.
func (e *httpEnv) do(method, path, key string, body string, header map[string]string) (int, http.Header, string) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
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
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// headerTransport adds headers to every request of an MCP client.
type headerTransport struct {
	header map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.header {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session over HTTP with key (and extra headers), at
// protocol 2025-11-25: a stateful session (connectAt names another).
func (e *httpEnv) connect(key string, header map[string]string) (*sdk.ClientSession, error) {
	return e.connectAt("2025-11-25", key, header)
}

// connectAt connects at protocol version: 2026-07-28 is stateless.
func (e *httpEnv) connectAt(version, key string, header map[string]string) (*sdk.ClientSession, error) {
	h := map[string]string{}
	for k, v := range header {
		h[k] = v
	}
	if key != "" {
		h["Authorization"] = "Bearer " + key
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &sdk.StreamableClientTransport{Endpoint: e.url + "/mcp", HTTPClient: &http.Client{Transport: headerTransport{h}}}
	return sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, nil).Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
}

func (e *httpEnv) mustConnect(key string, header map[string]string) *sdk.ClientSession {
	e.t.Helper()
	return e.mustConnectAt("2025-11-25", key, header)
}

func (e *httpEnv) mustConnectAt(version, key string, header map[string]string) *sdk.ClientSession {
	e.t.Helper()
	cs, err := e.connectAt(version, key, header)
	if err != nil {
		e.t.Fatalf("connect: %v\nlog:\n%s", err, e.log.String())
	}
	e.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// mcpInit is a raw initialize request, for the tests that look at statuses.
const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

var mcpHeaders = map[string]string{"Accept": "application/json, text/event-stream"}

func with(h map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestHTTPSecurityTable: the hardening and authentication of every route,
// over a real listener.
func TestHTTPSecurityTable(t *testing.T) {
	e := newHTTPEnv(t, func(o *Options) {
		o.Origins = []string{"https://app.example.com"}
		o.Hosts = []string{"chromegate.internal"}
	})
	good := e.key(NewKey{Name: "ci", Roles: []string{"ci"}})
	revoked := e.key(NewKey{Name: "old"})
	if err := e.keys.Revoke("old"); err != nil {
		t.Fatal(err)
	}
	big := `{"command":"get_text","params":{"selector":"` + strings.Repeat("x", 70<<10) + `"}}`

	tests := []struct {
		name   string
		method string
		path   string
		key    string
		body   string
		header map[string]string
		want   int
	}{
		{"Host evil.example on MCP", "POST", "/mcp", good, mcpInit, with(mcpHeaders, "Host", "evil.example"), 403},
		{"Host evil.example with the port on REST", "GET", "/api/v1/status", good, "", map[string]string{"Host": "evil.example:" + strings.Split(e.addr, ":")[1]}, 403},
		{"foreign Origin on POST", "POST", "/mcp", good, mcpInit, with(mcpHeaders, "Origin", "https://evil.example"), 403},
		{"foreign Origin on GET (SSE)", "GET", "/mcp", good, "", map[string]string{"Accept": "text/event-stream", "Origin": "https://evil.example"}, 403},
		{"foreign Origin on REST", "GET", "/api/v1/status", good, "", map[string]string{"Origin": "http://127.0.0.1:1"}, 403},
		{"Origin null", "POST", "/mcp", good, mcpInit, with(mcpHeaders, "Origin", "null"), 403},
		{"Sec-Fetch-Site cross-site", "GET", "/api/v1/status", good, "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"no key", "POST", "/mcp", "", mcpInit, mcpHeaders, 401},
		{"no key on REST", "GET", "/api/v1/tools", "", "", nil, 401},
		{"wrong key", "POST", "/mcp", "cgk_" + strings.Repeat("A", 43), mcpInit, mcpHeaders, 401},
		{"revoked key", "GET", "/api/v1/status", revoked, "", nil, 401},
		{"basic auth is not a key", "GET", "/api/v1/status", "", "", map[string]string{"Authorization": "Basic Y2k6eA=="}, 401},
		{"body over the limit", "POST", "/api/v1/command", good, big, nil, 413},
		{"body over the limit on MCP", "POST", "/mcp", good, big, mcpHeaders, 413},
		{"bad session name", "GET", "/api/v1/status", good, "", map[string]string{SessionHeader: "../x"}, 400},
		{"allowed Origin", "GET", "/api/v1/status", good, "", map[string]string{"Origin": "https://APP.example.com"}, 200},
		{"localhost Host", "GET", "/api/v1/status", good, "", map[string]string{"Host": "localhost:" + strings.Split(e.addr, ":")[1]}, 200},
		{"good key on MCP", "POST", "/mcp", good, mcpInit, mcpHeaders, 200},
		{"an --http-host name on MCP", "POST", "/mcp", good, mcpInit, with(mcpHeaders, "Host", "chromegate.internal:"+strings.Split(e.addr, ":")[1]), 200},
		{"an --http-host name on another port", "GET", "/api/v1/status", good, "", map[string]string{"Host": "chromegate.internal:1"}, 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr, body := e.do(tc.method, tc.path, tc.key, tc.body, tc.header)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %s", status, tc.want, body)
			}
			if acao := hdr.Get("Access-Control-Allow-Origin"); acao == "*" || (acao != "" && tc.header["Origin"] == "") {
				t.Errorf("Access-Control-Allow-Origin %q", acao)
			}
			if status == 401 && !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: %v", hdr)
			}
			if strings.Contains(body, "cgk_") {
				t.Errorf("the answer quotes a key: %s", body)
			}
		})
	}
	// A chunked body over the limit has no Content-Length to refuse early;
	// it is cut while it is read.
	req, _ := http.NewRequest("POST", e.url+"/api/v1/command", io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Authorization", "Bearer "+good)
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Errorf("chunked body over the limit: %d", resp.StatusCode)
	}
	assertNoKeys(t, e.log.String(), good, revoked)
}

// assertNoKeys fails if any key appears in the log.
func assertNoKeys(t *testing.T, log string, keys ...string) {
	t.Helper()
	if log == "" {
		t.Fatal("the log is empty: nothing was checked")
	}
	for _, k := range keys {
		if strings.Contains(log, k) || strings.Contains(log, k[len(KeyPrefix):]) {
			t.Errorf("a key appears in the log")
		}
	}
}

// TestHTTPPreflight: an allowed origin's preflight is answered without
// credentials; a foreign one's is refused.
func TestHTTPPreflight(t *testing.T) {
	e := newHTTPEnv(t, func(o *Options) { o.Origins = []string{"https://app.example.com"} })
	e.key(NewKey{Name: "ci"})
	status, hdr, _ := e.do("OPTIONS", "/mcp", "", "", map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "POST"})
	if status != 204 || hdr.Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(hdr.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("allowed preflight: %d %v", status, hdr)
	}
	if status, _, _ := e.do("OPTIONS", "/mcp", "", "", map[string]string{"Origin": "https://evil.example"}); status != 403 {
		t.Errorf("foreign preflight: %d", status)
	}
}

// TestHTTPAnonymousLocal: a loopback server without keys serves local
// callers as "local-http"; once a key exists, it needs one.
func TestHTTPAnonymousLocal(t *testing.T) {
	e := newHTTPEnv(t, nil)
	status, _, body := e.do("GET", "/api/v1/status", "", "", nil)
	if status != 200 || !strings.Contains(body, `"principal":{"name":"local-http","roles":[],"transport":"rest"}`) {
		t.Fatalf("anonymous status: %d %s", status, body)
	}
	cs := e.mustConnect("", nil)
	if res := callTool(t, cs, "get_text", nil); res.IsError {
		t.Fatalf("anonymous call: %s", textOf(res))
	}
	e.key(NewKey{Name: "first"})
	if status, _, _ := e.do("GET", "/api/v1/status", "", "", nil); status != 401 {
		t.Errorf("after the first key, no key: %d", status)
	}
	if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "get_text", Arguments: map[string]any{}}); err == nil && !res.IsError {
		t.Error("the anonymous session still works after a key was created")
	}
}

// TestHTTPRemoteWithoutKeys: a non-loopback server never serves anonymous
// callers, even when its last key was revoked.
func TestHTTPRemoteWithoutKeys(t *testing.T) {
	e := newHTTPEnv(t, nil)
	e.handler.local = false // as if bound to 0.0.0.0 with --allow-remote
	if status, _, _ := e.do("GET", "/api/v1/status", "", "", nil); status != 401 {
		t.Errorf("remote without keys: %d", status)
	}
}

// TestHTTPToolACL: a key limited to get_* sees only those tools in
// tools/list and REST, and is denied click at call time over both.
func TestHTTPToolACL(t *testing.T) {
	e := newHTTPEnvWith(t, func(so *mcp.Options) { so.Tools = mcp.ListGroups }, nil)
	k := e.key(NewKey{Name: "reader", AllowTools: []string{"get_*"}})
	all := e.key(NewKey{Name: "all", AllowTools: []string{"*", "!eval"}})
	cs := e.mustConnect(k, nil)
	if diff := gocmp.Diff([]string{"get_html", "get_text"}, toolNames(t, cs)); diff != "" {
		t.Errorf("tools/list of get_* (-want +got):\n%s", diff)
	}
	res := callTool(t, cs, "click", map[string]any{"selector": "#a"})
	if !res.IsError || !strings.HasPrefix(textOf(res), "POLICY_DENIED: tool click is not available to reader") {
		t.Errorf("click with a get_* key: %s", textOf(res))
	}
	if res := callTool(t, cs, "get_text", nil); res.IsError {
		t.Errorf("get_text with a get_* key: %s", textOf(res))
	}
	status, _, body := e.do("GET", "/api/v1/tools", k, "", nil)
	var tl struct {
		Data struct {
			Tools []*sdk.Tool `json:"tools"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &tl); err != nil || status != 200 || len(tl.Data.Tools) != 2 {
		t.Fatalf("REST tools of get_*: %d %s", status, body)
	}
	// REST gives the whole schemas, which tools/list trims for a model
	// that reads the instructions: the common arguments, no others allowed,
	// and what the tool returns.
	for _, d := range tl.Data.Tools {
		in, _ := json.Marshal(d.InputSchema)
		if !strings.Contains(string(in), `"timeout_ms"`) || !strings.Contains(string(in), `"additionalProperties":false`) || d.OutputSchema == nil {
			t.Errorf("REST's %s: want the whole input schema and the output schema, got %s, output %v", d.Name, in, d.OutputSchema)
		}
	}
	status, _, body = e.do("POST", "/api/v1/command", k, `{"command":"click","params":{"selector":"#a"}}`, nil)
	if status != 403 || !strings.Contains(body, `"code":"POLICY_DENIED"`) {
		t.Errorf("REST click with a get_* key: %d %s", status, body)
	}
	names := toolNames(t, e.mustConnect(all, nil))
	if len(names) != len(mcp.Tools())-1 || strings.Contains(strings.Join(names, " "), "eval") {
		t.Errorf("* with !eval: %v", names)
	}
}

// TestHTTPToolACLPluginSteps: a key's ACL holds at every plugin step: a
// key allowed read_page and navigate, but not get_text, is stopped at the
// step that reads.
func TestHTTPToolACLPluginSteps(t *testing.T) {
	e := newHTTPEnvWith(t, func(o *mcp.Options) {
		o.Plugins = loadPlugins(t, map[string]string{"read.json": readPlugin})
	}, nil)
	k := e.key(NewKey{Name: "k", AllowTools: []string{"read_page", "navigate"}})
	cs := e.mustConnect(k, nil)
	if diff := gocmp.Diff([]string{"navigate", "read_page"}, toolNames(t, cs)); diff != "" {
		t.Errorf("tools/list (-want +got):\n%s", diff)
	}
	res := callTool(t, cs, "read_page", map[string]any{"url": "https://example.test/a"})
	if !res.IsError || !strings.HasPrefix(textOf(res), "POLICY_DENIED: plugin read_page stopped at step 2 (read, get_text): tool get_text is not available to k") {
		t.Errorf("read_page with get_text outside the ACL: %s", textOf(res))
	}
	for _, m := range e.backend.Last().Methods() {
		if m == "Text" {
			t.Error("the step outside the ACL reached the executor")
		}
	}
}

// TestHTTPRateLimit: over its rate, a key gets RATE_LIMITED with a retry
// hint over MCP, and 429 with Retry-After over REST.
func TestHTTPRateLimit(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "slow", Rate: "2/min"})
	cs := e.mustConnect(k, nil)
	for i := range 2 {
		if res := callTool(t, cs, "get_text", nil); res.IsError {
			t.Fatalf("call %d: %s", i, textOf(res))
		}
	}
	res := callTool(t, cs, "get_text", nil)
	txt := textOf(res)
	if !res.IsError || !strings.HasPrefix(txt, "RATE_LIMITED: key slow is over its limit of 2/min tool calls") || !retryHint.MatchString(txt) {
		t.Errorf("third call: %s", txt)
	}
	status, hdr, body := e.do("POST", "/api/v1/command", k, `{"command":"get_text"}`, nil)
	if status != 429 || hdr.Get("Retry-After") == "" || !strings.Contains(body, `"code":"RATE_LIMITED"`) || !strings.Contains(body, "retry in") ||
		!strings.Contains(body, `"retry_after_ms":`+hdr.Get("Retry-After")+`000`) {
		t.Errorf("REST over the limit: %d %v %s", status, hdr, body)
	}
	// The limit is the key's, not the session's.
	if res := callTool(t, e.mustConnect(k, nil), "get_text", nil); !res.IsError {
		t.Error("a new session escaped the key's limit")
	}
	assertNoKeys(t, e.log.String(), k)
}

// TestHTTPSlowBody: POSTs whose bodies trickle in — with a valid key or
// none, to MCP and to REST — are cut off at the body deadline and their
// connections closed, so they hold nothing for longer; a whole request
// still works afterwards.
func TestHTTPSlowBody(t *testing.T) {
	e := newHTTPEnv(t, func(o *Options) { o.BodyTimeout = 300 * time.Millisecond })
	k := e.key(NewKey{Name: "k"})
	const conns = 30
	type outcome struct {
		closed bool
		status string
	}
	results := make(chan outcome, conns)
	for i := range conns {
		auth := ""
		if i%2 == 0 {
			auth = "Authorization: Bearer " + k + "\r\n"
		}
		path := "/mcp"
		if i%3 == 0 {
			path = "/api/v1/command"
		}
		go func() {
			conn, err := net.Dial("tcp", e.addr)
			if err != nil {
				results <- outcome{}
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", path, e.addr, auth)
			// The rest never comes. The server must answer and close
			// well before the client gives up.
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			got, err := io.ReadAll(conn)
			status, _, _ := strings.Cut(string(got), "\r\n")
			results <- outcome{closed: err == nil, status: status}
		}()
	}
	for range conns {
		if o := <-results; !o.closed {
			t.Errorf("a slow-body POST was still open after 5 s (answer so far: %q)", o.status)
		}
	}
	if status, _, body := e.do("POST", "/api/v1/command", k, `{"command":"tabs_list"}`, nil); status != 200 {
		t.Errorf("a whole request after the slow ones: %d %s", status, body)
	}
}

// eightReads is a plugin of eight reads: one call, eight tool calls' work.
const eightReads = `{
  "name": "read_eight",
  "description": "Read the page eight times.",
  "read_only": true,
  "params": {"type": "object", "properties": {}},
  "steps": [
    {"name": "r1", "tool": "get_text", "args": {}}, {"name": "r2", "tool": "get_text", "args": {}},
    {"name": "r3", "tool": "get_text", "args": {}}, {"name": "r4", "tool": "get_text", "args": {}},
    {"name": "r5", "tool": "get_text", "args": {}}, {"name": "r6", "tool": "get_text", "args": {}},
    {"name": "r7", "tool": "get_text", "args": {}}, {"name": "r8", "tool": "get_text", "args": {}}
  ]
}`

// TestHTTPRateLimitPluginSteps: every plugin step is charged to the key's
// rate limit. A plugin of eight reads, called with a 5/min key, is
// stopped at its sixth step with RATE_LIMITED and when to retry; the sixth
// read never reaches the browser; and the key's budget is spent, over MCP
// and REST alike.
func TestHTTPRateLimitPluginSteps(t *testing.T) {
	e := newHTTPEnvWith(t, func(o *mcp.Options) {
		o.Plugins = loadPlugins(t, map[string]string{"eight.json": eightReads})
	}, nil)
	k := e.key(NewKey{Name: "five", Rate: "5/min"})
	cs := e.mustConnect(k, nil)
	res := callTool(t, cs, "read_eight", nil)
	txt := textOf(res)
	if !res.IsError || !strings.HasPrefix(txt, "RATE_LIMITED: plugin read_eight stopped at step 6 (r6, get_text): key five is over its limit of 5/min") ||
		!retryHint.MatchString(txt) {
		t.Errorf("eight reads on a 5/min key: %s", txt)
	}
	reads := 0
	for _, m := range e.backend.Last().Methods() {
		if m == "Text" {
			reads++
		}
	}
	if reads != 5 {
		t.Errorf("%d reads reached the browser, want the 5 the key could pay for", reads)
	}
	status, hdr, body := e.do("POST", "/api/v1/command", k, `{"command":"read_eight"}`, nil)
	if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), `"code":"RATE_LIMITED"`) || !strings.Contains(string(sc), `"retry_after_ms":`) {
		t.Errorf("the plugin's error lost its retry-after on the way out: %s", sc)
	}
	if status != 429 || hdr.Get("Retry-After") == "" || !strings.Contains(body, "stopped at step 1") || !strings.Contains(body, `"retry_after_ms":`) {
		t.Errorf("the plugin again over REST, the budget spent: %d %v %s", status, hdr, body)
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRESTCommand: the REST shapes and statuses.
func TestRESTCommand(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "k"})
	tests := []struct {
		name   string
		body   string
		status int
		want   string
	}{
		{"ok", `{"command":"get_text","params":{}}`, 200, `{"ok":true,"data":{"tab_id":"fake:s1:1","url":"about:blank","chars":19},"text":"text of about:blank","untrusted":true}`},
		{"unknown command", `{"command":"nope"}`, 404, `"code":"UNKNOWN_COMMAND"`},
		{"bad args", `{"command":"get_text","params":{"bogus":1}}`, 400, `"code":"BAD_ARGS","message":"unknown argument \"bogus\""`},
		{"params not an object", `{"command":"get_text","params":[1]}`, 400, `"code":"BAD_ARGS"`},
		{"unknown field", `{"command":"get_text","Command":"click"}`, 400, `unknown field \"Command\"`},
		{"no command", `{"params":{}}`, 400, `"code":"BAD_ARGS"`},
		{"not JSON", `nope`, 400, `"code":"BAD_ARGS"`},
		{"bad session", `{"command":"get_text","session":"a b"}`, 400, `"code":"BAD_ARGS"`},
		{"tab not found", `{"command":"get_text","params":{"tab_id":"fake:s1:99"}}`, 409, `"code":"TAB_NOT_FOUND"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := e.do("POST", "/api/v1/command", k, tc.body, nil)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s, want %d with %s", status, body, tc.status, tc.want)
			}
		})
	}
	if status, _, _ := e.do("GET", "/api/v1/nothing", k, "", nil); status != 404 {
		t.Errorf("unknown endpoint: %d", status)
	}
	e.backend.Last().Fail("Text", executor.Errorf(executor.CodeTimeout, "slow"))
	if status, _, body := e.do("POST", "/api/v1/command", k, `{"command":"get_text"}`, nil); status != 504 || !strings.Contains(body, `"hint":"`) {
		t.Errorf("timeout: %d %s", status, body)
	}
}

// TestRESTMatchesMCP: the same call gives the same data over REST and MCP.
func TestRESTMatchesMCP(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "k"})
	cs := e.mustConnect(k, map[string]string{SessionHeader: "same"})
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"get_text", map[string]any{"selector": "h1"}},
		{"tabs_list", nil},
		{"screenshot", nil},
		{"navigate", map[string]any{"url": "https://example.com/"}},
	} {
		res := callTool(t, cs, call.tool, call.args)
		if res.IsError {
			t.Fatalf("%s: %s", call.tool, textOf(res))
		}
		// MCP's structured content is REST's answer, the image's bytes
		// aside (over MCP they are the image content's).
		var mcpData, restData map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &mcpData); err != nil {
			t.Fatalf("%s: structured content %s: %v", call.tool, b, err)
		}
		body, _ := json.Marshal(map[string]any{"command": call.tool, "params": call.args, "session": "same"})
		status, _, rb := e.do("POST", "/api/v1/command", k, string(body), nil)
		if err := json.Unmarshal([]byte(rb), &restData); err != nil || status != 200 || restData["ok"] != true {
			t.Fatalf("REST %s: %d %s", call.tool, status, rb)
		}
		delete(restData, "ok")
		if img, ok := restData["image"].(map[string]any); ok {
			want := ""
			for _, c := range res.Content {
				if c, ok := c.(*sdk.ImageContent); ok {
					want = base64.StdEncoding.EncodeToString(c.Data)
				}
			}
			if img["data"] != want || want == "" {
				t.Errorf("%s: REST's image is not MCP's", call.tool)
			}
			delete(img, "data")
		}
		if diff := gocmp.Diff(mcpData, restData); diff != "" {
			t.Errorf("%s: REST and MCP differ (-mcp +rest):\n%s", call.tool, diff)
		}
		if mcpData["data"] == nil {
			t.Errorf("%s: no value: %s", call.tool, b)
		}
	}
}

// TestRESTTools: REST lists the tools MCP tools/list does, with the same
// names, descriptions and annotations, and each one's whole schema: every
// argument tools/list shows, the same required ones, and the common ones
// it leaves to the instructions; and the output schema.
func TestRESTTools(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "k"})
	lr, err := e.mustConnect(k, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, body := e.do("GET", "/api/v1/tools", k, "", nil)
	var ans struct {
		Data struct {
			Tools []*sdk.Tool `json:"tools"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Data.Tools) != len(lr.Tools) {
		t.Fatalf("REST lists %d tools, tools/list %d", len(ans.Data.Tools), len(lr.Tools))
	}
	common := 0
	for i, w := range lr.Tools {
		r := ans.Data.Tools[i]
		if r.Name != w.Name || r.Description != w.Description || !reflect.DeepEqual(r.Annotations, w.Annotations) {
			t.Errorf("REST's %s differs from tools/list's %s: %q %+v vs %q %+v", r.Name, w.Name, r.Description, r.Annotations, w.Description, w.Annotations)
			continue
		}
		var ws, rs struct {
			Properties           map[string]any `json:"properties"`
			Required             []string       `json:"required"`
			AdditionalProperties *bool          `json:"additionalProperties"`
		}
		wb, _ := json.Marshal(w.InputSchema)
		rb, _ := json.Marshal(r.InputSchema)
		_ = json.Unmarshal(wb, &ws)
		_ = json.Unmarshal(rb, &rs)
		for p := range ws.Properties {
			if _, ok := rs.Properties[p]; !ok {
				t.Errorf("REST's %s lacks the argument %s that tools/list shows", r.Name, p)
			}
		}
		if !slices.Equal(ws.Required, rs.Required) || rs.AdditionalProperties == nil || *rs.AdditionalProperties || r.OutputSchema == nil {
			t.Errorf("REST's %s: required %v (tools/list %v), additionalProperties %v, output schema %v", r.Name, rs.Required, ws.Required, rs.AdditionalProperties, r.OutputSchema)
		}
		if _, ok := rs.Properties["timeout_ms"]; ok && ws.Properties["timeout_ms"] == nil {
			common++
		}
	}
	if common < 10 {
		t.Errorf("REST shows timeout_ms, which tools/list leaves to the instructions, on %d tools; want most", common)
	}
}

// TestHTTPGracefulShutdown: a call in flight when the server is told to
// stop finishes and is answered; the server then stops.
func TestHTTPGracefulShutdown(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "k"})
	started, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	e.backend.Setup(func(f *executortest.Fake) {
		f.Handle("Text", func(ctx context.Context, _ any) (any, error) {
			once.Do(func() { close(started) })
			select {
			case <-release:
				return executor.TextResult{PageState: executor.PageState{URL: "about:blank"}, Text: "finished"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	})
	cs := e.mustConnect(k, nil)
	type result struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "get_text", Arguments: map[string]any{}})
		done <- result{res, err}
	}()
	<-started
	served := make(chan error, 1)
	go func() { served <- e.shutdown() }()
	eventually(t, "the server to start draining", func() bool {
		e.handler.mu.Lock()
		defer e.handler.mu.Unlock()
		return e.handler.draining
	})
	// New connections are refused while the call finishes.
	if _, err := http.Get(e.url + "/api/v1/status"); err == nil {
		t.Error("the listener still accepts connections during shutdown")
	}
	close(release)
	r := <-done
	if r.err != nil || r.res.IsError || !strings.Contains(textOf(r.res), "finished") {
		t.Fatalf("the call in flight: %v %v\n%s", r.err, r.res, e.log.String())
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
}

// FuzzNormalOrigin: an Origin is either refused or normalised to a value
// that is its own normal form and carries no path, user or query.
func FuzzNormalOrigin(f *testing.F) {
	for _, s := range []string{"https://app.example.com", "null", "http://127.0.0.1:8080/", "https://u:p@x.test", "HTTPS://X.test:1", "file:///etc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, o string) {
		n, err := normalOrigin(o)
		if err != nil {
			return
		}
		again, err := normalOrigin(n)
		if err != nil || again != n {
			t.Errorf("%q → %q → %q, %v", o, n, again, err)
		}
		if n == "null" || strings.ContainsAny(strings.TrimPrefix(strings.TrimPrefix(n, "https://"), "http://"), "/@?#") {
			t.Errorf("%q normalised to %q", o, n)
		}
	})
}

// retryHint is the Next line of a RATE_LIMITED error, as the model reads it.
var retryHint = regexp.MustCompile(`\nNext: retry in \d+ s;`)

// TestRESTToolGroups: a REST caller, which has no MCP session, turns a
// group on for its principal: REST's tool list shows its tools from then
// on; a call of a tool of a group that is off runs all the same.
func TestRESTToolGroups(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "rest"})
	tools := func() []string {
		t.Helper()
		status, _, body := e.do("GET", "/api/v1/tools", k, "", nil)
		var tl struct {
			Data struct {
				Tools []*sdk.Tool `json:"tools"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(body), &tl); err != nil || status != 200 {
			t.Fatalf("REST tools: %d %s", status, body)
		}
		var names []string
		for _, tool := range tl.Data.Tools {
			names = append(names, tool.Name)
		}
		return names
	}
	if names := tools(); slices.Contains(names, "console_messages") || !slices.Contains(names, "tool_groups") {
		t.Errorf("REST tools by default: %v", names)
	}
	if status, _, body := e.do("POST", "/api/v1/command", k, `{"command":"console_messages","params":{}}`, nil); status != 200 {
		t.Errorf("a tool of a group that is off, by name: %d %s", status, body)
	}
	if status, _, body := e.do("POST", "/api/v1/command", k, `{"command":"tool_groups","params":{"enable":["observe"]}}`, nil); status != 200 || !strings.Contains(body, "on: console_messages") {
		t.Errorf("tool_groups enable: %d %s", status, body)
	}
	if names := tools(); !slices.Contains(names, "console_messages") {
		t.Errorf("REST tools after enabling observe: %v", names)
	}
}

// TestMCPToolGroupsPerSession: over Streamable HTTP a group turned on is
// the calling MCP session's alone, even for another session of the same
// key.
func TestMCPToolGroupsPerSession(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "two"})
	a, b := e.mustConnect(k, nil), e.mustConnect(k, nil)
	if res := callTool(t, a, "tool_groups", map[string]any{"enable": []string{"observe"}}); res.IsError {
		t.Fatalf("tool_groups: %s", textOf(res))
	}
	if names := toolNames(t, a); !slices.Contains(names, "console_messages") {
		t.Errorf("the session that enabled observe lists %v", names)
	}
	if names := toolNames(t, b); slices.Contains(names, "console_messages") {
		t.Errorf("another session of the key lists %v", names)
	}
}
