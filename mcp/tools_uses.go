package mcp

// toolFor is the built-in tool the server decides a step of its own as
// (Tool.Use): the outline of an acting call's changes is a snapshot call,
// a recording's shot a screenshot call, the --storage-state a state_load
// call. The table is fixed when NewServer returns, so reading it needs no
// lock.
func (s *Server) toolFor(u Use) (*entry, bool) {
	if u == UseNone {
		return nil, false
	}
	for _, e := range s.tools {
		if e.tool.Use == u {
			return e, true
		}
	}
	return nil, false
}
