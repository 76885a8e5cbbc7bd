package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
	"github.com/chromegate/chromegate/policy"
)

// Checkpoints: in a fleet, a session that outlives its MCP session (a
// minted handle, a named context) has its state saved after each acting
// call — the cookies and storage of its context, and the page each tab was
// on — where another replica can restore it. The replica that takes the
// session over (its own replica died, or the load balancer moved it)
// restores the checkpoint into the new context before the first call runs
// there, so the agent stays logged in and on its page.
//
// What a checkpoint does not carry: open dialogs, a page's in-memory state
// (script variables, a form typed into and not submitted), downloads in
// progress, the tabs' history, and the tab ids (the agent lists tabs
// again: its old ids answer STALE_TAB). Each origin is decided as
// state_save's and state_load's are, with source "checkpoint": what the
// policy does not let a state hold, a checkpoint does not hold either.
//
// A checkpoint that cannot be saved does not fail the call (the action
// happened); it is logged, and the session's last checkpoint stands.

// Checkpoints keeps sessions' checkpoints where every replica of a fleet
// reads them (httpapi's, over the fleet's Redis). A Front that implements
// it is the server's Checkpoints (see Attach).
//
// Implementations must be safe for concurrent use.
type Checkpoints interface {
	// Keeps reports whether session is checkpointed.
	Keeps(session string) bool
	// SaveCheckpoint stores data as session's checkpoint.
	SaveCheckpoint(ctx context.Context, session string, data []byte) error
	// LoadCheckpoint returns session's checkpoint, if it has one.
	LoadCheckpoint(ctx context.Context, session string) ([]byte, bool, error)
}

// checkpoint is what a session's checkpoint holds.
type checkpoint struct {
	State executor.StorageState `json:"state"`
	// Tabs are the URLs of the session's tabs, in order; Selected the
	// index of the selected one.
	Tabs     []string  `json:"tabs"`
	Selected int       `json:"selected"`
	Saved    time.Time `json:"saved"`
}

// checkpointTimeout bounds saving or restoring one checkpoint.
const checkpointTimeout = 15 * time.Second

// checkpointStage saves the session's checkpoint after an acting call, on
// the executor the call ran on, whatever the call's outcome (a call that
// failed may have acted).
func (s *Server) checkpointStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		res, err := next(ctx, c)
		if cp := s.opts.Checkpoints; cp != nil && c.ex != nil && acting(c.Tool) && cp.Keeps(c.Session) {
			s.saveCheckpoint(ctx, c, cp)
		}
		return res, err
	}
}

// acting reports whether t may change the page or the browser: every tool
// not declared read-only.
func acting(t *Tool) bool { return t.ReadOnly == nil || !*t.ReadOnly }

func (s *Server) saveCheckpoint(ctx context.Context, c *Call, cp Checkpoints) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpointTimeout)
	defer cancel()
	start := time.Now()
	st, _, err := helpers.SaveState(ctx, c.ex, helpers.SaveOptions{Decide: s.stateCall(c, UseCheckpoint, c.ex).originDecider(policy.StateSave, policy.StateCheckpoint)})
	if err != nil {
		s.log.Warn("a session's checkpoint could not be read; its last one stands", "session", c.Session, "err", err)
		return
	}
	ck := checkpoint{State: st, Tabs: []string{}}
	if tabs, err := c.ex.Tabs(ctx); err == nil {
		for i, t := range tabs {
			ck.Tabs = append(ck.Tabs, t.URL)
			if t.Selected {
				ck.Selected = i
			}
		}
	}
	same, err := json.Marshal(ck)
	if err != nil {
		s.log.Error("encode a checkpoint", "session", c.Session, "err", err)
		return
	}
	// A call that changed nothing the checkpoint holds (a click that
	// opened a menu) stores nothing: the last checkpoint this executor
	// stored stands. Keyed by executor, not session: a context restored
	// anew stores its first checkpoint whatever an earlier copy stored.
	sum := sha256.Sum256(same)
	if last, ok := s.checkpointed.load(c.ex); ok && last.([sha256.Size]byte) == sum {
		return
	}
	ck.Saved = start.UTC()
	data, err := json.Marshal(ck)
	if err != nil {
		s.log.Error("encode a checkpoint", "session", c.Session, "err", err)
		return
	}
	if err := cp.SaveCheckpoint(ctx, c.Session, data); err != nil {
		s.log.Warn("a session's checkpoint could not be stored; its last one stands", "session", c.Session, "err", err)
		return
	}
	s.checkpointed.store(c.ex, sum)
	s.log.Debug("checkpoint saved", "session", c.Session, "bytes", len(data), "cookies", len(st.Cookies),
		"origins", len(st.Origins), "tabs", len(ck.Tabs), "ms", time.Since(start).Milliseconds())
}

