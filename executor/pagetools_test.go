package executor

import (
	"encoding/json"
	"strings"
	"testing"
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
