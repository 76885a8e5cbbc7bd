package mcp

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Call is one tool call as the Gate and the handler see it.
type Call struct {
	Tool *Tool
	// Args are the arguments after schema validation, with defaults
	// applied. The Gate and the handler read the same map, so what the
	// policy decided on is what runs.
	Args      map[string]any
	Session   string
	Principal Principal
	// Page reads the tab the call acts on (the tab_id argument, or the
	// selected tab) from the executor, once per call, when first asked. It
	// is for the policy's page input; it fails when no browser is running
	// (NoBrowser tools) or the tab does not exist.
	Page func(ctx context.Context) (executor.Tab, error)
	// Plugin is set on a step of a plugin tool: which plugin runs it, and
	// which step it is. The Gate decides the step as if the caller had
	// called its tool, and tells the policy where it comes from.
	Plugin *PluginStep

	// PageTool resolves, for the tools that call a page tool, which one:
	// read from the executor once per call when first asked, for the
	// policy's page_tool input and for the handler. Nil for other tools.
	PageTool func(ctx context.Context) (executor.PageTool, error)

	// Points hit-tests the call's points (a call at coordinates), once
	// per call, for the Gate and the handler; nil for a call without.
	Points func(ctx context.Context) ([]executor.Hit, error)

	// SecretNames are the operator's secrets the call refers to
	// (<secret:NAME> in its Tool.SecretRefs), each once, read before the
	// Gate: the policy decides on them with the page's origin.
	SecretNames []string
	refs        bool // an argument holds <secret:…>: a reference or the escape

	ex     executor.Executor
	srv    *Server
	entry  *entry              // the tool and its resolved schema
	raw    []byte              // the arguments as the caller sent them
	reply  *sdk.CallToolResult // the MCP reply, once the envelope rendered it
	note   string              // the egress note: what the policy refused the call's pages
	before *executor.Tab       // what Page returned, if the Gate asked
	peeked bool                // before is what the backend last heard of (PeekPage), not read from the browser
	noPeek bool                // the page moved under a peeked decision: read it
	frame  *executor.FrameDoc  // the frame document the call's first ref is in, if the Gate decided one
	mark   uint64              // the session's last request denial when the call began
	asked  bool                // a person was asked about the call (asking.go): its page is not outside the policy
	rec    *callRecord         // the call's record, when the server keeps one

	landing *helpers.LandingWatch // the watch for navigations armLanding began, if any
}

// expectURL is the URL a PeekPage handler must find the page at: the one
// the Gate decided on, when it was peeked; "" when it was read.
func (c *Call) expectURL() string {
	if c.peeked && c.before != nil {
		return c.before.URL
	}
	return ""
}

// Executor returns the executor the call runs on: set for the Gate and the
// handler inside Manager.Do; for a NoBrowser tool, the live executor or nil.
func (c *Call) Executor() executor.Executor { return c.ex }

// Bind decodes the validated arguments into v, a pointer to a struct whose
// json tags are the schema's property names. It goes from Args, never from
// the raw request, so the handler sees exactly what the Gate saw.
func (c *Call) Bind(v any) error {
	b, err := json.Marshal(c.Args)
	if err != nil {
		return executor.Errorf(executor.CodeInternal, "re-encode arguments: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return executor.Errorf(executor.CodeBadArgs, "arguments: %v", err)
	}
	return nil
}

// TabID returns the tab_id argument, "" (the selected tab) when absent.
func (c *Call) TabID() string {
	if c.Tool.PageTool != nil {
		return c.Tool.PageTool.TabID
	}
	return argString(c.Args, "tab_id")
}

// Target returns the element target named by prefix+"selector" and
// prefix+"ref"; the zero Target when neither is set.
func (c *Call) Target(prefix string) executor.Target {
	return targetOf(c.Args, prefix)
}

func targetOf(args map[string]any, prefix string) executor.Target {
	return executor.Target{Selector: argString(args, prefix+"selector"), Ref: argString(args, prefix+"ref")}
}

func argString(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

// pageFunc memoises one TabInfo read per call, and keeps it so dispatch
// can tell whether the call moved the tab to another page.
func (c *Call) pageFunc(ex executor.Executor) func(context.Context) (executor.Tab, error) {
	var (
		once sync.Once
		tab  executor.Tab
		err  error
	)
	tabID := c.TabID()
	return func(ctx context.Context) (executor.Tab, error) {
		once.Do(func() {
			if ex == nil {
				err = executor.Errorf(executor.CodeNoBackend, "no browser is running")
				return
			}
			if pk, ok := ex.(executor.TabPeeker); ok && c.Tool.PeekPage && !c.noPeek {
				if t, ok := pk.PeekTab(tabID); ok {
					tab, c.before, c.peeked = t, &t, true
					return
				}
			}
			tab, err = ex.TabInfo(ctx, tabID)
			if err == nil {
				c.before = &tab
			}
		})
		return tab, err
	}
}
