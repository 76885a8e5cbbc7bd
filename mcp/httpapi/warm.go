package httpapi

import (
	"context"
	"strings"
	"time"
)

// Warmer is the optional interface of a Core that can open a session's
// browser context and first tab before its first call (mcp.Server does).
type Warmer interface {
	// WarmSession opens what session's first call would open, returning
	// when it is done or ctx ends.
	WarmSession(ctx context.Context, session string) error
}

// warmTimeout bounds a session's warm-up; its first call waits on what is
// still being opened then, as it would have opened it itself.
const warmTimeout = time.Minute

// warm opens a new context's browser context and first tab in the
// background (an MCP session's, "mcp:ID", or a minted handle's), unless
// Options.NoWarm: under load, creating a context's first page (a renderer
// process) is most of a session's first call, and a client sends that
// call after initialising, often after a model has thought about it. The
// warm-up counts as a call in flight on the context, so a session that
// ends meanwhile has its context closed once the warm-up is done, never
// left behind.
func (h *Handler) warm(key string) {
	w, ok := h.core.(Warmer)
	if !ok || h.opts.NoWarm {
		return
	}
	id, named := "", key
	if mcpID, isMCP := strings.CutPrefix(key, "mcp:"); isMCP {
		id, named = mcpID, ""
	}
	c, ok := h.begin(id, named)
	if !ok {
		return // shutting down
	}
	go func() {
		defer h.end(c)
		ctx, cancel := context.WithTimeout(context.Background(), warmTimeout)
		defer cancel()
		go func() {
			select {
			case <-h.stop: // the server is going: so is the browser
				cancel()
			case <-ctx.Done():
			}
		}()
		if err := w.WarmSession(ctx, key); err != nil {
			h.log.Debug("a session's warm-up did not finish; its first call opens what is missing", "session", key, "err", err)
		}
	}()
}
