package hostname

import (
	"net/netip"
	"strings"
	"sync"

	"github.com/gobwas/glob"
)

// compiled is a host pattern ready to match: exact for patterns without a
// wildcard, else a glob over '.'-separated labels.
type compiled struct {
	exact string
	any   bool // the pattern "*"
	g     *glob.Pattern
	bad   bool // the pattern could not be compiled: it matches nothing
}

// patterns caches compiled host patterns. Policies use a handful of
// patterns, so the cache stays small; it is bounded anyway so that a policy
// feeding it input cannot grow it without end.
var (
	patterns    sync.Map // string -> *compiled
	patternsMu  sync.Mutex
	patternsLen int
)

const maxCachedPatterns = 4096

// Match reports whether host matches a chromegate host pattern, the
// semantics of the policies' chromegate.host_match builtin:
//
//   - "example.com" matches only example.com;
//   - "*.example.com" matches a.example.com and a.b.example.com, at any
//     depth, but not example.com itself;
//   - "*" matches every host name;
//   - a "*" inside a label ("api-*.example.com") matches within that label;
//   - only "*" is special: every other character is literal.
//
// Both sides are lower-cased and lose trailing dots; Unicode labels in a
// pattern are converted to punycode, as hosts are. A wildcard pattern never
// matches an IP address: an address must be listed exactly (IPv6 in
// brackets or not, "::1" and "[::1]" are the same). An empty host matches
// nothing.
func Match(pattern, host string) bool {
	host = strings.TrimRight(strings.ToLower(host), ".")
	if host == "" {
		return false
	}
	c := compilePattern(pattern)
	switch {
	case c.bad:
		return false
	case c.g == nil && !c.any:
		return c.exact == host || c.exact == canonicalHost(host)
	case isIPLiteral(host):
		return false
	case c.any:
		return true
	}
	return c.g.Match(host)
}

func compilePattern(pattern string) *compiled {
	if v, ok := patterns.Load(pattern); ok {
		return v.(*compiled)
	}
	c := buildPattern(pattern)
	patternsMu.Lock()
	if patternsLen < maxCachedPatterns {
		if _, loaded := patterns.LoadOrStore(pattern, c); !loaded {
			patternsLen++
		}
	}
	patternsMu.Unlock()
	return c
}

func buildPattern(pattern string) *compiled {
	p := strings.TrimRight(strings.ToLower(strings.TrimSpace(pattern)), ".")
	switch {
	case p == "":
		return &compiled{bad: true}
	case p == "*":
		return &compiled{any: true}
	case !strings.Contains(p, "*"):
		return &compiled{exact: canonicalHost(p)}
	}
	labels := strings.Split(p, ".")
	var b strings.Builder
	for i, l := range labels {
		if i > 0 {
			b.WriteByte('.')
		}
		switch {
		case l == "*" && i == 0 && len(labels) > 1:
			b.WriteString("**") // any depth of subdomain
		case strings.Contains(l, "*"):
			parts := strings.Split(l, "*")
			for j, part := range parts {
				if j > 0 {
					b.WriteByte('*')
				}
				b.WriteString(glob.QuoteMeta(asciiLabel(part)))
			}
		default:
			b.WriteString(glob.QuoteMeta(asciiLabel(l)))
		}
	}
	g, err := glob.Compile(b.String(), '.')
	if err != nil {
		return &compiled{bad: true}
	}
	return &compiled{g: g}
}

// asciiLabel converts a Unicode label to punycode; ASCII passes unchanged.
func asciiLabel(l string) string {
	for i := 0; i < len(l); i++ {
		if l[i] >= 0x80 {
			if a, err := hostProfile.ToASCII(l); err == nil {
				return strings.ToLower(a)
			}
			return l
		}
	}
	return l
}

// canonicalHost normalises an exact pattern or a host as Parse (and so
// policy.ParseTarget) does, so that "::1", "[::1]" and "[0:0::1]" compare
// equal, as do "bücher.de" and "xn--bcher-kva.de". Anything that does not
// parse is returned as given.
func canonicalHost(h string) string {
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		h = "[" + h + "]"
	}
	if c, err := Parse(h, true); err == nil {
		return c
	}
	return h
}

// isIPLiteral reports whether a host is an IP address (IPv6 in brackets).
func isIPLiteral(h string) bool {
	if strings.HasPrefix(h, "[") {
		return true
	}
	if h == "" || h[len(h)-1] < '0' || h[len(h)-1] > '9' {
		// A normalised IPv4 host always ends in a digit.
		return false
	}
	_, err := netip.ParseAddr(h)
	return err == nil
}
