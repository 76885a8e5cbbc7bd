package realapps

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// trace prints every call and its result to stderr
// (CHROMEGATE_REALAPPS_TRACE=1), to see what the agent saw.
var trace = os.Getenv("CHROMEGATE_REALAPPS_TRACE") == "1"

// counter calls a server's tools and counts what that cost.
type counter struct {
	cs    *sdk.ClientSession
	stats Stats
	// last is the result of the last call.
	last *sdk.CallToolResult
	// Timeout bounds each call.
	timeout time.Duration
}

// call runs one tool and returns its text; a result with isError is an
// error naming the tool.
func (c *counter) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	start := time.Now()
	res, err := c.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	took := time.Since(start)
	c.stats.Wall += took
	c.stats.Calls++
	if c.stats.PerTool == nil {
		c.stats.PerTool = map[string][]time.Duration{}
	}
	c.stats.PerTool[tool] = append(c.stats.PerTool[tool], took)
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	c.last = res
	var b strings.Builder
	for _, ct := range res.Content {
		if t, ok := ct.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	txt := b.String()
	c.stats.Chars += utf8.RuneCountInString(txt)
	if trace {
		fmt.Fprintf(os.Stderr, "→ %s %v (%d ms)\n%s\n", tool, args, took.Milliseconds(), cut(txt, 3000))
	}
	if res.IsError {
		return "", fmt.Errorf("%s %v: %s", tool, args, cut(txt, 600))
	}
	return txt, nil
}

// refPattern is what a chromegate ref looks like (executor/scripts/refs.js).
var cgRef = regexp.MustCompile(`^[a-z]+[0-9]+$`)

// Chromegate drives chromegate's MCP tools by ref.
type Chromegate struct {
	c counter
	// Deltas: read an acting call's "changes" (applied by ref) or "outline"
	// field, and, once the server has sent one of them, take neither as
	// "nothing changed". Off (or before the server sent any), every act
	// makes the view stale and the next Find calls snapshot.
	Deltas bool
	// sends: the server has sent a change or an outline this session.
	sends bool
	// url is the page the view was made on.
	url   string
	view  View
	fresh bool
}

// NewChromegate adapts a session with a chromegate server.
func NewChromegate(cs *sdk.ClientSession, deltas bool) *Chromegate {
	return &Chromegate{c: counter{cs: cs, timeout: 90 * time.Second}, Deltas: deltas}
}

// act calls an acting tool on a ref. It refuses selector arguments: the
// agent works from the outline alone.
func (g *Chromegate) act(ctx context.Context, tool string, args map[string]any) error {
	for k, v := range args {
		if strings.Contains(k, "selector") {
			return fmt.Errorf("%s: the agent passes refs only, not %s", tool, k)
		}
		if strings.HasSuffix(k, "ref") && !cgRef.MatchString(fmt.Sprint(v)) {
			return fmt.Errorf("%s: %q is not a ref", tool, v)
		}
	}
	if _, err := g.c.call(ctx, tool, args); err != nil {
		return err
	}
	g.absorb(g.c.last)
	return nil
}

// structured is a chromegate result's structured content: its value and
// the page text that followed it (see mcp.Data).
func structured(res *sdk.CallToolResult) (head map[string]any, text string) {
	var d struct {
		Data map[string]any `json:"data"`
		Text string         `json:"text"`
	}
	if b, err := json.Marshal(res.StructuredContent); err == nil {
		_ = json.Unmarshal(b, &d)
	}
	return d.Data, d.Text
}

// absorb reads the outline or its change from an acting result.
func (g *Chromegate) absorb(res *sdk.CallToolResult) {
	g.fresh = false
	if !g.Deltas {
		return
	}
	head, _ := structured(res)
	if head == nil {
		return
	}
	switch {
	case head["outline"] != nil:
		g.view.Set(fmt.Sprint(head["outline"]))
		g.fresh, g.sends = true, true
	case head["changes"] != nil:
		g.sends = true
		if g.view.lines != nil {
			g.view.Apply(fmt.Sprint(head["changes"]))
			g.fresh = true
		}
	default:
		// Neither field: nothing changed, unless the server says why it
		// sent none (changes_note) or the tab is on another URL than the
		// view was made on.
		g.fresh = g.sends && g.view.lines != nil && head["changes_note"] == nil && fmt.Sprint(head["url"]) == g.url
	}
	if g.fresh || head["outline"] != nil {
		g.url = fmt.Sprint(head["url"])
	}
}

