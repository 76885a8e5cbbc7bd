package policy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/chromegate/chromegate/executor/egress"
)

// Request is input.request: one request a page, frame or worker makes,
// decided in phase PhaseRequest before it leaves the browser. It is the
// policy's document of an egress.Request (NewRequestInput), not a second
// description of it: the URL normalised, the address as text.
type Request struct {
	// URL is the whole normalised URL requested. It is the only field of
	// a request input that holds a path or a query; a policy that reads
	// it makes the decision cache key on it too (see Engine.DecideRequest).
	URL string `json:"url"`
	// Method is the HTTP method; "CONNECT" for a proxy tunnel, where only
	// the origin is known.
	Method string `json:"method"`
	// ResourceType is Playwright's name for what is fetched: document,
	// stylesheet, image, media, font, script, xhr, fetch, eventsource,
	// websocket, ping, manifest, other; "unknown" when the hook cannot
	// tell.
	ResourceType string `json:"resource_type"`
	// Navigation is true for a document load in any frame (a tab, a
	// popup, an iframe); TopLevel for one in a tab's top frame.
	Navigation bool `json:"navigation"`
	TopLevel   bool `json:"top_level"`
	// FrameOrigin and PageOrigin are the origins of the frame that made
	// the request and of its tab's top page; "" when unknown.
	FrameOrigin string `json:"frame_origin"`
	PageOrigin  string `json:"page_origin"`
	// Address is the IP address the connection will be made to, when the
	// hook resolves names itself (the launched browser's proxy); "" when
	// it cannot see it (target.ip_class is then the URL's own).
	Address string `json:"address"`
	// Via names the hook: "proxy", "route", "extension" or "server" (a
	// fetch chromegate's server makes for download_file).
	Via string `json:"via"`
}

// NewRequestInput builds the input of a request decision from the request
// a hook saw (egress.Request, the one description of a request from the
// wire to here) and the principal that drives its session: phase and
// action "request", read_only true, empty args, input.request as r
// describes it, and input.target the request's origin (url
// "scheme://host[:port]/", scheme, host, port) with ip_class the class of
// the resolved address when there is one, else of the URL's host. The
// request's path and query are only in input.request.url. An unparsable
// URL is an error (deny it).
func NewRequestInput(r *egress.Request, p Principal) (Input, error) {
	t, err := ParseTarget(r.URL)
	if err != nil {
		return Input{}, fmt.Errorf("request url: %w", err)
	}
	req := Request{
		URL: t.URL, Method: r.Method, ResourceType: r.ResourceType,
		Navigation: r.Navigation, TopLevel: r.TopLevel,
		FrameOrigin: r.FrameOrigin, PageOrigin: r.PageOrigin, Via: r.Via,
	}
	if r.Addr.IsValid() {
		req.Address = r.Addr.Unmap().String()
		if t.IPClass != IPClassNone {
			t.IPClass = classifyIP(r.Addr)
		}
	}
	t.URL = originURL(t)
	if p.Roles == nil {
		p.Roles = []string{}
	}
	return Input{
		Version:   InputVersion,
		Phase:     PhaseRequest,
		Action:    ActionRequest,
		ReadOnly:  true,
		Target:    &t,
		Backend:   r.Backend,
		Principal: p,
		Request:   &req,
		Session:   r.Session,
	}, nil
}

// originURL is a target's URL cut to its origin and "/": for hosts only.
// A URL without a host (about:blank, data:) is kept whole up to its query,
// so a policy can still recognise it.
func originURL(t Target) string {
	if t.Host == "" {
		u, _, _ := strings.Cut(t.URL, "?")
		u, _, _ = strings.Cut(u, "#")
		return u
	}
	def, special := specialPorts[t.Scheme]
	if special && t.Port == def || t.Port == 0 {
		return t.Scheme + "://" + t.Host + "/"
	}
	return t.Scheme + "://" + t.Host + ":" + strconv.Itoa(t.Port) + "/"
}

