package helpers

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy/hostname"
)

// DefaultLinkLimit is how many links ExtractLinks returns when the caller
// sets no limit; MaxLinkLimit is the most it returns at all.
const (
	DefaultLinkLimit = 200
	MaxLinkLimit     = 2000
	// maxLinkText caps a link's text in runes: a link is named, not quoted.
	maxLinkText = 100
)

// LinksParams selects the links ExtractLinks returns.
type LinksParams struct {
	TabID string `json:"tabId,omitempty"`
	// Scope, if set, limits the links to those inside this element.
	Scope executor.Target `json:"scope,omitzero"`
	// SameOriginOnly keeps links to the page's own scheme, host and port.
	SameOriginOnly bool `json:"sameOriginOnly,omitempty"`
	// Include keeps only links whose host matches one of these patterns;
	// Exclude drops links whose host matches one. Patterns are those of the
	// policy (hostname.Match): "example.com" is exactly that host,
	// "*.example.com" any subdomain at any depth, "*" every host.
	Include []string `json:"include,omitempty"`
	Exclude []string `json:"exclude,omitempty"`
	// NonHTTP also returns links with other schemes than http and https
	// (mailto:, tel:, ftp:). javascript: and data: links are never
	// returned: they are code and inline documents, not places to go.
	NonHTTP bool `json:"nonHttp,omitempty"`
	// Limit caps the links returned (DefaultLinkLimit when 0).
	Limit int `json:"limit,omitempty"`
}

// Link is one link of the page. Text is the page's words: untrusted.
type Link struct {
	URL  string `json:"url"`
	Text string `json:"text"`
	// Ref addresses the link's element (the first with this URL) for
	// click and the other target-taking tools; empty when the backend
	// could not name it.
	Ref string `json:"ref,omitempty"`
}

// LinksResult is what ExtractLinks found. Total counts every link that
// passed the filters; Links holds the first Limit of them, in document
// order.
type LinksResult struct {
	executor.PageState
	Links []Link `json:"links"`
	Total int    `json:"total"`
	// Base is the URL relative links were resolved against.
	Base string `json:"base"`
}

// Note says how many links were shown of how many, and how to see the
// rest; "" when nothing was cut.
func (r LinksResult) Note() string {
	if len(r.Links) >= r.Total {
		return ""
	}
	return fmt.Sprintf("showing %d of %d links; raise limit, or narrow with scope, include, exclude or same_origin_only", len(r.Links), r.Total)
}

//go:embed scripts/linkrefs.js
var linkRefsJS string

var linkRefsSource = executor.WithRefs(withoutComments(linkRefsJS))

// ExtractLinks returns the page's links, absolute (resolved against the
// page's <base>, else its URL), de-duplicated by URL and filtered, each
// with the ref of its element. It reads the page with one HTML primitive
// (two with a scope: the scope's markup, then the head for <base>) and
// parses it in Go; one RunScript names the links' elements in the ref
// registry the snapshot shares.
func ExtractLinks(ctx context.Context, ex executor.Executor, p LinksParams) (LinksResult, error) {
	limit := p.Limit
	switch {
	case limit == 0:
		limit = DefaultLinkLimit
	case limit < 0 || limit > MaxLinkLimit:
		return LinksResult{}, executor.Errorf(executor.CodeBadArgs, "limit %d is not between 1 and %d", limit, MaxLinkLimit)
	}
	for _, pat := range append(append([]string(nil), p.Include...), p.Exclude...) {
		if strings.TrimSpace(pat) == "" {
			return LinksResult{}, executor.Errorf(executor.CodeBadArgs, "an include or exclude pattern is empty").
				WithHint(`use host patterns such as "example.com" or "*.example.com"`)
		}
	}

	refs := linkRefs(ctx, ex, p.TabID, p.Scope)
	page, root, base, err := readForLinks(ctx, ex, p.TabID, p.Scope)
	if err != nil {
		return LinksResult{}, err
	}
	pageURL, _ := url.Parse(page.URL)

	out := LinksResult{PageState: page, Links: []Link{}, Base: base.String()}
	seen := map[string]int{} // URL → index in all
	var all []Link
	for n := range root.Descendants() {
		if n.Type != html.ElementNode || (n.DataAtom != atom.A && n.DataAtom != atom.Area) {
			continue
		}
		href, ok := attr(n, "href")
		if !ok {
			continue
		}
		u, ok := resolveLink(base, href)
		if !ok || !keepScheme(u.Scheme, p.NonHTTP) {
			continue
		}
		if !keepHost(u, pageURL, p) {
			continue
		}
		abs := u.String()
		text := linkText(n)
		if i, dup := seen[abs]; dup {
			if all[i].Text == "" {
				all[i].Text = text
			}
			continue
		}
		seen[abs] = len(all)
		all = append(all, Link{URL: abs, Text: text, Ref: refs[linkKey(u)]})
	}
	out.Total = len(all)
	if len(all) > limit {
		all = all[:limit]
	}
	if all != nil {
		out.Links = all
	}
	return out, nil
}

