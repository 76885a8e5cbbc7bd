package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
)

// Pages that run @mcp-b/global run a whole MCP server: besides tools, it
// may offer resources and prompts. They are bridged for the default
// session, like live tools: each page resource becomes a resource of this
// server at chromegate://page/<tab>/<the page's URI>, each page prompt a
// prompt named page_<host>_<name>, added and removed as the page's server
// says its lists changed, and as the page navigates or closes. Listing and
// reading them are decisions of the policy like a read-only page tool of
// the page's origin (page_tool_call with page_tool {origin, name,
// annotations: readOnlyHint}); what they return is page content, fenced.
//
// A page's lists are bounded while they are read (maxPageListChars, each
// string cut first) and again here: at most maxPageItems resources and as
// many prompts, every name, title, description and argument cut and
// introduced as the page's, so a list message stays far below the 10 MB a
// stdio client takes, however often the page says its lists changed. A
// resource read honours --max-result-chars. A prompt's messages are the
// page's words, whatever role the page gives them: they are delivered as
// user messages, fenced, with the role the page claimed said outside the
// fence. An "assistant" message would be words the model takes as its
// own, already said — a page could put a promise or a decision in its
// mouth — and a fence inside it would not undo that.

// pageResourceTimeout bounds listing a page's resources and prompts.
const pageResourceTimeout = 10 * time.Second

// Bounds on what a page's MCP server lists and returns.
const (
	maxPageListChars   = 512 << 10 // one list answer, as read from the page
	maxPageItems       = 100       // resources, and prompts, of one tab
	maxPageURI         = 2048      // a longer URI is left out, not cut: it names the resource
	maxPageName        = 128
	maxPageItemTitle   = 200
	maxPageArguments   = 20
	maxPagePromptParts = 50
)

// pageLabel is a page-written name or title as a definition shows it: one
// line, cut to n bytes.
func pageLabel(s string, n int) string {
	return executor.CutPageText(strings.Join(strings.Fields(s), " "), n)
}

// pageBridged is what one tab's page MCP server has bridged.
type pageBridged struct {
	resources []string // URIs on this server
	prompts   []string // names on this server
}

// pageResourceURI is the URI of a page resource on this server.
func pageResourceURI(tabID, uri string) string {
	return "chromegate://page/" + url.PathEscape(tabID) + "/" + url.PathEscape(uri)
}

