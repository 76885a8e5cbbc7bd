// Package egress is chromegate's request boundary: every request a driven
// page, frame or worker makes is described as a Request and decided by a
// Decider (the policy gate, policy/gate) before it leaves.
//
// Backends hook requests where they can see them and ask the same
// Boundary:
//
//   - The browser chromegate launches sends every request of every context
//     through Proxy, a forward proxy on loopback (--proxy-server with
//     <-loopback>, so loopback is proxied too; a listener per session).
//     The proxy resolves names itself, decides on the address it will
//     dial and dials exactly that address, so a name that resolves inward
//     is inward (DNS rebinding) and there is no gap between check and
//     connect. A proxy sees every channel the network stack has — documents,
//     frames, subresources, fetch, WebSocket, EventSource, beacons, pings,
//     prefetch, service workers, redirects (each hop is a new request) —
//     at the cost of one decision per connection or plain-http request,
//     cached, instead of a round trip through the Playwright driver per
//     request.
//   - Contexts the proxy cannot reach (a remote browser's own context, a
//     browser attached over CDP) are hooked per request through Playwright
//     routing; the extension pauses its tabs' requests through
//     chrome.debugger. Neither sees the resolved address; the README's
//     guarantees table says what each enforces.
//
// This package imports nothing of the policy: a Decider is handed in
// (cmd wires the policy gate, which implements it, so a request goes
// egress → gate → policy without passing through the MCP server). The
// backends import this package, and so never import the policy. The
// Boundary it wraps keeps, per session, the recent denials, so that the
// call that loaded a page can say what was blocked, and the network log can
// say why.
package egress

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Request is one request as a backend sees it before it leaves, and the
// one description of it all the way to the policy: the extension's decide
// frame decodes into it (wire.Frame.Request, by the JSON names below), the
// Boundary hands it to the Decider (the policy gate), and the policy
// builds its input document from it (policy.NewRequestInput). Session,
// Addr, Via and Backend are the server's to set, never a frame's: they
// have no JSON name.
type Request struct {
	// Session is the executor session whose browser context made it.
	Session string `json:"-"`
	// URL is the absolute URL requested. Through a proxy tunnel (https,
	// wss) only the origin is known: "https://host:port/".
	URL string `json:"url"`
	// Method is the HTTP method, "CONNECT" for a proxy tunnel.
	Method string `json:"method,omitempty"`
	// ResourceType is Playwright's name for what is fetched (document,
	// stylesheet, image, media, font, script, xhr, fetch, eventsource,
	// websocket, ping, manifest, other), or "unknown" where the hook cannot
	// tell (a proxy tunnel).
	ResourceType string `json:"resourceType,omitempty"`
	// Navigation is true for a document load in any frame (a tab, a popup,
	// an iframe); TopLevel for one in a tab's top frame.
	Navigation bool `json:"navigation,omitempty"`
	TopLevel   bool `json:"topLevel,omitempty"`
	// FrameOrigin and PageOrigin are the origins of the frame that made the
	// request and of its tab's top page, "" when the hook cannot tell.
	FrameOrigin string `json:"frameOrigin,omitempty"`
	PageOrigin  string `json:"pageOrigin,omitempty"`
	// Addr is the address the connection will be made to, when the hook
	// resolves names itself (the proxy); invalid otherwise.
	Addr netip.Addr `json:"-"`
	// Via names the hook: "proxy", "route" or "extension".
	Via string `json:"-"`
	// Backend is the executor backend ("cdp", "ext").
	Backend string `json:"-"`
}

// The hooks, for Request.Via.
const (
	ViaProxy     = "proxy"
	ViaRoute     = "route"
	ViaExtension = "extension"
)

// Verdict is a Decider's answer.
type Verdict struct {
	Allow bool
	// Reason is why a request was denied, in words for the model and the
	// log (the policy's first reason).
	Reason string
}

// Decider decides requests. Implementations must be safe for concurrent
// use, fail closed (any error is a denial) and return promptly: the page
// waits for the answer.
type Decider interface {
	DecideRequest(ctx context.Context, r *Request) Verdict
}

// DeciderFunc adapts a function to Decider.
type DeciderFunc func(ctx context.Context, r *Request) Verdict

// DecideRequest calls f.
func (f DeciderFunc) DecideRequest(ctx context.Context, r *Request) Verdict { return f(ctx, r) }

// DecideTimeout bounds one decision made on a page's behalf: the policy's
// own deadline is shorter; this one only stops a wedged Decider from
// hanging the page. A decision past it denies.
const DecideTimeout = 2 * time.Second

