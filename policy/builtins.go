package policy

import (
	"net/netip"
	"sort"
	"strings"
	"sync"

	"github.com/gobwas/glob"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown/builtins"
	"github.com/open-policy-agent/opa/v1/types"
)

// RemovedBuiltins are the OPA builtins chromegate policies cannot call, and
// why. A policy that calls one fails to load, naming it and where.
var RemovedBuiltins = map[string]string{
	"http.send":          "it reaches the network",
	"net.lookup_ip_addr": "it reaches DNS",
	"opa.runtime":        "it exposes the host's environment and configuration",
	"net.cidr_expand":    "its output can be too large to bound by the evaluation deadline",
}

// HostMatchName and ParseURLName are chromegate's own Rego builtins.
const (
	HostMatchName = "chromegate.host_match"
	ParseURLName  = "chromegate.parse_url"
)

var (
	hostMatchDecl = &rego.Function{
		Name:        HostMatchName,
		Description: "Reports whether a host matches a chromegate host pattern, or any of an array or set of them: *.example.com matches any depth of subdomain, example.com only itself, * every host name; case-insensitive; wildcards never match IP addresses.",
		Decl: types.NewFunction(types.Args(
			types.Named("patterns", types.NewAny(types.S, types.NewArray(nil, types.S), types.NewSet(types.S))).Description("a pattern, or an array or set of patterns"),
			types.Named("host", types.S),
		), types.Named("result", types.B)),
		Nondeterministic: false,
	}
	parseURLDecl = &rego.Function{
		Name:        ParseURLName,
		Description: "Parses and normalises a URL the way chromegate builds input.target: an object with url, scheme, host, port and ip_class; undefined when the URL is invalid.",
		Decl: types.NewFunction(types.Args(types.Named("url", types.S)),
			types.Named("target", types.NewObject(nil, types.NewDynamicProperty(types.S, types.A)))),
	}
)

// regoFunctions are the rego options that install chromegate's builtins.
func regoFunctions() []func(*rego.Rego) {
	return []func(*rego.Rego){
		rego.Function2(hostMatchDecl, hostMatchBuiltin),
		rego.Function1(parseURLDecl, parseURLBuiltin),
	}
}

func astBuiltin(f *rego.Function) *ast.Builtin {
	return &ast.Builtin{Name: f.Name, Description: f.Description, Decl: f.Decl}
}

// capabilities is OPA's own set for this version minus RemovedBuiltins,
// plus chromegate's builtins, with no network access at all (AllowNet
// empty, which also stops JSON-schema $ref fetching).
var capabilities = sync.OnceValue(func() *ast.Capabilities {
	c := ast.CapabilitiesForThisVersion()
	kept := c.Builtins[:0]
	for _, b := range c.Builtins {
		if _, removed := RemovedBuiltins[b.Name]; !removed {
			kept = append(kept, b)
		}
	}
	c.Builtins = append(kept, astBuiltin(hostMatchDecl), astBuiltin(parseURLDecl))
	sort.Slice(c.Builtins, func(i, j int) bool { return c.Builtins[i].Name < c.Builtins[j].Name })
	c.AllowNet = []string{}
	return c
})

func hostMatchBuiltin(_ rego.BuiltinContext, a, b *ast.Term) (*ast.Term, error) {
	h, err := builtinString(b, 2)
	if err != nil {
		return nil, err
	}
	switch p := a.Value.(type) {
	case ast.String:
		return ast.InternedTerm(HostMatch(string(p), h)), nil
	case *ast.Array:
		match := false
		err := p.Iter(func(t *ast.Term) error {
			s, err := builtinString(t, 1)
			if err == nil && !match {
				match = HostMatch(s, h)
			}
			return err
		})
		return ast.InternedTerm(match), err
	case ast.Set:
		match := false
		err := p.Iter(func(t *ast.Term) error {
			s, err := builtinString(t, 1)
			if err == nil && !match {
				match = HostMatch(s, h)
			}
			return err
		})
		return ast.InternedTerm(match), err
	}
	return nil, builtins.NewOperandTypeErr(1, a.Value, "string", "array of strings", "set of strings")
}

func parseURLBuiltin(_ rego.BuiltinContext, a *ast.Term) (*ast.Term, error) {
	s, err := builtinString(a, 1)
	if err != nil {
		return nil, err
	}
	t, err := ParseTarget(s)
	if err != nil {
		return nil, nil // undefined: the policy decides what an invalid URL means
	}
	return ast.ObjectTerm(targetItems(t)...), nil
}

func builtinString(t *ast.Term, pos int) (string, error) {
	s, ok := t.Value.(ast.String)
	if !ok {
		return "", builtins.NewOperandTypeErr(pos, t.Value, "string")
	}
	return string(s), nil
}

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

// HostMatch reports whether host matches a chromegate host pattern, the
// semantics of the chromegate.host_match builtin:
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
func HostMatch(pattern, host string) bool {
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

// canonicalHost normalises an exact pattern or a host the way ParseTarget
// normalises hosts, so that "::1", "[::1]" and "[0:0::1]" compare equal, as
// do "bücher.de" and "xn--bcher-kva.de". Anything that does not parse is
// returned as given.
func canonicalHost(h string) string {
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		h = "[" + h + "]"
	}
	if c, _, err := parseHost(h, true); err == nil {
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

// targetItems is a Target as Rego object items.
func targetItems(t Target) [][2]*ast.Term {
	return [][2]*ast.Term{
		{ast.InternedTerm("url"), strTerm(t.URL)},
		{ast.InternedTerm("scheme"), strTerm(t.Scheme)},
		{ast.InternedTerm("host"), ast.StringTerm(t.Host)},
		{ast.InternedTerm("port"), ast.InternedTerm(t.Port)},
		{ast.InternedTerm("ip_class"), strTerm(t.IPClass)},
	}
}
