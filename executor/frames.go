package executor

import (
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
)

// frameStep is the engine name of Playwright's frame step; a selector that
// names it anywhere, in any case, is refused.
const frameStep = "internal:control"

// CheckSelector refuses a selector that would enter a frame: one that
// names Playwright's frame step (internal:control=enter-frame, the chain
// frameLocator builds) in any case or spacing, escaped or not. A frame's
// document is another document, which the policy decided nothing about.
func CheckSelector(sel string) error {
	if !entersFrame(sel) {
		return nil
	}
	return Errorf(CodeBadArgs, "selectors cannot enter frames; %q steps into a frame", sel).
		WithHint("act on the page's own elements; for a same-origin frame take a snapshot and use its refs")
}

// entersFrame reports whether sel names the frame step, looking through
// the escapes a nested selector's body may use (JSON and CSS), at any
// depth of nesting.
func entersFrame(sel string) bool {
	for range 4 {
		if strings.Contains(strings.ToLower(sel), frameStep) {
			return true
		}
		u := unescape(sel)
		if u == sel {
			return false
		}
		sel = u
	}
	return true // escaped deeper than any selector needs: refuse
}

// unescape decodes one level of backslash escapes: JSON's (\uXXXX, \n,
// \", \\ ...) and CSS's (\3a, \: ...).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		rest := s[i+1:]
		if rest[0] == 'u' && len(rest) >= 5 {
			if n, err := strconv.ParseUint(rest[1:5], 16, 32); err == nil {
				b.WriteRune(rune(n))
				i += 5
				continue
			}
		}
		// CSS: up to six hex digits and one optional space
		j := 0
		for j < len(rest) && j < 6 && isHex(rest[j]) {
			j++
		}
		if j > 0 {
			n, _ := strconv.ParseUint(rest[:j], 16, 32)
			if r := rune(n); utf8.ValidRune(r) {
				b.WriteRune(r)
			}
			if j < len(rest) && rest[j] == ' ' {
				j++
			}
			i += j
			continue
		}
		b.WriteByte(rest[0])
		i++
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// OriginHidden reports whether a document's URL does not carry its
// security origin: about:blank and about:srcdoc (the origin of whoever
// created the document), data: and javascript: (opaque, or inherited),
// blob: and filesystem: (their creator's), and anything that does not
// parse. A backend then reads the origin from the browser (Tab.Origin).
func OriginHidden(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return true
	}
	switch strings.ToLower(u.Scheme) {
	case "about", "data", "javascript", "blob", "filesystem":
		return true
	}
	return false
}

// OpaqueOrigin is how the browser serialises an opaque origin.
const OpaqueOrigin = "null"