// linkRefs maps each link's URL (linkKey) to the ref of its first element.
// Refs are a convenience: when the script cannot run or find the scope,
// links come without them.
func linkRefs(ctx context.Context, ex executor.Executor, tabID string, scope executor.Target) map[string]string {
	arg, _ := json.Marshal(scope) // a Target always marshals
	sr, err := ex.RunScript(ctx, executor.ScriptParams{TabID: tabID, Source: linkRefsSource, Arg: arg})
	if err != nil {
		return nil
	}
	var pairs [][2]string
	if json.Unmarshal(sr.Value, &pairs) != nil {
		return nil
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		u, err := url.Parse(p[0])
		if err != nil {
			continue
		}
		if k := linkKey(u); out[k] == "" {
			out[k] = p[1]
		}
	}
	return out
}

// linkKey is the form in which a URL parsed in Go and one serialised by the
// browser compare equal: lower-case scheme and host, "/" for an empty path.
func linkKey(u *url.URL) string {
	k := *u
	k.Scheme, k.Host = strings.ToLower(k.Scheme), strings.ToLower(k.Host)
	if k.Path == "" && k.Opaque == "" && k.Host != "" {
		k.Path = "/"
	}
	return k.String()
}

// readForLinks reads the markup to search and the base URL links resolve
// against.
func readForLinks(ctx context.Context, ex executor.Executor, tabID string, scope executor.Target) (executor.PageState, *html.Node, *url.URL, error) {
	if scope.IsZero() {
		tr, err := ex.HTML(ctx, executor.HTMLParams{TabID: tabID})
		if err != nil {
			return executor.PageState{}, nil, nil, err
		}
		doc, err := html.Parse(strings.NewReader(tr.Text))
		if err != nil {
			return executor.PageState{}, nil, nil, executor.Errorf(executor.CodeInternal, "parse the page: %v", err)
		}
		return tr.PageState, doc, baseURL(tr.URL, doc), nil
	}
	tr, err := ex.HTML(ctx, executor.HTMLParams{TabID: tabID, Target: scope, Outer: true})
	if err != nil {
		return executor.PageState{}, nil, nil, err
	}
	frag, err := parseFragment(tr.Text)
	if err != nil {
		return executor.PageState{}, nil, nil, err
	}
	base := baseURL(tr.URL, nil)
	// <base> lives in the head, outside the scope: read it too. A page
	// without one costs a small read.
	if head, err := ex.HTML(ctx, executor.HTMLParams{TabID: tabID, Target: executor.Target{Selector: "head"}}); err == nil {
		if doc, err := html.Parse(strings.NewReader("<head>" + head.Text + "</head>")); err == nil {
			base = baseURL(tr.URL, doc)
		}
	}
	return tr.PageState, frag, base, nil
}

// parseFragment parses markup read from inside a page (an element's outer
// HTML) under a <body>, so table parts and list items keep their elements.
func parseFragment(markup string) (*html.Node, error) {
	body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(markup), body)
	if err != nil {
		return nil, executor.Errorf(executor.CodeInternal, "parse the element: %v", err)
	}
	for _, n := range nodes {
		body.AppendChild(n)
	}
	return body, nil
}

// baseURL is the document's <base href> resolved against the page URL, or
// the page URL itself.
func baseURL(pageURL string, doc *html.Node) *url.URL {
	page, err := url.Parse(pageURL)
	if err != nil {
		page = &url.URL{}
	}
	if doc == nil {
		return page
	}
	for n := range doc.Descendants() {
		if n.Type == html.ElementNode && n.DataAtom == atom.Base {
			if href, ok := attr(n, "href"); ok {
				if b, err := page.Parse(strings.TrimSpace(href)); err == nil {
					return b
				}
			}
			break // only the first <base> counts, with or without href
		}
	}
	return page
}

func resolveLink(base *url.URL, href string) (*url.URL, bool) {
	href = strings.TrimSpace(href)
	if href == "" {
		return nil, false
	}
	u, err := base.Parse(href)
	if err != nil || u.Scheme == "" {
		return nil, false
	}
	u.Scheme = strings.ToLower(u.Scheme)
	return u, true
}

func keepScheme(scheme string, nonHTTP bool) bool {
	switch scheme {
	case "http", "https":
		return true
	case "javascript", "data", "vbscript", "blob":
		return false
	}
	return nonHTTP
}

func keepHost(u, page *url.URL, p LinksParams) bool {
	host := u.Hostname()
	if p.SameOriginOnly && (page == nil || u.Scheme != page.Scheme || !strings.EqualFold(u.Host, page.Host)) {
		return false
	}
	if len(p.Include) > 0 && !matchAny(p.Include, host) {
		return false
	}
	return !matchAny(p.Exclude, host)
}

func matchAny(patterns []string, host string) bool {
	for _, pat := range patterns {
		if hostname.Match(pat, host) {
			return true
		}
	}
	return false
}

// linkText is a link's visible words, whitespace collapsed and capped; for
// a link without words, its aria-label, title or the alt of its image.
func linkText(n *html.Node) string {
	var b strings.Builder
	var alt string
	for d := range n.Descendants() {
		switch {
		case d.Type == html.TextNode:
			b.WriteString(d.Data)
			b.WriteByte(' ')
		case d.Type == html.ElementNode && d.DataAtom == atom.Img && alt == "":
			alt, _ = attr(d, "alt")
		}
		if b.Len() > 4*maxLinkText {
			break
		}
	}
	text := collapse(b.String())
	if text == "" {
		for _, name := range []string{"aria-label", "title"} {
			if v, ok := attr(n, name); ok && strings.TrimSpace(v) != "" {
				text = collapse(v)
				break
			}
		}
	}
	if text == "" {
		text = collapse(alt)
	}
	return capRunes(text, maxLinkText)
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func capRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}
