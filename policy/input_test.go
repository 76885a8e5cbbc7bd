package policy

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policies"
)

func TestNewInput(t *testing.T) {
	t.Parallel()
	in, err := testInput(PhaseCall, "navigate", map[string]any{"url": "HTTP://0x7f.1:8080/x"})
	if err != nil {
		t.Fatal(err)
	}
	want := Input{
		Version: 1, Phase: "call", Tool: "navigate", Action: "navigate",
		Args:   map[string]any{"url": "HTTP://0x7f.1:8080/x"},
		Target: &Target{URL: "http://127.0.0.1:8080/x", Scheme: "http", Host: "127.0.0.1", Port: 8080, IPClass: "loopback"},
	}
	if diff := cmp.Diff(want, in, cmpopts.IgnoreUnexported(Input{})); diff != "" {
		t.Errorf("NewInput (-want +got):\n%s", diff)
	}

	in, _ = testInput(PhaseCall, "tab_new", map[string]any{"url": "https://example.com"})
	if in.Action != ActionNavigate || in.Target == nil || in.Target.Host != "example.com" {
		t.Errorf("tab_new with a url = %+v", in)
	}
	in, _ = testInput(PhaseCall, "tab_new", nil)
	if in.Action != ActionTabs || in.Target != nil {
		t.Errorf("tab_new without a url = %+v", in)
	}
	in, _ = testInput(PhaseCall, "download_file", map[string]any{"url": "https://example.com/f"})
	if in.Target == nil {
		t.Errorf("download_file: no target")
	}
	in, _ = testInput(PhaseCall, "get_text", map[string]any{"url": "https://example.com/f"})
	if in.Target != nil || !in.ReadOnly {
		t.Errorf("get_text = %+v: a read has no target and is read-only", in)
	}
	in, _ = testInput(PhaseList, "eval", nil)
	if in.Phase != PhaseList || in.ReadOnly || in.Args == nil {
		t.Errorf("list eval = %+v", in)
	}
	if _, err := testInput(PhaseCall, "navigate", map[string]any{"url": "example.com"}); !errors.Is(err, ErrBadURL) {
		t.Errorf("relative url: err = %v", err)
	}
	// A tool whose class names no action is unknown, whatever its name.
	in, _ = NewInput(PhaseCall, "get_text", Class{}, map[string]any{"url": "https://example.com/f"})
	if in.Action != ActionUnknown || in.ReadOnly || in.Target != nil {
		t.Errorf("the zero Class = %+v, want an unknown tool", in)
	}
	// The target comes from the argument the class names.
	in, err = NewInput(PhaseCall, "fetch", Class{Action: ActionDownload, URLArg: "href"}, map[string]any{"href": "https://example.com/f", "url": "https://other.test/"})
	if err != nil || in.Target == nil || in.Target.Host != "example.com" {
		t.Errorf("URLArg href: %+v, %v", in.Target, err)
	}
	if _, err := NewInput(PhaseCall, "fetch", Class{Action: ActionDownload, URLArg: "href"}, map[string]any{"href": "::"}); err == nil || !strings.Contains(err.Error(), "fetch: href: ") {
		t.Errorf("a bad href: %v, want it named", err)
	}
}

func TestLanded(t *testing.T) {
	t.Parallel()
	in, _ := testInput(PhaseCall, "navigate", map[string]any{"url": "https://allowed.test/"})
	landed, err := in.Landed("https://other.test/after-redirect")
	if err != nil || landed.Target.Host != "other.test" || in.Target.Host != "allowed.test" || landed.Tool != "navigate" {
		t.Errorf("Landed = %+v, %v (original %+v)", landed.Target, err, in.Target)
	}
	click, _ := testInput(PhaseCall, "click", map[string]any{"selector": "a"})
	click.Page = NewPage("https://allowed.test/")
	landed, _ = click.Landed("https://other.test/")
	if landed.Action != ActionNavigate || landed.Tool != "click" || landed.Page.Host != "allowed.test" {
		t.Errorf("click landed = %+v", landed)
	}
	if _, err := in.Landed("::"); err == nil {
		t.Error("Landed on an invalid URL: no error")
	}
}

