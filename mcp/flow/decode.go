package flow

import (
	"encoding/base64"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// decodings are the forms of a value a model may have made from text it
// read: the value, its URL and form decodings (up to three rounds), and the
// base64 decodings of its base64 runs.
func decodings(v string) []string {
	if len(v) > MaxValue {
		v = v[:MaxValue]
	}
	out := []string{v}
	cur := v
	for range 3 {
		d := unescape(cur, true)
		if d == cur {
			break
		}
		out = append(out, d)
		cur = d
	}
	// A base64 run's '+' is not a space: look for runs in the value and in
	// its %-decoding that keeps '+'.
	seen := map[string]bool{}
	for _, s := range []string{v, unescape(v, false)} {
		for _, run := range b64Run.FindAllString(s, 32) {
			if seen[run] {
				continue
			}
			seen[run] = true
			if d, ok := unbase64(run); ok {
				out = append(out, d)
			}
		}
	}
	return out
}

// b64Run is a run of base64 characters long enough to encode MinLen
// characters (4 per 3).
var b64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}`)

// unbase64 decodes run in either alphabet, padded or not, and keeps it
// when it is text.
func unbase64(run string) (string, bool) {
	run = strings.TrimRight(run, "=")
	if len(run)%4 == 1 { // not whole: drop the odd character
		run = run[:len(run)-1]
	}
	enc := base64.RawStdEncoding
	if strings.ContainsAny(run, "-_") {
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(run)
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	s := string(b)
	for _, r := range s {
		if !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return "", false
		}
	}
	return s, true
}

// unescape decodes %xx (leniently: a bad escape stays as it is) and, when
// plus, '+' as a space.
func unescape(s string, plus bool) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
		case c == '+' && plus:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

// hostPattern is a host name (two labels or more, the last alphabetic) or
// an IPv4 address, with its port when one follows.
var hostPattern = regexp.MustCompile(`(?i)(?:\b(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]\b|\b(?:\d{1,3}\.){3}\d{1,3}\b)(?::\d{1,5}\b)?`)

// hostsIn are the host names text names, lower case; a host with a port
// gives both forms.
func hostsIn(text string) []string {
	if len(text) > 4*MaxValue {
		text = text[:4*MaxValue]
	}
	var out []string
	for _, h := range hostPattern.FindAllString(text, 256) {
		h = strings.ToLower(h)
		out = append(out, h)
		if bare, _, ok := cutPort(h); ok {
			out = append(out, bare)
		}
	}
	return out
}

// cutPort splits "host:port".
func cutPort(h string) (host, port string, ok bool) {
	i := strings.LastIndexByte(h, ':')
	if i < 0 || strings.Contains(h[:i], ":") {
		return h, "", false
	}
	return h[:i], h[i+1:], true
}

// hostOf is the host (with its port, if the origin has one) of an origin
// "scheme://host[:port]".
func hostOf(origin string) string {
	_, rest, ok := strings.Cut(origin, "://")
	if !ok {
		return ""
	}
	return strings.ToLower(rest)
}
