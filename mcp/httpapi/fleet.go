package httpapi

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/fleet"
)

// In a fleet (Options.Fleet), the contexts that outlive an MCP session —
// minted handles and named contexts — are entered in the fleet's session
// directory, and any replica can serve them:
//
//   - Before a call uses such a context, its entry is visited: it says
//     whose the context is and which replica holds it. A handle the
//     directory does not know, or knows as another principal's, is refused
//     as an unknown handle is on one server (errUnknownHandle).
//   - A replica asked for a context another replica holds takes it over
//     (the load balancer moved it: that replica died, or left the
//     balancer's set): it becomes the owner, and the context starts here
//     from the session's checkpoint (mcp/checkpoint.go). A replica that
//     still holds a context the directory gives to another closes its
//     copy first, so it never serves a state older than the checkpoint.
//   - A principal's handles are counted across the fleet for
//     MaxSessionsPerKey (with its MCP sessions on this replica).
//   - Redis unreachable: a context this replica holds goes on being served
//     (nothing shared is needed to serve it; its checkpoints wait for
//     Redis), and one it does not hold is refused with
//     mcp.CodeSharedState: whose it is cannot be checked.
//
// MCP sessions of protocol 2025-11-25 are the SDK's, in this replica's
// memory: a client whose replica died gets 404 for its session and starts
// a new one (the specification's rule); presenting its handle, it finds
// its context where it was.

// errSharedContext is the refusal of a context whose owner cannot be
// checked.
func errSharedContext(err error) error {
	return executor.Errorf(mcp.CodeSharedState, "the session cannot be looked up in the fleet's directory: %v", err).
		WithHint("retry in a few seconds; if it persists, the operator's Redis is down").
		WithRetryAfter(2 * time.Second)
}

// visitShared settles, in the fleet's directory, that p may use the
// context key (a handle when handle) and that this replica holds it. held
// says whether this replica has an entry of p's for it.
func (h *Handler) visitShared(ctx context.Context, p mcp.Principal, key string, handle, held bool) error {
	f := h.opts.Fleet
	e, found, err := f.Visit(ctx, key, p.Name, h.idleOfKind(handle), !handle)
	switch {
	case err != nil && held:
		h.log.Debug("the fleet's directory is unreachable; serving a context held here", "err", err)
		return nil
	case err != nil:
		return errSharedContext(err)
	case !found || e.Principal != p.Name:
		if held {
			// Closed on another replica, or idle past its time.
			h.retire(key)
		}
		return errUnknownHandle()
	case e.Owner != f.Replica():
		if err := f.Adopt(ctx, key); err != nil {
			return errSharedContext(err)
		}
		h.log.Info("took a session over from another replica", "from", e.Owner, "principal", p.Name)
		if held {
			h.dropStale(key)
		}
	}
	h.mu.Lock()
	if h.named[key] == nil {
		h.named[key] = &ctxEntry{owner: p.Name, handle: handle, last: time.Now()}
	}
	h.mu.Unlock()
	return nil
}

// dropStale closes this replica's copy of a context the directory gave to
// another replica meanwhile, unless a call runs on it: the next call
// starts it again from the checkpoint.
func (h *Handler) dropStale(key string) {
	h.mu.Lock()
	ce := h.named[key]
	idle := ce != nil && ce.inflight == 0
	h.mu.Unlock()
	if idle {
		h.closeContext(key)
	}
}

func (h *Handler) idleOfKind(handle bool) time.Duration {
	if handle {
		return h.opts.SessionTimeout
	}
	return h.opts.NamedSessionIdle
}

// mintShared enters a new handle for p in the fleet's directory, within
// p's limit across the fleet (less its MCP sessions here, local).
func (h *Handler) mintShared(ctx context.Context, p mcp.Principal, handle string, local int) error {
	n, ok, err := h.opts.Fleet.Mint(ctx, "handle:"+handle, p.Name, h.opts.MaxSessionsPerKey-local, h.opts.SessionTimeout)
	if err != nil {
		return errSharedContext(err)
	}
	if !ok {
		return executor.Errorf(executor.CodeBadArgs, "%s already has %d sessions open across the fleet (each is a browser context)", p.Name, n+local).
			WithHint("close one (DELETE /mcp/sessions/HANDLE) or wait for an idle one to time out")
	}
	return nil
}

// forgetShared removes a closed context from the fleet's directory, with
// its checkpoint.
func (h *Handler) forgetShared(ctx context.Context, p mcp.Principal, key string) {
	if h.opts.Fleet == nil {
		return
	}
	if err := h.opts.Fleet.Forget(ctx, key, p.Name); err != nil {
		h.log.Warn("a closed session stays in the fleet's directory until it idles out", "err", err)
	}
}

// Keeps implements mcp.Checkpoints: a fleet with a checkpoint key keeps
// the checkpoints of handles and named contexts (an MCP session's own
// context ends with it).
func (h *Handler) Keeps(session string) bool {
	return h.opts.Fleet != nil && h.opts.Fleet.Checkpoints() &&
		(strings.HasPrefix(session, "handle:") || strings.HasPrefix(session, "named:"))
}

// SaveCheckpoint implements mcp.Checkpoints.
func (h *Handler) SaveCheckpoint(ctx context.Context, session string, data []byte) error {
	return h.opts.Fleet.SaveCheckpoint(ctx, session, data, h.idleOfKind(strings.HasPrefix(session, "handle:")))
}

// LoadCheckpoint implements mcp.Checkpoints.
func (h *Handler) LoadCheckpoint(ctx context.Context, session string) ([]byte, bool, error) {
	data, ok, err := h.opts.Fleet.LoadCheckpoint(ctx, session)
	if errors.Is(err, fleet.ErrNoCheckpoints) {
		return nil, false, nil
	}
	return data, ok, err
}

var _ mcp.Checkpoints = (*Handler)(nil)