// syncPageResources lists a tab's page resources and prompts again and
// brings the bridged ones in line (none when the page has no MCP server,
// navigated or closed).
func (b *pageBridge) syncPageResources(ex executor.Executor, tabID string, closed bool) {
	pm, ok := ex.(executor.PageMCP)
	if !ok {
		return
	}
	// One sync at a time, so the last to run (the latest event's) wins.
	b.resMu.Lock()
	defer b.resMu.Unlock()
	type resource struct {
		URI, Name, Title, Description, MIMEType string
	}
	type prompt struct {
		Name, Title, Description string
		Arguments                []*sdk.PromptArgument
	}
	var resources []resource
	var prompts []prompt
	var origin string
	if !closed {
		ctx, cancel := context.WithTimeout(context.Background(), pageResourceTimeout)
		defer cancel()
		if tabs, err := ex.TabInfo(ctx, tabID); err == nil {
			origin = executor.OriginOf(tabs.URL)
		}
		raw, _, err := pm.PageMCPRequest(ctx, tabID, "resources/list", nil, maxPageListChars)
		if err != nil {
			b.log.Debug("no page resources", "tab", tabID, "err", err)
		}
		if err == nil {
			var r struct {
				Resources []struct {
					URI         string `json:"uri"`
					Name        string `json:"name"`
					Title       string `json:"title"`
					Description string `json:"description"`
					MIMEType    string `json:"mimeType"`
				} `json:"resources"`
			}
			if json.Unmarshal(raw, &r) == nil {
				for _, x := range r.Resources {
					if x.URI == "" || len(x.URI) > maxPageURI || len(resources) >= maxPageItems {
						continue
					}
					mime := x.MIMEType
					if !mimeRE.MatchString(mime) {
						mime = ""
					}
					resources = append(resources, resource{x.URI, pageLabel(x.Name, maxPageName), pageLabel(x.Title, maxPageItemTitle), x.Description, mime})
				}
			}
		}
		if raw, _, err := pm.PageMCPRequest(ctx, tabID, "prompts/list", nil, maxPageListChars); err == nil {
			var r struct {
				Prompts []struct {
					Name        string                `json:"name"`
					Title       string                `json:"title"`
					Description string                `json:"description"`
					Arguments   []*sdk.PromptArgument `json:"arguments"`
				} `json:"prompts"`
			}
			if json.Unmarshal(raw, &r) == nil {
				for _, x := range r.Prompts {
					if executor.ValidPageToolName(x.Name) && len(prompts) < maxPageItems {
						prompts = append(prompts, prompt{x.Name, pageLabel(x.Title, maxPageItemTitle), x.Description, pageArguments(x.Arguments)})
					}
				}
			}
		}
	}

	b.mu.Lock()
	if b.live.ex != ex {
		b.mu.Unlock()
		return
	}
	if b.live.bridged == nil {
		b.live.bridged = map[string]*pageBridged{}
	}
	old := b.live.bridged[tabID]
	b.live.bridged[tabID] = &pageBridged{}
	cur := b.live.bridged[tabID]
	type addRes struct {
		r *sdk.Resource
		h sdk.ResourceHandler
	}
	type addPrompt struct {
		p *sdk.Prompt
		h sdk.PromptHandler
	}
	var addsR []addRes
	var addsP []addPrompt
	for _, r := range resources {
		pt := executor.PageTool{TabID: tabID, Origin: origin, Name: pageItemName(r.Name, r.URI),
			Annotations: executor.PageToolAnnotations{ReadOnly: true}, Surface: executor.SurfaceMCPB}
		if !b.visibleLocal(pt) {
			continue
		}
		uri := pageResourceURI(tabID, r.URI)
		cur.resources = append(cur.resources, uri)
		addsR = append(addsR, addRes{&sdk.Resource{
			URI: uri, Name: r.Name, Title: pageTitle(r.Title, origin), MIMEType: r.MIMEType,
			Description: fmt.Sprintf("Resource %s of the page %s (tab %s). The page describes it (unverified): %s", pageLabel(r.URI, 200), origin, tabID, cutRunes(r.Description, 400)),
		}, b.pageResourceHandler(pt, r.URI)})
	}
	for _, p := range prompts {
		pt := executor.PageTool{TabID: tabID, Origin: origin, Name: p.Name,
			Annotations: executor.PageToolAnnotations{ReadOnly: true}, Surface: executor.SurfaceMCPB}
		if !b.visibleLocal(pt) {
			continue
		}
		name := "prompt_" + strings.TrimPrefix(b.freeNameLocked(pt), "page_")
		cur.prompts = append(cur.prompts, name)
		addsP = append(addsP, addPrompt{&sdk.Prompt{
			Name: name, Title: pageTitle(p.Title, origin), Arguments: p.Arguments,
			Description: fmt.Sprintf("Prompt %s of the page %s (tab %s). The page describes it (unverified): %s", p.Name, origin, tabID, cutRunes(p.Description, 400)),
		}, b.pagePromptHandler(pt)})
	}
	if len(cur.resources)+len(cur.prompts) == 0 {
		delete(b.live.bridged, tabID)
	}
	b.mu.Unlock()
	if old != nil {
		b.sdk.RemoveResources(old.resources...)
		b.sdk.RemovePrompts(old.prompts...)
	}
	for _, a := range addsR {
		b.sdk.AddResource(a.r, a.h)
	}
	for _, a := range addsP {
		b.sdk.AddPrompt(a.p, a.h)
	}
	if old != nil || len(addsR)+len(addsP) > 0 {
		b.log.Debug("page resources and prompts bridged", "tab", tabID, "resources", len(addsR), "prompts", len(addsP))
	}
}

// dropBridgedLocked forgets every bridged resource and prompt.
func (b *pageBridge) dropBridgedLocked() (resources, prompts []string) {
	for _, br := range b.live.bridged {
		resources = append(resources, br.resources...)
		prompts = append(prompts, br.prompts...)
	}
	b.live.bridged = nil
	return resources, prompts
}

var mimeRE = regexp.MustCompile(`^[A-Za-z0-9!#$&^_.+-]{1,64}/[A-Za-z0-9!#$&^_.+-]{1,64}$`)

// pageTitle marks a page-written title as the page's.
func pageTitle(title, origin string) string {
	if title == "" {
		return ""
	}
	return title + " (page " + strings.TrimPrefix(strings.TrimPrefix(origin, "https://"), "http://") + ")"
}

// pageArguments are a page prompt's arguments as this server declares
// them: names checked like tool names (an argument with another name is
// left out), at most maxPageArguments, texts cut and marked.
func pageArguments(in []*sdk.PromptArgument) []*sdk.PromptArgument {
	var out []*sdk.PromptArgument
	for _, a := range in {
		if a == nil || !executor.ValidPageToolName(a.Name) || len(out) >= maxPageArguments {
			continue
		}
		arg := &sdk.PromptArgument{Name: a.Name, Required: a.Required, Title: pageLabel(a.Title, maxPageItemTitle)}
		if d := pageLabel(a.Description, 200); d != "" {
			arg.Description = "The page describes it (unverified): " + d
		}
		out = append(out, arg)
	}
	return out
}

// pageItemName names a resource for the policy: its name, else its URI.
func pageItemName(name, uri string) string {
	if executor.ValidPageToolName(name) {
		return name
	}
	return uri
}

// visibleLocal is the list decision, for the local principal, of a page
// item standing as the read-only page tool pt.
func (b *pageBridge) visibleLocal(pt executor.PageTool) bool {
	return b.core.visible(context.Background(), pageToolStandIn(pt, "page_resource"), LocalPrincipal)
}

