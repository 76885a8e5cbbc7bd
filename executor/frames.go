package executor

import (
	"context"
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

// FrameReader is the optional capability of a backend that reaches the
// documents of a tab's frames of other origins (cross-origin frames, in
// the renderer of their parent or in one of their own) through
// chromegate's isolated world in each. Every such document gets its own
// document token, so a ref names its document: a backend routes a ref
// whose token is a frame document's to that document, and to no other
// (a ref of a frame that navigated since is REF_EXPIRED).
//
// The server decides each frame document like a page (its URL and
// origin as the page of a decision) before anything of it is read or
// acted on: FrameDocument before a frame is outlined, RefDocument before
// a call by ref. A backend without it outlines cross-origin frames as
// placeholders only and their refs do not exist.
type FrameReader interface {
	// FrameDocument reports the document shown in the frame whose owner
	// (an iframe or frame element) is p.Ref, an element of the main
	// document or of a frame document, reaching it (its isolated world
	// and token) on first use. Nothing of the document's content is read.
	FrameDocument(ctx context.Context, p FrameParams) (FrameDoc, error)
	// RefDocument reports the document p.Ref's token names: a frame
	// document (Main false) as it is now, or Main for any other ref
	// (the main document's, or one never issued, which the main
	// document's registry refuses). A ref of a frame document that is
	// gone (the frame navigated, or was removed) is REF_EXPIRED.
	RefDocument(ctx context.Context, p FrameParams) (FrameDoc, error)
}

// FrameLocator is the optional capability of a backend that tells which
// document is at a point of a tab's page, for calls at page coordinates:
// such a call is decided on the document FrameAt returns, as a call by a
// ref of it would be. Both built-in backends implement it.
type FrameLocator interface {
	// FrameAt reports the document at p's point of the tab's top-level
	// viewport (CSS pixels): Main for the main document (or a
	// same-origin frame of it, or a frame's border), else the frame
	// document of another origin whose viewport holds the point, with
	// its URL, origin and Box, reached through each frame element on the
	// way however deep (as FrameDocument). Nothing of any document's
	// content is read.
	FrameAt(ctx context.Context, p FrameAtParams) (FrameDoc, error)
}

// FrameAtParams is a point of a tab's top-level viewport.
type FrameAtParams struct {
	TabID string  `json:"tabId,omitempty"`
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
}

// FrameParams names an element of a tab by ref.
type FrameParams struct {
	TabID string `json:"tabId,omitempty"`
	Ref   string `json:"ref"`
}

// FrameDoc is one document of a tab. URL and Origin are read in the
// document itself (its location and its security origin), never from
// the page around it.
type FrameDoc struct {
	// Main is set for the tab's main document: the page a call is
	// decided on already.
	Main bool `json:"main,omitempty"`
	// Doc is a frame document's token: the letters of its refs, and the
	// ScriptParams.Doc that runs a script in it.
	Doc    string `json:"doc,omitempty"`
	URL    string `json:"url,omitempty"`
	Origin string `json:"origin,omitempty"`
	// Box is the frame's viewport in the top-level viewport (CSS
	// pixels), when the backend measured it: where a point of the
	// frame's document is on the page.
	Box *Box `json:"box,omitempty"`
}

// Box is a rectangle in CSS pixels.
type Box struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// RefToken is the document token of a ref: its letters.
func RefToken(ref string) string { return strings.TrimRight(ref, "0123456789") }
