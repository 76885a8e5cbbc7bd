package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

// gateFunc is a gate made of functions: before decides calls, landed
// where they landed (q.URL); a nil function allows, and every other
// question is gatetest.AllowAll's.
type gateFunc struct {
	before func(context.Context, gate.Question) error
	landed func(context.Context, gate.Question) error
}

func (g gateFunc) Decide(ctx context.Context, q gate.Question) gate.Decision {
	var err error
	switch {
	case q.Kind == gate.KindCall && g.before != nil:
		err = g.before(ctx, q)
	case q.Kind == gate.KindLanded && g.landed != nil:
		err = g.landed(ctx, q)
	}
	if err != nil {
		return gatetest.Deny(err)
	}
	return gatetest.AllowAll.Decide(ctx, q)
}

func deny(format string, args ...any) error {
	return executor.Errorf(executor.CodePolicyDenied, format, args...).WithHint("ask the operator to allow it")
}

// Bad input, through the real SDK client: every case is an isError result
// with BAD_ARGS, a cause naming the argument, and a Next line; the executor
// is never reached and the server keeps serving.
func TestBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	f := h.fake()
	tests := []struct {
		name string
		tool string
		args any
		want string // the whole text
	}{
		{"missing required", "navigate", map[string]any{},
			"BAD_ARGS: missing required argument \"url\"\nNext: required: url"},
		{"wrong type", "navigate", map[string]any{"url": 42},
			"BAD_ARGS: url: type: 42 has type \"integer\", want \"string\"\nNext: fix that argument and retry; the tool's input schema lists the types"},
		{"extra property", "click", map[string]any{"selector": "a", "force": true},
			"BAD_ARGS: unknown argument \"force\"\nNext: accepted arguments: selector, ref, x, y, button, count, tab_id, timeout_ms, changes"},
		{"argument to a tool without arguments", "tabs_list", map[string]any{"all": true},
			"BAD_ARGS: unknown argument \"all\"\nNext: this tool takes no arguments"},
		{"bad enum", "navigate", map[string]any{"url": "https://a.test/", "wait_until": "idle"},
			`BAD_ARGS: wait_until: enum: idle does not equal any of: [load domcontentloaded networkidle]` + "\nNext: fix that argument and retry; the tool's input schema lists the types"},
		{"out of range", "click", map[string]any{"selector": "a", "count": 9},
			"BAD_ARGS: count: maximum: 9 is greater than 3\nNext: fix that argument and retry; the tool's input schema lists the types"},
		{"array item type", "select_option", map[string]any{"selector": "s", "values": []any{"a", 1}},
			"BAD_ARGS: values[]: type: 1 has type \"integer\", want \"string\"\nNext: fix that argument and retry; the tool's input schema lists the types"},
		{"both selector and ref", "click", map[string]any{"selector": "a", "ref": "e1"},
			"BAD_ARGS: both selector and ref are set\nNext: pass exactly one of selector or ref"},
		{"neither selector nor ref", "click", map[string]any{},
			"BAD_ARGS: neither selector nor ref is set\nNext: pass exactly one of selector or ref"},
		{"both on an optional target", "get_text", map[string]any{"selector": "a", "ref": "e1"},
			"BAD_ARGS: both selector and ref are set\nNext: pass exactly one of selector or ref"},
		{"drag without from", "drag", map[string]any{"to_selector": "b"},
			"BAD_ARGS: neither from_selector nor from_ref is set\nNext: pass exactly one of from_selector or from_ref"},
		{"drag with both to", "drag", map[string]any{"from_ref": "e1", "to_selector": "b", "to_ref": "e2"},
			"BAD_ARGS: both to_selector and to_ref are set\nNext: pass exactly one of to_selector or to_ref"},
		{"wait for nothing", "wait_for", map[string]any{"gone": true},
			"BAD_ARGS: nothing to wait for\nNext: pass a selector or ref, or text"},
		{"wait for two things", "wait_for", map[string]any{"selector": "a", "text": "b"},
			"BAD_ARGS: both a target and text are set\nNext: wait for a selector or ref, or for text, not both"},
		{"download both", "download_file", map[string]any{"url": "https://a.test/f", "selector": "a"},
			"BAD_ARGS: both url and a target are set\nNext: pass url to fetch it, or a selector or ref to click, not both"},
		{"scroll nothing", "scroll", map[string]any{},
			"BAD_ARGS: nothing to scroll\nNext: pass a selector or ref to scroll into view, or dx/dy in pixels"},
		{"png quality", "screenshot", map[string]any{"quality": 50},
			"BAD_ARGS: quality applies to jpeg only\nNext: set format to \"jpeg\" or drop quality"},
		{"cookie without scope", "cookies_set", map[string]any{"cookies": []any{map[string]any{"name": "a", "value": "b"}}},
			"BAD_ARGS: cookies[0] has neither url nor domain and path\nNext: give each cookie a url, or a domain and a path"},
		{"cookie extra field", "cookies_set", map[string]any{"cookies": []any{map[string]any{"name": "a", "value": "b", "url": "https://a.test/", "httpOnly": true}}},
			"BAD_ARGS: cookies[]: unexpected additional properties [\"httpOnly\"]\nNext: fix that argument and retry; the tool's input schema lists the types"},
		{"timeout too long", "navigate", map[string]any{"url": "https://a.test/", "timeout_ms": 120001},
			"BAD_ARGS: timeout_ms must be between 1 and 120000 (got 120001)\nNext: pass a timeout_ms of at most 120000, or leave it out for 30000"},
		{"timeout zero", "wait_for", map[string]any{"text": "a", "timeout_ms": 0},
			"BAD_ARGS: timeout_ms must be between 1 and 120000 (got 0)\nNext: pass a timeout_ms of at most 120000, or leave it out for 30000"},
		{"null is no arguments", "navigate", json.RawMessage(`null`),
			"BAD_ARGS: missing required argument \"url\"\nNext: required: url"},
	}
	for _, tt := range tests {
		res := h.call(tt.tool, tt.args)
		if got := textOf(res); !res.IsError || got != tt.want {
			t.Errorf("%s: isError=%v\n got: %s\nwant: %s", tt.name, res.IsError, got, tt.want)
		}
	}
	if calls := f.Methods(); len(calls) != 0 {
		t.Errorf("bad input reached the executor: %v", calls)
	}
	if res := h.call("tabs_list", nil); res.IsError {
		t.Errorf("server stopped serving: %s", textOf(res))
	}
}