// restoreCheckpoint restores session's checkpoint, if it has one, into ex
// once, before the first call that runs on it: after a failover, the
// replica taking the session over starts where the session was.
func (s *Server) restoreCheckpoint(ctx context.Context, c *Call, ex executor.Executor) {
	cp := s.opts.Checkpoints
	if cp == nil || !cp.Keeps(c.Session) {
		return
	}
	s.restored.once(ex).Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), checkpointTimeout)
		defer cancel()
		data, ok, err := cp.LoadCheckpoint(ctx, c.Session)
		if err != nil {
			s.log.Error("a session's checkpoint could not be loaded; the session starts afresh", "session", c.Session, "err", err)
			return
		}
		if !ok {
			return
		}
		var ck checkpoint
		if err := json.Unmarshal(data, &ck); err != nil {
			s.log.Error("a session's checkpoint does not parse; the session starts afresh", "session", c.Session, "err", err)
			return
		}
		decide := s.stateCall(c, UseRestore, ex).originDecider(policy.StateLoad, policy.StateCheckpoint)
		rep, err := helpers.RestoreState(ctx, ex, ck.State, helpers.RestoreOptions{Decide: decide, OpenTabs: true})
		if err != nil {
			s.log.Error("a session's checkpoint could not be restored", "session", c.Session, "err", err)
			return
		}
		opened := s.reopenTabs(ctx, ex, ck, decide)
		s.log.Info("session restored from its checkpoint", "session", c.Session, "principal", c.Principal.Name,
			"saved", ck.Saved, "origins", len(rep.Origins), "cookies", rep.Cookies, "skipped", len(rep.Skipped), "tabs", opened)
	})
}

// reopenTabs opens the checkpoint's pages: the first in the context's
// tab, the others in new tabs, each URL's origin decided as a restored
// state's; the selected one is selected last. It returns how many it
// opened.
func (s *Server) reopenTabs(ctx context.Context, ex executor.Executor, ck checkpoint, decide helpers.OriginDecider) int {
	tabs, err := ex.Tabs(ctx)
	if err != nil {
		return 0
	}
	first := ""
	if len(tabs) > 0 {
		first = tabs[0].ID
	}
	opened, selected := 0, ""
	for i, u := range ck.Tabs {
		origin := executor.OriginOf(u)
		if origin == "null" || decide(ctx, origin) != nil {
			continue
		}
		var id string
		if opened == 0 && first != "" {
			if _, err := ex.SelectTab(ctx, first); err != nil {
				continue
			}
			if _, err := ex.Navigate(ctx, executor.NavigateParams{URL: u, WaitUntil: "load"}); err != nil {
				s.log.Debug("a checkpoint's page did not load again", "err", err)
			}
			id = first
		} else {
			t, err := ex.NewTab(ctx, executor.NewTabParams{URL: u})
			if err != nil {
				continue
			}
			id = t.ID
		}
		opened++
		if i == ck.Selected {
			selected = id
		}
	}
	if selected != "" {
		_, _ = ex.SelectTab(ctx, selected)
	}
	return opened
}

// stateCall is c as a call of the state tool of use u (state_save,
// state_load) on ex: a checkpoint is decided as that tool's, whatever call
// it follows or precedes (a get_text does not restore a cookie as a read).
// c's own tool stands when the server has no state tools.
func (s *Server) stateCall(c *Call, u Use, ex executor.Executor) *Call {
	sc := &Call{Tool: c.Tool, Args: map[string]any{}, Session: c.Session, Principal: c.Principal, srv: s, ex: ex}
	if e, ok := s.toolFor(u); ok {
		sc.Tool = e.tool
		sc.Args = map[string]any{"name": "--checkpoint"}
	}
	return sc
}
