package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
)

// refDocFake is a backend whose refs with the token "fr" are a frame
// document's, at doc.
type refDocFake struct {
	*executortest.Fake
	doc  executor.FrameDoc
	err  error
	asks int
}

func (f *refDocFake) FrameDocument(context.Context, executor.FrameParams) (executor.FrameDoc, error) {
	return f.doc, f.err
}

func (f *refDocFake) RefDocument(_ context.Context, p executor.FrameParams) (executor.FrameDoc, error) {
	f.asks++
	if executor.RefToken(p.Ref) != "fr" {
		return executor.FrameDoc{Main: true}, nil
	}
	return f.doc, f.err
}

// A call by a frame's ref is decided on the frame's document too: a
// frame of a denied host is refused (its host fenced, never in the
// message), a gone one is what the backend says, and a main document's
// ref is decided on the page alone.
func TestGateDecidesFrameRefs(t *testing.T) {
	g := newPolicyGate(t, map[string]any{"allow_domains": []string{"allowed.test", "pay.test"}, "enable_mutations": true})
	on := func(args map[string]any, f *refDocFake) *Call {
		c := callFor(t, "click", args, "https://allowed.test/")
		c.ex = f
		return c
	}
	fake := func(doc executor.FrameDoc, err error) *refDocFake {
		return &refDocFake{Fake: executortest.New("fake", "s"), doc: doc, err: err}
	}
	allowed := fake(executor.FrameDoc{Doc: "fr", URL: "https://pay.test/w", Origin: "https://pay.test"}, nil)
	if err := gateBefore(t.Context(), g, on(map[string]any{"ref": "fr3"}, allowed)); err != nil {
		t.Errorf("a ref of an allowed frame: %v", err)
	}
	denied := fake(executor.FrameDoc{Doc: "fr", URL: "https://evil.test/x", Origin: "https://evil.test"}, nil)
	err := executor.AsError(gateBefore(t.Context(), g, on(map[string]any{"ref": "fr3"}, denied)))
	if err == nil || err.Code != executor.CodePolicyDenied || !strings.Contains(err.Page, "evil.test") || strings.Contains(err.Message+err.Hint, "evil.test") {
		t.Errorf("a ref of a denied frame: %#v", err)
	}
	// A frame's document that reads as opaque (a sandboxed frame, data:)
	// is never allowed.
	opaque := fake(executor.FrameDoc{Doc: "fr", URL: "about:srcdoc", Origin: executor.OpaqueOrigin}, nil)
	if err := gateBefore(t.Context(), g, on(map[string]any{"ref": "fr3"}, opaque)); executor.CodeOf(err) != executor.CodePolicyDenied {
		t.Errorf("a ref of an opaque frame: %v", err)
	}
	gone := fake(executor.FrameDoc{}, executor.Errorf(executor.CodeRefExpired, "gone"))
	if err := gateBefore(t.Context(), g, on(map[string]any{"ref": "fr3"}, gone)); executor.CodeOf(err) != executor.CodeRefExpired {
		t.Errorf("a ref of a gone frame: %v", err)
	}
	if err := gateBefore(t.Context(), g, on(map[string]any{"ref": "ma3"}, denied)); err != nil {
		t.Errorf("a main document's ref: %v", err)
	}
	// A selector asks nothing of the frames.
	sel := fake(executor.FrameDoc{}, nil)
	if err := gateBefore(t.Context(), g, on(map[string]any{"selector": "#a"}, sel)); err != nil || sel.asks != 0 {
		t.Errorf("a selector: %v, %d asks", err, sel.asks)
	}
	// drag: each end is decided.
	c := callFor(t, "drag", map[string]any{"from_ref": "ma1", "to_ref": "fr2"}, "https://allowed.test/")
	c.ex = denied
	if err := gateBefore(t.Context(), g, c); executor.CodeOf(err) != executor.CodePolicyDenied {
		t.Errorf("a drag onto a denied frame: %v", err)
	}
}