func requestTerm(r *Request) *ast.Term {
	if r == nil {
		return ast.InternedNullTerm
	}
	return ast.ObjectTerm(
		ast.Item(ast.InternedTerm("url"), ast.StringTerm(r.URL)),
		ast.Item(ast.InternedTerm("method"), strTerm(r.Method)),
		ast.Item(ast.InternedTerm("resource_type"), strTerm(r.ResourceType)),
		ast.Item(ast.InternedTerm("navigation"), ast.InternedTerm(r.Navigation)),
		ast.Item(ast.InternedTerm("top_level"), ast.InternedTerm(r.TopLevel)),
		ast.Item(ast.InternedTerm("frame_origin"), strTerm(r.FrameOrigin)),
		ast.Item(ast.InternedTerm("page_origin"), strTerm(r.PageOrigin)),
		ast.Item(ast.InternedTerm("address"), strTerm(r.Address)),
		ast.Item(ast.InternedTerm("via"), strTerm(r.Via)),
	)
}

// readsRequestURL reports whether a policy can read input.request.url: a
// reference to it, or to input.request or input as a whole (bound to a
// variable, passed to a function, imported), or a dynamic key at either
// level. object.get with a constant key (or path) counts as the reference
// it spells, so object.get(input, "tool", "") reads input.tool only. When
// the policy cannot read the URL, the request's path and query cannot
// change a decision, and the cache keys on the origin alone. Conservative:
// any doubt says true.
func readsRequestURL(modules map[string]*ast.Module) bool {
	reads := false
	var vis *ast.GenericVisitor
	vis = ast.NewGenericVisitor(func(x any) bool {
		if reads {
			return true
		}
		switch x := x.(type) {
		case ast.Ref: // import paths are refs too
			reads = refReadsURL(x)
			return reads
		case ast.Call:
			return objectGet(x, vis, &reads)
		case *ast.Expr:
			if terms, ok := x.Terms.([]*ast.Term); ok && x.IsCall() && objectGet(terms, vis, &reads) {
				for _, w := range x.With {
					vis.Walk(w)
				}
				return true
			}
		}
		return false
	})
	for _, m := range modules {
		vis.Walk(m)
		if reads {
			return true
		}
	}
	return false
}

// refReadsURL reports whether a reference can reach input.request.url.
func refReadsURL(r ast.Ref) bool {
	if len(r) == 0 || !r[0].Equal(ast.InputRootDocument) {
		return false
	}
	for i, want := range []ast.String{"request", "url"} {
		if len(r) == i+1 {
			return true // input or input.request as a whole
		}
		k, ok := r[i+1].Value.(ast.String)
		if !ok {
			return true // a key only known when evaluated
		}
		if k != want {
			return false
		}
	}
	return true
}

// objectGet handles a call term list: when it is object.get on a constant
// reference rooted at input with a constant key or path, it sets *reads as
// for the reference they spell, walks the default value, and reports that
// the call's terms need no other walk. Any other call is left to the
// visitor (false), which looks at each argument as it is.
func objectGet(terms []*ast.Term, vis *ast.GenericVisitor, reads *bool) bool {
	if op, ok := terms[0].Value.(ast.Ref); !ok || len(terms) < 4 || !op.Equal(ast.ObjectGet.Ref()) {
		return false
	}
	obj, ok := terms[1].Value.(ast.Ref)
	if !ok || !obj[0].Equal(ast.InputRootDocument) || !obj.IsGround() {
		return false
	}
	path := obj.Copy()
	switch k := terms[2].Value.(type) {
	case ast.String:
		path = path.Append(ast.NewTerm(k))
	case *ast.Array:
		if !k.IsGround() {
			return false
		}
		for i := range k.Len() {
			path = path.Append(k.Elem(i))
		}
	default:
		return false
	}
	*reads = refReadsURL(path)
	for _, t := range terms[3:] {
		vis.Walk(t)
	}
	return true
}

// requestCacheSize bounds the decisions cached per policy revision; past it
// the cache starts afresh (a page's requests repeat a few keys many times).
const requestCacheSize = 8192

// requestCache holds request decisions of one loaded policy. It lives in
// the policy's state, so a reload starts with an empty cache at once.
type requestCache struct {
	readsURL bool
	mu       sync.RWMutex
	m        map[string]Decision
}

func newRequestCache(readsURL bool) *requestCache {
	return &requestCache{readsURL: readsURL, m: make(map[string]Decision, 256)}
}

