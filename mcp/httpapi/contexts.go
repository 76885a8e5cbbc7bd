package httpapi

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/mcp"
)

// Browser contexts over HTTP, and how a request picks one.
//
// A request's browser context is, in this order:
//
//  1. the one its SessionHeader names: a handle the server minted (POST
//     /mcp/sessions) for the principal presenting it, or a name the client
//     chose (its principal's own: two principals using one name get two
//     contexts);
//  2. on a stateful MCP session (protocol 2025-11-25 and before), that
//     session's own context, closed when the session ends;
//  3. otherwise (a stateless request of protocol 2026-07-28, or REST), the
//     principal's context named "default".
//
// A handle is a credential of nothing: it is bound to the principal that
// minted it, and presented by any other it is refused with the words an
// unknown handle gets, so a handle seen in a log tells another principal
// neither that it exists nor whose it is. Minted handles count against
// Options.MaxSessionsPerKey with the principal's MCP sessions (each is a
// browser context) and close after Options.SessionTimeout idle, like MCP
// sessions; named contexts, the default among them, after
// Options.NamedSessionIdle, at most MaxNamedSessions a principal.
//
// Every handle starts with handlePrefix, which no name may: a load
// balancer can route by the header alone (hash it), and a name is never
// read as a handle or the other way round.

const (
	handlePrefix = "cgs_"
	// defaultContext is the name of the context a request that presents
	// no handle and has no MCP session uses.
	defaultContext = "default"
)

// ctxEntry is a browser context the Handler keeps beside MCP sessions: a
// named one or a minted handle's.
type ctxEntry struct {
	owner    string
	handle   bool // minted: counts with MCP sessions, idles out after SessionTimeout
	retired  bool // deleted while calls ran on it: closed when the last ends
	inflight int
	last     time.Time
}

// contextKey is the Manager session of what a request's SessionHeader
// presents (name or handle), for principal p.
func (h *Handler) contextKey(ctx context.Context, p mcp.Principal, presented string) (string, error) {
	if strings.HasPrefix(presented, handlePrefix) {
		return h.handleKey(ctx, p, presented)
	}
	return h.namedKey(ctx, p, presented)
}

// errUnknownHandle is the one refusal of a handle that is not the
// caller's, whatever the reason.
func errUnknownHandle() error {
	return executor.Errorf(executor.CodeBadArgs, "the session handle is unknown, has ended or belongs to another principal").
		WithHint("mint a handle with POST /mcp/sessions, or send no " + SessionHeader + " to use your default context")
}

// handleKey is the Manager session of a minted handle, if p minted it.
func (h *Handler) handleKey(ctx context.Context, p mcp.Principal, handle string) (string, error) {
	key := "handle:" + handle
	h.mu.Lock()
	ce := h.named[key]
	mine := ce != nil && ce.handle && ce.owner == p.Name
	h.mu.Unlock()
	if ce != nil && !mine {
		return "", errUnknownHandle()
	}
	if h.opts.Fleet != nil {
		if err := h.visitShared(ctx, p, key, true, mine); err != nil {
			return "", err
		}
		return key, nil
	}
	if !mine {
		return "", errUnknownHandle()
	}
	return key, nil
}

// namedKey is the Manager session of the principal's named context.
func (h *Handler) namedKey(ctx context.Context, p mcp.Principal, name string) (string, error) {
	if !sessionNameRE.MatchString(name) || strings.HasPrefix(name, handlePrefix) {
		return "", executor.Errorf(executor.CodeBadArgs, "session name %q: use 1-64 of A-Z a-z 0-9 _ . - (starting with a letter or digit, not %q)", name, handlePrefix)
	}
	key := "named:" + p.Name + ":" + name
	h.mu.Lock()
	held := h.named[key] != nil
	if !held {
		n := 0
		for _, ce := range h.named {
			if ce.owner == p.Name && !ce.handle {
				n++
			}
		}
		if n >= MaxNamedSessions {
			h.mu.Unlock()
			return "", executor.Errorf(executor.CodeBadArgs, "%s already has %d named sessions", p.Name, n).
				WithHint("reuse a session name; an unused named session is closed after it has been idle")
		}
		if h.opts.Fleet == nil {
			h.named[key] = &ctxEntry{owner: p.Name, last: time.Now()}
		}
	}
	h.mu.Unlock()
	if h.opts.Fleet != nil {
		// The directory enters it here unless another replica holds it
		// (then this one takes it over); visitShared makes the entry.
		if err := h.visitShared(ctx, p, key, false, held); err != nil {
			return "", err
		}
	}
	return key, nil
}

