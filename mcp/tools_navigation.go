package mcp

import (
	"context"

	"github.com/chromegate/chromegate/executor"
)

// Navigation: load a URL, move in history, reload. Each tool is one
// constructor: its declaration, its class, the facts the call path needs,
// its handler.

// groupNavigation is the README row of these tools.
var groupNavigation = &ToolGroup{Name: "navigation"}

func navigateTool() *Tool {
	return newTool(Tool{
		Name: "navigate", Title: "Navigate",
		Group:       groupNavigation,
		Output:      &Output{Value: pageOut{}},
		Description: "Load a URL in the tab. Start here.",
		ReadOnly:    no(), Destructive: no(), Action: ActionNavigate, URLArg: "url",
		Changes: true, TimeoutArg: true, WaitUntilArg: true,
	}, navigate)
}

func backTool() *Tool {
	t := historyTool("back", "Go back", "Go back in history.", executor.Executor.Back)
	t.Changes = true // when the move stays in the document (sameDocNav)
	return t
}

func forwardTool() *Tool {
	t := historyTool("forward", "Go forward", "Go forward in history.", executor.Executor.Forward)
	t.Changes = true // when the move stays in the document (sameDocNav)
	return t
}

func reloadTool() *Tool {
	return historyTool("reload", "Reload", "Reload the page.", executor.Executor.Reload)
}

func (c *Call) navResult(ctx context.Context, nr executor.NavResult) *Result {
	out := c.pageOf(ctx, nr.PageState)
	out.Status = nr.Status
	r := pageResult(out, out, nr.PageState)
	r.Landed = &nr.PageState
	return r
}

// navigateIn is navigate's input.
type navigateIn struct {
	URL   string `json:"url"`
	TabID string `json:"tab_id,omitempty"`
	// WaitUntil's schema is the tool's WaitUntilArg's.
	WaitUntil executor.WaitUntil `json:"wait_until,omitempty"`
}

func navigate(ctx context.Context, c *Call, a navigateIn) (*Result, error) {
	nr, err := c.Executor().Navigate(ctx, executor.NavigateParams{TabID: a.TabID, URL: a.URL, WaitUntil: a.WaitUntil})
	if err != nil {
		return nil, err
	}
	return c.navResult(ctx, nr), nil
}

// historyIn is the input of back, forward and reload.
type historyIn struct {
	TabID     string             `json:"tab_id,omitempty"`
	WaitUntil executor.WaitUntil `json:"wait_until,omitempty"`
}

func historyTool(name, title, desc string, move func(executor.Executor, context.Context, executor.HistoryParams) (executor.NavResult, error)) *Tool {
	return newTool(Tool{
		Name: name, Title: title,
		Group:       groupNavigation,
		Output:      &Output{Value: pageOut{}},
		Description: desc,
		ReadOnly:    no(), Destructive: no(), Action: ActionNavigate,
		TimeoutArg: true, WaitUntilArg: true,
	}, func(ctx context.Context, c *Call, a historyIn) (*Result, error) {
		nr, err := move(c.Executor(), ctx, executor.HistoryParams{TabID: a.TabID, WaitUntil: a.WaitUntil})
		if err != nil {
			return nil, err
		}
		return c.navResult(ctx, nr), nil
	})
}
