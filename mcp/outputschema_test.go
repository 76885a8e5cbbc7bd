package mcp_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/tools/txtar"

	"github.com/chromegate/chromegate/mcp"
)

// TestStructuredContentMatchesOutputSchema replays the every-tool
// transcripts with a tools/list after them: every successful result
// carries structured content, and it validates against the output schema
// its tool declares (from the table: tools/list carries them only with
// Options.OutputSchemas, and lists only the groups that are on); every
// tool gave one.
func TestStructuredContentMatchesOutputSchema(t *testing.T) {
	for _, name := range []string{"every_tool", "result_notes"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ar, err := txtar.ParseFile(filepath.Join("testdata", "transcripts", name+".txtar"))
			if err != nil {
				t.Fatal(err)
			}
			client := append(slices.Clone(section(ar, "client")), []byte(`{"jsonrpc": "2.0", "id": 9999, "method": "tools/list"}`+"\n")...)
			out := replayMCP(t, withSection(ar, "client", client))

			type message struct {
				ID     int `json:"id"`
				Result struct {
					Tools []struct {
						Name         string             `json:"name"`
						OutputSchema *jsonschema.Schema `json:"outputSchema"`
					} `json:"tools"`
					StructuredContent json.RawMessage `json:"structuredContent"`
					IsError           bool            `json:"isError"`
				} `json:"result"`
			}
			var calls = map[int]string{}
			for _, raw := range jsonValues(t, client) {
				var m struct {
					ID     int `json:"id"`
					Params struct {
						Name string `json:"name"`
					} `json:"params"`
				}
				_ = json.Unmarshal(raw, &m)
				calls[m.ID] = m.Params.Name
			}
			var answers []message
			schemas := map[string]*jsonschema.Resolved{}
			resolve := func(name string, s *jsonschema.Schema) {
				rs, err := s.Resolve(nil)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				schemas[name] = rs
			}
			for _, tool := range mcp.Tools() {
				resolve(tool.Name, tool.OutputSchema())
			}
			for _, raw := range jsonValues(t, section(out, "server")) {
				var m message
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatal(err)
				}
				if m.ID != 9999 {
					answers = append(answers, m)
					continue
				}
				for _, tool := range m.Result.Tools {
					if _, ok := schemas[tool.Name]; !ok {
						// A page's live tool declares no Output: any value.
						resolve(tool.Name, cmp.Or(tool.OutputSchema, (&mcp.Tool{}).OutputSchema()))
					}
				}
			}
			valid := map[string]bool{}
			outputs := map[string]*mcp.Output{}
			for _, tool := range mcp.Tools() {
				outputs[tool.Name] = tool.Output
			}
			for _, m := range answers {
				tool := calls[m.ID]
				if tool == "" || m.Result.IsError {
					continue
				}
				if m.Result.StructuredContent == nil {
					t.Errorf("%s (id %d): no structured content", tool, m.ID)
					continue
				}
				var v any
				if err := json.Unmarshal(m.Result.StructuredContent, &v); err != nil {
					t.Fatal(err)
				}
				if err := schemas[tool].Validate(v); err != nil {
					t.Errorf("%s (id %d): %v\n%s", tool, m.ID, err, m.Result.StructuredContent)
					continue
				}
				valid[tool] = true
				// And data decodes into the tool's Output type, refusing
				// fields the type does not have (the schema lets a result
				// grow; the table must not forget one).
				var sc struct {
					Data json.RawMessage `json:"data"`
				}
				_ = json.Unmarshal(m.Result.StructuredContent, &sc)
				if out := outputs[tool]; out != nil && out.Value != nil && sc.Data != nil {
					dec := json.NewDecoder(bytes.NewReader(sc.Data))
					dec.DisallowUnknownFields()
					if err := dec.Decode(reflect.New(reflect.TypeOf(out.Value)).Interface()); err != nil {
						t.Errorf("%s (id %d): data %s does not decode into %T: %v", tool, m.ID, sc.Data, out.Value, err)
					}
				}
			}
			if name != "every_tool" {
				return
			}
			// The schemas say something: a value of the wrong shape fails.
			if err := schemas["navigate"].Validate(map[string]any{"data": map[string]any{"url": 1}}); err == nil {
				t.Error("navigate's output schema takes a url that is a number and no tab_id")
			}
			for tool := range schemas {
				if !valid[tool] {
					t.Errorf("%s gave no result with structured content in the transcript", tool)
				}
			}
		})
	}
}
