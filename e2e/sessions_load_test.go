package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/internal/testkit"
)

// TestHTTPSessionsDoNotSerialize: one session's call that the page holds
// up does not hold up another session's calls. Session A navigates to a
// page whose response the test withholds; while A waits, session B
// navigates, takes a snapshot and reads its page's text, all answered; only
// then is A's page released, and A's navigate completes. Nothing shared on
// the way (the server's dispatch, the policy, the one driver connection,
// the browser) may queue B behind A. Proved by order, not by time.
func TestHTTPSessionsDoNotSerialize(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	requested := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case requested <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Slow</title><p>slow page, released</p>`)
	})
	mux.HandleFunc("/quick", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Quick</title><p id="q">quick page answered</p>`)
	})
	base := testkit.Serve(t, mux)
	s := startLoadServer(t, fmt.Sprintf("e2e-serial-%d", time.Now().UnixNano()))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := dialLoad(ctx, s.url, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	b, err := dialLoad(ctx, s.url, "b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()

	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	aDone := make(chan answer, 1)
	go func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer ccancel()
		res, err := a.cs.CallTool(cctx, &sdk.CallToolParams{Name: "navigate", Arguments: map[string]any{"url": base + "/slow"}})
		aDone <- answer{res, err}
	}()
	select {
	case <-requested:
	case <-time.After(90 * time.Second):
		t.Fatal("session A's page was never requested")
	}
	for _, step := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"navigate", map[string]any{"url": base + "/quick"}, "/quick"},
		{"snapshot", nil, "quick page answered"},
		{"get_text", nil, "quick page answered"},
	} {
		res := mcpCall(t, b.cs, step.tool, step.args)
		if res.IsError || !strings.Contains(resultText(res), step.want) {
			t.Fatalf("session B's %s while A waits: %s", step.tool, resultText(res))
		}
	}
	select {
	case r := <-aDone:
		t.Fatalf("session A's navigate returned before its page was released: %v %v", r.err, r.res)
	default:
	}
	free()
	r := <-aDone
	if r.err != nil || r.res.IsError || !strings.Contains(resultText(r.res), "/slow") {
		t.Fatalf("session A's navigate after release: %v %s", r.err, resultText(r.res))
	}
}

// TestHTTPWarmedSessionsClosedEarly: sessions that end while their
// warm-up (context and first tab, opened after initialize) is still
// running leave nothing behind: once they are gone the server holds no
// more goroutines, descriptors, temp entries or processes than before.
func TestHTTPWarmedSessionsClosedEarly(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	base := echoSite(t)
	s := startLoadServer(t, fmt.Sprintf("e2e-warm-%d", time.Now().UnixNano()))
	runLoad(t, s.url, base, 1, func(i int) bool { return i < 1 })
	before := s.settle(s.footprint())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 6 {
		c, err := dialLoad(ctx, s.url, fmt.Sprintf("early%d", i))
		if err != nil {
			t.Fatal(err)
		}
		c.close() // at once: the warm-up is still opening the context
	}
	// And one that calls before its warm-up can have finished: the call
	// and the warm-up share the open, and the session works.
	c, err := dialLoad(ctx, s.url, "eager")
	if err != nil {
		t.Fatal(err)
	}
	res := mcpCall(t, c.cs, "navigate", map[string]any{"url": base + "/echo?s=eager&i=0"})
	if res.IsError || !strings.Contains(resultText(res), "echo?s=eager") {
		t.Fatalf("first call of a warming session: %s", resultText(res))
	}
	tabs := resultText(mcpCall(t, c.cs, "tabs_list", nil))
	if n := strings.Count(tabs, `"tab_id":`); n != 1 {
		t.Errorf("the warm-up and the first call opened %d tabs, want 1: %s", n, tabs)
	}
	c.close()
	after := s.settle(before)
	t.Logf("before: %v\nafter:  %v", before, after)
}