// Protocol misuse is a JSON-RPC error, not a tool result, and the session
// goes on.
func TestProtocolErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	tests := []struct {
		name string
		tool string
		args any
		code int64
	}{
		{"unknown tool", "no_such_tool", nil, jsonrpc.CodeInvalidParams},
		{"arguments are an array", "navigate", json.RawMessage(`["https://a.test/"]`), jsonrpc.CodeInvalidParams},
		{"arguments are a string", "navigate", json.RawMessage(`"https://a.test/"`), jsonrpc.CodeInvalidParams},
	}
	for _, tt := range tests {
		res, err := h.callErr(tt.tool, tt.args)
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != tt.code {
			t.Errorf("%s: got result %v, error %v; want JSON-RPC error %d", tt.name, res, err, tt.code)
		}
	}
	if res := h.call("tabs_list", nil); res.IsError {
		t.Errorf("server stopped serving: %s", textOf(res))
	}
}

// Every executor error code reaches the model as "CODE: cause" and a Next
// line: the backend's hint, or the code's default.
func TestExecutorErrorsBecomeResults(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	f := h.fake()
	for _, code := range executor.AllCodes {
		f.Fail("Click", executor.Errorf(code, "cause of %s", code))
		res := h.call("click", map[string]any{"selector": "a"})
		want := fmt.Sprintf("%s: cause of %s\nNext: %s", code, code, executor.DefaultHint(code))
		if got := textOf(res); !res.IsError || got != want {
			t.Errorf("%s:\n got: %s\nwant: %s", code, got, want)
		}
	}
	f.Fail("Click", executor.Errorf(executor.CodeSelectorNotFound, "no element matches %q", "a").WithHint("wait_for it first"))
	if got := textOf(h.call("click", map[string]any{"selector": "a"})); got != "SELECTOR_NOT_FOUND: no element matches \"a\"\nNext: wait_for it first" {
		t.Errorf("backend hint: %s", got)
	}
	f.Fail("Click", errors.New("backend bug"))
	if got := textOf(h.call("click", map[string]any{"selector": "a"})); !strings.HasPrefix(got, "INTERNAL: backend bug\nNext: ") {
		t.Errorf("plain error: %s", got)
	}
}

func TestTabErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake()
	res := h.call("click", map[string]any{"selector": "a", "tab_id": "fake:0ld:1"})
	if got := textOf(res); !strings.HasPrefix(got, "STALE_TAB: ") || !strings.Contains(got, "\nNext: call tabs_list") {
		t.Errorf("stale tab: %s", got)
	}
	res = h.call("tab_select", map[string]any{"tab_id": "fake:s1:99"})
	if got := textOf(res); !strings.HasPrefix(got, "TAB_NOT_FOUND: ") {
		t.Errorf("unknown tab: %s", got)
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake().Handle("WaitFor", func(ctx context.Context, _ any) (any, error) {
		<-ctx.Done()
		return nil, executor.AsError(ctx.Err())
	})
	res := h.call("wait_for", map[string]any{"text": "never", "timeout_ms": 20})
	if got := textOf(res); !res.IsError || !strings.HasPrefix(got, "TIMEOUT: ") {
		t.Errorf("got %s", got)
	}
}

// A browser that dies during a call fails the call fast with TARGET_GONE,
// and the next call gets a new browser.
func TestBrowserDiesDuringACall(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	f := h.fake()
	f.Handle("Click", func(ctx context.Context, _ any) (any, error) {
		go f.Kill()
		<-ctx.Done()
		return nil, executor.AsError(ctx.Err())
	})
	res := h.call("click", map[string]any{"selector": "a"})
	if got := textOf(res); !res.IsError || !strings.HasPrefix(got, "TARGET_GONE: ") {
		t.Errorf("got %s", got)
	}
	if res := h.call("tabs_list", nil); res.IsError {
		t.Fatalf("next call: %s", textOf(res))
	}
	if n := h.backend.Opens(); n != 2 {
		t.Errorf("opens = %d, want 2 (a relaunch)", n)
	}
}

func TestPanicIsInternalAndTheServerGoesOn(t *testing.T) {
	t.Parallel()
	log, buf := bufLogger()
	h := newHarness(t, func(o *Options) { o.Logger = log })
	f := h.fake()
	f.Handle("Click", func(context.Context, any) (any, error) { panic("boom") })
	res := h.call("click", map[string]any{"selector": "a"})
	want := "INTERNAL: the server hit a bug running click\nNext: retry; if it persists, report it with the server log"
	if got := textOf(res); !res.IsError || got != want {
		t.Errorf("got %s", got)
	}
	if logged := buf.String(); !strings.Contains(logged, "boom") || !strings.Contains(logged, "goroutine") {
		t.Errorf("the panic and its stack were not logged:\n%s", logged)
	}
	f.Handle("Click", nil)
	if res := h.call("click", map[string]any{"selector": "a"}); res.IsError {
		t.Errorf("next call: %s", textOf(res))
	}
}

func TestGatePanicDenies(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		o.Gate = gateFunc{before: func(context.Context, gate.Question) error { panic("policy bug") }}
	})
	f := h.fake()
	res := h.call("click", map[string]any{"selector": "a"})
	if got := textOf(res); !res.IsError || !strings.HasPrefix(got, "INTERNAL: ") {
		t.Errorf("got %s", got)
	}
	if m := f.Methods(); len(m) != 0 {
		t.Errorf("executor called after the gate panicked: %v", m)
	}
}

