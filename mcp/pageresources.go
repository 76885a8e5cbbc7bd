package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

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

// pageResourceTimeout bounds listing a page's resources and prompts.
const pageResourceTimeout = 10 * time.Second

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
func (s *Server) syncPageResources(ex executor.Executor, tabID string, closed bool) {
	pm, ok := ex.(executor.PageMCP)
	if !ok {
		return
	}
	// One sync at a time, so the last to run (the latest event's) wins.
	s.resMu.Lock()
	defer s.resMu.Unlock()
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
		raw, err := pm.PageMCPRequest(ctx, tabID, "resources/list", nil)
		if err != nil {
			s.log.Debug("no page resources", "tab", tabID, "err", err)
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
					if x.URI != "" && len(resources) < executor.MaxPageTools {
						resources = append(resources, resource{x.URI, x.Name, x.Title, x.Description, x.MIMEType})
					}
				}
			}
		}
		if raw, err := pm.PageMCPRequest(ctx, tabID, "prompts/list", nil); err == nil {
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
					if executor.ValidPageToolName(x.Name) && len(prompts) < executor.MaxPageTools {
						prompts = append(prompts, prompt{x.Name, x.Title, x.Description, x.Arguments})
					}
				}
			}
		}
	}

	s.mu.Lock()
	if s.live.ex != ex {
		s.mu.Unlock()
		return
	}
	if s.live.bridged == nil {
		s.live.bridged = map[string]*pageBridged{}
	}
	old := s.live.bridged[tabID]
	s.live.bridged[tabID] = &pageBridged{}
	cur := s.live.bridged[tabID]
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
		if !s.visibleLocal(pt) {
			continue
		}
		uri := pageResourceURI(tabID, r.URI)
		cur.resources = append(cur.resources, uri)
		addsR = append(addsR, addRes{&sdk.Resource{
			URI: uri, Name: r.Name, Title: r.Title, MIMEType: r.MIMEType,
			Description: fmt.Sprintf("Resource %s of the page %s (tab %s). The page describes it (unverified): %s", r.URI, origin, tabID, cutRunes(r.Description, 400)),
		}, s.pageResourceHandler(pt, r.URI)})
	}
	for _, p := range prompts {
		pt := executor.PageTool{TabID: tabID, Origin: origin, Name: p.Name,
			Annotations: executor.PageToolAnnotations{ReadOnly: true}, Surface: executor.SurfaceMCPB}
		if !s.visibleLocal(pt) {
			continue
		}
		name := "prompt_" + strings.TrimPrefix(s.freeNameLocked(pt), "page_")
		cur.prompts = append(cur.prompts, name)
		addsP = append(addsP, addPrompt{&sdk.Prompt{
			Name: name, Title: p.Title, Arguments: p.Arguments,
			Description: fmt.Sprintf("Prompt %s of the page %s (tab %s). The page describes it (unverified): %s", p.Name, origin, tabID, cutRunes(p.Description, 400)),
		}, s.pagePromptHandler(pt)})
	}
	if len(cur.resources)+len(cur.prompts) == 0 {
		delete(s.live.bridged, tabID)
	}
	s.mu.Unlock()
	if old != nil {
		s.sdk.RemoveResources(old.resources...)
		s.sdk.RemovePrompts(old.prompts...)
	}
	for _, a := range addsR {
		s.sdk.AddResource(a.r, a.h)
	}
	for _, a := range addsP {
		s.sdk.AddPrompt(a.p, a.h)
	}
	if old != nil || len(addsR)+len(addsP) > 0 {
		s.log.Debug("page resources and prompts bridged", "tab", tabID, "resources", len(addsR), "prompts", len(addsP))
	}
}

// dropBridgedLocked forgets every bridged resource and prompt.
func (s *Server) dropBridgedLocked() (resources, prompts []string) {
	for _, b := range s.live.bridged {
		resources = append(resources, b.resources...)
		prompts = append(prompts, b.prompts...)
	}
	s.live.bridged = nil
	return resources, prompts
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
func (s *Server) visibleLocal(pt executor.PageTool) bool {
	lt, err := liveTool(pt, "page_resource")
	return err == nil && s.visible(context.Background(), lt, LocalPrincipal)
}

// pageItemCall runs one request to a tab's page MCP server through
// dispatch, as a read-only page tool standing for the item: the Gate
// decides it like any page-tool call.
func (s *Server) pageItemCall(ctx context.Context, pt executor.PageTool, method string, params any) (json.RawMessage, error) {
	var out json.RawMessage
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	lt, err := liveTool(pt, "page_resource")
	if err != nil {
		return nil, err
	}
	lt.InputSchema = object(nil)
	lt.PageItem = true
	lt.Handler = func(ctx context.Context, c *Call) (*Result, error) {
		pm, ok := c.Executor().(executor.PageMCP)
		if !ok {
			return nil, executor.Errorf(executor.CodeBadArgs, "the %s backend cannot reach a page's MCP server", c.Executor().Backend())
		}
		r, err := pm.PageMCPRequest(ctx, pt.TabID, method, raw)
		if err != nil {
			return nil, err
		}
		out = r
		return &Result{Value: struct{}{}}, nil
	}
	e, err := prepare(lt)
	if err != nil {
		return nil, err
	}
	res, _ := s.dispatch(ctx, e, DefaultSession, LocalPrincipal, nil)
	if res == nil || res.IsError {
		msg := "the page's MCP server failed"
		if res != nil {
			msg = textOfResult(res)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
	}
	return out, nil
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

func (s *Server) pageResourceHandler(pt executor.PageTool, pageURI string) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		raw, err := s.pageItemCall(ctx, pt, "resources/read", map[string]any{"uri": pageURI})
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
		out := &sdk.ReadResourceResult{}
		for _, c := range r.Contents {
			rc := &sdk.ResourceContents{URI: req.Params.URI, MIMEType: c.MIMEType, Blob: c.Blob}
			if c.Text != "" || c.Blob == nil {
				rc.Text = fence(c.Text)
			}
			out.Contents = append(out.Contents, rc)
		}
		return out, nil
	}
}

func (s *Server) pagePromptHandler(pt executor.PageTool) sdk.PromptHandler {
	return func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		args := req.Params.Arguments
		if args == nil {
			args = map[string]string{}
		}
		raw, err := s.pageItemCall(ctx, pt, "prompts/get", map[string]any{"name": pt.Name, "arguments": args})
		if err != nil {
			return nil, err
		}
		var r struct {
			Description string `json:"description"`
			Messages    []struct {
				Role    sdk.Role `json:"role"`
				Content struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, errors.New("the page's prompt is not an MCP prompt")
		}
		out := &sdk.GetPromptResult{Description: r.Description}
		for _, m := range r.Messages {
			role := m.Role
			if role != "assistant" {
				role = "user"
			}
			text := m.Content.Text
			if m.Content.Type != "text" {
				text = "(a " + m.Content.Type + " part the bridge does not carry)"
			}
			// A page's prompt is the page's words: fenced, like any page content.
			out.Messages = append(out.Messages, &sdk.PromptMessage{Role: role, Content: &sdk.TextContent{Text: fence(text)}})
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
