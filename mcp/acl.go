package mcp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gobwas/glob"
)

// ToolACL is a key's list of tool globs: a tool is allowed when it matches
// at least one plain glob (or there is none) and no "!" glob. "get_*" allows
// get_text and get_html; "*" with "!eval" allows everything but eval. Tool
// names have no separators, so * matches any run of characters.
//
// The ACL narrows what the policy allows; it never widens it. It filters
// tools/list and is checked again at every call.
type ToolACL struct {
	src   []string
	allow []*glob.Pattern
	deny  []*glob.Pattern
}

// NewToolACL compiles globs. No globs (or nil) allows every tool; a nil
// *ToolACL does too.
func NewToolACL(globs []string) (*ToolACL, error) {
	a := &ToolACL{src: globs}
	for _, g := range globs {
		neg := strings.HasPrefix(g, "!")
		pat := strings.TrimPrefix(g, "!")
		if strings.TrimSpace(pat) == "" {
			return nil, fmt.Errorf("tool glob %q is empty", g)
		}
		p, err := glob.Compile(pat)
		if err != nil {
			return nil, fmt.Errorf("tool glob %q: %w", g, err)
		}
		if neg {
			a.deny = append(a.deny, p)
		} else {
			a.allow = append(a.allow, p)
		}
	}
	return a, nil
}

// Allows reports whether the ACL lets a principal use the tool name.
func (a *ToolACL) Allows(name string) bool {
	if a == nil {
		return true
	}
	for _, p := range a.deny {
		if p.Match(name) {
			return false
		}
	}
	if len(a.allow) == 0 {
		return true
	}
	for _, p := range a.allow {
		if p.Match(name) {
			return true
		}
	}
	return false
}

// Covers reports whether every tool b allows is one a allows, by the
// globs' text (tool names are not all known in advance: plugins and page
// tools come and go). It holds when a allows every tool; otherwise each of
// b's plain globs must be one of a's plain globs, or a plain tool name
// (no glob characters) that a allows, and each of a's "!" globs must be
// one of b's. Some b that allow fewer tools are refused; none that allow
// more pass.
func (a *ToolACL) Covers(b *ToolACL) bool {
	if a == nil || len(a.src) == 0 {
		return true
	}
	aAllow, aDeny := a.globs()
	bAllow, bDeny := b.globs()
	for _, d := range aDeny {
		if !slices.Contains(bDeny, d) {
			return false
		}
	}
	if len(aAllow) == 0 {
		return true
	}
	if len(bAllow) == 0 {
		return false // b allows every tool but a's exclusions
	}
	for _, g := range bAllow {
		if slices.Contains(aAllow, g) {
			continue
		}
		if strings.ContainsAny(g, `*?[]{}\!`) || !a.Allows(g) {
			return false
		}
	}
	return true
}

// globs splits the ACL's source into plain and "!" globs (without the !).
func (a *ToolACL) globs() (allow, deny []string) {
	if a == nil {
		return nil, nil
	}
	for _, g := range a.src {
		if pat, ok := strings.CutPrefix(g, "!"); ok {
			deny = append(deny, pat)
		} else {
			allow = append(allow, g)
		}
	}
	return allow, deny
}

// String lists the globs.
func (a *ToolACL) String() string {
	if a == nil || len(a.src) == 0 {
		return "*"
	}
	return strings.Join(a.src, " ")
}
