package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// rawPeer speaks JSON-RPC to a server byte for byte, over stdio or HTTP,
// so the tests can send what no SDK client would.
type rawPeer interface {
	// roundTrip sends body and returns the JSON-RPC reply (nil for a
	// notification) and, over HTTP, the status.
	roundTrip(t *testing.T, body string) (map[string]any, int)
}

type rawStdio struct {
	in   io.WriteCloser
	out  chan string
	cmd  *exec.Cmd
	next int
}

func startRawStdio(t *testing.T, args ...string) *rawStdio {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--isolated", "--data-dir=" + t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("CHROMEGATE_E2E_MARK=e2e-raw-%d", time.Now().UnixNano()))
	log := &testkit.Buffer{}
	cmd.Stderr = log
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outp, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawStdio{in: in, out: make(chan string, 16), cmd: cmd}
	go func() {
		sc := bufio.NewScanner(outp)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			r.out <- sc.Text()
		}
		close(r.out)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("server log:\n%s", tail(log.String(), 6000))
		}
	})
	return r
}

func (r *rawStdio) roundTrip(t *testing.T, body string) (map[string]any, int) {
	t.Helper()
	if _, err := io.WriteString(r.in, body+"\n"); err != nil {
		t.Fatalf("write to the server: %v", err)
	}
	if !strings.Contains(body, `"id"`) && strings.Contains(body, `"method":"notifications/`) {
		return nil, 0
	}
	select {
	case line, ok := <-r.out:
		if !ok {
			t.Fatal("the server closed stdout")
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("the reply is not JSON: %v\n%s", err, short(line))
		}
		return m, 0
	case <-time.After(90 * time.Second):
		t.Fatalf("no reply to %s", short(body))
	}
	return nil, 0
}

type rawHTTP struct {
	url     string
	session string
}

func (r *rawHTTP) roundTrip(t *testing.T, body string) (map[string]any, int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.session != "" {
		req.Header.Set("Mcp-Session-Id", r.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /mcp: %v", err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		r.session = id
	}
	b, _ := io.ReadAll(resp.Body)
	text := string(b)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The reply is the last data line of the stream.
		var last string
		for _, l := range strings.Split(text, "\n") {
			if d, ok := strings.CutPrefix(l, "data: "); ok {
				last = d
			}
		}
		text = last
	}
	if strings.TrimSpace(text) == "" {
		return nil, resp.StatusCode
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		// Refusals before JSON-RPC (413, 400) may be plain text.
		return map[string]any{"http_body": text}, resp.StatusCode
	}
	return m, resp.StatusCode
}