// Boundary is the Decider every hook calls: it decides through the policy's
// Decider and remembers, per session, the recent denials. A nil Boundary
// allows everything (the boundary is off: only tests and the benchmark's
// baseline run that way).
//
// Boundary is safe for concurrent use.
type Boundary struct {
	d Decider

	mu       sync.Mutex
	sessions map[string]*journal
}

// NewBoundary wraps d.
func NewBoundary(d Decider) *Boundary {
	return &Boundary{d: d, sessions: map[string]*journal{}}
}

// Enabled reports whether b decides anything.
func (b *Boundary) Enabled() bool { return b != nil && b.d != nil }

// DecideRequest decides r, records a denial, and never takes longer than
// DecideTimeout. A panic in the Decider is a denial.
func (b *Boundary) DecideRequest(ctx context.Context, r *Request) (v Verdict) {
	if !b.Enabled() {
		return Verdict{Allow: true}
	}
	defer func() {
		if p := recover(); p != nil {
			v = Verdict{Reason: "policy error: the request decision failed"}
			b.record(r, v)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, DecideTimeout)
	defer cancel()
	v = b.d.DecideRequest(ctx, r)
	if !v.Allow {
		if v.Reason == "" {
			v.Reason = "denied by policy"
		}
		b.record(r, v)
	}
	return v
}

// Denial is one denied request, as kept for reports.
type Denial struct {
	Seq    uint64
	Time   time.Time
	URL    string
	Host   string
	Method string
	Type   string
	// Navigation: the denied request was a document load (a tab's, a
	// frame's or a popup's), as far as the hook could tell.
	Navigation bool
	Via        string
	Reason     string
}

// journalSize bounds the denials kept per session.
const journalSize = 512

// journal is a ring of a session's recent denials.
type journal struct {
	seq  uint64
	ring [journalSize]Denial
}

func (b *Boundary) record(r *Request, v Verdict) {
	b.mu.Lock()
	defer b.mu.Unlock()
	j := b.sessions[r.Session]
	if j == nil {
		j = &journal{}
		b.sessions[r.Session] = j
	}
	j.seq++
	j.ring[j.seq%journalSize] = Denial{
		Seq: j.seq, Time: time.Now(), URL: r.URL, Host: HostOf(r.URL),
		Method: r.Method, Type: r.ResourceType, Navigation: r.Navigation, Via: r.Via, Reason: v.Reason,
	}
}

// Mark is the sequence number of a session's latest denial: the denials a
// call caused are those after the mark taken when it started.
func (b *Boundary) Mark(session string) uint64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if j := b.sessions[session]; j != nil {
		return j.seq
	}
	return 0
}

// Since returns the session's denials after mark, oldest first (at most
// the journal's size; older ones are gone).
func (b *Boundary) Since(session string, mark uint64) []Denial {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	j := b.sessions[session]
	if j == nil || j.seq <= mark {
		return nil
	}
	from := mark + 1
	if j.seq-mark > journalSize {
		from = j.seq - journalSize + 1
	}
	out := make([]Denial, 0, j.seq-from+1)
	for s := from; s <= j.seq; s++ {
		out = append(out, j.ring[s%journalSize])
	}
	return out
}

// Forget drops a session's journal (the session closed).
func (b *Boundary) Forget(session string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	delete(b.sessions, session)
	b.mu.Unlock()
}

// Summary is what a call's result says about the requests its page had
// denied: how many, and which hosts (at most MaxSummaryHosts, each once).
type Summary struct {
	Count int      `json:"count"`
	Hosts []string `json:"hosts"`
	More  int      `json:"more_hosts,omitempty"`
}

// MaxSummaryHosts caps the hosts a Summary names.
const MaxSummaryHosts = 5

// Summarize counts denials by host.
func Summarize(ds []Denial) *Summary {
	if len(ds) == 0 {
		return nil
	}
	s := &Summary{Count: len(ds), Hosts: []string{}}
	seen := map[string]bool{}
	for _, d := range ds {
		h := d.Host
		if h == "" {
			h = "(no host)"
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		if len(s.Hosts) < MaxSummaryHosts {
			s.Hosts = append(s.Hosts, h)
		} else {
			s.More++
		}
	}
	return s
}

// HostOf is the host of an absolute URL ("" when it has none), without
// userinfo or port, for reports. It never fails.
func HostOf(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if strings.HasPrefix(rest, "[") {
		if i := strings.IndexByte(rest, ']'); i >= 0 {
			return strings.ToLower(rest[:i+1])
		}
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return strings.ToLower(rest)
}
