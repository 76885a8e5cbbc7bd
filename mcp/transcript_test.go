package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/tools/txtar"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/httpapi"
	"github.com/chromegate/chromegate/policy/gate"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

// A transcript is a whole conversation kept as a golden file, as the MCP Go
// SDK keeps its conformance tests (mcp/testdata/conformance/*.txtar): the
// archive's comment says what it shows, its files are
//
//	deny      tools the policy denies, one a line (optional)
//	options   the server's switches, as JSON (optional; see transcriptOptions)
//	client    the JSON-RPC messages a client sends, in order
//	server    every message the server sends back (golden)
//
// replayed over the SDK's in-memory transports against a server with the
// fake browser (executortest). What changes from run to run is masked (see
// masked), and tools/list_changed notifications are left out: the page
// tools' watcher sends them when it hears of a page's tools, not at a
// point of the conversation. every_tool.txtar calls every tool once, with
// every switch on: the before-image of each tool's result. A REST transcript (rest_*.txtar) is
//
//	key       the API key's name and rate, as JSON (optional)
//	requests  {"method", "path", "body"} one after another
//	responses {"status", "header", "body"} for each (golden)
//
// sent to the HTTP handler on a loopback port. UPDATE_GOLDEN=1 rewrites the
// golden files; the diff is the review.
func TestTranscripts(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "transcripts", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var out *txtar.Archive
			if strings.HasPrefix(filepath.Base(path), "rest_") {
				out = replayREST(t, ar)
			} else {
				out = replayMCP(t, ar)
			}
			testkit.Golden(t, path, txtar.Format(out))
		})
	}
}

// section returns the data of the archive's file name, or nil.
func section(ar *txtar.Archive, name string) []byte {
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// withSection returns ar with the file name's data replaced (or added).
func withSection(ar *txtar.Archive, name string, data []byte) *txtar.Archive {
	out := &txtar.Archive{Comment: ar.Comment}
	for _, f := range ar.Files {
		if f.Name != name {
			out.Files = append(out.Files, f)
		}
	}
	out.Files = append(out.Files, txtar.File{Name: name, Data: data})
	return out
}

// jsonValues decodes a stream of JSON values.
func jsonValues(t *testing.T, data []byte) []json.RawMessage {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	var vs []json.RawMessage
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("bad JSON in transcript: %v", err)
		}
		vs = append(vs, v)
	}
	return vs
}

