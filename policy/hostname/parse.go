package hostname

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// ErrBadURL is wrapped by every error Parse returns. A host is read only as
// part of a URL, so its errors say so; policy.ErrBadURL is this value.
var ErrBadURL = errors.New("invalid URL")

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

// Parse runs the WHATWG host parser on the host of a URL and returns it
// canonical: a name lower-cased and mapped through IDNA to punycode, without
// trailing dots; an IPv4 address, in any of the forms browsers accept
// ("2130706433", "0x7f.1", "127.1"), dotted-decimal; an IPv6 address in
// brackets, compressed as the URL standard writes it. special is false for
// hosts of non-special schemes, which are not percent-decoded. Every error
// wraps ErrBadURL. Parse never panics.
func Parse(in string, special bool) (string, error) {
	if strings.HasPrefix(in, "[") {
		if !strings.HasSuffix(in, "]") {
			return "", fmt.Errorf("%w: unterminated IPv6 address %q", ErrBadURL, clip(in))
		}
		return parseIPv6(in[1 : len(in)-1])
	}
	s := in
	if special && strings.IndexByte(s, '%') >= 0 {
		s = percentDecode(s)
	}
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%w: host %q is not valid UTF-8", ErrBadURL, clip(in))
	}
	// IDNA maps case, full-width dots and compatibility forms; it fails on
	// what no browser would look up.
	a, ierr := hostProfile.ToASCII(s)
	if ierr != nil {
		return "", fmt.Errorf("%w: host %q: %v", ErrBadURL, clip(in), ierr)
	}
	a = strings.ToLower(a)
	for _, r := range a {
		if forbiddenHost(r) {
			return "", fmt.Errorf("%w: host %q has a forbidden character %q", ErrBadURL, clip(in), r)
		}
	}
	// An IPv4 address may end in one dot; the browser reads it as the
	// address, so the IPv4 parser sees the host before trailing dots are
	// removed, and again after, so that "127.0.0.1.." is never a name.
	if endsInNumber(a) {
		addr, err := parseIPv4(a)
		if err != nil {
			return "", err
		}
		return addr.String(), nil
	}
	a = strings.TrimRight(a, ".")
	if a == "" {
		return "", fmt.Errorf("%w: empty host", ErrBadURL)
	}
	if endsInNumber(a) {
		addr, err := parseIPv4(a)
		if err != nil {
			return "", err
		}
		return addr.String(), nil
	}
	return a, nil
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

func parseIPv6(s string) (string, error) {
	if strings.ContainsAny(s, "%[]") || s == "" {
		return "", fmt.Errorf("%w: %q is not an IPv6 address", ErrBadURL, clip(s))
	}
	addr, err := netip.ParseAddr(s)
	if err != nil || !addr.Is6() {
		return "", fmt.Errorf("%w: %q is not an IPv6 address", ErrBadURL, clip(s))
	}
	return "[" + formatIPv6(addr) + "]", nil
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
