package mcp

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// Status: the server and its browser, never starting one. Each tool is one
// constructor: its declaration, its class, the facts the call path needs,
// its handler.

// groupStatus is the README row of these tools.
var groupStatus = &ToolGroup{Name: "status"}

func chromeStatusTool() *Tool {
	return newTool(Tool{
		Name: "chrome_status", Title: "Status",
		Group:       groupStatus,
		Output:      &Output{Value: map[string]any{}},
		Description: "Server and browser state; never starts a browser.",
		ReadOnly:    yes(), Idempotent: true, OpenWorld: no(), Action: ActionStatus,
		NoBrowser: true,
	}, status)
}

// statusTimeout bounds the live executor's Status call: chrome_status is
// what a user runs when things hang, so it must not hang itself.
const statusTimeout = 2 * time.Second

func status(ctx context.Context, c *Call, _ noArgs) (*Result, error) {
	s := c.srv
	out := map[string]any{
		"version":  s.opts.Version,
		"backends": s.opts.Manager.Backends(),
		"session":  c.Session,
	}
	if ex := c.Executor(); ex != nil {
		sctx, cancel := context.WithTimeout(ctx, statusTimeout)
		st, err := ex.Status(sctx)
		cancel()
		if err != nil {
			e := executor.AsError(err)
			out["browser"] = map[string]any{"live": true, "backend": ex.Backend(), "error": fmt.Sprintf("%s: %s", e.Code, e.Message)}
		} else {
			out["browser"] = map[string]any{
				"live": true, "backend": st.Backend, "browser": st.Browser, "version": st.Version,
				"headless": st.Headless, "attached": st.Attached, "profile": st.Profile,
				"tabs": st.Tabs, "selected_tab": st.SelectedTab, "download_dir": tenantDownloads(st.DownloadDir, c.Principal),
			}
		}
	} else {
		out["browser"] = map[string]any{"live": false, "note": "no browser yet; the next browser call starts one"}
	}
	if v := s.opts.Secrets; v.Len() > 0 {
		// The names are what the model writes (<secret:NAME>); the
		// origins say where each may go. Never a value.
		out["secrets"] = v.Origins()
	}
	if s.opts.Status != nil {
		extra := s.opts.Status(ctx)
		// Extras cannot overwrite what the server itself reports.
		for k, v := range maps.All(extra) {
			if _, taken := out[k]; !taken {
				out[k] = v
			}
		}
	}
	return &Result{Value: out}, nil
}

// tenantDownloads is where p's downloads land under the backend's
// downloads directory (executor.TenantRoot).
func tenantDownloads(dir string, p Principal) string {
	if dir == "" {
		return ""
	}
	return executor.TenantRoot(dir, p.Tenant())
}