func TestLandingIsDecidedLikeANavigation(t *testing.T) {
	t.Parallel()
	e := newEngine(t, WithData(map[string]any{"allow_domains": []string{"allowed.test"}, "enable_mutations": true}))
	for _, tool := range []string{"navigate", "back", "reload", "click"} {
		in, _ := testInput(PhaseCall, tool, map[string]any{"url": "https://allowed.test/"})
		in.Page = NewPage("https://allowed.test/")
		ok, _ := in.Landed("https://allowed.test/next")
		bad, _ := in.Landed("https://other.test/")
		if d := e.Decide(t.Context(), ok); !d.Allow {
			t.Errorf("%s landing on allowed.test: %+v", tool, d)
		}
		d := e.Decide(t.Context(), bad)
		if d.Allow || !strings.Contains(strings.Join(d.Reasons, ";"), "navigation to other.test is not allowed") {
			t.Errorf("%s landing on other.test: %+v", tool, d)
		}
	}
}

func TestPolicyArgsAndRedactArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool           string
		args           map[string]any
		policy, logged map[string]any
	}{
		{
			"type", map[string]any{"selector": "#pw", "text": "hunter2", "pressEnter": true},
			map[string]any{"selector": "#pw", "text": Redacted, "pressEnter": true},
			map[string]any{"selector": "#pw", "text": Redacted, "pressEnter": true},
		},
		{
			"fill", map[string]any{"ref": "e1", "value": "4111 1111"},
			map[string]any{"ref": "e1", "value": Redacted},
			map[string]any{"ref": "e1", "value": Redacted},
		},
		{
			"clipboard_write", map[string]any{"text": "secret"},
			map[string]any{"text": Redacted},
			map[string]any{"text": Redacted},
		},
		{
			"cookies_set", map[string]any{"cookies": []any{map[string]any{"name": "sid", "value": "abc", "domain": ".example.com", "secure": true}}},
			map[string]any{"cookies": []any{map[string]any{"name": "sid", "value": Redacted, "domain": ".example.com", "secure": true}}},
			map[string]any{"cookies": []any{map[string]any{"name": "sid", "value": Redacted, "domain": ".example.com", "secure": true}}},
		},
		{
			"fill_form", map[string]any{"fields": []any{map[string]any{"selector": "#u", "value": "me"}, map[string]any{"ref": "e2", "value": "pw"}}},
			map[string]any{"fields": []any{map[string]any{"selector": "#u", "value": Redacted}, map[string]any{"ref": "e2", "value": Redacted}}},
			map[string]any{"fields": []any{map[string]any{"selector": "#u", "value": Redacted}, map[string]any{"ref": "e2", "value": Redacted}}},
		},
		{
			"eval", map[string]any{"expression": "document.title", "awaitPromise": false},
			map[string]any{"expression": "document.title", "awaitPromise": false},
			map[string]any{"expression": HashSecret("document.title"), "awaitPromise": false},
		},
		{
			"page_tool_call", map[string]any{"name": "login", "arguments": map[string]any{"user": "me", "password": "pw"}},
			map[string]any{"name": "login", "arguments": map[string]any{"user": Redacted, "password": Redacted}},
			map[string]any{"name": "login", "arguments": map[string]any{"user": Redacted, "password": Redacted}},
		},
		{
			"navigate", map[string]any{"url": "https://example.com/", "headers": map[string]any{"Authorization": "Bearer x"}, "api_token": "t"},
			map[string]any{"url": "https://example.com/", "headers": map[string]any{"Authorization": Redacted}, "api_token": Redacted},
			map[string]any{"url": "https://example.com/", "headers": map[string]any{"Authorization": Redacted}, "api_token": Redacted},
		},
	}
	for _, tt := range tests {
		orig, _ := json.Marshal(tt.args)
		if diff := cmp.Diff(tt.policy, PolicyArgs(testClasses[tt.tool], tt.args)); diff != "" {
			t.Errorf("PolicyArgs(%s) (-want +got):\n%s", tt.tool, diff)
		}
		if diff := cmp.Diff(tt.logged, RedactArgs(testClasses[tt.tool], tt.args)); diff != "" {
			t.Errorf("RedactArgs(%s) (-want +got):\n%s", tt.tool, diff)
		}
		if after, _ := json.Marshal(tt.args); string(after) != string(orig) {
			t.Errorf("%s: args were modified: %s", tt.tool, after)
		}
	}
	if h := HashSecret("x"); !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
		t.Errorf("HashSecret = %q", h)
	}
}

