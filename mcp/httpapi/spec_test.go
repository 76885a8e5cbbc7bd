package httpapi

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// The MCP specification's own JSON Schemas of the two revisions served
// (testdata/spec: schema/2026-07-28/schema.json and
// schema/2025-11-25/schema.json of modelcontextprotocol/modelcontextprotocol
// at b0f60ba5, Apache-2.0/MIT), against which every message the server
// sends in TestMessagesMatchSpecSchema is checked.

// specSchema resolves the definition name of revision's schema.
func specSchema(t *testing.T, revision, name string) *jsonschema.Resolved {
	t.Helper()
	raw, err := os.ReadFile("testdata/spec/" + revision + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(fmt.Appendf(nil, `{"$defs":%s,"$ref":"#/$defs/%s"}`, doc.Defs, name), &s); err != nil {
		t.Fatalf("%s %s: %v", revision, name, err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s %s: %v", revision, name, err)
	}
	return r
}

// messagesOf reads the JSON-RPC messages of a response body: JSON, or the
// data lines of an event stream.
func messagesOf(body string) []string {
	body = strings.TrimSpace(body)
	if strings.HasPrefix(body, "{") || strings.HasPrefix(body, "[") {
		return []string{body}
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.TrimSpace(d) != "" {
			out = append(out, d)
		}
	}
	return out
}

// TestMessagesMatchSpecSchema: every message the server answers with, at
// 2026-07-28 and at 2025-11-25 — results, tool errors, protocol errors —
// is valid against that revision's schema: the envelope
// (JSONRPCResultResponse or JSONRPCErrorResponse) and the result's own
// definition.
func TestMessagesMatchSpecSchema(t *testing.T) {
	// The schemas check: a result that is not one fails.
	for _, bad := range []map[string]any{{"tools": "none"}, {}} {
		if specSchema(t, "2026-07-28", "ListToolsResult").Validate(bad) == nil {
			t.Fatalf("the spec schema takes %v for a ListToolsResult", bad)
		}
	}
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "k"})
	type exchange struct {
		method, params, result string // result: the definition of the result; "" when an error is the answer
	}
	common := []exchange{
		{"tools/list", `{}`, "ListToolsResult"},
		{"tools/call", `{"name":"get_text","arguments":{}}`, "CallToolResult"},
		{"tools/call", `{"name":"get_text","arguments":{"selector":"#a","ref":"e1"}}`, "CallToolResult"}, // a tool error: isError
		{"tools/call", `{"name":"no_such_tool","arguments":{}}`, ""},
		{"prompts/list", `{}`, "ListPromptsResult"},
		{"resources/list", `{}`, "ListResourcesResult"},
		{"resources/templates/list", `{}`, "ListResourceTemplatesResult"},
		{"resources/read", `{"uri":"page://nothing"}`, ""},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"}}`, ""},
	}
	check := func(t *testing.T, revision string, ex exchange, status int, body string) {
		t.Helper()
		msgs := messagesOf(body)
		if len(msgs) == 0 {
			t.Errorf("%s %s: no message in %d %q", revision, ex.method, status, body)
			return
		}
		for _, m := range msgs {
			var v map[string]any
			if err := json.Unmarshal([]byte(m), &v); err != nil {
				t.Errorf("%s %s: %v in %s", revision, ex.method, err, m)
				continue
			}
			envelope := "JSONRPCResultResponse"
			if _, isErr := v["error"]; isErr {
				envelope = "JSONRPCErrorResponse"
				if ex.result != "" {
					t.Errorf("%s %s: an error where a %s was due: %s", revision, ex.method, ex.result, m)
				}
			} else if ex.result == "" {
				t.Errorf("%s %s: a result where an error was due: %.300s", revision, ex.method, m)
			}
			if err := specSchema(t, revision, envelope).Validate(v); err != nil {
				t.Errorf("%s %s: not a valid %s: %v\n%.500s", revision, ex.method, envelope, err, m)
			}
			if res, ok := v["result"]; ok && ex.result != "" {
				if err := specSchema(t, revision, ex.result).Validate(res); err != nil {
					t.Errorf("%s %s: not a valid %s: %v\n%.500s", revision, ex.method, ex.result, err, m)
				}
			}
		}
	}

	t.Run("2026-07-28", func(t *testing.T) {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		for i, ex := range append([]exchange{{"server/discover", `{}`, "DiscoverResult"}, {"ping", `{}`, ""}}, common...) {
			params := strings.Replace(ex.params, "{", "{"+meta+",", 1)
			params = strings.Replace(params, ",}", "}", 1)
			hdr := with(mcpHeaders, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", ex.method)
			var p struct {
				Name string `json:"name"`
				URI  string `json:"uri"`
			}
			_ = json.Unmarshal([]byte(ex.params), &p)
			if name := p.Name + p.URI; name != "" && (ex.method == "tools/call" || ex.method == "resources/read") {
				hdr["Mcp-Name"] = name
			}
			status, _, body := e.do("POST", "/mcp", k, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, ex.method, params), hdr)
			check(t, "2026-07-28", ex, status, body)
		}
	})
	t.Run("2025-11-25", func(t *testing.T) {
		status, hdr, body := e.do("POST", "/mcp", k, mcpInit, mcpHeaders)
		check(t, "2025-11-25", exchange{"initialize", "", "InitializeResult"}, status, body)
		id := hdr.Get("Mcp-Session-Id")
		session := with(mcpHeaders, "Mcp-Session-Id", id, "Mcp-Protocol-Version", "2025-11-25")
		if status, _, _ := e.do("POST", "/mcp", k, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); status != 202 {
			t.Fatalf("initialized: %d", status)
		}
		for i, ex := range append([]exchange{{"ping", `{}`, "EmptyResult"}}, common...) {
			status, _, body := e.do("POST", "/mcp", k, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+2, ex.method, ex.params), session)
			check(t, "2025-11-25", ex, status, body)
		}
	})
}
