package executor

import "context"

// Warmer is the optional interface of an Executor that can get ready for
// its session's first call ahead of it: the CDP backend opens the tab the
// first call would open (a page and its renderer process), the costliest
// part of a new session's first call.
type Warmer interface {
	// Warm prepares what the first call would otherwise prepare. It
	// changes nothing a call could not have changed: it opens no tab
	// when one is open. It returns when ctx ends.
	Warm(ctx context.Context) error
}

// WarmSession opens session's executor (as the first call would) and warms
// it when it is a Warmer, so the first call of a session that has just
// started finds its browser context and tab ready. It returns when both
// are done or ctx ends. An entry point that can close session meanwhile
// must hold its close until WarmSession returns, as it does for a call.
func (m *Manager) WarmSession(ctx context.Context, session string) error {
	ex, err := m.Ready(ctx, session)
	if err != nil {
		return err
	}
	if w, ok := ex.(Warmer); ok {
		return w.Warm(ctx)
	}
	return nil
}
