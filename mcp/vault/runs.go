package vault

import (
	"encoding/base64"
	"strings"
)

// RunLength is the shortest run of a secret's characters that Redact takes
// out of a text: any RunLength consecutive bytes of a value, or of one of
// its encodings, are replaced wherever they appear, and the runs that
// touch or overlap are replaced as one. So a value a reader cut (an
// outline's 40 characters, a query's 200, a log's cap), a value the page
// or the model edited (Home then Delete leaves the value less its first
// character), and such a piece of it in a URL, a header or a body, all
// read as <secret:NAME>; what can be left of a value is at most
// RunLength-1 characters at each side of a redaction.
//
// The trade-off is false positives: a text that happens to hold six
// characters of a secret loses them. Six is chosen because a secret of at
// least MinLength characters drawn from real entropy shares a run of six
// with ordinary text about once in 64^6 (6.9e10) windows per run of the
// secret, so pages read as they are; a weak secret made of words
// ("password2024") blanks those words wherever they appear, which fails
// closed: the model reads <secret:NAME> where the word was, and nothing of
// the secret. Shorter runs (four or five) would start to blank common
// words of strong secrets' alphabets; longer ones would leave more of a
// secret to join from two edited reads.
const RunLength = 6

// runIndex finds every run of RunLength bytes of any secret's forms in a
// text: a rolling key of the last RunLength bytes, tested first against a
// bit filter and then against the set of runs.
type runIndex struct {
	names  []string
	runs   map[uint64]uint16 // key of a run -> 1 + index in names
	filter []uint64          // 1<<filterBits bits, by hash of a key
}

const (
	filterBits = 18
	keyMask    = 1<<(8*RunLength) - 1
)

func filterSlot(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> (64 - filterBits) }

func newRunIndex(secrets map[string]*secret, names []string) *runIndex {
	ix := &runIndex{names: names, runs: map[uint64]uint16{}, filter: make([]uint64, 1<<filterBits/64)}
	for i, name := range names {
		for _, f := range secrets[name].forms {
			var k uint64
			for j := 0; j < len(f); j++ {
				k = (k<<8 | uint64(f[j])) & keyMask
				if j+1 < RunLength {
					continue
				}
				if _, dup := ix.runs[k]; !dup {
					ix.runs[k] = uint16(i + 1)
				}
				h := filterSlot(k)
				ix.filter[h/64] |= 1 << (h % 64)
			}
		}
	}
	return ix
}

// replace returns s with every run of a secret, and everything between
// overlapping or touching runs of the same secret, replaced by Shown(name).
// A reference already in s (<secret:NAME>) is kept as it is: redacting
// twice changes nothing.
func (ix *runIndex) replace(s string) string {
	var b strings.Builder
	written := 0         // s[:written] is in b (or replaced)
	start, end := -1, -1 // the run being gathered, [start, end)
	var name uint16      // its secret
	flush := func() {
		if start < 0 {
			return
		}
		// A run that starts or ends inside a character takes all of it.
		for start > written && s[start]&0xC0 == 0x80 {
			start--
		}
		for end < len(s) && s[end]&0xC0 == 0x80 {
			end++
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[written:start])
		b.WriteString(Shown(ix.names[name-1]))
		written, start = end, -1
	}
	var k uint64
	filled := 0 // bytes in k since the last reset
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '<' && strings.HasPrefix(s[i:], RefOpen) {
			if n := refLen(s[i:]); n > 0 {
				i += n - 1
				k, filled = 0, 0
				continue
			}
		}
		k = (k<<8 | uint64(c)) & keyMask
		if filled++; filled < RunLength {
			continue
		}
		h := filterSlot(k)
		if ix.filter[h/64]&(1<<(h%64)) == 0 {
			continue
		}
		n, ok := ix.runs[k]
		if !ok {
			continue
		}
		at := i + 1 - RunLength
		switch {
		case start >= 0 && (at < end || at == end && n == name):
			end = i + 1
		default:
			flush()
			start, end, name = at, i+1, n
		}
	}
	flush()
	if written == 0 {
		return s
	}
	b.WriteString(s[written:])
	return b.String()
}

// refLen is the length of the reference s starts with, <secret:NAME>, or 0.
func refLen(s string) int {
	rest := s[len(RefOpen):]
	j := strings.IndexByte(rest, '>')
	if j <= 0 || j > 128 || !ValidName(rest[:j]) {
		return 0
	}
	return len(RefOpen) + j + 1
}

// webEncodings are the forms a browser gives a value: the WHATWG
// application/x-www-form-urlencoded serializer (a form's GET or POST,
// URLSearchParams), encodeURIComponent, encodeURI, and the URL parser's
// query and path percent-encode sets (a value written into a URL as it
// is). Each also with lower-case hex, as some servers echo it.
func webEncodings(v string) []string {
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	form := percent(v, alnum+"*-._", true)
	comp := percent(v, alnum+"-_.!~*'()", false)
	uri := percent(v, alnum+"-_.!~*'();,/?:@&=+$#", false)
	query := percentOnly(v, " \"#<>'")
	path := percentOnly(v, " \"#<>?`{}")
	out := []string{form, comp, uri, query, path}
	for _, f := range out[:len(out):len(out)] {
		if low := lowerHex(f); low != f {
			out = append(out, low)
		}
	}
	return out
}

// percent escapes every byte of v not in keep as %XX (UTF-8), and a space
// as + when plus.
func percent(v, keep string, plus bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c < 0x80 && strings.IndexByte(keep, c) >= 0:
			b.WriteByte(c)
		case c == ' ' && plus:
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// percentOnly escapes the bytes of v in esc, controls and non-ASCII bytes
// as %XX: the URL parser's percent-encode sets.
func percentOnly(v, esc string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c <= 0x20 || c >= 0x7F || strings.IndexByte(esc, c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// lowerHex lowers the hex digits of every %XX in s.
func lowerHex(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			for j := i + 1; j <= i+2; j++ {
				if b[j] >= 'A' && b[j] <= 'F' {
					b[j] += 'a' - 'A'
				}
			}
			i += 2
		}
	}
	return string(b)
}

// base64Shifts are the base64 forms of v from its second and third byte
// on: base64 of a piece of the value that starts anywhere then shares its
// runs with one of the three alignments (the first is among encodings).
func base64Shifts(v string) []string {
	var out []string
	for a := 1; a <= 2 && a < len(v); a++ {
		p := []byte(v[a:])
		out = append(out,
			base64.StdEncoding.EncodeToString(p),
			base64.URLEncoding.EncodeToString(p))
	}
	return out
}
