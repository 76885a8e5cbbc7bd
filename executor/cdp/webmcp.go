package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/webmcp"
	"github.com/playwright-community/playwright-go"
)

// Page tools (WebMCP) on the CDP backend: each tab's executor/webmcp.Tab
// runs over a CDP session of its own (created on first need) with the
// WebMCP domain enabled; Playwright's framenavigated tells it of
// navigations. The in-page script runs through Runtime.evaluate on that
// session, which needs no Runtime.enable (which pages can detect).

var (
	_ executor.PageTooler = (*Session)(nil)
	_ executor.PageMCP    = (*Session)(nil)
)

// tabLink is a tab's CDP session for executor/webmcp.
type tabLink struct {
	s *Session
	t *tab

	mu   sync.Mutex
	sess playwright.CDPSession
	nav  sync.Once
}

func (l *tabLink) session() playwright.CDPSession {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sess
}

// Open creates the session and routes its WebMCP events to the tab.
func (l *tabLink) Open(ctx context.Context) error {
	if l.session() != nil {
		return nil
	}
	page := l.t.page
	type res struct {
		sess playwright.CDPSession
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		sess, err := page.Context().NewCDPSession(page)
		ch <- res{sess, err}
	}()
	var r res
	select {
	case r = <-ch:
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.sess != nil {
				_ = r.sess.Detach()
			}
		}()
		return ctx.Err()
	}
	if r.err != nil {
		return r.err
	}
	pt := l.t.pt
	for _, ev := range []string{"WebMCP.toolsAdded", "WebMCP.toolsRemoved", "WebMCP.toolResponded"} {
		r.sess.On(ev, func(params map[string]any) { pt.Event(ev, params) })
	}
	l.nav.Do(func() {
		page.OnFrameNavigated(func(f playwright.Frame) {
			if f == page.MainFrame() {
				pt.Navigated()
			}
		})
	})
	l.mu.Lock()
	l.sess = r.sess
	l.mu.Unlock()
	return nil
}

// Send runs a command on the session; playwright-go takes no context, so
// the wait is bounded here.
func (l *tabLink) Send(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	sess := l.session()
	if sess == nil {
		return nil, errors.New("the page-tool session is not open")
	}
	// Playwright hands the tool's answer over whole, so the bound is
	// applied after it (webmcp.Tab); it is not the browser's to see.
	if _, ok := params[webmcp.MaxOutputParam]; ok {
		params = maps.Clone(params)
		delete(params, webmcp.MaxOutputParam)
	}
	type res struct {
		v   any
		err error
	}
	ch := make(chan res, 1)
	go func() {
		v, err := sess.Send(method, params)
		ch <- res{v, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return json.Marshal(r.v)
	case <-ctx.Done():
		return nil, executor.AsError(ctx.Err())
	}
}

func (l *tabLink) URL() string  { return l.t.page.URL() }
func (l *tabLink) Closed() bool { return l.t.page.IsClosed() }

func newPageTools(s *Session, t *tab) *webmcp.Tab {
	return webmcp.NewTab(s.hub, s.ids.Stamp(t.raw), &tabLink{s: s, t: t})
}

// WatchPageTools reports every change of the page tools of this session's
// tabs to fn, starting with the tools already registered.
func (s *Session) WatchPageTools(fn func(executor.PageToolsEvent)) (stop func()) {
	stop = s.hub.Subscribe(fn)
	s.mu.Lock()
	tabs := slices.Clone(s.order)
	s.mu.Unlock()
	for _, t := range tabs {
		t.pt.Watch()
		// The tools known so far, as if they had just been added.
		if cur := t.pt.Merged(); len(cur) > 0 {
			s.hub.Publish(executor.PageToolsEvent{TabID: s.ids.Stamp(t.raw), Added: cur})
		}
	}
	return stop
}

// PageTools lists the tools of one tab ("" = every tab).
func (s *Session) PageTools(ctx context.Context, tabID string) ([]executor.PageTool, error) {
	var tabs []*tab
	if tabID != "" {
		if _, err := s.ids.Raw(tabID); err != nil {
			return nil, err
		}
		t, err := s.resolveTab(tabID)
		if err != nil {
			return nil, err
		}
		tabs = []*tab{t}
	} else {
		s.mu.Lock()
		tabs = slices.Clone(s.order)
		s.mu.Unlock()
	}
	return await(ctx, s, "page_tools_list", func() ([]executor.PageTool, error) {
		out := []executor.PageTool{}
		var wg sync.WaitGroup
		lists := make([][]executor.PageTool, len(tabs))
		errs := make([]error, len(tabs))
		for i, t := range tabs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lists[i], errs[i] = t.pt.Tools(ctx)
			}()
		}
		wg.Wait()
		for i, l := range lists {
			if errs[i] != nil && tabID != "" {
				return nil, s.toolErr("page_tools_list", errs[i])
			}
			out = append(out, l...)
		}
		return out, nil
	})
}

// CallPageTool calls a tool of a tab's page.
func (s *Session) CallPageTool(ctx context.Context, p executor.PageToolCallParams) (executor.PageToolResult, error) {
	if _, err := s.ids.Raw(p.TabID); err != nil {
		return executor.PageToolResult{}, err
	}
	t, err := s.resolveTab(p.TabID)
	if err != nil {
		return executor.PageToolResult{}, err
	}
	r, err := t.pt.Call(ctx, p)
	if err != nil {
		return executor.PageToolResult{}, s.toolErr("page_tool_call", err)
	}
	c := s.newCall(ctx, t)
	r.PageState = c.state()
	return r, nil
}

// PageMCPRequest sends one request to the MCP server a tab's page runs
// (@mcp-b/global).
func (s *Session) PageMCPRequest(ctx context.Context, tabID, method string, params json.RawMessage, maxChars int) (json.RawMessage, bool, error) {
	if _, err := s.ids.Raw(tabID); err != nil {
		return nil, false, err
	}
	t, err := s.resolveTab(tabID)
	if err != nil {
		return nil, false, err
	}
	out, cut, err := t.pt.MCP(ctx, method, params, maxChars)
	if err != nil {
		return nil, false, s.toolErr("page_mcp", err)
	}
	return out, cut, nil
}

// toolErr maps a page-tool error: the contract's errors stay, a closed tab
// is TAB_NOT_FOUND, anything else as any Playwright error.
func (s *Session) toolErr(what string, err error) error {
	if errors.Is(err, webmcp.ErrTabClosed) {
		return executor.Errorf(executor.CodeTabNotFound, "%s failed: the tab was closed", what).
			WithHint("call tabs_list to see the open tabs").Wrap(err)
	}
	return s.mapErr(what, err)
}