// indented writes each value indented by two spaces, one after another.
func indented(t *testing.T, vs [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, v := range vs {
		if err := json.Indent(&buf, v, "", "  "); err != nil {
			t.Fatalf("%v: %s", err, v)
		}
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// denyGate denies the tools it names, as a policy would.
type denyGate []string

func (g denyGate) Decide(ctx context.Context, q gate.Question) gate.Decision {
	if q.Kind == gate.KindCall && slices.Contains(g, q.Name) {
		return gatetest.Deny(executor.Errorf(executor.CodePolicyDenied, "%s is not allowed here", q.Name).WithHint("ask the operator to allow it"))
	}
	return gatetest.AllowAll.Decide(ctx, q)
}

// transcriptOptions are the switches an archive's options section may turn
// on: the state tools' directory, the record, changes on acting calls, a
// request boundary that denies one host, the result cap, plugins, and a
// page the fake browser
// shows (pages: scripted answers for the reading tools, page tools, a
// network and console log; see transcriptPage).
type transcriptOptions struct {
	StateDir   bool   `json:"state_dir"`
	Record     bool   `json:"record"`
	Changes    bool   `json:"changes"`
	EgressDeny string `json:"egress_deny"`
	Page       bool   `json:"page"`
	// Tools are the groups of tools/list on (serve --tools).
	Tools string `json:"tools"`
	// MaxResultChars caps result text (0: the default).
	MaxResultChars int `json:"max_result_chars"`
	// Plugins are plugin files, by name, loaded as the server's plugins.
	Plugins map[string]json.RawMessage `json:"plugins"`
}

// transcriptServer is a Server over the fake browser whose gate denies the
// archive's deny list, with the switches of its options section. settle,
// run before each call, waits until the page tools of an open browser are
// bridged as live tools: the bridge hears of them on a goroutine of its
// own, and a transcript's calls must find them (page_tools_list names its
// live tool, which a later call calls) however the goroutines ran.
func transcriptServer(t *testing.T, ar *txtar.Archive) (s *mcp.Server, settle func()) {
	t.Helper()
	var o transcriptOptions
	if b := section(ar, "options"); len(bytes.TrimSpace(b)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("options section: %v", err)
		}
	}
	backend := executortest.NewBackend("fake")
	opts := mcp.Options{Gate: gatetest.AllowAll, Version: "test", Changes: o.Changes, MaxResultChars: o.MaxResultChars}
	if o.StateDir {
		opts.StateDir = t.TempDir()
	}
	if o.Tools != "" {
		gs, err := mcp.ParseGroups(o.Tools)
		if err != nil {
			t.Fatal(err)
		}
		opts.Tools = gs
	}
	if o.Record {
		opts.Record = &mcp.Recorder{Root: t.TempDir()}
		t.Cleanup(func() { _ = opts.Record.Close() })
	}
	if o.EgressDeny != "" {
		opts.Egress = egress.NewBoundary(egress.DeciderFunc(func(_ context.Context, r *egress.Request) egress.Verdict {
			if egress.HostOf(r.URL) == o.EgressDeny {
				return egress.Verdict{Reason: "host not in allow_domains"}
			}
			return egress.Verdict{Allow: true}
		}))
	}
	if len(o.Plugins) > 0 {
		dir := t.TempDir()
		for name, data := range o.Plugins {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		ps, err := mcp.LoadPlugins(dir)
		if err != nil {
			t.Fatal(err)
		}
		opts.Plugins = ps
	}
	if o.Page {
		backend.Setup(func(f *executortest.Fake) { transcriptPage(t, f, opts.Egress) })
	}
	manager := executor.NewManager(executor.ManagerOptions{Backends: []executor.Backend{backend}})
	t.Cleanup(func() { _ = manager.Close() })
	opts.Manager = manager
	if deny := strings.Fields(string(section(ar, "deny"))); len(deny) > 0 {
		opts.Gate = denyGate(deny)
	}
	s, err := mcp.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	settle = func() {}
	if o.Page {
		settle = func() {
			if backend.Last() == nil {
				return // no browser yet
			}
			for !slices.ContainsFunc(s.VisibleTools(t.Context(), mcp.LocalPrincipal), func(d *sdk.Tool) bool { return d.Name == liveTool }) {
				if t.Context().Err() != nil {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	return s, settle
}

// replayMCP sends the client's messages over in-memory transports and
// returns the archive with what the server sent back. A call waits for its
// answer before the next message goes, so the order is the conversation's.
func replayMCP(t *testing.T, ar *txtar.Archive) *txtar.Archive {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, settle := transcriptServer(t, ar)
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for _, raw := range jsonValues(t, section(ar, "client")) {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			t.Fatalf("client message %s: %v", raw, err)
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" {
			settle()
		}
		if err := conn.Write(ctx, msg); err != nil {
			t.Fatal(err)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue // a notification: no answer
		}
		for {
			in, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for the answer to %s: %v", raw, err)
			}
			if r, ok := in.(*jsonrpc.Request); ok && r.Method == "notifications/tools/list_changed" {
				continue // sent when the page tools' watcher hears of them: its timing is not the conversation's
			}
			b, err := jsonrpc.EncodeMessage(in)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, masked(b))
			if r, ok := in.(*jsonrpc.Request); ok && r.IsCall() {
				t.Fatalf("the server asked the client %s; transcripts do not answer requests", b)
			}
			if r, ok := in.(*jsonrpc.Response); ok && r.ID == req.ID {
				break
			}
		}
	}
	_ = conn.Close()
	_ = ss.Wait()
	return withSection(ar, "server", indented(t, got))
}

// restRequest is one request of a REST transcript.
type restRequest struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// restHeaders are the response headers a transcript keeps; the rest
// (Date, lengths) change from run to run or say nothing a client relies on.
var restHeaders = []string{"Content-Type", "Retry-After"}

// These match the parts of an answer that change from run to run: the
// random boundary of a page fence, and what depends on the clock (a
// retry-after in seconds or milliseconds, "retry in 30 s").
var (
	fenceToken = regexp.MustCompile(`(«/?page-)[0-9a-f]{12}»`)
	retryMS    = regexp.MustCompile(`"retry_after_ms":\s*[0-9]+`)
	retryText  = regexp.MustCompile(`retry in [0-9.]+ ?m?s\b`)
	modified   = regexp.MustCompile(`(\\?"modified\\?":\\?")[0-9TZ:.-]+`)
	elapsed    = regexp.MustCompile(`(\\?"elapsed_ms\\?":)[0-9]+`)
	pluginDir  = regexp.MustCompile(`(\\?"dir\\?":\\?")[^"\\]+`)
)

// masked writes the fence boundaries of b as «page-TOKEN», the time a
// saved state was written (state_list) as TIME, how long a wait took
// (wait_for) as 0 and the plugins' temporary directory (chrome_status) as
// DIR.
func masked(b []byte) []byte {
	b = modified.ReplaceAll(b, []byte("${1}TIME"))
	b = elapsed.ReplaceAll(b, []byte("${1}0"))
	b = pluginDir.ReplaceAll(b, []byte("${1}DIR"))
	return fenceToken.ReplaceAll(b, []byte("${1}TOKEN»"))
}

// replayREST sends the archive's requests to the HTTP handler on a loopback
// port, with a key made from its key section, and returns the archive with
// the answers.
func replayREST(t *testing.T, ar *txtar.Archive) *txtar.Archive {
	s, _ := transcriptServer(t, ar)
	keys, err := httpapi.OpenKeyStore(filepath.Join(t.TempDir(), "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	nk := httpapi.NewKey{Name: "transcript"}
	if b := section(ar, "key"); len(bytes.TrimSpace(b)) > 0 {
		var k struct{ Name, Rate string }
		if err := json.Unmarshal(b, &k); err != nil {
			t.Fatalf("key section: %v", err)
		}
		nk.Name, nk.Rate = k.Name, k.Rate
	}
	key, _, err := keys.Create(nk, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ln := testkit.Listen(t)
	h, err := httpapi.New(s, httpapi.Options{Addr: ln.Addr().String(), Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	testkit.Run(t, func(ctx context.Context) error { return h.Serve(ctx, ln, 10*time.Second) })

	var got [][]byte
	for _, raw := range jsonValues(t, section(ar, "requests")) {
		var r restRequest
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("request %s: %v", raw, err)
		}
		req, err := http.NewRequestWithContext(t.Context(), r.Method, "http://"+ln.Addr().String()+r.Path, bytes.NewReader(r.Body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		if len(r.Body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		header := map[string]string{}
		for _, k := range restHeaders {
			if v := resp.Header.Get(k); v != "" {
				header[k] = v
			}
		}
		if header["Retry-After"] != "" {
			header["Retry-After"] = "N"
		}
		body = masked(body)
		body = retryMS.ReplaceAll(body, []byte(`"retry_after_ms":0`))
		body = retryText.ReplaceAll(body, []byte("retry in N s"))
		if !json.Valid(body) {
			body, _ = json.Marshal(string(body))
		}
		answer, err := json.Marshal(struct {
			Status int               `json:"status"`
			Header map[string]string `json:"header"`
			Body   json.RawMessage   `json:"body"`
		}{resp.StatusCode, header, body})
		if err != nil {
			t.Fatal(fmt.Errorf("%w: %s", err, body))
		}
		got = append(got, answer)
	}
	return withSection(ar, "responses", indented(t, got))
}