func TestHugeOutputIsTruncated(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	huge := strings.Repeat("é", 250_000)
	h.fake().Handle("Text", func(context.Context, any) (any, error) {
		return executor.TextResult{PageState: executor.PageState{TabID: "fake:s1:1", URL: "about:blank"}, Text: huge}, nil
	})
	text := textOf(h.call("get_text", nil))
	body, after, ok := Unfence(text)
	if !ok {
		t.Fatalf("page text is not fenced: %.200s", text)
	}
	head := `{"tab_id":"fake:s1:1","url":"about:blank","chars":250000}` + "\n"
	total := utf8.RuneCountInString(head) + 250_000
	marker := fmt.Sprintf("…[truncated: showed %d of %d characters; narrow the selector or use get_text on a smaller element]", DefaultMaxResultChars, total)
	if after != marker {
		t.Fatalf("the truncation marker should follow the page block; after it: %q", after)
	}
	if n := utf8.RuneCountInString(body); n != DefaultMaxResultChars {
		t.Errorf("kept %d characters, want %d", n, DefaultMaxResultChars)
	}
	if !utf8.ValidString(text) {
		t.Error("cut inside a character")
	}
}

func TestMaxResultCharsOption(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.MaxResultChars = 50 })
	h.fake().Handle("Eval", func(context.Context, any) (any, error) {
		v, _ := json.Marshal(strings.Repeat("x", 500))
		return executor.EvalResult{OK: true, Value: v}, nil
	})
	text := textOf(h.call("eval", map[string]any{"expression": "big"}))
	if !strings.Contains(text, "…[truncated: showed 50 of ") || !strings.HasSuffix(text, "return a smaller value from the expression]") {
		t.Errorf("got %s", text)
	}
}

// A denial stops the call before the executor does anything, and the model
// reads why.
func TestGateDenies(t *testing.T) {
	t.Parallel()
	var seen *gate.Question
	h := newHarness(t, func(o *Options) {
		o.Gate = gateFunc{before: func(ctx context.Context, q gate.Question) error {
			seen = &q
			if q.Name == "click" {
				return deny("clicking on %s is not allowed", q.Args["selector"])
			}
			return nil
		}}
	})
	f := h.fake()
	res := h.call("click", map[string]any{"selector": "#buy"})
	want := "POLICY_DENIED: clicking on #buy is not allowed\nNext: ask the operator to allow it"
	if got := textOf(res); !res.IsError || got != want {
		t.Errorf("got %s", got)
	}
	if m := f.Methods(); len(m) != 0 {
		t.Errorf("executor called despite the denial: %v", m)
	}
	if seen.Principal.Name != "local" || seen.Principal.Transport != "stdio" || seen.Session != DefaultSession || seen.Class.Action != policy.ActionInteract || !seen.Class.Mutating {
		t.Errorf("gate saw %+v", seen)
	}
}

// Gate errors that are not denials still stop the call: fail closed.
func TestGateErrorsFailClosed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		o.Gate = gateFunc{before: func(context.Context, gate.Question) error { return errors.New("rego: undefined decision") }}
	})
	f := h.fake()
	res := h.call("get_text", nil)
	if got := textOf(res); !res.IsError || !strings.HasPrefix(got, "POLICY_DENIED: the policy could not decide this call\n") {
		t.Errorf("got %s", got)
	}
	if m := f.Methods(); len(m) != 0 {
		t.Errorf("executor called: %v", m)
	}
}

// The Gate can read the page a call will touch, inside the call.
func TestGateReadsThePage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) {
		o.Gate = gateFunc{before: func(ctx context.Context, q gate.Question) error {
			if q.Class.Action != policy.ActionRead {
				return nil
			}
			p, err := q.Page(ctx)
			if err != nil {
				return err
			}
			if strings.Contains(p.URL, "secret") {
				return deny("reading %s is not allowed", p.URL)
			}
			if q.Backend == "" {
				return errors.New("no executor")
			}
			return nil
		}}
	})
	h.call("navigate", map[string]any{"url": "https://secret.test/"})
	h.call("tab_new", map[string]any{"url": "https://public.test/"})
	f := h.fake()
	if res := h.call("get_text", nil); res.IsError {
		t.Errorf("selected public tab: %s", textOf(res))
	}
	res := h.call("get_text", map[string]any{"tab_id": "fake:s1:1"})
	if got := textOf(res); got != "POLICY_DENIED: reading https://secret.test/ is not allowed\nNext: ask the operator to allow it" {
		t.Errorf("secret tab: %s", got)
	}
	// One TabInfo per call, for the tab named, never more.
	var infos []any
	for _, c := range f.Calls() {
		if c.Method == "TabInfo" {
			infos = append(infos, c.Params)
		}
	}
	if diff := cmp.Diff([]any{"", "fake:s1:1"}, infos); diff != "" {
		t.Errorf("TabInfo calls (-want +got):\n%s", diff)
	}
	// A bad tab id read by the gate reaches the model with its own code.
	if got := textOf(h.call("get_text", map[string]any{"tab_id": "fake:old:1"})); !strings.HasPrefix(got, "STALE_TAB: ") {
		t.Errorf("stale tab through the gate: %s", got)
	}
}

