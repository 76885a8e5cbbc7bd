package mcp

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gobwas/glob"
	"golang.org/x/time/rate"

	"github.com/chromegate/chromegate/executor"
)

// A principal's limits — its tool ACL and its rate — are checked by the
// dispatch at every call (and every plugin step), so they live here with
// Principal; package httpapi only builds them from a key.

// ToolACL is a key's list of tool globs: a tool is allowed when it matches
// at least one plain glob (or there is none) and no "!" glob. "get_*" allows
// get_text and get_html; "*" with "!eval" allows everything but eval. Tool
// names have no separators, so * matches any run of characters.
//
// The ACL narrows what the policy allows; it never widens it. It filters
// tools/list and is checked again at every call.
type ToolACL struct {
	src   []string
	allow []*glob.Pattern
	deny  []*glob.Pattern
}

// NewToolACL compiles globs. No globs (or nil) allows every tool; a nil
// *ToolACL does too.
func NewToolACL(globs []string) (*ToolACL, error) {
	a := &ToolACL{src: globs}
	for _, g := range globs {
		neg := strings.HasPrefix(g, "!")
		pat := strings.TrimPrefix(g, "!")
		if strings.TrimSpace(pat) == "" {
			return nil, fmt.Errorf("tool glob %q is empty", g)
		}
		p, err := glob.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("tool glob %q: %w", g, err)
		}
		if neg {
			a.deny = append(a.deny, p)
		} else {
			a.allow = append(a.allow, p)
		}
	}
	return a, nil
}

// Allows reports whether the ACL lets a principal use the tool name.
func (a *ToolACL) Allows(name string) bool {
	if a == nil {
		return true
	}
	for _, p := range a.deny {
		if p.Match(name) {
			return false
		}
	}
	if len(a.allow) == 0 {
		return true
	}
	for _, p := range a.allow {
		if p.Match(name) {
			return true
		}
	}
	return false
}

// Covers reports whether every tool b allows is one a allows, by the
// globs' text (tool names are not all known in advance: plugins and page
// tools come and go). It holds when a allows every tool; otherwise each of
// b's plain globs must be one of a's plain globs, or a plain tool name
// (no glob characters) that a allows, and each of a's "!" globs must be
// one of b's. Some b that allow fewer tools are refused; none that allow
// more pass.
func (a *ToolACL) Covers(b *ToolACL) bool {
	if a == nil || len(a.src) == 0 {
		return true
	}
	aAllow, aDeny := a.globs()
	bAllow, bDeny := b.globs()
	for _, d := range aDeny {
		if !slices.Contains(bDeny, d) {
			return false
		}
	}
	if len(aAllow) == 0 {
		return true
	}
	if len(bAllow) == 0 {
		return false // b allows every tool but a's exclusions
	}
	for _, g := range bAllow {
		if slices.Contains(aAllow, g) {
			continue
		}
		if strings.ContainsAny(g, `*?[]{}\!`) || !a.Allows(g) {
			return false
		}
	}
	return true
}

// globs splits the ACL's source into plain and "!" globs (without the !).
func (a *ToolACL) globs() (allow, deny []string) {
	if a == nil {
		return nil, nil
	}
	for _, g := range a.src {
		if pat, ok := strings.CutPrefix(g, "!"); ok {
			deny = append(deny, pat)
		} else {
			allow = append(allow, g)
		}
	}
	return allow, deny
}

// String lists the globs.
func (a *ToolACL) String() string {
	if a == nil || len(a.src) == 0 {
		return "*"
	}
	return strings.Join(a.src, " ")
}

// ParseRate reads "N/min", "N/s" or "N/h" as calls per minute; "" and "0"
// are unlimited (0).
func ParseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return 0, nil
	}
	num, unit, ok := strings.Cut(s, "/")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return 0, fmt.Errorf("rate %q: want N/min, N/s or N/h", s)
	}
	switch unit {
	case "s", "sec":
		return float64(n) * 60, nil
	case "m", "min":
		return float64(n), nil
	case "h", "hour":
		return float64(n) / 60, nil
	}
	return 0, fmt.Errorf("rate %q: want N/min, N/s or N/h", s)
}

// RateLimit is one key's budget of tool calls: a token bucket that refills
// at the key's rate and holds a minute's worth, so a key may spend its
// minute in a burst but not more. The bucket is this process's, or, in a
// fleet, one in the shared RateStore that every replica charges.
type RateLimit struct {
	perMin float64
	lim    *rate.Limiter
	shared RateStore // nil: lim is the bucket
	id     string    // the bucket in shared
}

