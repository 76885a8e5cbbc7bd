package helpers

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/chromegate/chromegate/executor"
)

// DefaultMaxChars is the page size ReadAsMarkdown returns when the caller
// sets none; MaxMaxChars is the largest it accepts, so a page always fits
// in one tool result.
const (
	DefaultMaxChars = 20_000
	MaxMaxChars     = 90_000
)

// MarkdownParams selects what ReadAsMarkdown converts and which part of it
// it returns.
type MarkdownParams struct {
	TabID string `json:"tabId,omitempty"`
	// Target, if set, is the element to convert, instead of the main
	// content the heuristics choose.
	Target executor.Target `json:"target,omitzero"`
	// MaxChars (runes) and Offset page through long documents.
	MaxChars int `json:"maxChars,omitempty"`
	Offset   int `json:"offset,omitempty"`
}

// MarkdownResult is one page of the Markdown of the page's main content.
// Markdown is the page's words: untrusted.
type MarkdownResult struct {
	executor.PageState
	Markdown string `json:"markdown"`
	// Source names the block that was converted: "selector", "main",
	// "article", "role=main", "scored <tag#id.class>" or "body".
	Source string `json:"source"`
	// Offset and Total are in characters (runes) of the whole Markdown;
	// Next is the offset of the next page, 0 on the last one.
	Offset int `json:"offset"`
	Total  int `json:"total"`
	Next   int `json:"next,omitempty"`
}

// Marker is the visible line that ends a page that is not the last. The
// same facts are in the result's fields; the line is for a reader of the
// text alone.
func (r MarkdownResult) Marker() string {
	if r.Next == 0 {
		return ""
	}
	return fmt.Sprintf("[… characters %d–%d of %d; call read_as_markdown with offset=%d for the next page]", r.Offset, r.Next, r.Total, r.Next)
}

// mdConverter is built once: a converter is safe across goroutines, and
// building one registers every plugin's handlers.
var mdConverter = sync.OnceValue(func() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		// Columns unpadded: aligning them is for a reader of the source, and on
		// a long table it is most of the text a model would pay for. A table
		// without a header row takes its first row as one, which keeps it a
		// GFM table without an empty row.
		table.NewTablePlugin(table.WithCellPaddingBehavior(table.CellPaddingBehaviorNone), table.WithHeaderPromotion(true)),
		strikethrough.NewStrikethroughPlugin(),
	))
})

// ReadAsMarkdown converts the page's main content to Markdown: one HTML
// read (the document, or the target's outer HTML), site chrome removed
// (navigation, header and footer landmarks, asides, ads, cookie banners,
// scripts, form controls), the main block chosen like a reader view would
// (main, article, role=main, else the block with the most paragraph text
// and the fewest links), and links made absolute against the page's base.
func ReadAsMarkdown(ctx context.Context, ex executor.Executor, p MarkdownParams) (MarkdownResult, error) {
	maxChars := p.MaxChars
	switch {
	case maxChars == 0:
		maxChars = DefaultMaxChars
	case maxChars < 100 || maxChars > MaxMaxChars:
		return MarkdownResult{}, executor.Errorf(executor.CodeBadArgs, "max_chars %d is not between 100 and %d", maxChars, MaxMaxChars)
	}
	if p.Offset < 0 {
		return MarkdownResult{}, executor.Errorf(executor.CodeBadArgs, "offset %d is negative", p.Offset)
	}

	var (
		page   executor.PageState
		block  *html.Node
		source string
		base   string
	)
	if p.Target.IsZero() {
		tr, err := ex.HTML(ctx, executor.HTMLParams{TabID: p.TabID})
		if err != nil {
			return MarkdownResult{}, err
		}
		doc, err := html.Parse(strings.NewReader(tr.Text))
		if err != nil {
			return MarkdownResult{}, executor.Errorf(executor.CodeInternal, "parse the page: %v", err)
		}
		page, base = tr.PageState, baseURL(tr.URL, doc).String()
		body := findFirst(doc, func(n *html.Node) bool { return n.DataAtom == atom.Body })
		if body == nil {
			body = doc
		}
		prune(body)
		block, source = mainBlock(body)
	} else {
		tr, err := ex.HTML(ctx, executor.HTMLParams{TabID: p.TabID, Target: p.Target, Outer: true})
		if err != nil {
			return MarkdownResult{}, err
		}
		frag, err := parseFragment(tr.Text)
		if err != nil {
			return MarkdownResult{}, err
		}
		// The caller chose the element: drop only what is never content,
		// not what merely looks like chrome.
		pruneWith(frag, false)
		page, base, block, source = tr.PageState, baseURL(tr.URL, nil).String(), frag, "selector"
	}

	md, err := mdConverter().ConvertNode(block, converter.WithDomain(base), converter.WithContext(ctx))
	if err != nil {
		return MarkdownResult{}, executor.Errorf(executor.CodeInternal, "convert to markdown: %v", err)
	}
	text := tidyMarkdown(string(md))
	out := MarkdownResult{PageState: page, Source: source}
	out.Markdown, out.Offset, out.Total, out.Next = pageOf(text, p.Offset, maxChars)
	return out, nil
}