func sampleInput() Input {
	in, _ := testInput(PhaseCall, "page_tool_call", map[string]any{"name": "search", "arguments": map[string]any{"q": "x"}})
	in.Page = NewPage("https://example.com/app")
	in.Backend = "cdp"
	in.Principal = Principal{Name: "ci-agent", Roles: []string{"ci"}, Transport: "http"}
	in.PageTool = &PageTool{Origin: "https://example.com", Name: "search", Annotations: map[string]any{"readOnlyHint": true}}
	return in
}

func TestInputMatchesSchema(t *testing.T) {
	t.Parallel()
	var schema jsonschema.Schema
	if err := json.Unmarshal(policies.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	nav, _ := testInput(PhaseCall, "navigate", map[string]any{"url": "https://example.com/a"})
	list, _ := testInput(PhaseList, "eval", nil)
	inputs := map[string]Input{
		"page tool": sampleInput(),
		"navigate":  nav,
		"list":      list,
		"zero":      {Version: 1, Phase: PhaseCall, Tool: "x", Action: ActionUnknown},
		"plugin":    {Version: 1, Phase: PhaseCall, Tool: "signup", Action: ActionPlugin, Plugin: &Plugin{Name: "signup", Tools: []string{"navigate", "click"}}},
		"step":      {Version: 1, Phase: PhaseCall, Tool: "click", Action: ActionInteract, Plugin: &Plugin{Name: "signup", Step: "submit"}},
		"bad page":  {Version: 1, Phase: PhaseCall, Tool: "get_text", Action: ActionRead, Page: NewPage("::")},
		"written":   {Version: 1, Phase: PhaseCall, Tool: "get_text", Action: ActionRead, Page: NewDocumentPage("about:blank", "https://b.example")},
		"opaque":    {Version: 1, Phase: PhaseCall, Tool: "get_text", Action: ActionRead, Page: NewDocumentPage("about:blank", "null")},
		"request":   sampleRequest(t),
	}
	for name, u := range map[string]string{"tunnel": "https://cdn.example.com:443/", "data request": "data:text/javascript,1", "websocket": "ws://[::1]:8080/live"} {
		in, err := NewRequestInput(&egress.Request{URL: u, Method: "CONNECT", ResourceType: "unknown", Via: "proxy", Session: "mcp-1"}, Principal{})
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = in
	}
	for name, in := range inputs {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if err := resolved.Validate(doc); err != nil {
			t.Errorf("%s: %s does not match the schema: %v", name, b, err)
		}
	}
	var bad map[string]any
	b, _ := json.Marshal(sampleInput())
	_ = json.Unmarshal(b, &bad)
	bad["version"] = 2
	if err := resolved.Validate(bad); err == nil {
		t.Error("version 2 validates against the version 1 schema")
	}
	b, _ = json.Marshal(sampleRequest(t))
	for name, req := range map[string]map[string]any{
		"no url":         {"method": "GET", "resource_type": "script", "navigation": false, "top_level": false, "frame_origin": "", "page_origin": "", "address": "", "via": "proxy"},
		"string boolean": {"url": "https://a.test/", "method": "GET", "resource_type": "script", "navigation": "no", "top_level": false, "frame_origin": "", "page_origin": "", "address": "", "via": "proxy"},
	} {
		var doc map[string]any
		_ = json.Unmarshal(b, &doc)
		doc["request"] = req
		if err := resolved.Validate(doc); err == nil {
			t.Errorf("a request with %s validates", name)
		}
	}
}

// sampleRequest is a script request of a page, seen by the proxy, to a
// name it resolved to a public address.
func sampleRequest(t testing.TB) Input {
	t.Helper()
	in, err := NewRequestInput(&egress.Request{URL: "https://cdn.example.com/lib.js?v=2", Method: "GET", ResourceType: "script",
		FrameOrigin: "https://example.com", PageOrigin: "https://example.com", Via: "proxy",
		Addr: netip.MustParseAddr("93.184.216.34"), Backend: "cdp"},
		Principal{Name: "local", Transport: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestInputJSONIsTheRegoInput checks that the JSON form (what `chromegate
// policy eval --input` reads and README documents) and the value Decide
// builds directly are the same document.
func TestInputJSONIsTheRegoInput(t *testing.T) {
	t.Parallel()
	step := sampleInput()
	step.Plugin = &Plugin{Name: "signup", Step: "submit", Tools: []string{"navigate", "click"}}
	written := sampleInput()
	written.Page = NewDocumentPage("about:blank", "https://b.example")
	origin, err := sampleInput().ForStateOrigin(StateLoad, StateServe, "https://app.example:8443")
	if err != nil {
		t.Fatal(err)
	}
	flowed := sampleInput()
	flowed.Flow = []Flow{{FromOrigin: "https://mail.example", ToOrigin: "https://example.com", Via: "url", Length: 19, Total: 27}}
	flowed.ReadOrigins = []string{"https://example.com", "https://mail.example"}
	for _, in := range []Input{sampleInput(), {}, step, {Plugin: &Plugin{Name: "p"}}, sampleRequest(t), written, origin, flowed} {
		v, err := in.astValue()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(in)
		var fromJSON, fromAST any
		_ = json.Unmarshal(b, &fromJSON)
		_ = json.Unmarshal([]byte(v.String()), &fromAST)
		if diff := cmp.Diff(fromJSON, fromAST); diff != "" {
			t.Errorf("JSON (-) vs Rego input (+):\n%s", diff)
		}
	}
}

// TestRedirected: a hop of a download is the download again, to the hop's
// URL: same tool and action (not a navigation), the hop as target and as
// args.url, and the call's own input untouched.
func TestRedirected(t *testing.T) {
	in, err := testInput(PhaseCall, "download_file", map[string]any{"url": "https://allowed.test/f"})
	if err != nil {
		t.Fatal(err)
	}
	hop, err := in.Redirected("http://127.0.0.1:8080/secret")
	if err != nil {
		t.Fatal(err)
	}
	if hop.Tool != "download_file" || hop.Action != ActionDownload || hop.ReadOnly {
		t.Errorf("hop = %+v, want download_file's own action", hop)
	}
	if hop.Target == nil || hop.Target.Host != "127.0.0.1" || hop.Target.IPClass != IPClassLoopback || hop.Args["url"] != "http://127.0.0.1:8080/secret" {
		t.Errorf("hop target %+v, args %v", hop.Target, hop.Args)
	}
	if in.Args["url"] != "https://allowed.test/f" || in.Target.Host != "allowed.test" {
		t.Errorf("the call's input changed: %+v", in)
	}
	if _, err := in.Redirected("::not a url"); err == nil {
		t.Error("an unparsable hop was not an error")
	}
}

// NewDocumentPage describes a document whose URL does not carry its
// origin by that origin; otherwise it is NewPage.
func TestNewDocumentPage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		url, origin string
		want        Page
	}{
		{"https://a.example/x", "", *NewPage("https://a.example/x")},
		{"https://a.example/x", "https://a.example", *NewPage("https://a.example/x")},
		{"about:blank", "", *NewPage("about:blank")},
		{"about:blank", "https://b.example", Page{Target: Target{URL: "https://b.example/", Scheme: "https", Host: "b.example", Port: 443, IPClass: IPClassUnresolved},
			Origin: "https://b.example", ShownURL: "about:blank"}},
		{"about:srcdoc", "http://127.0.0.1:8080", Page{Target: Target{URL: "http://127.0.0.1:8080/", Scheme: "http", Host: "127.0.0.1", Port: 8080, IPClass: IPClassLoopback},
			Origin: "http://127.0.0.1:8080", ShownURL: "about:srcdoc"}},
		{"about:blank", "null", Page{Target: Target{URL: "null", IPClass: IPClassNone}, Origin: "null", ShownURL: "about:blank"}},
		{"about:blank", "://", Page{Target: Target{URL: "null", IPClass: IPClassNone}, Origin: "null", ShownURL: "about:blank"}},
		{"about:blank", "https://b.example/path", Page{Target: Target{URL: "null", IPClass: IPClassNone}, Origin: "null", ShownURL: "about:blank"}},
	} {
		if diff := cmp.Diff(c.want, *NewDocumentPage(c.url, c.origin)); diff != "" {
			t.Errorf("NewDocumentPage(%q, %q) (-want +got):\n%s", c.url, c.origin, diff)
		}
	}
}
