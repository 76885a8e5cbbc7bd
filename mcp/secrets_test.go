package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp/vault"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

const testSecret = "hunter2-correct-horse"

// secretHarness serves the default policy over the fake backend, with
// PASSWORD bound to https://login.test, and the fake's tab on page.
func secretHarness(t *testing.T, page string, configure ...func(*Options)) *harness {
	t.Helper()
	v, err := vault.New(map[string]string{"PASSWORD": testSecret, "TOKEN": "tok-0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Bind("PASSWORD", []string{"https://login.test"}); err != nil {
		t.Fatal(err)
	}
	gate := newPolicyGate(t, map[string]any{
		"allow_domains": []string{"login.test", "other.test"}, "enable_mutations": true, "enable_eval": true,
		"secret_origins": v.Origins(),
	})
	h := newHarness(t, func(o *Options) {
		o.Gate, o.Secrets = gate, v
		for _, c := range configure {
			c(o)
		}
	})
	if res := h.call("navigate", map[string]any{"url": page}); res.IsError {
		t.Fatal(textOf(res))
	}
	return h
}

// typedParams returns what the executor was asked to type or fill.
func typedParams(h *harness) []any {
	var out []any
	for _, c := range h.fake().Calls() {
		if c.Method == "Type" || c.Method == "Fill" {
			out = append(out, c.Params)
		}
	}
	return out
}

func TestSecretSubstitutedAfterTheGate(t *testing.T) {
	t.Parallel()
	h := secretHarness(t, "https://login.test/signin")
	res := h.call("type", map[string]any{"selector": "#pw", "text": "pw: <secret:PASSWORD>", "press_enter": true})
	if res.IsError {
		t.Fatal(textOf(res))
	}
	res = h.call("fill", map[string]any{"selector": "#pw", "value": "<secret:PASSWORD>"})
	if res.IsError {
		t.Fatal(textOf(res))
	}
	got := typedParams(h)
	if len(got) != 2 {
		t.Fatalf("executor calls: %+v", got)
	}
	tp := got[0].(executor.TypeParams)
	if tp.Text != "pw: "+testSecret || tp.OnlyOrigin != "https://login.test" || !tp.PressEnter {
		t.Errorf("Type got %+v", tp)
	}
	fp := got[1].(executor.FillParams)
	if fp.Value != testSecret || fp.OnlyOrigin != "https://login.test" {
		t.Errorf("Fill got %+v", fp)
	}
	// Text without a reference is typed as ever: key by key, unguarded.
	h.call("type", map[string]any{"selector": "#user", "text": "alice"})
	if tp := typedParams(h)[2].(executor.TypeParams); tp.OnlyOrigin != "" || tp.Text != "alice" {
		t.Errorf("plain type got %+v", tp)
	}
	// <secret:> is the literal text, and needs no secret.
	h.call("type", map[string]any{"selector": "#user", "text": "<secret:>X>"})
	if tp := typedParams(h)[3].(executor.TypeParams); tp.Text != "<secret:X>" || tp.OnlyOrigin != "" {
		t.Errorf("escaped type got %+v", tp)
	}
}

func TestSecretDeniedTypesNothing(t *testing.T) {
	t.Parallel()
	h := secretHarness(t, "https://other.test/form")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"type", map[string]any{"selector": "#pw", "text": "<secret:PASSWORD>"}},
		{"fill", map[string]any{"selector": "#pw", "value": "a<secret:PASSWORD>"}},
		{"fill_form", map[string]any{"fields": []any{map[string]any{"selector": "#pw", "value": "<secret:PASSWORD>"}}}},
		{"type", map[string]any{"selector": "#pw", "text": "<secret:TOKEN>"}}, // bound to no origin
	} {
		res := h.call(c.tool, c.args)
		text := textOf(res)
		if !res.IsError || !strings.HasPrefix(text, "POLICY_DENIED: secret ") || !strings.Contains(text, "may not be typed on https://other.test") {
			t.Errorf("%s: %s", c.tool, text)
		}
		if strings.Contains(text, testSecret) {
			t.Errorf("%s: the denial holds the value", c.tool)
		}
	}
	if got := typedParams(h); len(got) != 0 {
		t.Errorf("denied calls reached the executor: %+v", got)
	}
	for _, m := range h.fake().Methods() {
		if m == "RunScript" || m == "Type" || m == "Fill" {
			t.Errorf("a denied call ran %s", m)
		}
	}
}

