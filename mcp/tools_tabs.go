package mcp

import (
	"context"
	"slices"

	"github.com/chromegate/chromegate/executor"
)

// Tabs: list, select, open and close the browser's tabs. Each tool is one
// constructor: its declaration, its class, the facts the call path needs,
// its handler.

// groupTabs is the README row of these tools.
var groupTabs = &ToolGroup{Name: "tabs"}

func tabsListTool() *Tool {
	return newTool(Tool{
		Name: "tabs_list", Title: "List tabs",
		Group:       groupTabs,
		Output:      &Output{Value: tabsOut{}},
		Description: "Open tabs: tab_id, url, title.",
		ReadOnly:    yes(), Idempotent: true, Action: ActionTabs,
	}, tabsList)
}

func tabSelectTool() *Tool {
	return newTool(Tool{
		Name: "tab_select", Title: "Select tab",
		Group:       groupTabs,
		Output:      &Output{Value: tabOut{}},
		Description: "Select a tab; calls without tab_id then act on it.",
		ReadOnly:    no(), Destructive: no(), Idempotent: true, Action: ActionTabs,
	}, tabSelect)
}

func tabNewTool() *Tool {
	return newTool(Tool{
		Name: "tab_new", Title: "New tab",
		Group:       groupTabs,
		Output:      &Output{Value: tabOut{}},
		Description: "Open a tab, at url if given, and select it.",
		ReadOnly:    no(), Destructive: no(), Action: ActionNavigate,
		URLArg: "url", ActionWithoutURL: ActionTabs, // a navigation only with a url
		TimeoutArg: true, WaitUntilArg: true,
	}, tabNew)
}

func tabCloseTool() *Tool {
	return newTool(Tool{
		Name: "tab_close", Title: "Close tab",
		Group:       groupTabs,
		Output:      &Output{Value: tabCloseOut{}},
		Description: "Close a tab (default: selected). Returns the tabs left.",
		// Mutating: closing a tab can lose the user's unsaved work in
		// their own Chrome.
		ReadOnly: no(), Action: ActionTabs, Mutating: true,
	}, tabClose)
}

type tabOut struct {
	TabID    string `json:"tab_id"`
	URL      string `json:"url"`
	Title    string `json:"title,omitempty"`
	Selected bool   `json:"selected,omitempty"`
	// Note says why URL and title are left out (a page outside the policy).
	Note string `json:"note,omitempty"`
	// Dialogs is a dialog the page opened as tab_new loaded it.
	Dialogs []dialogOut `json:"dialogs,omitempty"`
}

func tabOf(t executor.Tab) tabOut {
	return tabOut{TabID: t.ID, URL: t.URL, Title: t.Title, Selected: t.Selected}
}

// titled says whether any of tabs shows a title: the page's words.
func titled(tabs ...tabOut) bool {
	return slices.ContainsFunc(tabs, func(t tabOut) bool { return t.Title != "" })
}

func tabsList(ctx context.Context, c *Call, _ noArgs) (*Result, error) {
	tabs, err := c.Executor().Tabs(ctx)
	if err != nil {
		return nil, err
	}
	out, hidden := c.visibleTabs(ctx, tabs)
	return &Result{Value: tabsOut{Tabs: out, Hidden: hidden, Note: hiddenNote(hidden)}, Untrusted: titled(out...)}, nil
}

// tabSelectIn is tab_select's input: the tab, required.
type tabSelectIn struct {
	TabID string `json:"tab_id"`
}

func tabSelect(ctx context.Context, c *Call, a tabSelectIn) (*Result, error) {
	t, err := c.Executor().SelectTab(ctx, a.TabID)
	if err != nil {
		return nil, err
	}
	out, _ := c.visibleTabs(ctx, []executor.Tab{t})
	return &Result{Value: out[0], Untrusted: titled(out...)}, nil
}

// tabNewIn is tab_new's input: a URL to load, if any.
type tabNewIn struct {
	URL       string             `json:"url,omitempty"`
	WaitUntil executor.WaitUntil `json:"wait_until,omitempty"`
}

func tabNew(ctx context.Context, c *Call, a tabNewIn) (*Result, error) {
	t, err := c.Executor().NewTab(ctx, executor.NewTabParams{URL: a.URL, WaitUntil: a.WaitUntil})
	if err != nil {
		return nil, err
	}
	out := tabOf(t)
	out.Dialogs = c.tabDialog(ctx, t)
	r := &Result{Value: out, Untrusted: titled(out) || wroteDialogs(out.Dialogs)}
	if a.URL != "" {
		r.Landed = &executor.PageState{TabID: t.ID, URL: t.URL, Title: t.Title}
	}
	return r, nil
}

func tabClose(ctx context.Context, c *Call, a tabIn) (*Result, error) {
	// Read the tab first (the Gate may already have), so the reply can say
	// which tab "the selected one" was.
	t, err := c.Page(ctx)
	if err != nil {
		return nil, err
	}
	ex := c.Executor()
	if err := ex.CloseTab(ctx, t.ID); err != nil {
		return nil, err
	}
	tabs, err := ex.Tabs(ctx)
	if err != nil {
		return nil, err
	}
	out, _ := c.visibleTabs(ctx, tabs)
	return &Result{Value: tabCloseOut{t.ID, out}, Untrusted: titled(out...)}, nil
}
