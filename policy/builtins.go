package policy

import (
	"sort"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown/builtins"
	"github.com/open-policy-agent/opa/v1/types"

	"github.com/chromegate/chromegate/policy/hostname"
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
		return ast.InternedTerm(hostname.Match(string(p), h)), nil
	case *ast.Array:
		match := false
		err := p.Iter(func(t *ast.Term) error {
			s, err := builtinString(t, 1)
			if err == nil && !match {
				match = hostname.Match(s, h)
			}
			return err
		})
		return ast.InternedTerm(match), err
	case ast.Set:
		match := false
		err := p.Iter(func(t *ast.Term) error {
			s, err := builtinString(t, 1)
			if err == nil && !match {
				match = hostname.Match(s, h)
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
