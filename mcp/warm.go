package mcp

import "context"

// WarmSession opens a Manager session's browser context and first tab
// before its first call (executor.Manager.WarmSession), for an entry point
// whose sessions start before they call (an MCP session over HTTP). It is
// the httpapi.Warmer of the server.
func (s *Server) WarmSession(ctx context.Context, session string) error {
	return s.opts.Manager.WarmSession(ctx, session)
}