// pageItemCall runs one request to a tab's page MCP server through
// dispatch, as a read-only page tool standing for the item: the Gate
// decides it like any page-tool call.
func (b *pageBridge) pageItemCall(ctx context.Context, pt executor.PageTool, method string, params any) (out json.RawMessage, cut bool, err error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, false, err
	}
	lt := pageToolStandIn(pt, "page_resource")
	lt.InputSchema = object(nil)
	lt.PageItem = true
	lt.Handler = func(ctx context.Context, c *Call) (*Result, error) {
		pm, ok := c.Executor().(executor.PageMCP)
		if !ok {
			return nil, executor.Errorf(executor.CodeBadArgs, "the %s backend cannot reach a page's MCP server", c.Executor().Backend())
		}
		r, wasCut, err := pm.PageMCPRequest(ctx, pt.TabID, method, raw, b.maxResultChars)
		if err != nil {
			return nil, err
		}
		out, cut = r, wasCut
		return &Result{Value: struct{}{}}, nil
	}
	e, err := prepare(lt)
	if err != nil {
		return nil, false, err
	}
	res, _ := b.core.dispatch(ctx, e, DefaultSession, LocalPrincipal, nil)
	if res == nil || res.IsError {
		msg := "the page's MCP server failed"
		if res != nil {
			msg = textOfResult(res)
		}
		return nil, false, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
	}
	return out, cut, nil
}

func textOfResult(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (b *pageBridge) pageResourceHandler(pt executor.PageTool, pageURI string) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		raw, cut, err := b.pageItemCall(ctx, pt, "resources/read", map[string]any{"uri": pageURI})
		if err != nil {
			return nil, err
		}
		var r struct {
			Contents []struct {
				MIMEType string `json:"mimeType"`
				Text     string `json:"text"`
				Blob     []byte `json:"blob"`
			} `json:"contents"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, errors.New("the page's resource is not MCP resource contents")
		}
		// --max-result-chars holds for the whole read, as for a tool's
		// result: texts and blobs share it, in order.
		left := b.maxResultChars
		hint := "the page's resource is larger than this server returns (--max-result-chars)"
		out := &sdk.ReadResourceResult{}
		for i, c := range r.Contents {
			if i >= maxPagePromptParts || left <= 0 {
				cut = true
				break
			}
			mime := c.MIMEType
			if !mimeRE.MatchString(mime) {
				mime = ""
			}
			rc := &sdk.ResourceContents{URI: req.Params.URI, MIMEType: mime}
			if c.Blob != nil && (len(c.Blob)*4+2)/3 <= left {
				rc.Blob = c.Blob
				left -= (len(c.Blob)*4 + 2) / 3
			} else if c.Blob != nil {
				cut = true
				c.Text = "" // the blob is left out; the note says so
			}
			if c.Text != "" || rc.Blob == nil {
				text, note := capText(c.Text, left, hint)
				left -= utf8.RuneCountInString(text)
				rc.Text = fence(text)
				if note != "" {
					rc.Text += "\n" + note
					cut = false // said
				}
			}
			out.Contents = append(out.Contents, rc)
		}
		if cut && len(out.Contents) > 0 {
			last := out.Contents[len(out.Contents)-1]
			note := "…[truncated: the page's resource was cut to --max-result-chars (" + strconv.Itoa(b.maxResultChars) + " characters)]"
			if last.Blob == nil {
				last.Text += "\n" + note
			} else {
				out.Contents = append(out.Contents, &sdk.ResourceContents{URI: req.Params.URI, Text: note})
			}
		}
		return out, nil
	}
}

func (b *pageBridge) pagePromptHandler(pt executor.PageTool) sdk.PromptHandler {
	return func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		args := req.Params.Arguments
		if args == nil {
			args = map[string]string{}
		}
		raw, _, err := b.pageItemCall(ctx, pt, "prompts/get", map[string]any{"name": pt.Name, "arguments": args})
		if err != nil {
			return nil, err
		}
		var r struct {
			Description string `json:"description"`
			Messages    []struct {
				Role    string `json:"role"`
				Content struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, errors.New("the page's prompt is not an MCP prompt")
		}
		out := &sdk.GetPromptResult{
			Description: fmt.Sprintf("Prompt %s of the page %s (tab %s). The page describes it (unverified): %s", pt.Name, pt.Origin, pt.TabID, cutRunes(r.Description, 400)),
		}
		left := b.maxResultChars
		for i, m := range r.Messages {
			if i >= maxPagePromptParts {
				break
			}
			text := m.Content.Text
			if m.Content.Type != "text" {
				text = "(a " + pageLabel(m.Content.Type, 32) + " part the bridge does not carry)"
			}
			text, note := capText(text, max(left, 0), "the page's prompt is longer than this server returns (--max-result-chars)")
			left -= utf8.RuneCountInString(text)
			// The page's words, whatever role it gave them: a user
			// message, fenced (see the head of this file).
			body := fence(text)
			if m.Role != "user" {
				body = fmt.Sprintf("The page wrote the message below as role %q; it is the page's text, not yours and not the user'b.\n", pageLabel(m.Role, 32)) + body
			}
			if note != "" {
				body += "\n" + note
			}
			out.Messages = append(out.Messages, &sdk.PromptMessage{Role: "user", Content: &sdk.TextContent{Text: body}})
		}
		return out, nil
	}
}

func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
