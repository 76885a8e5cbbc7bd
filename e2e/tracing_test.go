package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/internal/testkit/otlptest"
)

// TestTracesExportedOverOTLP: serve --otlp-endpoint exports a span per
// call to a real OTLP/HTTP receiver, each a child of the trace context
// the caller sent — a REST request's traceparent header, an MCP
// request's HTTP header, a 2026-07-28 request's _meta — with a span for
// the policy's decision and one for the browser's primitive under it.
// And from the attacker's side: a call that types a secret and one that
// navigates to a URL with a token in its query leave neither in any
// span, nor the page's address.
func TestTracesExportedOverOTLP(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	recv := otlptest.Start(t)
	const (
		secret = "Tr0ub4dor-and-3-typed"
		token  = "qtok-5e1f0c9a7b"
	)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	site := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Sign in</title><label>Password <input id="pw" type="password"></label>`)
	})}
	go func() { _ = site.Serve(ln) }()
	t.Cleanup(func() { _ = site.Close() })
	login := "http://" + ln.Addr().String() + "/signin/callback?token=" + token

	dir := t.TempDir()
	key := createKey(t, dir, "tracing-ci")
	h := startHTTPEnv(t, dir, fmt.Sprintf("e2e-otel-%d-%d", os.Getpid(), time.Now().UnixNano()),
		[]string{"OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_SERVICE_NAME=chromegate-e2e"},
		append([]string{"--otlp-endpoint", recv.URL}, permissive...)...)

	const (
		restTrace = "11111111111111111111111111111111"
		mcpTrace  = "22222222222222222222222222222222"
		metaTrace = "33333333333333333333333333333333"
		parent    = "00f067aa0ba902b7"
	)
	tp := func(trace string) string { return "00-" + trace + "-" + parent + "-01" }

	// REST, the traceparent header: navigate to the URL with the token.
	if code, _, body := h.rest("POST", "/api/v1/command", key, `{"command":"navigate","params":{"url":"`+login+`"}}`,
		map[string]string{"Traceparent": tp(restTrace), "Tracestate": "ci=1"}); code != 200 || strings.Contains(body, `"isError":true`) {
		t.Fatalf("navigate: %d %s", code, body)
	}
	// MCP (2025-11-25, a session of its own), the header: navigate and type the secret.
	cs := h.connect(key, map[string]string{"Traceparent": tp(mcpTrace)})
	if res := mcpCall(t, cs, "navigate", map[string]any{"url": login}); res.IsError {
		t.Fatalf("navigate over MCP: %s", testkit.TextOf(res))
	}
	if res := mcpCall(t, cs, "type", map[string]any{"selector": "#pw", "text": secret}); res.IsError {
		t.Fatalf("type: %s", testkit.TextOf(res))
	}
	// MCP 2026-07-28, the trace context in _meta; a denied navigation.
	cs26 := h.connectAt("2026-07-28", key, nil, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := cs26.CallTool(ctx, &sdk.CallToolParams{Name: "navigate", Arguments: map[string]any{"url": "https://denied.example/?token=" + token},
		Meta: sdk.Meta{"traceparent": tp(metaTrace)}}); err != nil {
		t.Fatal(err)
	}

	calls := func(spans []otlptest.Span, trace string) []otlptest.Span {
		var out []otlptest.Span
		for _, s := range spans {
			if s.TraceID == trace && strings.HasPrefix(s.Name, "tools/call ") {
				out = append(out, s)
			}
		}
		return out
	}
	spans := recv.Wait(t, 60*time.Second, func(s []otlptest.Span) bool {
		return len(calls(s, restTrace)) == 1 && len(calls(s, mcpTrace)) == 2 && len(calls(s, metaTrace)) == 1 &&
			otlptest.Count(s, "cdp ") > 0
	})

	check := func(root otlptest.Span, tool, kind, outcome string, ran bool) {
		t.Helper()
		if root.ParentSpanID != parent || root.Service != "chromegate-e2e" {
			t.Errorf("%s: parent %s service %q", root.Name, root.ParentSpanID, root.Service)
		}
		for k, v := range map[string]string{"gen_ai.tool.name": tool, "chromegate.principal": "tracing-ci",
			"chromegate.session.kind": kind, "chromegate.outcome": outcome} {
			if root.Attrs[k] != v {
				t.Errorf("%s: %s = %q, want %q", root.Name, k, root.Attrs[k], v)
			}
		}
		if !otlptest.Under(spans, root, "policy call") {
			t.Errorf("%s: no decision span under it", root.Name)
		}
		if ran && !otlptest.Under(spans, root, "run "+tool, "cdp "+tool) {
			t.Errorf("%s: no cdp %s primitive under its run:\n%s", root.Name, tool, otlptest.Dump(spans))
		}
	}
	rest := calls(spans, restTrace)[0]
	check(rest, "navigate", "named", "ok", true)
	if rest.TraceState != "ci=1" {
		t.Errorf("tracestate %q", rest.TraceState)
	}
	for _, c := range calls(spans, mcpTrace) {
		check(c, c.Attrs["gen_ai.tool.name"], "mcp", "ok", true)
	}
	check(calls(spans, metaTrace)[0], "navigate", "named", "POLICY_DENIED", false)

	// Nothing typed, visited or refused is in a span.
	for _, leak := range otlptest.Leaks(spans, secret, token, "token=", "signin", "denied.example", ln.Addr().String(), key) {
		t.Error(leak)
	}
}
