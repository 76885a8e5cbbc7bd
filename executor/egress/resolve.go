package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path"
	"strings"
)

// Resolver turns a host into the address a connection will go to. It
// honours Chromium's --host-resolver-rules MAP rules, so that a proxy that
// resolves names itself maps them exactly as the browser would have (the
// tests' host names, an operator's pinning); every other name goes to the
// system resolver (which reads /etc/hosts). localhost and *.localhost are
// loopback without asking anyone, as in Chromium.
type Resolver struct {
	rules []mapRule
	// Lookup resolves a name; nil means net.DefaultResolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

type mapRule struct {
	pattern string // path.Match pattern over the lower-case host
	exclude bool
	to      string // an address, a host name, or ~NOTFOUND
}

// ErrNotFound is a host that does not resolve.
var ErrNotFound = errors.New("host not found")

// NewResolver reads the MAP and EXCLUDE rules of every
// --host-resolver-rules flag in args (later flags win, as in Chromium).
// An unusable rule is an error: a proxy that silently resolved a test host
// through DNS would decide on the wrong address.
func NewResolver(args []string) (*Resolver, error) {
	r := &Resolver{}
	for _, a := range args {
		v, ok := strings.CutPrefix(a, "--host-resolver-rules=")
		if !ok {
			continue
		}
		var rules []mapRule
		for _, part := range strings.Split(v, ",") {
			f := strings.Fields(part)
			switch {
			case len(f) == 0:
				continue
			case len(f) == 3 && strings.EqualFold(f[0], "MAP"):
				rules = append(rules, mapRule{pattern: strings.ToLower(f[1]), to: f[2]})
			case len(f) == 2 && strings.EqualFold(f[0], "EXCLUDE"):
				rules = append(rules, mapRule{pattern: strings.ToLower(f[1]), exclude: true})
			default:
				return nil, fmt.Errorf("--host-resolver-rules: cannot read %q (want MAP host address or EXCLUDE host)", strings.TrimSpace(part))
			}
			if _, err := path.Match(rules[len(rules)-1].pattern, ""); err != nil {
				return nil, fmt.Errorf("--host-resolver-rules: bad pattern in %q: %v", strings.TrimSpace(part), err)
			}
		}
		r.rules = rules
	}
	return r, nil
}

// Resolve returns the addresses host resolves to, best first. host is a
// URL host: an IP literal (IPv6 with or without brackets) or a name.
func (r *Resolver) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	for _, m := range r.rules {
		if ok, _ := path.Match(m.pattern, host); !ok {
			continue
		}
		if m.exclude {
			break
		}
		to, _, err := net.SplitHostPort(m.to)
		if err != nil {
			to = m.to
		}
		if to == "~NOTFOUND" {
			return nil, fmt.Errorf("%s: %w (mapped to ~NOTFOUND)", host, ErrNotFound)
		}
		if a, err := netip.ParseAddr(strings.Trim(to, "[]")); err == nil {
			return []netip.Addr{a.Unmap()}, nil
		}
		host = strings.ToLower(to)
		break
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	lookup := r.Lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		var de *net.DNSError
		if errors.As(err, &de) && de.IsNotFound {
			return nil, fmt.Errorf("%s: %w", host, ErrNotFound)
		}
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s: %w", host, ErrNotFound)
	}
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs, nil
}
