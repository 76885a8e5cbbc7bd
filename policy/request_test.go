package policy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policies"
)

// requestIn is a script request from a page of example.com, as the proxy
// reports it; addr, when valid, is the address the proxy resolved.
func requestIn(t testing.TB, url string, addr netip.Addr) Input {
	t.Helper()
	in, err := NewRequestInput(&egress.Request{
		URL: url, Method: "GET", ResourceType: "script",
		FrameOrigin: "https://example.com", PageOrigin: "https://example.com", Via: "proxy",
		Addr: addr, Session: "s1", Backend: "cdp",
	}, Principal{Name: "test", Transport: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestReadsRequestURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       bool
	}{
		{"request.url", `x if startswith(input.request.url, "https://")`, true},
		{"request.url in a function", `f(u) if u == input.request.url
x if f("a")`, true},
		{"request whole", `x if { r := input.request; r.method == "GET" }`, true},
		{"request whole to a function", `f(r) if r.method == "GET"
x if f(input.request)`, true},
		{"input whole", `x if { i := input; i.tool == "a" }`, true},
		{"input whole to a builtin", `x if walk(input, [_, "secret"])`, true},
		{"input whole in some", `x if { some v in input; v == "a" }`, true},
		{"input[x]", `x if { some k; input[k] == "a" }`, true},
		{"request[x]", `x if { some k; input.request[k] == "a" }`, true},
		{"import input.request", `import input.request
x if request.method == "GET"`, true},
		{"import input.request as r", `import input.request as r
x if r.method == "GET"`, true},
		{"import input", `import input
x if input.tool == "a"`, true},
		{"import input.request.url", `import input.request.url
x if url == "a"`, true},
		{"object.get request url", `x if object.get(input.request, "url", "") == "a"`, true},
		{"object.get request whole", `x if object.get(input, "request", {}).method == "GET"`, true},
		{"object.get path to url", `x if object.get(input, ["request", "url"], "") == "a"`, true},
		{"object.get dynamic key", `x if { k := "url"; object.get(input.request, k, "") == "a" }`, true},
		{"object.get url in its default", `x if object.get(input, "tool", input.request.url) == "a"`, true},
		{"object.get statement form", `x if { object.get(input.request, "url", "", u); u == "a" }`, true},

		{"request.method only", `x if input.request.method == "GET"`, false},
		{"request fields by path", `x if { input.request.navigation == true; input.request.resource_type == "script" }`, false},
		{"object.get other keys", `x if { object.get(input, "tool", "") == "a"; object.get(input.request, "method", "") == "GET" }`, false},
		{"object.get path to method", `x if object.get(input, ["request", "method"], "") == "GET"`, false},
		{"import input.request.method", `import input.request.method
x if method == "GET"`, false},
		{"no input", `x := data.y`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := ast.ParseModuleWithOpts("p.rego", "package chromegate\n\n"+tt.body+"\n", ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				t.Fatal(err)
			}
			if got := readsRequestURL(map[string]*ast.Module{"p.rego": m}); got != tt.want {
				t.Errorf("readsRequestURL(%s) = %v, want %v", tt.body, got, tt.want)
			}
		})
	}
}