func (g *Chromegate) Navigate(ctx context.Context, url string) error {
	return g.act(ctx, "navigate", map[string]any{"url": url})
}

func (g *Chromegate) Controls(ctx context.Context, fresh bool) ([]Control, error) {
	if fresh || !g.fresh {
		if _, err := g.c.call(ctx, "snapshot", map[string]any{}); err != nil {
			return nil, err
		}
		head, text := structured(g.c.last)
		g.view.Set(text)
		g.fresh = true
		if u, ok := head["url"].(string); ok {
			g.url = u
		}
	}
	return ParseOutline(g.view.Text()), nil
}

func (g *Chromegate) Click(ctx context.Context, ref string) error {
	return g.act(ctx, "click", map[string]any{"ref": ref})
}

func (g *Chromegate) Fill(ctx context.Context, ref, text string) error {
	return g.act(ctx, "fill", map[string]any{"ref": ref, "value": text})
}

func (g *Chromegate) Submit(ctx context.Context, ref, text string) error {
	return g.act(ctx, "type", map[string]any{"ref": ref, "text": text, "clear": true, "press_enter": true})
}

func (g *Chromegate) Select(ctx context.Context, ref string, labels ...string) error {
	return g.act(ctx, "select_option", map[string]any{"ref": ref, "values": labels})
}

func (g *Chromegate) Stats() Stats { return g.c.stats }

// pwRef is what a Playwright MCP ref looks like.
var pwRef = regexp.MustCompile(`^[a-z]?[0-9]*e[0-9]+$`)

// Playwright drives Playwright MCP's tools by ref, reading the aria snapshot
// its acting results carry (default) or asking browser_snapshot for it
// (--snapshot-mode none).
type Playwright struct {
	c     counter
	ctls  []Control
	fresh bool
}

// NewPlaywright adapts a session with a Playwright MCP server.
func NewPlaywright(cs *sdk.ClientSession) *Playwright {
	return &Playwright{c: counter{cs: cs, timeout: 90 * time.Second}}
}

func (p *Playwright) act(ctx context.Context, tool string, args map[string]any) error {
	if t, ok := args["target"]; ok && !pwRef.MatchString(fmt.Sprint(t)) {
		return fmt.Errorf("%s: %q is not a ref", tool, t)
	}
	txt, err := p.c.call(ctx, tool, args)
	if err != nil {
		return err
	}
	p.absorb(txt)
	return nil
}

func (p *Playwright) absorb(txt string) {
	p.fresh = false
	if strings.Contains(txt, "[ref=") {
		p.ctls, p.fresh = ParseAria(txt), true
	}
}

func (p *Playwright) Navigate(ctx context.Context, url string) error {
	return p.act(ctx, "browser_navigate", map[string]any{"url": url})
}

func (p *Playwright) Controls(ctx context.Context, fresh bool) ([]Control, error) {
	if fresh || !p.fresh {
		txt, err := p.c.call(ctx, "browser_snapshot", map[string]any{})
		if err != nil {
			return nil, err
		}
		p.ctls, p.fresh = ParseAria(txt), true
	}
	return p.ctls, nil
}

func (p *Playwright) Click(ctx context.Context, ref string) error {
	return p.act(ctx, "browser_click", map[string]any{"target": ref})
}

func (p *Playwright) Fill(ctx context.Context, ref, text string) error {
	return p.act(ctx, "browser_type", map[string]any{"target": ref, "text": text})
}

func (p *Playwright) Submit(ctx context.Context, ref, text string) error {
	return p.act(ctx, "browser_type", map[string]any{"target": ref, "text": text, "submit": true})
}

func (p *Playwright) Select(ctx context.Context, ref string, labels ...string) error {
	return p.act(ctx, "browser_select_option", map[string]any{"target": ref, "values": labels})
}

func (p *Playwright) Stats() Stats { return p.c.stats }
