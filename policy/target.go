package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
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
var ErrBadURL = errors.New("invalid URL")

// specialPorts lists the WHATWG special schemes (except file) and their
// default ports.
var specialPorts = map[string]int{"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}

// hostProfile is IDNA as the WHATWG URL standard runs it ("domain to
// ASCII", UseSTD3ASCIIRules=false, CheckHyphens=false, non-transitional):
// the Lookup mapping without Lookup's STD3 and hyphen rules, which
// Chromium does not apply (underscores are fine in a host).
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.VerifyDNSLength(false),
)

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

// forbiddenHost reports the WHATWG forbidden domain code points (forbidden
// host code points, C0 controls, '%' and DEL).
func forbiddenHost(r rune) bool {
	if r <= 0x20 || r == 0x7f {
		return true
	}
	switch r {
	case '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|', '%':
		return true
	}
	return false
}

// parseHost runs the WHATWG host parser and classifies the result. special
// is false for hosts of non-special schemes, which are not percent-decoded.
func parseHost(in string, special bool) (host, class string, err error) {
	if strings.HasPrefix(in, "[") {
		if !strings.HasSuffix(in, "]") {
			return "", "", fmt.Errorf("%w: unterminated IPv6 address %q", ErrBadURL, clip(in))
		}
		return parseIPv6(in[1 : len(in)-1])
	}
	s := in
	if special && strings.IndexByte(s, '%') >= 0 {
		s = percentDecode(s)
	}
	if !utf8.ValidString(s) {
		return "", "", fmt.Errorf("%w: host %q is not valid UTF-8", ErrBadURL, clip(in))
	}
	// IDNA maps case, full-width dots and compatibility forms; it fails on
	// what no browser would look up.
	a, ierr := hostProfile.ToASCII(s)
	if ierr != nil {
		return "", "", fmt.Errorf("%w: host %q: %v", ErrBadURL, clip(in), ierr)
	}
	a = strings.ToLower(a)
	for _, r := range a {
		if forbiddenHost(r) {
			return "", "", fmt.Errorf("%w: host %q has a forbidden character %q", ErrBadURL, clip(in), r)
		}
	}
	// An IPv4 address may end in one dot; the browser reads it as the
	// address, so the IPv4 parser sees the host before trailing dots are
	// removed, and again after, so that "127.0.0.1.." is never a name.
	if endsInNumber(a) {
		addr, err := parseIPv4(a)
		if err != nil {
			return "", "", err
		}
		return addr.String(), classifyIP(addr), nil
	}
	a = strings.TrimRight(a, ".")
	if a == "" {
		return "", "", fmt.Errorf("%w: empty host", ErrBadURL)
	}
	if endsInNumber(a) {
		addr, err := parseIPv4(a)
		if err != nil {
			return "", "", err
		}
		return addr.String(), classifyIP(addr), nil
	}
	return a, classifyName(a), nil
}

// percentDecode decodes %XX escapes, leaving malformed ones as they are.
func percentDecode(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			if b == nil {
				b = make([]byte, 0, len(s))
				b = append(b, s[:i]...)
			}
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		if b != nil {
			b = append(b, s[i])
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// endsInNumber is the WHATWG "ends in a number" check: the last label
// (ignoring one trailing dot) is all digits or a 0x hex number. Such a host
// must parse as IPv4 or the URL is invalid.
func endsInNumber(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		s = s[i+1:]
	}
	if s == "" {
		return false
	}
	if allDigits(s) {
		return true
	}
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		for i := 2; i < len(s); i++ {
			if !isHex(s[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseIPv4 is the WHATWG IPv4 parser: one to four parts, each decimal,
// octal (leading 0) or hex (0x); the last part fills the remaining bytes.
func parseIPv4(s string) (netip.Addr, error) {
	parts := strings.Split(s, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, fmt.Errorf("%w: %q has too many parts for an IPv4 address", ErrBadURL, clip(s))
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return netip.Addr{}, fmt.Errorf("%w: %q is not an IPv4 address", ErrBadURL, clip(s))
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, fmt.Errorf("%w: %q is not an IPv4 address", ErrBadURL, clip(s))
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, fmt.Errorf("%w: %q is not an IPv4 address", ErrBadURL, clip(s))
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

// parseIPv4Number parses one part; values are capped so that no part can
// overflow (anything over 2^32 is invalid anyway).
func parseIPv4Number(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		p, base = p[2:], 16
	case len(p) >= 2 && p[0] == '0':
		p, base = p[1:], 8
	}
	var n uint64
	for i := 0; i < len(p); i++ {
		c := p[i]
		var d uint64
		switch {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		n = n*base + d
		if n > 1<<40 {
			n = 1 << 40 // still invalid, never overflows
		}
	}
	return n, true
}

func parseIPv6(s string) (host, class string, err error) {
	if strings.ContainsAny(s, "%[]") || s == "" {
		return "", "", fmt.Errorf("%w: %q is not an IPv6 address", ErrBadURL, clip(s))
	}
	addr, err := netip.ParseAddr(s)
	if err != nil || !addr.Is6() {
		return "", "", fmt.Errorf("%w: %q is not an IPv6 address", ErrBadURL, clip(s))
	}
	return "[" + formatIPv6(addr) + "]", classifyIP(addr), nil
}

// formatIPv6 serialises as the WHATWG URL standard does: lower-case hex,
// the first longest run of two or more zero pieces compressed, and never a
// dotted IPv4 tail (so [::ffff:127.0.0.1] reads back as [::ffff:7f00:1]).
func formatIPv6(a netip.Addr) string {
	b := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	bestStart, bestLen := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > bestLen {
			bestStart, bestLen = i, j-i
		}
		i = j
	}
	var sb strings.Builder
	for i := 0; i < 8; i++ {
		if i == bestStart {
			sb.WriteString("::")
			i += bestLen - 1
			continue
		}
		if i > 0 && i != bestStart+bestLen {
			sb.WriteByte(':')
		}
		sb.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
	}
	return sb.String()
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