var blankLines = regexp.MustCompile(`\n{3,}`)

func tidyMarkdown(s string) string {
	return strings.TrimSpace(blankLines.ReplaceAllString(s, "\n\n"))
}

// pageOf cuts the runes [offset, offset+max) out of s, ending at a line
// break when one falls in the last fifth of the page, so a page does not
// end mid-paragraph. It returns the page, the offset used, the total and
// the offset of the next page (0 when this is the last).
func pageOf(s string, offset, max int) (page string, from, total, next int) {
	total = utf8.RuneCountInString(s)
	if offset >= total {
		return "", total, total, 0
	}
	// Byte index of rune offset.
	start := byteIndex(s, 0, offset)
	if total-offset <= max {
		return s[start:], offset, total, 0
	}
	end := byteIndex(s, start, max)
	cut := end
	if nl := strings.LastIndexByte(s[start:end], '\n'); nl > 0 {
		if at := start + nl + 1; utf8.RuneCountInString(s[at:end]) <= max/5 {
			cut = at
		}
	}
	return s[start:cut], offset, total, offset + utf8.RuneCountInString(s[start:cut])
}

// byteIndex returns the byte index n runes after byte index from.
func byteIndex(s string, from, n int) int {
	i := from
	for range n {
		if i >= len(s) {
			break
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// Pruning.

// neverContent are elements that never carry readable content.
var neverContent = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Canvas: true, atom.Iframe: true, atom.Object: true, atom.Embed: true,
	atom.Input: true, atom.Select: true, atom.Textarea: true, atom.Button: true, atom.Option: true,
	atom.Dialog: true, atom.Link: true, atom.Meta: true,
}

// chromeTags are site chrome wherever they are (header and footer only
// outside an article or main, see isChrome).
var chromeTags = map[atom.Atom]bool{atom.Nav: true, atom.Aside: true, atom.Footer: true, atom.Header: true}

var chromeRoles = map[string]bool{
	"navigation": true, "banner": true, "contentinfo": true, "complementary": true,
	"dialog": true, "alertdialog": true, "search": true, "menu": true, "menubar": true,
}

// chromeWords are class or id words of site chrome. They are matched
// against whole words of a class or id ("ad-slot" has the word "ad",
// "header" and "download" do not).
var chromeWords = map[string]bool{
	"cookie": true, "cookies": true, "consent": true, "banner": true, "gdpr": true,
	"ad": true, "ads": true, "advert": true, "adverts": true, "advertisement": true, "advertising": true,
	"sponsor": true, "sponsored": true, "promo": true, "promoted": true, "newsletter": true,
	"popup": true, "modal": true, "social": true, "share": true, "sharing": true,
	"breadcrumb": true, "breadcrumbs": true, "sidebar": true, "skip": true,
}

var wordSplit = regexp.MustCompile(`[^a-z0-9]+`)

// prune removes site chrome and non-content from the tree under root.
func prune(root *html.Node) { pruneWith(root, true) }

func pruneWith(root *html.Node, chrome bool) {
	var drop []*html.Node
	var walk func(n *html.Node, inContent bool)
	walk = func(n *html.Node, inContent bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch c.Type {
			case html.CommentNode:
				drop = append(drop, c)
				continue
			case html.ElementNode:
			default:
				continue
			}
			if neverContent[c.DataAtom] || hidden(c) || (chrome && isChrome(c, inContent)) {
				drop = append(drop, c)
				continue
			}
			walk(c, inContent || c.DataAtom == atom.Article || c.DataAtom == atom.Main || role(c) == "main")
		}
	}
	walk(root, false)
	for _, n := range drop {
		n.Parent.RemoveChild(n)
	}
}

func hidden(n *html.Node) bool {
	if _, ok := attr(n, "hidden"); ok {
		return true
	}
	if v, _ := attr(n, "aria-hidden"); v == "true" {
		return true
	}
	style, _ := attr(n, "style")
	style = strings.ReplaceAll(strings.ToLower(style), " ", "")
	return strings.Contains(style, "display:none") || strings.Contains(style, "visibility:hidden")
}

func role(n *html.Node) string {
	r, _ := attr(n, "role")
	return strings.ToLower(strings.TrimSpace(r))
}

func isChrome(n *html.Node, inContent bool) bool {
	if chromeTags[n.DataAtom] {
		// An article's own header and footer (title, byline, notes) are
		// content.
		if !(inContent && (n.DataAtom == atom.Header || n.DataAtom == atom.Footer)) {
			return true
		}
	}
	if chromeRoles[role(n)] {
		return true
	}
	if n.DataAtom == atom.Main || n.DataAtom == atom.Article || n.DataAtom == atom.Body || role(n) == "main" {
		return false
	}
	for _, key := range []string{"id", "class"} {
		v, _ := attr(n, key)
		for _, w := range wordSplit.Split(strings.ToLower(v), -1) {
			if chromeWords[w] {
				return true
			}
		}
	}
	return false
}

// Choosing the main block.

// minMainText is the text (runes) a <main> or <article> needs to be taken
// as the content without scoring: less is a stub (a search box in <main>).
const minMainText = 200

// mainBlock picks the content block under a pruned body.
func mainBlock(body *html.Node) (*html.Node, string) {
	if n := findFirst(body, func(n *html.Node) bool { return n.DataAtom == atom.Main }); n != nil && textLen(n) >= minMainText {
		return n, "main"
	}
	if n := findFirst(body, func(n *html.Node) bool { return role(n) == "main" }); n != nil && textLen(n) >= minMainText {
		return n, "role=main"
	}
	var articles []*html.Node
	for n := range body.Descendants() {
		if n.Type == html.ElementNode && n.DataAtom == atom.Article {
			articles = append(articles, n)
		}
	}
	// One article is the page's subject; several are a listing, which the
	// scoring below keeps together.
	if len(articles) == 1 && textLen(articles[0]) >= minMainText {
		return articles[0], "article"
	}
	if n := bestScored(body); n != nil {
		return n, "scored " + describe(n)
	}
	return body, "body"
}

// bestScored is a small reader-view scorer: every paragraph-like element
// gives points (one, one per comma, one per 100 characters up to three) to
// its parent and half to its grandparent; a block's score is then scaled by
// the share of its text that is not link text. It returns nil when no block
// stands out, so the whole body is converted.
func bestScored(body *html.Node) *html.Node {
	scores := map[*html.Node]float64{}
	for n := range body.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.DataAtom {
		case atom.P, atom.Pre, atom.Td, atom.Blockquote, atom.Li, atom.Dd:
		default:
			continue
		}
		t := textOf(n)
		l := utf8.RuneCountInString(t)
		if l < 25 {
			continue
		}
		pts := 1 + float64(strings.Count(t, ",")) + min(float64(l)/100, 3)
		if p := n.Parent; p != nil {
			scores[p] += pts
			if g := p.Parent; g != nil {
				scores[g] += pts / 2
			}
		}
	}
	var best *html.Node
	var bestScore float64
	for n, s := range scores {
		if n.Type != html.ElementNode {
			continue
		}
		s *= 1 - linkDensity(n)
		if s > bestScore {
			best, bestScore = n, s
		}
	}
	if best == nil || bestScore < 5 || best == body {
		return nil
	}
	// The best block may be one section of many (a manual page's longest
	// section): take its ancestors while what they add is prose, not
	// link lists (a sidebar, a menu) — readability merges good siblings
	// the same way.
	for p := best.Parent; p != nil && p != body && p.Type == html.ElementNode; p = p.Parent {
		text, links := textLen(p), linkTextLen(p)
		addedText, addedLinks := text-textLen(best), links-linkTextLen(best)
		if addedText > 0 && float64(addedLinks)/float64(addedText) > 0.4 {
			break
		}
		best = p
	}
	return best
}

func linkDensity(n *html.Node) float64 {
	all := textLen(n)
	if all == 0 {
		return 0
	}
	return min(float64(linkTextLen(n))/float64(all), 1)
}

// linkTextLen is the length of the text inside links under n.
func linkTextLen(n *html.Node) int {
	links := 0
	for d := range n.Descendants() {
		if d.Type == html.ElementNode && d.DataAtom == atom.A {
			links += textLen(d)
		}
	}
	return links
}

func textOf(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return collapse(b.String())
}

func textLen(n *html.Node) int { return utf8.RuneCountInString(textOf(n)) }

func findFirst(root *html.Node, match func(*html.Node) bool) *html.Node {
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && match(n) {
			return n
		}
	}
	return nil
}

// describe names an element the way a selector would: div#content.post.
func describe(n *html.Node) string {
	s := n.Data
	if id, ok := attr(n, "id"); ok && id != "" {
		s += "#" + id
	}
	if cl, ok := attr(n, "class"); ok {
		for _, c := range strings.Fields(cl) {
			s += "." + c
		}
	}
	return s
}