// TestShippedPoliciesCacheByOrigin checks that neither the default policy
// nor an example reads input.request.url: their request decisions are
// cached per origin, not per URL.
func TestShippedPoliciesCacheByOrigin(t *testing.T) {
	t.Parallel()
	if newEngine(t).CacheStats().ReadsURL {
		t.Error("the default policy reads input.request.url")
	}
	entries, err := fs.ReadDir(policies.Examples, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range entries {
		sub, err := fs.Sub(policies.Examples, ex.Name())
		if err != nil {
			t.Fatal(err)
		}
		if newEngine(t, WithFS(ex.Name(), sub)).CacheStats().ReadsURL {
			t.Errorf("example %s reads input.request.url", ex.Name())
		}
	}
}

func TestRequestDecisionFollowsReload(t *testing.T) {
	t.Parallel()
	allowHost := func(host string) string {
		return fmt.Sprintf(`decision := {"allow": true, "reasons": []} if input.target.host == %q

decision := {"allow": false, "reasons": ["not %s"]} if input.target.host != %q
`, host, host, host)
	}
	dir := policyDir(t, allowHost("a.test"))
	e := newEngine(t, WithDir(dir))
	ctx := t.Context()
	in := requestIn(t, "https://a.test/app.js", netip.Addr{})

	type got struct {
		Allow, Cached bool
	}
	decide := func() got {
		d, cached := e.DecideRequest(ctx, in)
		return got{d.Allow, cached}
	}
	if g := decide(); g != (got{true, false}) {
		t.Fatalf("first decision: %+v", g)
	}
	if g := decide(); g != (got{true, true}) {
		t.Fatalf("second decision: %+v, want it from the cache", g)
	}

	if err := os.WriteFile(filepath.Join(dir, "policy.rego"), []byte("package chromegate\n\n"+allowHost("b.test")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if g := decide(); g != (got{false, false}) {
		t.Errorf("after reload: %+v, want a fresh denial", g)
	}
	if g := decide(); g != (got{false, true}) {
		t.Errorf("after reload, again: %+v, want the denial from the cache", g)
	}
	if diff := cmp.Diff(CacheStats{Hits: 2, Misses: 2}, e.CacheStats()); diff != "" {
		t.Errorf("CacheStats (-want +got):\n%s", diff)
	}
	if s := e.Status().RequestCache; s.Hits != 2 || s.Misses != 2 {
		t.Errorf("Status().RequestCache = %+v", s)
	}
}

func TestRequestCacheKeysOnURLOnlyWhenRead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	public := requestIn(t, "https://a.test/public/app.js", netip.Addr{})
	private := requestIn(t, "https://a.test/private/keys.js?x=1", netip.Addr{})

	t.Run("reads url", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t, WithDir(policyDir(t, `decision := {"allow": true, "reasons": []} if not contains(input.request.url, "/private/")

decision := {"allow": false, "reasons": ["private"]} if contains(input.request.url, "/private/")`)))
		if !e.CacheStats().ReadsURL {
			t.Fatal("CacheStats().ReadsURL = false")
		}
		if d, _ := e.DecideRequest(ctx, public); !d.Allow {
			t.Errorf("public: %+v", d)
		}
		if d, cached := e.DecideRequest(ctx, private); d.Allow || cached {
			t.Errorf("private: %+v (cached %v), want a fresh denial", d, cached)
		}
		if d, cached := e.DecideRequest(ctx, public); !d.Allow || !cached {
			t.Errorf("public again: %+v (cached %v)", d, cached)
		}
	})
	t.Run("reads method", func(t *testing.T) {
		t.Parallel()
		e := newEngine(t, WithDir(policyDir(t, `decision := {"allow": input.request.method == "GET", "reasons": ["not GET"]}`)))
		if e.CacheStats().ReadsURL {
			t.Fatal("CacheStats().ReadsURL = true")
		}
		if d, _ := e.DecideRequest(ctx, public); !d.Allow {
			t.Errorf("public: %+v", d)
		}
		// The path cannot change this policy's answer: one origin, one entry.
		if d, cached := e.DecideRequest(ctx, private); !d.Allow || !cached {
			t.Errorf("private: %+v (cached %v), want the origin's decision from the cache", d, cached)
		}
	})
}

func TestRequestPolicyErrorsDenyAndAreNotCached(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, contains string }{
		{"evaluation error", `decision := {"allow": x, "reasons": []} if { input.phase == "request"; x := 1 / 0 }
decision := {"allow": true, "reasons": []} if input.phase != "request"`, "divide by zero"},
		{"undefined", `decision := {"allow": true, "reasons": []} if input.phase != "request"`, "undefined"},
		{"timeout", `decision := {"allow": count(slow) == 0, "reasons": []}
slow contains i * j if {
	input.phase == "request"
	some i in numbers.range(1, 20000)
	some j in numbers.range(1, 20000)
	i * j == -1
}`, "ran out of time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var log bytes.Buffer
			e := newEngine(t, WithDir(policyDir(t, tt.body)), WithTimeout(50*time.Millisecond), WithDecisionLog(&log))
			in := requestIn(t, "https://a.test/x.js", netip.Addr{})
			for i := range 2 {
				d, cached := e.DecideRequest(t.Context(), in)
				wantPolicyError(t, d, tt.contains)
				if cached {
					t.Errorf("decision %d came from the cache", i+1)
				}
			}
			if s := e.CacheStats(); s.Hits != 0 || s.Misses != 2 {
				t.Errorf("CacheStats = %+v, want 2 misses", s)
			}
			e.Close() // writes the count of the repeat (denials.go)
			if n := strings.Count(log.String(), "\n"); n != 2 {
				t.Errorf("%d decision log lines, want 2:\n%s", n, log.String())
			}
		})
	}
}

func TestRequestWithoutRequestOrTargetDenied(t *testing.T) {
	t.Parallel()
	e := newEngine(t, WithData(map[string]any{"all_domains": true}))
	in := requestIn(t, "https://a.test/", netip.Addr{})
	in.Request = nil
	d, cached := e.DecideRequest(t.Context(), in)
	wantPolicyError(t, d, "needs request and target")
	if cached {
		t.Error("cached")
	}
	var nilEngine *Engine
	d, _ = nilEngine.DecideRequest(t.Context(), requestIn(t, "https://a.test/", netip.Addr{}))
	wantPolicyError(t, d, "no policy engine")
}

