package ext

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/executor/ext/bridge"
	"github.com/chromegate/chromegate/executor/ext/internal/fakeext"
	"github.com/chromegate/chromegate/executor/ext/wire"
)

// recorder is a Decider that denies hosts containing "evil" and keeps
// what it was asked; hold, when set, blocks each decision until closed.
type recorder struct {
	mu   sync.Mutex
	got  []egress.Request
	hold chan struct{}
}

func (r *recorder) DecideRequest(ctx context.Context, req *egress.Request) egress.Verdict {
	r.mu.Lock()
	r.got = append(r.got, *req)
	hold := r.hold
	r.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return egress.Verdict{Reason: "gave up"}
		}
	}
	if strings.Contains(req.URL, "evil") {
		return egress.Verdict{Reason: "evil is not allowed"}
	}
	return egress.Verdict{Allow: true}
}

func decideFrame(id string, req map[string]any) map[string]any {
	return map[string]any{"v": 1, "type": "decide", "id": id, "request": req}
}

func TestDecideFrames(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, nil)
	rec := &recorder{}
	bd := egress.NewBoundary(rec)
	NewBackend(b, BackendOptions{DataDir: t.TempDir(), Boundary: bd})
	f := fakeext.Dial(t, b.Port(), fakeext.ID)
	f.Hello(fakeext.Token(t, dataDir(b)))

	f.Send(decideFrame("d1", map[string]any{"url": "https://ok.test/page", "method": "get", "resourceType": "Document",
		"navigation": true, "topLevel": true, "frameOrigin": "https://ok.test", "pageOrigin": "https://ok.test"}))
	f.Send(decideFrame("d2", map[string]any{"url": "https://evil.test/x.png", "method": "GET", "resourceType": "image", "topLevel": true}))
	f.Send(decideFrame("d3", map[string]any{"url": ""}))
	f.Send(decideFrame("d4", map[string]any{"url": "https://ok.test/" + strings.Repeat("a", maxRequestURL)}))
	got := f.Decisions(4)
	if !got["d1"].Allow || got["d1"].Reason != "" {
		t.Errorf("d1 = %+v, want allowed", got["d1"])
	}
	if got["d2"].Allow || got["d2"].Reason != "evil is not allowed" {
		t.Errorf("d2 = %+v, want denied with the policy's reason", got["d2"])
	}
	for _, id := range []string{"d3", "d4"} {
		if got[id].Allow || got[id].Reason == "" {
			t.Errorf("%s = %+v, want denied with a reason", id, got[id])
		}
	}
	want := []egress.Request{
		{Session: "", URL: "https://ok.test/page", Method: "GET", ResourceType: "document", Navigation: true, TopLevel: true,
			FrameOrigin: "https://ok.test", PageOrigin: "https://ok.test", Via: egress.ViaExtension, Backend: BackendName},
		// a subresource is never top-level, whatever the frame says
		{Session: "", URL: "https://evil.test/x.png", Method: "GET", ResourceType: "image", Via: egress.ViaExtension, Backend: BackendName},
	}
	rec.mu.Lock()
	asked := rec.got
	rec.mu.Unlock()
	if diff := cmp.Diff(want, asked, cmpopts.SortSlices(func(a, b egress.Request) bool { return a.URL < b.URL }), cmpopts.IgnoreFields(egress.Request{}, "Addr")); diff != "" {
		t.Errorf("requests decided (-want +got):\n%s", diff)
	}
	for _, r := range asked {
		if r.Addr.IsValid() {
			t.Errorf("%s has an address %v: the extension cannot know it", r.URL, r.Addr)
		}
	}
	// the denial is the session's, for the call's result and the log
	ds := bd.Since("", 0)
	if len(ds) != 1 || ds[0].Host != "evil.test" || ds[0].Via != egress.ViaExtension {
		t.Errorf("denials recorded: %+v", ds)
	}
}

func TestDecideWithoutBoundary(t *testing.T) {
	t.Parallel()
	// A backend with a nil Boundary decides nothing: every request goes.
	b, _ := startBridge(t, nil)
	NewBackend(b, BackendOptions{DataDir: t.TempDir()})
	f := fakeext.Dial(t, b.Port(), fakeext.ID)
	f.Hello(fakeext.Token(t, dataDir(b)))
	f.Send(decideFrame("d1", map[string]any{"url": "https://evil.test/"}))
	if got := f.Decisions(1)["d1"]; !got.Allow {
		t.Errorf("a disabled boundary denied: %+v", got)
	}

	// A bridge no backend was built on has nothing to decide with: deny.
	b2, _ := startBridge(t, nil)
	f2 := fakeext.Dial(t, b2.Port(), fakeext.ID)
	f2.Hello(fakeext.Token(t, dataDir(b2)))
	f2.Send(decideFrame("d1", map[string]any{"url": "https://ok.test/"}))
	if got := f2.Decisions(1)["d1"]; got.Allow || got.Reason == "" {
		t.Errorf("a bridge without a boundary allowed: %+v", got)
	}
}

// A slow decision holds neither the read loop nor other frames, and the
// decisions in flight are bounded: past the bound a request is denied at
// once.
func TestDecideConcurrency(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, func(o *bridge.Options) { o.MaxDecisions = 2 })
	rec := &recorder{hold: make(chan struct{})}
	NewBackend(b, BackendOptions{DataDir: t.TempDir(), Boundary: egress.NewBoundary(rec)})
	f := fakeext.Dial(t, b.Port(), fakeext.ID)
	f.Hello(fakeext.Token(t, dataDir(b)))
	f.Send(decideFrame("d1", map[string]any{"url": "https://ok.test/1"}))
	f.Send(decideFrame("d2", map[string]any{"url": "https://ok.test/2"}))
	f.Send(decideFrame("d3", map[string]any{"url": "https://ok.test/3"}))
	f.Send(map[string]any{"v": 1, "type": "ping", "id": "p1"})
	// d3 is refused at once, and the ping answered, while d1 and d2 wait
	var sawPong bool
	var d3 wire.Frame
	for !sawPong || d3.ID == "" {
		fr, code := f.Read()
		if code != -1 {
			t.Fatalf("closed: %d", code)
		}
		switch {
		case fr.Type == wire.TypePong && fr.ID == "p1":
			sawPong = true
		case fr.Type == wire.TypeDecision && fr.ID == "d3":
			d3 = fr
		case fr.Type == wire.TypeDecision:
			t.Fatalf("%s was answered while its decision was held", fr.ID)
		}
	}
	if d3.Allow || !strings.Contains(d3.Reason, "too many") {
		t.Errorf("d3 = %+v, want denied: too many in flight", d3)
	}
	close(rec.hold)
	got := f.Decisions(2)
	if !got["d1"].Allow || !got["d2"].Allow {
		t.Errorf("held decisions: %+v", got)
	}
	// the slots are free again
	f.Send(decideFrame("d4", map[string]any{"url": "https://ok.test/4"}))
	if got := f.Decisions(1)["d4"]; !got.Allow {
		t.Errorf("d4 = %+v", got)
	}
}

func TestDecideWithoutRequestIsAProtocolError(t *testing.T) {
	t.Parallel()
	b, _ := startBridge(t, nil)
	NewBackend(b, BackendOptions{DataDir: t.TempDir()})
	f := fakeext.Dial(t, b.Port(), fakeext.ID)
	f.Hello(fakeext.Token(t, dataDir(b)))
	f.Send(map[string]any{"v": 1, "type": "decide", "id": "d1"})
	f.WantClose(wire.CloseProtocol)
}
