package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// fuzzSecret is planted under every argument that must be redacted; it
// must never come out of PolicyArgs, RedactArgs or the policy input.
const fuzzSecret = "pl4nted-s3cret-f0r-fuzz"

// FuzzPolicyInput: the policy-input builder takes any JSON arguments of any
// tool without panicking; what it builds encodes as valid JSON (and as
// OPA's input); and a secret planted under a secret argument or a
// secret-looking key never survives redaction.
func FuzzPolicyInput(f *testing.F) {
	f.Add("navigate", `{"url":"https://example.com/a?b=c"}`)
	f.Add("type", `{"selector":"#q","text":"hello","submit":true}`)
	f.Add("fill", `{"ref":"e3","value":"x"}`)
	f.Add("fill_form", `{"fields":[{"selector":"#a","value":"1"}],"values":{"a":"b"}}`)
	f.Add("cookies_set", `{"cookies":[{"name":"sid","value":"v","domain":"example.com"}]}`)
	f.Add("eval", `{"expression":"document.title"}`)
	f.Add("page_tool_call", `{"name":"t","arguments":{"deep":[1,2,{"x":null}]}}`)
	f.Add("tab_new", `{"url":"http://[::1]:80/"}`)
	f.Add("x", `{"a":{"b":{"c":[[[[{}]]]]}},"n":1e308,"u":"\u0000\ud800"}`)
	f.Fuzz(func(t *testing.T, tool, argsJSON string) {
		if strings.Contains(argsJSON, fuzzSecret) {
			t.Skip()
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(argsJSON), &args); err != nil || args == nil {
			t.Skip() // the MCP layer hands only JSON objects on
		}
		for _, k := range testClasses[tool].Secrets {
			args[k] = map[string]any{"value": fuzzSecret, "list": []any{fuzzSecret, 1.5, true}}
		}
		args["extra_api_token"] = fuzzSecret
		args["nested"] = map[string]any{"Password": fuzzSecret, "deeper": []any{map[string]any{"session_token": fuzzSecret}}}

		for name, out := range map[string]map[string]any{
			"PolicyArgs": PolicyArgs(testClasses[tool], args),
			"RedactArgs": RedactArgs(testClasses[tool], args),
		} {
			b, err := json.Marshal(out)
			if err != nil || !json.Valid(b) {
				t.Fatalf("%s(%q) does not encode: %v", name, tool, err)
			}
			if strings.Contains(string(b), fuzzSecret) {
				t.Fatalf("%s(%q) kept a secret: %s", name, tool, b)
			}
		}
		in, err := testInput(PhaseCall, tool, args)
		if err != nil {
			if in.Tool != "" {
				t.Fatalf("NewInput failed but returned an input: %+v", in)
			}
			return // a URL that does not parse: refused, never decided
		}
		b, err := json.Marshal(in)
		if err != nil || !json.Valid(b) {
			t.Fatalf("NewInput(%q) does not encode: %v", tool, err)
		}
		if strings.Contains(string(b), fuzzSecret) {
			t.Fatalf("the policy input of %q holds a secret: %s", tool, b)
		}
		if in.Tool != tool {
			t.Fatalf("the input names tool %q, the call was %q", in.Tool, tool)
		}
		if _, err := in.astValue(); err != nil {
			t.Fatalf("the input of %q is no OPA value: %v", tool, err)
		}
	})
}
