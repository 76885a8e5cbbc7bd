package ext

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/ext/bridge"
	"github.com/chromegate/chromegate/executor/ext/wire"
	"github.com/chromegate/chromegate/executor/webmcp"
)

// Page tools (WebMCP) through the extension: the same tracking as on the
// CDP backend (executor/webmcp), over chrome.debugger. The extension runs
// the few commands it needs (the webmcp wire method: the WebMCP domain,
// Page.getFrameTree, and Runtime.evaluate of the server's own page-tools
// script in the page's main world) and relays the domain's events and the
// main frame's navigations. Nothing crosses between the page's world and
// an isolated one: the script's answer is the evaluation's reply, which no
// page script can forge or read, so no nonce is needed to tell the
// extension's messages from the page's.
//
// Watching follows the tabs the extension's debugger is attached to (the
// tabs chromegate drives): attaching to every tab of the user's Chrome
// would put the debugging bar on all of them. page_tools_list of every
// tab does attach, to the http(s) tabs, when asked.

var (
	_ executor.PageTooler = (*Executor)(nil)
	_ executor.PageMCP    = (*Executor)(nil)
)

// extTools is the page-tool tracking of one extension connection.
type extTools struct {
	c   *bridge.Conn
	ids executor.TabIDs
	hub *webmcp.Hub

	mu   sync.Mutex
	tabs map[string]*webmcp.Tab // by Chrome's tab id
}

// toolsOf returns the tracking of c, created on first use.
func (be *Backend) toolsOf(c *bridge.Conn, ids executor.TabIDs) *extTools {
	be.mu.Lock()
	defer be.mu.Unlock()
	if be.tools == nil || be.tools.c != c {
		x := &extTools{c: c, ids: ids, hub: webmcp.NewHub(nil), tabs: map[string]*webmcp.Tab{}}
		c.OnEvent(x.onEvent)
		be.tools = x
	}
	return be.tools
}

func (x *extTools) tab(raw string) *webmcp.Tab {
	x.mu.Lock()
	defer x.mu.Unlock()
	t := x.tabs[raw]
	if t == nil {
		t = webmcp.NewTab(x.hub, x.ids.Stamp(raw), &extLink{x: x, raw: raw})
		x.tabs[raw] = t
	}
	return t
}

func (x *extTools) existing(raw string) *webmcp.Tab {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.tabs[raw]
}

func (x *extTools) drop(raw string) {
	x.mu.Lock()
	t := x.tabs[raw]
	delete(x.tabs, raw)
	x.mu.Unlock()
	if t != nil {
		t.Close()
	}
}

