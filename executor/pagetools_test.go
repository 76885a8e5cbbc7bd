package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalizeSchema(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{``, `{"type":"object"}`},
		{`null`, `{"type":"object"}`},
		{`{"type":"object","properties":{"a":{"type":"number"}}}`, `{"properties":{"a":{"type":"number"}},"type":"object"}`},
		{`{"properties":{"a":{"type":"string"}}}`, `{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{`"{\"type\":\"object\",\"required\":[\"q\"]}"`, `{"required":["q"],"type":"object"}`},
		{`{"type":"string"}`, `{"type":"object"}`},
		{`[1,2]`, `{"type":"object"}`},
		{`"not json"`, `{"type":"object"}`},
		{`{"type":"object","description":"` + strings.Repeat("x", MaxPageToolSchema) + `"}`, `{"type":"object"}`},
	} {
		if got := string(NormalizeSchema(json.RawMessage(tt.in))); got != tt.want {
			t.Errorf("NormalizeSchema(%.40s): %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestNormalizeInput(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{`{"a":1}`, `{"a":1}`},
		{`"{\"a\":1}"`, `{"a":1}`},
		{`[1]`, ``},
		{`"[1]"`, ``},
		{`"x"`, ``},
		{`{`, ``},
	} {
		got, err := NormalizeInput(json.RawMessage(tt.in))
		if tt.want == "" {
			if CodeOf(err) != CodeBadArgs {
				t.Errorf("NormalizeInput(%s): %s %v, want BAD_ARGS", tt.in, got, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("NormalizeInput(%s): %s %v, want %s", tt.in, got, err, tt.want)
		}
	}
}

func TestOriginOf(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/a?b#c":   "http://127.0.0.1:8080",
		"https://Shop.Example.com/x":    "https://shop.example.com",
		"https://example.com:443/":      "https://example.com",
		"http://example.com:80/":        "http://example.com",
		"http://[::1]:9000/":            "http://[::1]:9000",
		"about:blank":                   "null",
		"data:text/html,hi":             "null",
		"file:///etc/passwd":            "null",
		"chrome-extension://abc/x.html": "null",
		"%zz":                           "null",
		"https://u:p@a.test/path":       "https://a.test",
	} {
		if got := OriginOf(in); got != want {
			t.Errorf("OriginOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNormalizePageTool(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", "a b", "x/y", strings.Repeat("n", 129), "naïve"} {
		pt := PageTool{Name: name}
		if NormalizePageTool(&pt) {
			t.Errorf("name %q accepted", name)
		}
	}
	pt := PageTool{Name: "search.v2-x_1", Title: " a\n\tb ", Description: strings.Repeat("é", MaxPageToolDescription)}
	if !NormalizePageTool(&pt) || pt.Title != "a b" || len(pt.Description) > MaxPageToolDescription+len("…") || string(pt.InputSchema) != `{"type":"object"}` {
		t.Errorf("normalised: %+v", pt)
	}
}

func TestDiffPageTools(t *testing.T) {
	t.Parallel()
	a := PageTool{FrameID: "f", Name: "a", Description: "A"}
	b := PageTool{FrameID: "f", Name: "b"}
	a2 := a
	a2.Description = "changed"
	added, removed := DiffPageTools([]PageTool{a, b}, []PageTool{a2})
	if len(added) != 1 || added[0].Description != "changed" || len(removed) != 2 {
		t.Errorf("added %v removed %v", added, removed)
	}
	added, removed = DiffPageTools([]PageTool{a}, []PageTool{a})
	if len(added)+len(removed) != 0 {
		t.Errorf("no change: added %v removed %v", added, removed)
	}
}

func FuzzNormalizeSchema(f *testing.F) {
	for _, s := range []string{`{"type":"object"}`, `"{\"type\":\"object\"}"`, `[]`, `null`, `{"type":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := NormalizeSchema(json.RawMessage(s))
		_ = CheckSchema(out) // must not panic or recurse without end
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil || m["type"] != "object" || len(out) > MaxPageToolSchema {
			t.Fatalf("NormalizeSchema(%q) = %s", s, out)
		}
		if in, err := NormalizeInput(json.RawMessage(s)); err == nil {
			if err := json.Unmarshal(in, &m); err != nil {
				t.Fatalf("NormalizeInput(%q) = %s, not an object", s, in)
			}
		}
	})
}

func TestCheckSchema(t *testing.T) {
	t.Parallel()
	deep := `{"type":"object","properties":{"x":` + strings.Repeat(`{"not":`, 10_000) + `{}` + strings.Repeat(`}`, 10_000) + `}}`
	for _, tt := range []struct {
		name, schema string
		ok           bool
	}{
		{"plain", `{"type":"object","properties":{"a":{"type":"string","enum":["x","y"]}}}`, true},
		{"a definition used twice", `{"type":"object","$defs":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/s"},"b":{"$ref":"#/$defs/s"}}}`, true},
		{"a property named $ref", `{"type":"object","properties":{"$ref":{"type":"string"}}}`, true},
		{"an enum value that looks like a reference", `{"type":"object","properties":{"a":{"enum":[{"$ref":"#"}]}}}`, true},
		{"self-referencing $defs", `{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}`, false},
		{"allOf the root", `{"type":"object","allOf":[{"$ref":"#"}]}`, false},
		{"a recursive type", `{"type":"object","$defs":{"n":{"properties":{"k":{"items":{"$ref":"#/$defs/n"}}}}},"properties":{"t":{"$ref":"#/$defs/n"}}}`, false},
		{"deep nesting", deep, false},
		{"a remote reference", `{"type":"object","properties":{"a":{"$ref":"https://evil.test/s.json"}}}`, false},
		{"a reference to nothing", `{"type":"object","properties":{"a":{"$ref":"#/$defs/none"}}}`, false},
		{"$dynamicRef", `{"type":"object","properties":{"a":{"$dynamicRef":"#x"}}}`, false},
		{"a nested $id", `{"type":"object","properties":{"a":{"$id":"https://x.test/","$ref":"#"}}}`, false},
		{"references that double", doubling(30), false},
	} {
		err := CheckSchema(json.RawMessage(tt.schema))
		if (err == nil) != tt.ok {
			t.Errorf("%s: CheckSchema = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && (!errors.Is(err, ErrSchemaUnusable) || strings.Contains(err.Error(), "evil")) {
			t.Errorf("%s: %v; want ErrSchemaUnusable in the server's words", tt.name, err)
		}
	}
	// The page's tool stays listed, unusable, with the empty schema.
	pt := PageTool{Name: "loop", InputSchema: json.RawMessage(`{"type":"object","allOf":[{"$ref":"#"}]}`)}
	if !NormalizePageTool(&pt) || pt.Unusable == "" || string(pt.InputSchema) != `{"type":"object"}` {
		t.Errorf("normalised: %+v", pt)
	}
	pt = PageTool{Name: "big", InputSchema: json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", MaxPageToolSchema) + `"}`)}
	if !NormalizePageTool(&pt) || !strings.Contains(pt.Unusable, "larger than") {
		t.Errorf("a schema too large: %+v", pt.Unusable)
	}
}

// doubling is a chain of n definitions, each using the next twice.
func doubling(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"x":{"$ref":"#/$defs/d0"}},"$defs":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		next := `{"type":"string"}`
		if i < n-1 {
			next = fmt.Sprintf(`{"$ref":"#/$defs/d%d"}`, i+1)
		}
		fmt.Fprintf(&b, `"d%d":{"allOf":[%s,%s]}`, i, next, next)
	}
	b.WriteString(`}}`)
	return b.String()
}

func TestBoundOutput(t *testing.T) {
	t.Parallel()
	small := map[string]any{"a": "b"}
	if out, size, cut := BoundOutput(small, 100); cut || string(out) != `{"a":"b"}` || size != 9 {
		t.Errorf("small: %s %d %v", out, size, cut)
	}
	big := map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat("é", 1<<20)}}}
	out, size, cut := BoundOutput(big, 1000)
	var back struct {
		Content []struct{ Type, Text string }
	}
	if !cut || size < 2<<20 || len(out) > 1100 || json.Unmarshal(out, &back) != nil || back.Content[0].Type != "text" || !utf8.ValidString(back.Content[0].Text) {
		t.Errorf("big: %d bytes, size %d, cut %v: %.100s", len(out), size, cut, out)
	}
	var deep any = "end"
	for range 10_000 {
		deep = []any{deep}
	}
	if out, _, cut := BoundOutput(deep, 50); !cut || !json.Valid(out) || len(out) > 200 {
		t.Errorf("deep: %s %v", out, cut)
	}
}