// openContexts counts p's browser contexts that the session limit bounds:
// live MCP sessions and minted handles. The caller holds h.mu.
func (h *Handler) openContexts(owner string) int {
	n := 0
	for _, ms := range h.mcp {
		if ms.owner == owner && !ms.ended {
			n++
		}
	}
	for _, ce := range h.named {
		if ce.owner == owner && ce.handle {
			n++
		}
	}
	return n
}

// mint makes a new handle for p, within p's session limit.
func (h *Handler) mint(ctx context.Context, p mcp.Principal) (string, error) {
	handle := handlePrefix + rand.Text()
	if h.opts.Fleet != nil {
		h.mu.Lock()
		local := h.openContexts(p.Name) - h.handlesOf(p.Name)
		h.mu.Unlock()
		if err := h.mintShared(ctx, p, handle, local); err != nil {
			return "", err
		}
		h.mu.Lock()
		h.named["handle:"+handle] = &ctxEntry{owner: p.Name, handle: true, last: time.Now()}
		h.mu.Unlock()
		return handle, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := h.openContexts(p.Name); n >= h.opts.MaxSessionsPerKey {
		return "", executor.Errorf(executor.CodeBadArgs, "%s already has %d sessions open (each is a browser context)", p.Name, n).
			WithHint("close one (DELETE /mcp/sessions/HANDLE) or wait for an idle one to time out")
	}
	h.named["handle:"+handle] = &ctxEntry{owner: p.Name, handle: true, last: time.Now()}
	return handle, nil
}

// handlesOf counts the minted handles of owner this replica holds. The
// caller holds h.mu.
func (h *Handler) handlesOf(owner string) int {
	n := 0
	for _, ce := range h.named {
		if ce.owner == owner && ce.handle {
			n++
		}
	}
	return n
}

// sessionInfo is a context as GET /mcp/sessions lists it.
type sessionInfo struct {
	Session      string `json:"session"`
	Kind         string `json:"kind"` // handle | named
	Busy         bool   `json:"busy"`
	IdleTimeoutS int    `json:"idle_timeout_s"`
	IdleS        int    `json:"idle_s"`
}

// routeSessions serves the handles of the caller: POST mints one, GET
// lists the caller's contexts, DELETE closes one of them. Under /mcp/ for
// MCP clients and /api/v1/ for REST ones; the same contexts either way.
func (h *Handler) routeSessions(prefix string) {
	api := strings.HasPrefix(prefix, "/api/")
	h.mux.HandleFunc("POST "+prefix+"/sessions", func(w http.ResponseWriter, r *http.Request) {
		p, _ := principalFrom(r.Context())
		handle, err := h.mint(r.Context(), p)
		if err != nil {
			status, e := http.StatusTooManyRequests, executor.AsError(err)
			if e.Code == mcp.CodeSharedState {
				status = http.StatusServiceUnavailable
				w.Header().Set("Retry-After", "2")
			}
			h.refuse(w, api, status, string(e.Code), err.Error(), e.Hint)
			return
		}
		if h.opts.Fleet == nil {
			// In a fleet the handle's calls go where the balancer
			// hashes it, which may not be here: nothing is warmed
			// for them on the replica that minted it.
			h.warm("handle:" + handle)
		}
		w.Header().Set(SessionHeader, handle)
		writeJSON(w, http.StatusCreated, sessionInfo{Session: handle, Kind: "handle", IdleTimeoutS: int(h.opts.SessionTimeout.Seconds())})
	})
	h.mux.HandleFunc("GET "+prefix+"/sessions", func(w http.ResponseWriter, r *http.Request) {
		p, _ := principalFrom(r.Context())
		writeJSON(w, http.StatusOK, map[string]any{"sessions": h.contextsOf(p)})
	})
	h.mux.HandleFunc("DELETE "+prefix+"/sessions/{session}", func(w http.ResponseWriter, r *http.Request) {
		p, _ := principalFrom(r.Context())
		presented := r.PathValue("session")
		key, err := h.existingKey(r.Context(), p, presented)
		if err != nil {
			h.refuse(w, api, http.StatusNotFound, string(executor.CodeBadArgs), err.Error(), "GET "+prefix+"/sessions lists yours")
			return
		}
		h.retire(key)
		h.forgetShared(r.Context(), p, key)
		w.WriteHeader(http.StatusNoContent)
	})
}

// existingKey is the Manager session of a context p has now, without
// making one.
func (h *Handler) existingKey(ctx context.Context, p mcp.Principal, presented string) (string, error) {
	if strings.HasPrefix(presented, handlePrefix) {
		return h.handleKey(ctx, p, presented)
	}
	key := "named:" + p.Name + ":" + presented
	h.mu.Lock()
	defer h.mu.Unlock()
	if ce := h.named[key]; ce == nil || ce.owner != p.Name {
		return "", fmt.Errorf("you have no session %q", presented)
	}
	return key, nil
}

func (h *Handler) contextsOf(p mcp.Principal) []sessionInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []sessionInfo{}
	now := time.Now()
	for key, ce := range h.named {
		if ce.owner != p.Name {
			continue
		}
		si := sessionInfo{Kind: "named", Busy: ce.inflight > 0, IdleS: int(now.Sub(ce.last).Seconds()), IdleTimeoutS: int(h.idleOf(ce).Seconds())}
		if ce.handle {
			si.Kind, si.Session = "handle", strings.TrimPrefix(key, "handle:")
		} else {
			si.Session = strings.TrimPrefix(key, "named:"+p.Name+":")
		}
		out = append(out, si)
	}
	slices.SortFunc(out, func(a, b sessionInfo) int { return strings.Compare(a.Session, b.Session) })
	return out
}