// A navigation that lands outside policy: the tab goes to about:blank and
// nothing of the page comes back.
func TestLandedDenial(t *testing.T) {
	t.Parallel()
	var landed []string
	h := newHarness(t, func(o *Options) {
		o.Gate = gateFunc{landed: func(_ context.Context, q gate.Question) error {
			landed = append(landed, q.Name+" "+q.URL)
			if strings.Contains(q.URL, "evil") {
				return deny("the page landed on a host outside policy")
			}
			return nil
		}}
	})
	f := h.fake()
	// The fake "redirects" one allowed URL to an evil one.
	f.Handle("Navigate", func(ctx context.Context, p any) (any, error) {
		np := p.(executor.NavigateParams)
		if np.URL == "https://ok.test/redirect" {
			return executor.NavResult{PageState: executor.PageState{TabID: "fake:s1:1", URL: "https://evil.test/", Title: "Evil"}, Status: 200}, nil
		}
		return executor.NavResult{PageState: executor.PageState{TabID: "fake:s1:1", URL: np.URL}}, nil
	})
	res := h.call("navigate", map[string]any{"url": "https://ok.test/redirect"})
	text := textOf(res)
	if !res.IsError || text != "POLICY_DENIED: the page landed on a host outside policy\nNext: ask the operator to allow it" {
		t.Errorf("got %s", text)
	}
	if strings.Contains(text, "Evil") {
		t.Error("the denied page's content was returned")
	}
	var urls []string
	for _, c := range f.Calls() {
		if c.Method == "Navigate" {
			np := c.Params.(executor.NavigateParams)
			urls = append(urls, np.TabID+" "+np.URL)
		}
	}
	if diff := cmp.Diff([]string{" https://ok.test/redirect", "fake:s1:1 about:blank"}, urls); diff != "" {
		t.Errorf("navigations (-want +got):\n%s", diff)
	}

	// tab_new with a url is checked on arrival too; without one it is not.
	f.Handle("Navigate", nil)
	res = h.call("tab_new", map[string]any{"url": "https://evil.test/"})
	if !res.IsError || !strings.HasPrefix(textOf(res), "POLICY_DENIED: ") {
		t.Errorf("tab_new: %s", textOf(res))
	}
	if last := f.Last(); last.Method != "Navigate" || last.Params.(executor.NavigateParams).URL != "about:blank" {
		t.Errorf("tab_new's tab was not blanked: %+v", last)
	}
	h.call("tab_new", nil)
	for _, tool := range []string{"back", "forward", "reload"} {
		h.call(tool, nil)
	}
	want := []string{"navigate https://evil.test/", "tab_new https://evil.test/", "back about:blank", "forward about:blank", "reload about:blank"}
	if diff := cmp.Diff(want, landed); diff != "" {
		t.Errorf("Landed calls (-want +got):\n%s", diff)
	}
}

// hideTools is a gate that hides the tools it names from the local
// principal (the list phase) and allows the rest.
type hideTools map[string]bool

func (h hideTools) Decide(ctx context.Context, q gate.Question) gate.Decision {
	if q.Kind == gate.KindList && h[q.Tool] && q.Principal.Name == "local" {
		return gatetest.Deny(deny("hidden"))
	}
	return gatetest.AllowAll.Decide(ctx, q)
}