// RateStore holds rate limits that several processes charge together (a
// fleet's Redis). Take charges one call to the bucket id, of perMin calls a
// minute with burst calls at once; when the budget is spent it returns how
// long until the next call is allowed. An error means the store could not
// be asked: the call is refused (fail closed).
//
// Implementations must be safe for concurrent use.
type RateStore interface {
	Take(ctx context.Context, id string, perMin float64, burst int) (wait time.Duration, ok bool, err error)
}

// NewRateLimit returns a limit of perMin calls a minute.
func NewRateLimit(perMin float64) *RateLimit {
	burst := max(1, int(perMin))
	return &RateLimit{perMin: perMin, lim: rate.NewLimiter(rate.Limit(perMin/60), burst)}
}

// NewSharedRateLimit returns a limit of perMin calls a minute whose bucket,
// id, is in store.
func NewSharedRateLimit(store RateStore, id string, perMin float64) *RateLimit {
	r := NewRateLimit(perMin)
	r.shared, r.id = store, id
	return r
}

// Take spends one call. When the budget is spent it returns how long until
// the next call is allowed, and spends nothing. A shared limit that could
// not be charged is an error with CodeSharedState.
func (r *RateLimit) Take(ctx context.Context, now time.Time) (wait time.Duration, ok bool, err error) {
	if r.shared != nil {
		wait, ok, err := r.shared.Take(ctx, r.id, r.perMin, int(r.lim.Burst()))
		if err != nil {
			return 0, false, executor.Errorf(CodeSharedState, "the call could not be charged to the key's rate limit, which the replicas share: %v", err).
				WithHint("retry in a few seconds; if it persists, the operator's Redis is down").
				WithRetryAfter(2 * time.Second)
		}
		return wait, ok, nil
	}
	res := r.lim.ReserveN(now, 1)
	if !res.OK() {
		return time.Minute, false, nil
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false, nil
	}
	return 0, true, nil
}

// CodeSharedState is the error of a call that needs the state a fleet's
// replicas share (a rate limit, a session held by another replica) when
// that state cannot be reached: the call is refused, never let through.
const CodeSharedState executor.Code = "SHARED_STATE_UNAVAILABLE"

// PerMinute is the limit's rate, in calls a minute.
func (r *RateLimit) PerMinute() float64 { return r.perMin }

// String is the limit as a key shows it.
func (r *RateLimit) String() string {
	return strconv.FormatFloat(r.perMin, 'f', -1, 64) + "/min"
}

// CodeRateLimited is the error of a call over its key's rate limit.
const CodeRateLimited executor.Code = "RATE_LIMITED"

// rateLimited is the error of a call over p's rate. Its RetryAfter is the
// whole seconds its hint tells the model, so the hint, REST's Retry-After
// and the field agree.
func rateLimited(p Principal, wait time.Duration) *executor.Error {
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return executor.Errorf(CodeRateLimited, "key %s is over its limit of %s tool calls", p.Name, p.Rate).
		WithHint(fmt.Sprintf("retry in %d s; the limit counts every tool call of this key", secs)).
		WithRetryAfter(time.Duration(secs) * time.Second)
}

// Principal is who is calling: fed to the policy and to ListFilter.
type Principal struct {
	Name      string   `json:"name"`
	Roles     []string `json:"roles"`
	Transport string   `json:"transport"` // stdio | http | rest

	// Tools is the key's tool ACL (nil: every tool the policy allows). It
	// narrows tools/list and is checked again at every call.
	Tools *ToolACL `json:"-"`
	// Rate is the key's budget of tool calls (nil: unlimited).
	Rate *RateLimit `json:"-"`
	// Expires is when the key stops working (zero: never).
	Expires time.Time `json:"-"`
}

// LocalPrincipal is the one principal of a stdio server: the local user.
var LocalPrincipal = Principal{Name: "local", Transport: "stdio"}

// Tenant names p's own directories under the server's file roots
// (executor.TenantRoot): "" for stdio's principal, the machine's own user
// who runs the server and keeps the roots' top level; p's name for every
// principal over HTTP, keyless loopback callers included, so that no
// HTTP caller sees, guesses or reads another's files, or stdio's.
func (p Principal) Tenant() string {
	if p.Transport == LocalPrincipal.Transport {
		return ""
	}
	return p.Name
}