func TestSecretReferenceErrors(t *testing.T) {
	t.Parallel()
	h := secretHarness(t, "https://login.test/signin")
	res := h.call("type", map[string]any{"selector": "#pw", "text": "<secret:PASWORD>"})
	text := textOf(res)
	if !res.IsError || !strings.HasPrefix(text, "BAD_ARGS: type: text: secret PASWORD is not declared (declared: PASSWORD, TOKEN)") ||
		!strings.Contains(text, "<secret:PASSWORD>, <secret:TOKEN>") {
		t.Errorf("unknown name: %s", text)
	}
	res = h.call("fill_form", map[string]any{"fields": []any{map[string]any{"selector": "#a", "value": "ok"}, map[string]any{"selector": "#b", "value": "<secret:PASSWORD"}}})
	if text := textOf(res); !res.IsError || !strings.Contains(text, "BAD_ARGS: fill_form: fields[].value: malformed secret reference") {
		t.Errorf("malformed: %s", text)
	}
	if got := typedParams(h); len(got) != 0 {
		t.Errorf("refused calls reached the executor: %+v", got)
	}
}

func TestSecretNeedsAGateThatDecidesIt(t *testing.T) {
	t.Parallel()
	v, _ := vault.New(map[string]string{"PASSWORD": testSecret})
	h := newHarness(t, func(o *Options) { o.Secrets = v }) // AllowAll
	res := h.call("type", map[string]any{"selector": "#pw", "text": "<secret:PASSWORD>"})
	if !res.IsError || !strings.Contains(textOf(res), "cannot decide secrets") {
		t.Errorf("a gate that does not decide secrets: %s", textOf(res))
	}
	if got := typedParams(h); len(got) != 0 {
		t.Errorf("typed through AllowAll: %+v", got)
	}
}

// The page writes the value back everywhere it can; every result, error
// and log line shows <secret:PASSWORD> instead.
func TestSecretRedactedFromEverythingOut(t *testing.T) {
	t.Parallel()
	buf := &testkit.Buffer{}
	var h *harness
	h = secretHarness(t, "https://login.test/signin", func(o *Options) {
		o.Logger = slog.New(o.Secrets.Handler(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	})
	f := h.fake()
	// A window of a longer text (an offset, a cut the page made) that
	// starts and ends inside the value, then the value in other forms.
	echo := testSecret[5:] + " you typed " + base64.StdEncoding.EncodeToString([]byte(testSecret)) + " … " + testSecret[:9]
	f.Handle("Text", func(ctx context.Context, p any) (any, error) {
		return executor.TextResult{PageState: executor.PageState{URL: "https://login.test/signin", Title: "pw " + testSecret}, Text: echo}, nil
	})
	f.Handle("Eval", func(ctx context.Context, p any) (any, error) {
		v, _ := json.Marshal(map[string]string{"p": testSecret})
		return executor.EvalResult{OK: true, Value: v}, nil
	})
	f.Handle("Click", func(ctx context.Context, p any) (any, error) {
		return nil, executor.Errorf(executor.CodeBadArgs, "the page said %s", testSecret).WithPage("covered by " + testSecret)
	})
	var all strings.Builder
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"get_text", map[string]any{}},
		{"eval", map[string]any{"expression": "1"}},
		{"click", map[string]any{"selector": "#go"}},
	} {
		res := h.call(c.tool, c.args)
		b, _ := json.Marshal(res)
		all.WriteString(textOf(res) + string(b))
		if !strings.Contains(textOf(res), "<secret:PASSWORD>") || strings.Contains(textOf(res), testSecret[:9]) {
			t.Errorf("%s shows no name: %s", c.tool, textOf(res))
		}
	}
	h.server.log.Info("typed "+testSecret, "text", testSecret)
	for _, where := range []string{all.String(), buf.String()} {
		for i := 0; i+6 <= len(testSecret); i++ {
			if strings.Contains(where, testSecret[i:i+6]) {
				t.Fatalf("%q of the value got out:\n%s", testSecret[i:i+6], where)
			}
		}
	}
}