// retire forgets a context and closes it once no call uses it: now, or
// when its last call ends.
func (h *Handler) retire(key string) {
	h.mu.Lock()
	ce := h.named[key]
	closeNow := ce != nil && ce.inflight == 0
	if ce != nil {
		delete(h.named, key)
		ce.retired = true
	}
	h.mu.Unlock()
	if closeNow {
		h.closeContext(key)
	}
}

func (h *Handler) idleOf(ce *ctxEntry) time.Duration {
	if ce.handle {
		return h.opts.SessionTimeout
	}
	return h.opts.NamedSessionIdle
}

// reap closes contexts that have been idle for their idle time.
func (h *Handler) reap() {
	every := min(min(h.opts.NamedSessionIdle, h.opts.SessionTimeout)/4, time.Minute)
	t := time.NewTicker(max(every, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-t.C:
			var idle []string
			h.mu.Lock()
			for k, ce := range h.named {
				if ce.inflight == 0 && now.Sub(ce.last) >= h.idleOf(ce) {
					idle = append(idle, k)
					delete(h.named, k)
				}
			}
			h.mu.Unlock()
			for _, k := range idle {
				h.closeContext(k)
			}
		}
	}
}

// sessionCounts counts the live contexts by kind: "mcp" sessions,
// "named" contexts (the default ones among them) and minted "handles".
func (h *Handler) sessionCounts() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{"mcp": 0, "named": 0, "handles": 0}
	for _, ms := range h.mcp {
		if !ms.ended {
			out["mcp"]++
		}
	}
	for _, ce := range h.named {
		if ce.handle {
			out["handles"]++
		} else {
			out["named"]++
		}
	}
	return out
}
