package e2e

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/chromegate/chromegate/mcp"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// outputSchemas holds, per client session, the resolved output schema of
// each tool: the table's (tools/list declares them only with serve
// --output-schemas), and what tools/list declares of the others.
var outputSchemas sync.Map // *sdk.ClientSession → map[string]*jsonschema.Resolved

// checkStructured checks that a successful result carries structured
// content that validates against the output schema its tool declares, as
// a client that validates results (the TypeScript and Python SDKs do)
// would: every result of every e2e call through server.try, on a real
// browser. A tool the list did not have yet (a page's live tool) is
// looked up again.
func checkStructured(t testing.TB, cs *sdk.ClientSession, tool string, res *sdk.CallToolResult) {
	t.Helper()
	schemas, _ := outputSchemas.Load(cs)
	m, _ := schemas.(map[string]*jsonschema.Resolved)
	rs, ok := m[tool]
	if !ok {
		m = listOutputSchemas(t, cs)
		outputSchemas.Store(cs, m)
		if rs, ok = m[tool]; !ok {
			return // a plugin's step, or a tool that went away
		}
	}
	if res.StructuredContent == nil {
		t.Errorf("%s: a result without structured content, though its tool declares an output schema", tool)
		return
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("%s: the structured content does not match the output schema: %v\n%s", tool, err, short(string(b)))
	}
}

func listOutputSchemas(t testing.TB, cs *sdk.ClientSession) map[string]*jsonschema.Resolved {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := map[string]*jsonschema.Resolved{}
	for _, tool := range mcp.Tools() {
		rs, err := tool.OutputSchema().Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		m[tool.Name] = rs
	}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if _, ok := m[tool.Name]; ok {
			continue
		}
		var declared any = tool.OutputSchema
		if declared == nil {
			// A page's live tool or a plugin: any value, as its Output.
			declared = (&mcp.Tool{Name: tool.Name}).OutputSchema()
		}
		b, _ := json.Marshal(declared)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: output schema %s: %v", tool.Name, b, err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema: %v", tool.Name, err)
		}
		m[tool.Name] = rs
	}
	return m
}