// A plugin recipe may carry a secret reference in a step; each step is a
// call of its tool, decided (secret and origin included) and substituted
// as if the model had made it.
const loginPlugin = `{
  "name": "log_in",
  "description": "Log in.",
  "read_only": false,
  "params": {"type": "object", "required": ["url"], "properties": {"url": {"type": "string"}}},
  "steps": [
    {"name": "open", "tool": "navigate", "args": {"url": "{{params.url}}"}},
    {"name": "password", "tool": "fill", "args": {"selector": "#pw", "value": "<secret:PASSWORD>"}}
  ],
  "result": {"url": "{{steps.password.url}}"}
}`

func TestSecretInAPluginStep(t *testing.T) {
	t.Parallel()
	h := secretHarness(t, "about:blank", func(o *Options) {
		o.Plugins = loadPlugins(t, map[string]string{"log_in.json": loginPlugin})
	})
	if res := h.call("log_in", map[string]any{"url": "https://login.test/"}); res.IsError {
		t.Fatal(textOf(res))
	}
	got := typedParams(h)
	if len(got) != 1 || got[0].(executor.FillParams).Value != testSecret || got[0].(executor.FillParams).OnlyOrigin != "https://login.test" {
		t.Fatalf("the step filled %+v", got)
	}
	res := h.call("log_in", map[string]any{"url": "https://other.test/"})
	if text := textOf(res); !res.IsError || !strings.Contains(text, "step 2 (password, fill): secret PASSWORD may not be typed on https://other.test") {
		t.Errorf("the step on another origin: %s", text)
	}
	if got := typedParams(h); len(got) != 1 {
		t.Errorf("the denied step filled: %+v", got)
	}
}

// chrome_status tells the model which secrets it may refer to, and where
// each may go: names and origins, never a value.
func TestSecretNamesInStatus(t *testing.T) {
	t.Parallel()
	h := secretHarness(t, "about:blank")
	got := jsonOf(t, h.call("chrome_status", nil))["secrets"]
	want := map[string]any{"PASSWORD": []any{"https://login.test"}, "TOKEN": []any{}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chrome_status secrets (-want +got):\n%s", diff)
	}
}

// BenchmarkSecretType is the cost of a secret on the call path: a type
// through the default policy with plain text, with a reference (parsed,
// decided with the page's origin, expanded, guarded), and the same with
// secrets declared but none referred to (the redaction of the result).
func BenchmarkSecretType(b *testing.B) {
	v, err := vault.New(map[string]string{"PASSWORD": testSecret})
	if err != nil {
		b.Fatal(err)
	}
	_ = v.Bind("PASSWORD", []string{"https://login.test"})
	eng, err := policy.New(b.Context(), policy.WithData(map[string]any{"allow_domains": []string{"login.test"}, "enable_mutations": true,
		"secret_origins": v.Origins()}), policy.WithTimeout(10*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	g := gate.New(eng, nil)
	for _, bc := range []struct {
		name  string
		vault *vault.Vault
		text  string
	}{
		{"plain_no_secrets", nil, "alice@example.com"},
		{"plain_secrets_declared", v, "alice@example.com"},
		{"reference", v, "<secret:PASSWORD>"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := newHarness(b, func(o *Options) { o.Gate, o.Secrets = g, bc.vault })
			ctx := b.Context()
			if res, _ := h.server.Call(ctx, "", LocalPrincipal, "navigate", json.RawMessage(`{"url":"https://login.test/"}`)); res.IsError {
				b.Fatal(textOf(res))
			}
			args, _ := json.Marshal(map[string]any{"selector": "#pw", "text": bc.text})
			b.ReportAllocs()
			for b.Loop() {
				if res, _ := h.server.Call(ctx, "", LocalPrincipal, "type", args); res.IsError {
					b.Fatal(textOf(res))
				}
			}
		})
	}
}
