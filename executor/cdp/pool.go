package cdp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// Pool spreads sessions across several remote browsers — Playwright
// browser servers and CDP endpoints — one Backend each. A session stays on
// the endpoint it was given while that endpoint lives; an endpoint that
// fails to open is taken out of rotation and retried with exponential
// backoff (1 s doubling to a minute). Nothing in a pool was launched by
// chromegate, so nothing is closed but what chromegate created.
//
// Pool is safe for concurrent use. Close may be called more than once.
type Pool struct {
	log     *slog.Logger
	members []*member

	mu     sync.Mutex
	assign map[string]*member // session → endpoint
}

type member struct {
	b        *Backend
	kind     string // "browser-server" | "cdp"
	endpoint string

	// guarded by Pool.mu
	sessions int
	failures int
	retryAt  time.Time
	lastErr  string
	lastOK   time.Time
	downFor  *instance // the dead browser already counted against it
}

var (
	_ executor.Backend           = (*Pool)(nil)
	_ interface{ Close() error } = (*Pool)(nil)
)

// Backoff bounds for an endpoint that failed.
const (
	poolBackoffMin = time.Second
	poolBackoffMax = time.Minute
)

// NewPool makes a Backend per endpoint from base (whose own endpoint
// fields are ignored).
func NewPool(base Options, browserEndpoints, cdpEndpoints []string) (*Pool, error) {
	if len(browserEndpoints)+len(cdpEndpoints) == 0 {
		return nil, errors.New("cdp: a pool needs at least one endpoint")
	}
	log := base.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Pool{log: log, assign: map[string]*member{}}
	add := func(kind, ep string, set func(*Options)) error {
		o := base
		o.CDPEndpoint, o.BrowserEndpoint, o.Isolated = "", "", false
		set(&o)
		b, err := New(o)
		if err != nil {
			return fmt.Errorf("%s endpoint %s: %w", kind, ep, err)
		}
		p.members = append(p.members, &member{b: b, kind: kind, endpoint: ep})
		return nil
	}
	for _, ep := range browserEndpoints {
		if err := add("browser-server", ep, func(o *Options) { o.BrowserEndpoint = ep }); err != nil {
			return nil, err
		}
	}
	for _, ep := range cdpEndpoints {
		if err := add("cdp", ep, func(o *Options) { o.CDPEndpoint = ep }); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Name is "cdp": the pool is the CDP backend, spread out.
func (p *Pool) Name() string { return "cdp" }

// Open returns session's executor on its endpoint, or places the session
// on the least-loaded endpoint in rotation, trying the others in turn
// when one fails.
func (p *Pool) Open(ctx context.Context, session string) (executor.Executor, error) {
	var fails []string
	tried := map[*member]bool{}
	for {
		m := p.pick(session, tried)
		if m == nil {
			break
		}
		tried[m] = true
		ex, err := m.b.Open(ctx, session)
		if err == nil {
			p.placed(session, m, ex)
			return ex, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		p.failed(session, m, err)
		fails = append(fails, m.endpoint+": "+executor.AsError(err).Message)
	}
	if len(fails) == 0 {
		return nil, executor.Errorf(executor.CodeNoBackend, "every browser endpoint is out of rotation after failing (%s)", p.summary()).
			WithHint("check the endpoints; each is retried with backoff, see chrome_status")
	}
	return nil, executor.Errorf(executor.CodeNoBackend, "no browser endpoint could serve the session (%s)", strings.Join(fails, "; ")).
		WithHint("check that the browser servers are up; chrome_status shows each endpoint's health")
}

// pick is the session's endpoint if it has one in rotation, else the
// least-loaded endpoint in rotation not tried yet.
func (p *Pool) pick(session string, tried map[*member]bool) *member {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if m := p.assign[session]; m != nil && !tried[m] && !now.Before(m.retryAt) {
		return m
	}
	var best *member
	for _, m := range p.members {
		if tried[m] || now.Before(m.retryAt) {
			continue
		}
		if best == nil || m.sessions < best.sessions {
			best = m
		}
	}
	return best
}

func (p *Pool) placed(session string, m *member, ex executor.Executor) {
	p.mu.Lock()
	m.failures, m.retryAt, m.lastErr, m.lastOK = 0, time.Time{}, "", time.Now()
	if p.assign[session] != m {
		if old := p.assign[session]; old != nil {
			old.sessions--
		}
		p.assign[session] = m
		m.sessions++
	}
	p.mu.Unlock()
	go func() {
		<-ex.Done()
		// The session ended because its endpoint went away: out of
		// rotation now, not when the next session fails to open there.
		// (A browser that goes away closes its pages and contexts first,
		// so its own death may come a moment after the session's.)
		if in := m.b.current(); in != nil {
			select {
			case <-in.deadCh:
				p.down(m, in)
			case <-time.After(2 * time.Second):
			}
		}
		p.mu.Lock()
		if p.assign[session] == m {
			delete(p.assign, session)
			m.sessions--
		}
		p.mu.Unlock()
	}()
}

// down counts an endpoint's dead browser once, however many sessions it
// took with it.
func (p *Pool) down(m *member, in *instance) {
	p.mu.Lock()
	if m.downFor == in {
		p.mu.Unlock()
		return
	}
	m.downFor = in
	m.failures++
	backoff := min(poolBackoffMin<<min(m.failures-1, 10), poolBackoffMax)
	m.retryAt = time.Now().Add(backoff)
	m.lastErr = in.deathReason()
	p.mu.Unlock()
	p.log.Warn("browser endpoint lost; out of rotation", "endpoint", m.endpoint, "retry_in", backoff.String(), "why", m.lastErr)
}

func (p *Pool) failed(session string, m *member, err error) {
	p.mu.Lock()
	m.failures++
	backoff := min(poolBackoffMin<<min(m.failures-1, 10), poolBackoffMax)
	m.retryAt = time.Now().Add(backoff)
	m.lastErr = executor.AsError(err).Message
	if p.assign[session] == m {
		delete(p.assign, session)
		m.sessions--
	}
	p.mu.Unlock()
	p.log.Warn("browser endpoint out of rotation", "endpoint", m.endpoint, "retry_in", backoff.String(), "err", err)
}

func (p *Pool) summary() string {
	var parts []string
	for _, h := range p.Health() {
		parts = append(parts, h.Endpoint+": "+h.LastError)
	}
	return strings.Join(parts, "; ")
}

// EndpointHealth is one endpoint's line in chrome_status.
type EndpointHealth struct {
	Endpoint  string     `json:"endpoint"`
	Kind      string     `json:"kind"`
	Healthy   bool       `json:"healthy"`
	Sessions  int        `json:"sessions"`
	Failures  int        `json:"failures,omitempty"`
	RetryAt   *time.Time `json:"retry_at,omitempty"`
	LastError string     `json:"last_error,omitempty"`
}

// Health reports every endpoint: in rotation or not, its sessions and its
// last failure.
func (p *Pool) Health() []EndpointHealth {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	out := make([]EndpointHealth, 0, len(p.members))
	for _, m := range p.members {
		h := EndpointHealth{Endpoint: m.endpoint, Kind: m.kind, Healthy: !now.Before(m.retryAt) && m.failures == 0,
			Sessions: m.sessions, Failures: m.failures, LastError: m.lastErr}
		if now.Before(m.retryAt) {
			at := m.retryAt.UTC()
			h.RetryAt = &at
		}
		out = append(out, h)
	}
	return out
}

// Close disconnects from every endpoint.
func (p *Pool) Close() error {
	var errs []error
	for _, m := range p.members {
		errs = append(errs, m.b.Close())
	}
	return errors.Join(errs...)
}