// key is every field of a request input the policy can read (input.flow
// is empty: DecideRequest does not cache a request that carries one), with the
// request URL only when the policy reads it (readsRequestURL); the target
// is already the origin. Fields are separated by a byte no URL, name or
// origin holds.
func (c *requestCache) key(in *Input) string {
	var b strings.Builder
	r, t := in.Request, in.Target
	n := 96 + len(t.Host) + len(r.FrameOrigin) + len(r.PageOrigin) + len(in.Principal.Name) + len(in.Session)
	if c.readsURL {
		n += len(r.URL)
	}
	b.Grow(n)
	sep := func(s string) { b.WriteString(s); b.WriteByte(0) }
	sep(in.Principal.Name)
	for _, role := range in.Principal.Roles {
		b.WriteString(role)
		b.WriteByte(1)
	}
	b.WriteByte(0)
	sep(in.Principal.Transport)
	sep(in.Session)
	sep(in.Backend)
	sep(t.Scheme)
	sep(t.Host)
	b.WriteString(strconv.Itoa(t.Port))
	b.WriteByte(0)
	sep(t.IPClass)
	sep(r.Method)
	sep(r.ResourceType)
	if r.Navigation {
		b.WriteByte('n')
	}
	if r.TopLevel {
		b.WriteByte('t')
	}
	b.WriteByte(0)
	sep(r.FrameOrigin)
	sep(r.PageOrigin)
	sep(r.Address)
	sep(r.Via)
	for _, o := range in.ReadOrigins {
		b.WriteString(o)
		b.WriteByte(1)
	}
	b.WriteByte(0)
	if c.readsURL {
		b.WriteString(r.URL)
	} else if t.Host == "" {
		b.WriteString(t.URL) // about:blank, data: — the origin URL is the URL
	}
	return b.String()
}

func (c *requestCache) get(k string) (Decision, bool) {
	c.mu.RLock()
	d, ok := c.m[k]
	c.mu.RUnlock()
	return d, ok
}

func (c *requestCache) put(k string, d Decision) {
	c.mu.Lock()
	if len(c.m) >= requestCacheSize {
		clear(c.m)
	}
	c.m[k] = d
	c.mu.Unlock()
}

// CacheStats counts request decisions answered from the cache and
// evaluated, since the engine started.
type CacheStats struct {
	Hits   uint64 `json:"hits"`
	Misses uint64 `json:"misses"`
	// ReadsURL reports that the policy in force reads input.request.url,
	// so the cache keys on whole URLs rather than origins.
	ReadsURL bool `json:"reads_url"`
}

type cacheCounters struct{ hits, misses atomic.Uint64 }

// DecideRequest decides a request input (NewRequestInput). Decisions are
// cached for the policy revision in force, keyed by every field the policy
// can read (the request URL only when the policy reads it), so a reload
// changes the answer at once. Errors and timeouts deny, as in Decide, and
// are never cached. Denials are written to the decision log, cached or
// not; allowed requests are not (a page makes hundreds).
func (e *Engine) DecideRequest(ctx context.Context, in Input) (d Decision, cached bool) {
	if e == nil {
		return denyError("no policy engine"), false
	}
	if in.Request == nil || in.Target == nil {
		return denyError("a request input needs request and target"), false
	}
	st := e.cur.Load()
	if len(in.Flow) > 0 {
		// A request that carries what the model read is rare and
		// particular: decided every time, never cached.
		e.cache.misses.Add(1)
		d = e.decide(ctx, st, in)
		if !d.Allow {
			e.logged(st, time.Now(), in, d)
		}
		return d, false
	}
	k := st.requests.key(&in)
	if d, ok := st.requests.get(k); ok {
		e.cache.hits.Add(1)
		if !d.Allow {
			e.logged(st, time.Now(), in, d)
		}
		return d, true
	}
	e.cache.misses.Add(1)
	d = e.decide(ctx, st, in)
	if !strings.HasPrefix(firstReason(d), policyErrorPrefix) {
		st.requests.put(k, Decision{Allow: d.Allow, Reasons: d.Reasons, Hints: d.Hints})
	}
	if !d.Allow {
		e.logged(st, time.Now(), in, d)
	}
	return d, false
}

// CacheStats reports the request cache's counters.
func (e *Engine) CacheStats() CacheStats {
	return CacheStats{Hits: e.cache.hits.Load(), Misses: e.cache.misses.Load(), ReadsURL: e.cur.Load().requests.readsURL}
}