func TestListFilter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.Gate, o.Tools = hideTools{"eval": true, "cookies_get": true}, ListGroups })
	res, err := h.client.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if len(names) != len(surface)-2 || strings.Contains(strings.Join(names, " "), "eval") || strings.Contains(strings.Join(names, " "), "cookies_get") {
		t.Errorf("listed: %v", names)
	}
	if res.CacheScope != "private" {
		t.Errorf("a filtered list is cacheable as %q, want private", res.CacheScope)
	}
	f := h.fake()
	got := textOf(h.call("eval", map[string]any{"expression": "1"}))
	if got != "POLICY_DENIED: tool eval is not available to local\nNext: use the tools that tools/list shows" {
		t.Errorf("hidden tool called: %s", got)
	}
	if m := f.Methods(); len(m) != 0 {
		t.Errorf("executor called: %v", m)
	}
}

func TestNewServerRequiresManagerAndGate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	if _, err := NewServer(Options{Manager: h.manager}); err == nil || !strings.Contains(err.Error(), "Gate is required") {
		t.Errorf("no gate: %v", err)
	}
	if _, err := NewServer(Options{Gate: gatetest.AllowAll}); err == nil || !strings.Contains(err.Error(), "Manager is required") {
		t.Errorf("no manager: %v", err)
	}
}

func TestNewServerRejectsBadTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	opts := Options{Manager: h.manager, Gate: gatetest.AllowAll}
	noop := func(context.Context, *Call) (*Result, error) { return &Result{}, nil }
	tests := map[string]*Tool{
		"ReadOnly":             {Name: "x", InputSchema: object(nil), Handler: noop},
		"no handler":           {Name: "x", InputSchema: object(nil), ReadOnly: yes()},
		"type":                 {Name: "x", InputSchema: str(""), ReadOnly: yes(), Handler: noop},
		"is not in the schema": {Name: "x", InputSchema: object(nil), ReadOnly: yes(), Handler: noop, Targets: []TargetArg{{}}},
	}
	for want, tool := range tests {
		if _, err := newServer(opts, []*Tool{tool}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v", want, err)
		}
	}
	ok := &Tool{Name: "x", InputSchema: object(nil), ReadOnly: yes(), Handler: noop}
	if _, err := newServer(opts, []*Tool{ok, ok}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate: %v", err)
	}
}

// Server.Call is the same dispatch for entry points that are not MCP
// sessions (REST).
func TestServerCall(t *testing.T) {
	t.Parallel()
	var principal Principal
	h := newHarness(t, func(o *Options) {
		o.Gate = gateFunc{before: func(_ context.Context, q gate.Question) error {
			principal = Principal{Name: q.Principal.Name, Roles: q.Principal.Roles, Transport: q.Principal.Transport}
			return nil
		}}
	})
	p := Principal{Name: "ci", Roles: []string{"ci"}, Transport: "rest"}
	res, err := h.server.Call(context.Background(), "", p, "navigate", json.RawMessage(`{"url":"https://a.test/"}`))
	if err != nil || res.IsError {
		t.Fatalf("%v %v", err, res)
	}
	if diff := cmp.Diff(p, principal); diff != "" {
		t.Errorf("principal (-want +got):\n%s", diff)
	}
	if _, err := h.server.Call(context.Background(), "", p, "nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown tool: %v", err)
	}
	res, err = h.server.Call(context.Background(), "", p, "navigate", json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.HasPrefix(textOf(res), "BAD_ARGS: ") {
		t.Errorf("bad args: %v %v", err, textOf(res))
	}
	if tool, ok := h.server.Tool("navigate"); !ok || tool.Action != ActionNavigate {
		t.Errorf("Tool: %v %v", tool, ok)
	}
}

