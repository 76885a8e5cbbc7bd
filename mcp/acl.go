package mcp

import (
	"fmt"
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

// String lists the globs.
func (a *ToolACL) String() string {
	if a == nil || len(a.src) == 0 {
		return "*"
	}
	return strings.Join(a.src, " ")
}
