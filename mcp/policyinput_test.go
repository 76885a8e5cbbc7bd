package mcp

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/policy"
)

const policyInputsGolden = "testdata/policy_inputs.golden.json"

// sampleArgs gives every argument of a schema a value: a URL for url, a
// string naming the argument otherwise, and objects and arrays holding the
// keys redaction treats apart (name, value, url, a password). Every call
// also carries api_token, which is redacted by its name in every tool.
func sampleArgs(s *jsonschema.Schema) map[string]any {
	args := map[string]any{"api_token": "tok-123"}
	for name, p := range s.Properties {
		switch {
		case name == "url":
			args[name] = "https://example.test/a?b=c"
		case p.Type == "boolean":
			args[name] = true
		case p.Type == "integer" || p.Type == "number":
			args[name] = 2.0
		case p.Type == "object":
			args[name] = map[string]any{"name": "n", "value": "v", "url": "https://example.test/", "password": "pw", "q": "text"}
		case p.Type == "array":
			args[name] = []any{map[string]any{"name": "n", "value": "v", "domain": "example.test", "selector": "#s", "secret": "s"}, "plain"}
		default:
			args[name] = "value of " + name
		}
	}
	return args
}

// policyInputCases are what the gate builds for the policy: for every tool
// of the table, a listing, a call with no arguments and a call with every
// argument; a live page tool, a page's resource and a plugin; and the
// calls whose url does not parse. Each case also records RedactArgs, what
// a log line would show of the call's arguments, and the hint of a denial
// by a policy that gives none.
func policyInputCases(t *testing.T) map[string]any {
	t.Helper()
	p := Principal{Name: "alice", Roles: []string{"reader"}, Transport: "http"}
	out := map[string]any{}
	record := func(key string, tool *Tool, phase string, args map[string]any) {
		in, err := policyInput(phase, tool, args, p)
		if err != nil {
			out[key] = map[string]any{"error": err.Error(), "code": executor.CodeOf(err)}
			return
		}
		if tool.PageTool != nil && phase == policy.PhaseList {
			in.PageTool = policyPageTool(*tool.PageTool)
		}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		class := tool.Class()
		if tool.PageTool != nil {
			class = pageToolCallClass()
		}
		// The hint a denial without the policy's own hints gets, which
		// guesses from the tool's class.
		hint := policy.Hint(policy.Decision{Reasons: []string{"no"}}, in)
		out[key] = map[string]any{"input": json.RawMessage(b), "logged": policy.RedactArgs(class, args), "hint": hint}
	}
	tools := Tools()
	for _, tool := range tools {
		record(tool.Name+"/list", tool, policy.PhaseList, nil)
		record(tool.Name+"/call-empty", tool, policy.PhaseCall, map[string]any{})
		record(tool.Name+"/call-every-arg", tool, policy.PhaseCall, sampleArgs(tool.InputSchema))
		record(tool.Name+"/call-bad-url", tool, policy.PhaseCall, map[string]any{"url": "not a url"})
	}
	pt := executor.PageTool{TabID: "t1", Origin: "https://example.test", Name: "search",
		Annotations: executor.PageToolAnnotations{ReadOnly: true}}
	live := pageToolStandIn(pt, "page_example_test_search")
	record("live_page_tool/list", live, policy.PhaseList, nil)
	record("live_page_tool/call", live, policy.PhaseCall, map[string]any{"q": "text", "password": "pw"})
	item := pageToolStandIn(pt, "page_resource")
	item.PageItem = true
	record("page_resource/call", item, policy.PhaseCall, map[string]any{})
	byName := map[string]*Tool{}
	for _, tool := range tools {
		byName[tool.Name] = tool
	}
	pl, err := ParsePlugin([]byte(readPlugin), byName)
	if err != nil {
		t.Fatal(err)
	}
	record("plugin/list", pl.tool, policy.PhaseList, nil)
	record("plugin/call", pl.tool, policy.PhaseCall, map[string]any{"url": "https://example.test/?token=abc", "selector": "#pw", "count": 2.0})
	return out
}

// The input a policy decides on, and what a log shows of a call's
// arguments, for every tool: kept as a golden file so that a change to a
// tool's class (its action, read-only hint, target, secrets) shows in
// review. Rewrite it on purpose with UPDATE_GOLDEN=1.
func TestPolicyInputsGolden(t *testing.T) {
	t.Parallel()
	cases := policyInputCases(t)
	keys := make([]string, 0, len(cases))
	for k := range cases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for i, k := range keys {
		v, err := json.Marshal(cases[k])
		if err != nil {
			t.Fatal(err)
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteString(": ")
		buf.Write(v)
		if i < len(keys)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("}\n")
	testkit.Golden(t, policyInputsGolden, buf.Bytes())
}