// Many calls at once, on one session, with the race detector watching.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	var before atomic.Int64
	h := newHarness(t, func(o *Options) {
		o.Gate = gateFunc{before: func(context.Context, gate.Question) error { before.Add(1); return nil }}
	})
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			calls := []struct {
				name string
				args map[string]any
			}{
				{"get_text", nil}, {"click", map[string]any{"selector": "a"}},
				{"navigate", map[string]any{"url": fmt.Sprintf("https://a.test/%d", i)}}, {"chrome_status", nil},
			}
			c := calls[i%len(calls)]
			if res := h.call(c.name, c.args); res.IsError {
				t.Errorf("%s: %s", c.name, textOf(res))
			}
		})
	}
	wg.Wait()
	if before.Load() != 40 {
		t.Errorf("gate asked %d times, want 40", before.Load())
	}
	if h.backend.Opens() != 1 {
		t.Errorf("opens = %d, want 1", h.backend.Opens())
	}
}

func TestNoBackendIsAResult(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.backend.FailOpen(executor.Errorf(executor.CodeLaunchFailed, "chromium not found").WithHint("install chromium: apt-get install chromium"))
	res := h.call("navigate", map[string]any{"url": "https://a.test/"})
	if got := textOf(res); got != "LAUNCH_FAILED: chromium not found\nNext: install chromium: apt-get install chromium" {
		t.Errorf("got %s", got)
	}
	h.backend.FailOpen(nil)
	if res := h.call("navigate", map[string]any{"url": "https://a.test/"}); res.IsError {
		t.Errorf("after the fix: %s", textOf(res))
	}
}

// The round trip of one tool call over in-memory transports with the fake
// executor: the MCP and dispatch overhead chromegate adds to every call.
func BenchmarkDispatch(b *testing.B) {
	for _, bc := range []struct {
		tool string
		args map[string]any
	}{
		{"click", map[string]any{"selector": "#go", "button": "left"}},
		{"navigate", map[string]any{"url": "https://a.test/", "wait_until": "load"}},
		{"get_text", map[string]any{"selector": "main"}},
	} {
		b.Run(bc.tool, func(b *testing.B) {
			h := newHarness(b, nil)
			h.fake()
			b.ReportAllocs()
			for b.Loop() {
				if res := h.call(bc.tool, bc.args); res.IsError {
					b.Fatal(textOf(res))
				}
			}
		})
	}
}

// The dispatch alone (validation, gate, Manager, handler, envelope) without
// MCP framing, through Server.Call.
func BenchmarkDispatchDirect(b *testing.B) {
	h := newHarness(b, nil)
	h.fake()
	args := json.RawMessage(`{"selector":"#go","button":"left"}`)
	b.ReportAllocs()
	for b.Loop() {
		res, err := h.server.Call(context.Background(), "", LocalPrincipal, "click", args)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// A page that navigates itself between the Gate's look and the read is
// caught on the read's result: the read is treated as a landing, and none
// of the page's text is returned. The same holds for every reading tool.
func TestReadOfAPageThatMovedIsALanding(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"get_text", "get_html", "eval"} {
		h := newHarness(t, func(o *Options) {
			o.Gate = gateFunc{
				before: func(ctx context.Context, q gate.Question) error { _, err := q.Page(ctx); return err },
				landed: func(_ context.Context, q gate.Question) error {
					if strings.Contains(q.URL, "evil") {
						return deny("the tab is on evil.test")
					}
					return nil
				},
			}
		})
		moved := executor.PageState{TabID: "fake:s1:1", URL: "https://evil.test/"}
		h.fake().Handle("Text", func(context.Context, any) (any, error) {
			return executor.TextResult{PageState: moved, Text: "SECRET PAGE TEXT"}, nil
		})
		h.fake().Handle("HTML", func(context.Context, any) (any, error) {
			return executor.TextResult{PageState: moved, Text: "SECRET PAGE TEXT"}, nil
		})
		h.fake().Handle("Eval", func(context.Context, any) (any, error) {
			return executor.EvalResult{PageState: moved, OK: true, Value: []byte(`"SECRET PAGE TEXT"`)}, nil
		})
		args := map[string]any{}
		if tool == "eval" {
			args["expression"] = "document.body.innerText"
		}
		res := h.call(tool, args)
		if !res.IsError || strings.Contains(textOf(res), "SECRET") || !strings.Contains(textOf(res), "evil.test") {
			t.Errorf("%s on a page that moved: %s", tool, textOf(res))
		}
	}
}