// replyText is the text of a tools/call result, and whether it is isError.
func replyText(m map[string]any) (string, bool, bool) {
	res, ok := m["result"].(map[string]any)
	if !ok {
		return "", false, false
	}
	var b strings.Builder
	content, _ := res["content"].([]any)
	for _, c := range content {
		if cm, ok := c.(map[string]any); ok {
			if s, ok := cm["text"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	isErr, _ := res["isError"].(bool)
	return b.String(), isErr, true
}

// TestProtocolAbuse sends, over stdio and over HTTP, what a broken or
// hostile client might: malformed JSON-RPC, fields that differ only in
// case, arguments past the size caps and JSON nested 10,000 deep. Each gets
// a clear error, the server keeps serving, and whatever ran is the tool the
// policy decided on (the decision log says which).
func TestProtocolAbuse(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	base := site(t)
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			dlog := filepath.Join(t.TempDir(), "decisions.jsonl")
			flags := []string{"--decision-log=" + dlog, "--allow-domain=127.0.0.1", "--enable-mutations", "--unsafe-enable-eval"}
			var p rawPeer
			if transport == "stdio" {
				p = startRawStdio(t, flags...)
			} else {
				h := startHTTP(t, t.TempDir(), append([]string{"--max-body-bytes=65536"}, flags...)...)
				p = &rawHTTP{url: h.url}
			}
			id := 0
			call := func(params string) (map[string]any, int) {
				id++
				return p.roundTrip(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params))
			}
			works := func() {
				t.Helper()
				m, _ := call(`{"name":"tabs_list","arguments":{}}`)
				if txt, isErr, ok := replyText(m); !ok || isErr {
					t.Fatalf("the server stopped serving: %v %s", m, txt)
				}
			}
			init, _ := p.roundTrip(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
			if init["result"] == nil {
				t.Fatalf("initialize: %v", init)
			}
			p.roundTrip(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			if m, _ := call(fmt.Sprintf(`{"name":"navigate","arguments":{"url":%q}}`, base+"/form")); m["result"] == nil {
				t.Fatalf("navigate: %v", m)
			}

			t.Run("malformed JSON-RPC", func(t *testing.T) {
				for _, body := range []string{`{not json`, `{"jsonrpc":"2.0","id":9,"method":`, `{"jsonrpc":"1.0","id":"x"}`, `[]`, `"just a string"`, `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`} {
					m, status := p.roundTrip(t, body)
					if m == nil || (m["error"] == nil && m["http_body"] == nil && status < 400) {
						t.Errorf("%s: want a JSON-RPC error or a 4xx, got %d %v", body, status, m)
					}
					works()
				}
			})

			t.Run("fields differing only in case", func(t *testing.T) {
				before := len(decisions(t, dlog))
				m, status := call(`{"name":"get_text","Name":"eval","arguments":{}}`)
				txt, isErr, ok := replyText(m)
				after := decisions(t, dlog)[before:]
				t.Logf("name/Name: result=%v isError=%v status=%d decided=%d: %s", ok, isErr, status, len(after), short(fmt.Sprint(m)))
				switch {
				case !ok:
					// Refused as a protocol error: nothing may have run.
					if m["error"] == nil && status < 400 {
						t.Fatalf("neither a result nor an error: %d %v", status, m)
					}
					if len(after) > 0 {
						t.Fatalf("a refused request was decided on: %+v", after)
					}
				case isErr:
					if strings.Contains(txt, `"ok":`) {
						t.Fatalf("eval ran under the name get_text: %s", txt)
					}
				default:
					// It ran: get_text read the page, and the policy decided get_text.
					if !strings.Contains(txt, "Hello") {
						t.Fatalf("the tool that ran is not get_text: %s", short(txt))
					}
					var tools []string
					for _, d := range after {
						tools = append(tools, d.Tool)
					}
					if len(tools) != 1 || tools[0] != "get_text" {
						t.Fatalf("the policy decided %v, get_text ran", tools)
					}
				}
				// The same in the arguments: "URL" must not stand in for "url".
				before = len(decisions(t, dlog))
				m, _ = call(fmt.Sprintf(`{"name":"navigate","arguments":{"url":%q,"URL":"http://evil.test/"}}`, base+"/other"))
				txt, isErr, ok = replyText(m)
				if ok && !isErr && !strings.Contains(txt, "Other page") {
					t.Fatalf("navigate went elsewhere than its url: %s", short(txt))
				}
				for _, d := range decisions(t, dlog)[before:] {
					if d.TargetHost == "evil.test" {
						t.Fatalf("the policy saw the URL the tool did not take: %v", d)
					}
				}
				works()
			})

			t.Run("huge arguments", func(t *testing.T) {
				size := 70_000 // over HTTP's --max-body-bytes
				if transport == "stdio" {
					size = 17 << 20 // over the 16 MiB line cap
				}
				m, status := call(fmt.Sprintf(`{"name":"fill","arguments":{"selector":"#name","value":%q}}`, strings.Repeat("x", size)))
				if m == nil || (m["error"] == nil && status != http.StatusRequestEntityTooLarge) {
					if txt, isErr, ok := replyText(m); !ok || !isErr {
						t.Fatalf("an argument of %d bytes: want an error, got %d %s", size, status, short(txt))
					}
				}
				works()
			})

			t.Run("JSON nested 10,000 deep", func(t *testing.T) {
				deep := strings.Repeat(`{"a":`, 10_000) + "1" + strings.Repeat("}", 10_000)
				m, status := call(`{"name":"get_text","arguments":{"selector":` + deep + `}}`)
				if txt, isErr, ok := replyText(m); ok && !isErr {
					t.Fatalf("10,000 levels of nesting as a selector were accepted: %s", short(txt))
				} else if !ok && m["error"] == nil && status < 400 {
					t.Fatalf("no error for deep nesting: %d %v", status, m)
				}
				works()
				deepArr := strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)
				m, status = p.roundTrip(t, `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":`+deepArr+`}`)
				if m == nil || (m["error"] == nil && status < 400) {
					t.Fatalf("deeply nested params: %d %v", status, m)
				}
				works()
			})
		})
	}
}
