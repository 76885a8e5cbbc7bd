package policy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/chromegate/chromegate/policy/hostname"
)

// Target is a URL as the browser will see it: the parsed, normalised form a
// policy decides on. It is the "target" of the input document (where a
// navigation or a download will go) and the basis of its "page".
type Target struct {
	// URL is the normalised URL: scheme and host lower-case, userinfo and a
	// default port removed, tabs and newlines dropped, backslashes turned
	// into slashes for the special schemes. Path, query and fragment are
	// otherwise as given.
	URL string `json:"url"`
	// Scheme is lower-case, without the colon.
	Scheme string `json:"scheme"`
	// Host is lower-case ASCII (IDNA, punycode), without a trailing dot.
	// IPv4 addresses are dotted decimal whatever form they were written in;
	// IPv6 addresses are compressed and in brackets ("[::1]"). Empty when
	// the URL has no host (about:, data:, javascript:, file:///...).
	Host string `json:"host"`
	// Port is the explicit or default port (http 80, https 443, ws 80,
	// wss 443, ftp 21); 0 when the scheme has none.
	Port int `json:"port"`
	// IPClass classifies Host; one of the IPClass* constants.
	IPClass string `json:"ip_class"`
}

// The values of Target.IPClass.
const (
	// IPClassLoopback: 127/8, ::1, 0.0.0.0 and the unspecified address
	// (Chromium maps them to this machine), localhost and *.localhost
	// (Chromium resolves them itself, never through DNS).
	IPClassLoopback = "loopback"
	// IPClassPrivate: RFC 1918, CGNAT 100.64/10, IPv6 ULA fc00::/7, and
	// other non-global ranges (benchmarking, reserved, multicast).
	IPClassPrivate = "private"
	// IPClassLinkLocal: 169.254/16 (cloud metadata lives here) and fe80::/10.
	IPClassLinkLocal = "link_local"
	// IPClassPublic: any other IP address.
	IPClassPublic = "public"
	// IPClassUnresolved: a host name. chromegate never resolves names, so
	// a name that DNS maps to a private address is still "unresolved".
	IPClassUnresolved = "unresolved"
	// IPClassNone: the URL has no host.
	IPClassNone = "none"
)

// ErrBadURL is wrapped by every error ParseTarget returns.
var ErrBadURL = hostname.ErrBadURL