// TestRequestDenialsAreDecisionLogged: a page makes hundreds of requests,
// so only denials reach the decision log, each time (cached or not), with
// the hook, the resource type, the address and the session, and never the
// URL's path or query.
func TestRequestDenialsAreDecisionLogged(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	e := newEngine(t, WithDecisionLog(&buf), WithData(map[string]any{"allow_domains": []string{"example.com"}}))
	ctx := t.Context()

	if d, _ := e.DecideRequest(ctx, requestIn(t, "https://cdn.example.net/lib.js", netip.MustParseAddr("93.184.216.34"))); !d.Allow {
		t.Fatalf("public subresource: %+v", d)
	}
	if d, _ := e.DecideRequest(ctx, requestIn(t, "https://example.com/app.js", netip.Addr{})); !d.Allow {
		t.Fatalf("allowed host: %+v", d)
	}
	if buf.Len() != 0 {
		t.Fatalf("allowed requests were logged: %s", buf.Bytes())
	}

	// A name that resolved to the cloud metadata address.
	rebound := requestIn(t, "http://metadata.example.net/latest/meta-data/?token=secret", netip.MustParseAddr("169.254.169.254"))
	for i, wantCached := range []bool{false, true} {
		d, cached := e.DecideRequest(ctx, rebound)
		if d.Allow || cached != wantCached {
			t.Fatalf("decision %d: %+v (cached %v)", i+1, d, cached)
		}
	}
	e.Close() // writes the count of the repeat (denials.go)
	if strings.Contains(buf.String(), "token=secret") || strings.Contains(buf.String(), "meta-data") {
		t.Errorf("the decision log holds the request's path or query:\n%s", buf.String())
	}
	var lines []LogEntry
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var le LogEntry
		if err := json.Unmarshal(sc.Bytes(), &le); err != nil {
			t.Fatalf("%v: %s", err, sc.Bytes())
		}
		lines = append(lines, le)
	}
	want := LogEntry{
		Phase: PhaseRequest, Principal: "test", Transport: "stdio", Action: ActionRequest,
		TargetHost: "metadata.example.net", Allow: false,
		Reasons: []string{"request to metadata.example.net is not allowed: metadata.example.net is a link-local address, allowed only when listed exactly in allow_domains"},
		Session: "s1", Via: "proxy", ResourceType: "script", Address: "169.254.169.254",
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want the first denial and the count of its repeat (2)", len(lines))
	}
	if lines[0].Count != 0 || lines[1].Count != 1 || lines[1].Until == nil {
		t.Errorf("counts %d, %d (until %v): want the first denial, then a count of 1", lines[0].Count, lines[1].Count, lines[1].Until)
	}
	for i, le := range lines {
		if le.Time.IsZero() {
			t.Errorf("line %d has no time", i+1)
		}
		le.Count, le.Until = 0, nil
		if diff := cmp.Diff(want, le, cmpIgnoreTiming); diff != "" {
			t.Errorf("line %d (-want +got):\n%s", i+1, diff)
		}
	}
}

// cmpIgnoreTiming leaves out of a LogEntry comparison what differs from
// run to run.
var cmpIgnoreTiming = cmp.Transformer("untimed", func(e LogEntry) LogEntry {
	e.Time, e.EvalMicros = time.Time{}, 0
	return e
})

// BenchmarkDecideRequest measures a request decision of the default policy
// answered from the cache and one evaluated (every request a new origin);
// the miss reports its time as a multiple of the hit's (miss/hit).
func BenchmarkDecideRequest(b *testing.B) {
	e, err := New(context.Background(), WithTimeout(10*time.Second),
		WithData(map[string]any{"allow_domains": []string{"example.com"}}))
	if err != nil {
		b.Fatal(err)
	}
	addr := netip.MustParseAddr("93.184.216.34")
	perOp := map[string]float64{}
	run := func(name string, inputs func(n int) []Input, wantCached bool) {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			ins := inputs(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d, cached := e.DecideRequest(ctx, ins[i%len(ins)])
				if !d.Allow || cached != wantCached {
					b.Fatalf("decision %+v, cached %v", d, cached)
				}
			}
			b.StopTimer()
			perOp[name] = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if hit := perOp["hit"]; name == "miss" && hit > 0 {
				b.ReportMetric(perOp[name]/hit, "miss/hit")
			}
		})
	}
	hit := requestIn(b, "https://cdn.example.net/lib.js?v=2", addr)
	e.DecideRequest(context.Background(), hit)
	run("hit", func(int) []Input { return []Input{hit} }, true)
	// Misses need a new cache key each time: a new origin (the default
	// policy does not read the URL's path). The cache starts afresh past
	// requestCacheSize entries, so no origin is seen twice.
	misses := 0
	run("miss", func(n int) []Input {
		ins := make([]Input, n)
		for i := range ins {
			misses++
			ins[i] = requestIn(b, fmt.Sprintf("https://h%d.example.net/lib.js", misses), addr)
		}
		return ins
	}, false)
}