// onEvent routes the extension's events (on the connection's reader: it
// must not block, and webmcp.Tab's handlers do not).
func (x *extTools) onEvent(name string, data json.RawMessage) {
	var d struct {
		TabID  string         `json:"tabId"`
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	if json.Unmarshal(data, &d) != nil || d.TabID == "" {
		return
	}
	switch name {
	case wire.EventWebMCP:
		t := x.existing(d.TabID)
		if t == nil {
			return
		}
		if d.Method == "Page.frameNavigated" {
			t.Navigated()
		} else {
			t.Event(d.Method, d.Params)
		}
	case wire.EventAttached:
		if x.hub.Watched() {
			x.tab(d.TabID).Watch()
		}
	case wire.EventTabClosed:
		x.drop(d.TabID)
	case wire.EventDetached:
		// The domain went with the debugger: the next use sets it up again.
		x.drop(d.TabID)
	}
}

// extLink is a tab's DevTools protocol through the extension.
type extLink struct {
	x      *extTools
	raw    string
	closed atomic.Bool
}

// Open has nothing to do: the extension attaches its debugger with the
// first command.
func (l *extLink) Open(context.Context) error { return nil }

func (l *extLink) Send(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	if params == nil {
		params = map[string]any{}
	}
	frame := map[string]any{"tabId": l.raw, "method": method, "params": params}
	// The extension bounds the tool's answer by it before relaying it.
	if n, ok := params[webmcp.MaxOutputParam]; ok {
		params = maps.Clone(params)
		delete(params, webmcp.MaxOutputParam)
		frame["params"], frame["maxOutput"] = params, n
	}
	var out json.RawMessage
	err := l.x.c.Call(ctx, wire.MethodWebMCP, l.raw, frame, &out)
	if err != nil && executor.CodeOf(err) == executor.CodeTabNotFound {
		l.closed.Store(true)
	}
	return out, err
}

// URL is left to the frame tree the tracking reads.
func (l *extLink) URL() string { return "" }

func (l *extLink) Closed() bool {
	select {
	case <-l.x.c.Done():
		return true
	default:
	}
	return l.closed.Load()
}

func (e *Executor) tools() *extTools { return e.be.toolsOf(e.c, e.ids) }

// rawTab is Chrome's id of a tab ("" = the selected one, asked of the
// extension).
func (e *Executor) rawTab(ctx context.Context, tabID string) (string, error) {
	if tabID == "" {
		t, err := e.TabInfo(ctx, "")
		if err != nil {
			return "", err
		}
		tabID = t.ID
	}
	return e.ids.Raw(tabID)
}

func toolErr(err error) error {
	if errors.Is(err, webmcp.ErrTabClosed) {
		return executor.Errorf(executor.CodeTabNotFound, "the tab was closed").WithHint("call tabs_list to see the open tabs").Wrap(err)
	}
	return err
}

// PageTools lists the page tools of one tab, or of every http(s) tab.
func (e *Executor) PageTools(ctx context.Context, tabID string) ([]executor.PageTool, error) {
	x := e.tools()
	var raws []string
	if tabID != "" {
		raw, err := e.ids.Raw(tabID)
		if err != nil {
			return nil, err
		}
		raws = []string{raw}
	} else {
		tabs, err := e.Tabs(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range tabs {
			if strings.HasPrefix(t.URL, "http://") || strings.HasPrefix(t.URL, "https://") {
				if raw, err := e.ids.Raw(t.ID); err == nil {
					raws = append(raws, raw)
				}
			}
		}
	}
	out := []executor.PageTool{}
	for _, raw := range raws {
		list, err := x.tab(raw).Tools(ctx)
		if err != nil {
			if tabID != "" {
				return nil, toolErr(err)
			}
			continue
		}
		out = append(out, list...)
	}
	return out, nil
}

// CallPageTool calls a page tool of a tab.
func (e *Executor) CallPageTool(ctx context.Context, p executor.PageToolCallParams) (executor.PageToolResult, error) {
	raw, err := e.rawTab(ctx, p.TabID)
	if err != nil {
		return executor.PageToolResult{}, err
	}
	r, err := e.tools().tab(raw).Call(ctx, p)
	if err != nil {
		return executor.PageToolResult{}, toolErr(err)
	}
	t, err := e.TabInfo(ctx, e.ids.Stamp(raw))
	if err != nil {
		return executor.PageToolResult{}, err
	}
	r.PageState = executor.PageState{TabID: t.ID, URL: t.URL, Title: t.Title}
	return r, nil
}

// PageMCPRequest sends one request to the MCP server a tab's page runs.
func (e *Executor) PageMCPRequest(ctx context.Context, tabID, method string, params json.RawMessage, maxChars int) (json.RawMessage, bool, error) {
	raw, err := e.rawTab(ctx, tabID)
	if err != nil {
		return nil, false, err
	}
	out, cut, err := e.tools().tab(raw).MCP(ctx, method, params, maxChars)
	return out, cut, toolErr(err)
}

// WatchPageTools follows the page tools of the tabs the extension drives.
func (e *Executor) WatchPageTools(fn func(executor.PageToolsEvent)) (stop func()) {
	x := e.tools()
	stop = x.hub.Subscribe(fn)
	for _, raw := range e.c.AttachedTabs() {
		t := x.tab(raw)
		t.Watch()
		if cur := t.Merged(); len(cur) > 0 {
			x.hub.Publish(executor.PageToolsEvent{TabID: e.ids.Stamp(raw), Added: cur})
		}
	}
	return stop
}