// specialPorts lists the WHATWG special schemes (except file) and their
// default ports.
var specialPorts = map[string]int{"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

// maxURLLength bounds the input; Chromium refuses URLs over 2 MiB.
const maxURLLength = 2 << 20

// ParseTarget parses and normalises raw the way Chromium will before it
// loads it, so that a policy decides on the host the browser will actually
// contact. It follows the WHATWG URL standard for the parts that matter to
// a host decision: leading and trailing C0 controls and spaces are
// stripped, tabs and newlines removed, the scheme and host lower-cased,
// userinfo dropped, backslashes read as slashes for special schemes, the
// host percent-decoded and mapped through IDNA, IPv4 hosts in decimal,
// octal, hex or short form ("http://2130706433/", "http://0x7f.1/",
// "http://127.1/") read as the address they denote, IPv4-mapped IPv6
// classified as the IPv4 address, and trailing dots removed.
//
// A relative URL (no scheme) and anything the browser would refuse is an
// error wrapping ErrBadURL. ParseTarget never panics.
func ParseTarget(raw string) (Target, error) {
	if len(raw) > maxURLLength {
		return Target{}, fmt.Errorf("%w: longer than %d bytes", ErrBadURL, maxURLLength)
	}
	s := cleanURL(raw)
	scheme, rest, ok := splitScheme(s)
	if !ok {
		return Target{}, fmt.Errorf("%w: %q has no scheme (write it as https://%s)", ErrBadURL, clip(raw), clip(strings.TrimLeft(raw, "/")))
	}
	switch {
	case scheme == "file":
		return parseFile(rest)
	case specialPorts[scheme] != 0:
		return parseSpecial(scheme, rest)
	case scheme == "blob" || scheme == "filesystem":
		return parseWrapped(scheme, rest)
	default:
		return parseOpaque(scheme, rest)
	}
}

// cleanURL strips leading and trailing C0 controls and spaces and removes
// every tab and newline, as the WHATWG parser does first.
func cleanURL(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	if strings.ContainsAny(s, "\t\n\r") {
		s = strings.Map(func(r rune) rune {
			if r == '\t' || r == '\n' || r == '\r' {
				return -1
			}
			return r
		}, s)
	}
	return s
}

// splitScheme returns the lower-cased scheme and what follows its colon.
func splitScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(s[:i]), s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// splitAuthority splits after-slashes text at the first of the given
// terminators into the authority and the rest (path, query, fragment).
func splitAuthority(s, terminators string) (authority, rest string) {
	if i := strings.IndexAny(s, terminators); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

func parseSpecial(scheme, rest string) (Target, error) {
	// Special schemes ignore any run of slashes and backslashes before the
	// authority, including none at all ("http:example.com").
	rest = strings.TrimLeft(rest, `/\`)
	authority, tail := splitAuthority(rest, `/\?#`)
	host, port := splitHostPort(authority)
	if host == "" {
		return Target{}, fmt.Errorf("%w: no host", ErrBadURL)
	}
	h, class, err := parseHost(host, true)
	if err != nil {
		return Target{}, err
	}
	def := specialPorts[scheme]
	p := def
	if port != "" {
		p, err = parsePort(port)
		if err != nil {
			return Target{}, err
		}
	}
	path, query := splitPath(tail)
	path = strings.ReplaceAll(path, `\`, "/")
	if path == "" {
		path = "/"
	}
	var b strings.Builder
	b.Grow(len(scheme) + len(h) + len(path) + len(query) + 10)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(h)
	if p != def {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(p))
	}
	b.WriteString(path)
	b.WriteString(query)
	return Target{URL: b.String(), Scheme: scheme, Host: h, Port: p, IPClass: class}, nil
}

// splitPath separates the path from the query and fragment.
func splitPath(tail string) (path, query string) {
	if i := strings.IndexAny(tail, "?#"); i >= 0 {
		return tail[:i], tail[i:]
	}
	return tail, ""
}

// splitHostPort drops userinfo (everything up to the last '@', as browsers
// do) and splits host and port at the first colon outside brackets.
func splitHostPort(authority string) (host, port string) {
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	inBrackets := false
	for i := 0; i < len(authority); i++ {
		switch authority[i] {
		case '[':
			inBrackets = true
		case ']':
			inBrackets = false
		case ':':
			if !inBrackets {
				return authority[:i], authority[i+1:]
			}
		}
	}
	return authority, ""
}

func parsePort(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: port %q is not a number", ErrBadURL, clip(s))
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, fmt.Errorf("%w: port %q is out of range", ErrBadURL, clip(s))
		}
	}
	return n, nil
}

func parseFile(rest string) (Target, error) {
	// file: URLs have a host only after two slashes; "localhost" means none.
	// The host never matters to policy (the scheme is what decides), but it
	// is normalised like any other.
	var host, tail string
	r := strings.ReplaceAll(rest, `\`, "/")
	if strings.HasPrefix(r, "//") {
		host, tail = splitAuthority(r[2:], "/?#")
	} else {
		tail = r
	}
	h, class := "", IPClassNone
	if host != "" && !strings.EqualFold(host, "localhost") {
		var err error
		h, class, err = parseHost(host, true)
		if err != nil {
			return Target{}, err
		}
	}
	if !strings.HasPrefix(tail, "/") {
		tail = "/" + tail
	}
	return Target{URL: "file://" + h + tail, Scheme: "file", Host: h, IPClass: class}, nil
}

// parseWrapped handles blob: and filesystem: URLs, whose origin is that of
// the URL they wrap when it is http(s).
func parseWrapped(scheme, rest string) (Target, error) {
	inner, err := ParseTarget(rest)
	if err != nil || (inner.Scheme != "http" && inner.Scheme != "https") {
		// An opaque origin: no host to decide on.
		return Target{URL: scheme + ":" + rest, Scheme: scheme, IPClass: IPClassNone}, nil
	}
	return Target{URL: scheme + ":" + inner.URL, Scheme: scheme, Host: inner.Host, Port: inner.Port, IPClass: inner.IPClass}, nil
}

// parseOpaque handles every other scheme: about:, data:, javascript:,
// chrome:, chrome-extension:, devtools:, view-source: and unknown ones. A
// host is read only after "//"; one that is not a valid host leaves Host
// empty instead of failing, so that the policy still sees the scheme and
// can name it in its reason.
func parseOpaque(scheme, rest string) (Target, error) {
	opaque := Target{URL: scheme + ":" + rest, Scheme: scheme, IPClass: IPClassNone}
	if !strings.HasPrefix(rest, "//") {
		return opaque, nil
	}
	authority, tail := splitAuthority(rest[2:], "/?#")
	host, port := splitHostPort(authority)
	p, err := parsePort(port)
	if err != nil || host == "" {
		return opaque, nil
	}
	h, class, err := parseHost(host, false)
	if err != nil {
		return opaque, nil
	}
	u := scheme + "://" + h
	if port != "" {
		u += ":" + strconv.Itoa(p)
	}
	return Target{URL: u + tail, Scheme: scheme, Host: h, Port: p, IPClass: class}, nil
}

// parseHost runs the WHATWG host parser (hostname.Parse) and classifies
// the result. special is false for hosts of non-special schemes, which are
// not percent-decoded.
func parseHost(in string, special bool) (host, class string, err error) {
	h, err := hostname.Parse(in, special)
	if err != nil {
		return "", "", err
	}
	// Parse writes an address only as an address (IPv6 in brackets), and a
	// name never parses as one.
	if addr, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); err == nil {
		return h, classifyIP(addr), nil
	}
	return h, classifyName(h), nil
}

var (
	cgnat      = netip.MustParsePrefix("100.64.0.0/10")
	thisNet    = netip.MustParsePrefix("0.0.0.0/8")
	ietf       = netip.MustParsePrefix("192.0.0.0/24")
	benchmark  = netip.MustParsePrefix("198.18.0.0/15")
	reserved4  = netip.MustParsePrefix("240.0.0.0/4")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	compat4    = netip.MustParsePrefix("::/96")
	siteLocal6 = netip.MustParsePrefix("fec0::/10")
)

// classifyIP puts an address in one of the IP classes. IPv6 forms that
// carry an IPv4 address (mapped, compatible, NAT64) take its class.
func classifyIP(a netip.Addr) string {
	if a.Is4In6() {
		a = a.Unmap()
	}
	if a.Is6() && (nat64.Contains(a) || (compat4.Contains(a) && !a.IsUnspecified() && !a.IsLoopback())) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	switch {
	case a.IsLoopback(), a.IsUnspecified(), a.Is4() && thisNet.Contains(a):
		return IPClassLoopback
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return IPClassLinkLocal
	case a.IsPrivate(), a.IsMulticast(), a.IsInterfaceLocalMulticast(),
		cgnat.Contains(a), ietf.Contains(a), benchmark.Contains(a), reserved4.Contains(a),
		siteLocal6.Contains(a):
		return IPClassPrivate
	}
	return IPClassPublic
}

// classifyName: Chromium answers localhost and *.localhost itself with a
// loopback address; every other name is unresolved.
func classifyName(h string) string {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return IPClassLoopback
	}
	return IPClassUnresolved
}

// clip shortens s for an error message.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
