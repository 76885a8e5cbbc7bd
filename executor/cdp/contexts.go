package cdp

import (
	"context"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// createContext creates a browser context for session, with the session's
// egress proxy when the instance has one. For the default session it also
// sets how the default context is guarded.
func (in *instance) createContext(session string) (playwright.BrowserContext, error) {
	proxy, err := in.proxyFor(session)
	if err != nil {
		return nil, err
	}
	c, err := in.browser.NewContext(playwright.BrowserNewContextOptions{
		AcceptDownloads: playwright.Bool(true),
		Viewport:        in.b.viewport(),
		Proxy:           proxy,
	})
	if err != nil {
		in.stopProxy(session)
		return nil, err
	}
	if session == "" {
		in.mu.Lock()
		in.defaultGuard = in.guardOf(proxy != nil)
		in.mu.Unlock()
	}
	return c, nil
}

// guardOf is how a context is guarded: by the proxy it was given, else by
// routing when requests are decided at all.
func (in *instance) guardOf(proxied bool) string {
	switch {
	case proxied:
		return guardProxy
	case in.b.egressOn():
		return guardRoute
	}
	return guardNone
}

// guard installs the routing guard on a context that needs one, once.
func (in *instance) guard(bctx playwright.BrowserContext, session, how string) error {
	if how != guardRoute {
		return nil
	}
	in.mu.Lock()
	done := in.routed[bctx]
	in.routed[bctx] = true
	in.mu.Unlock()
	if done {
		return nil
	}
	if err := in.routeGuard(bctx, session); err != nil {
		in.mu.Lock()
		delete(in.routed, bctx)
		in.mu.Unlock()
		return executor.Errorf(executor.CodeLaunchFailed, "cannot guard the browser context's requests: %s", firstLine(err)).Wrap(err)
	}
	return nil
}

// closeProxy stops the egress proxy and every listener.
func (in *instance) closeProxy() {
	if in.proxy != nil {
		_ = in.proxy.Close()
	}
}

// open returns the session's executor, creating its browser context when
// the session is new. The default session uses the default context.
func (in *instance) open(ctx context.Context, name string) (*Session, error) {
	in.mu.Lock()
	if s := in.sessions[name]; s != nil && !s.isDone() {
		in.mu.Unlock()
		return s, nil
	}
	in.mu.Unlock()

	in.mu.Lock()
	bctx, owns := in.defaultCtx, in.ownsDefault
	in.mu.Unlock()
	if name == "" && bctx.IsClosed() {
		if !in.attached {
			// The browser is on its way out; its disconnect event may not
			// have arrived yet.
			in.markDead("the browser closed")
			return nil, executor.Errorf(executor.CodeTargetGone, "%s", in.deathReason())
		}
		c, err := in.newContext(ctx, "")
		if err != nil {
			return nil, err
		}
		in.mu.Lock()
		in.defaultCtx, in.ownsDefault = c, true
		in.mu.Unlock()
		bctx, owns = c, true
	}
	in.mu.Lock()
	how := in.defaultGuard
	in.mu.Unlock()
	if name != "" {
		c, err := in.newContext(ctx, name)
		if err != nil {
			return nil, err
		}
		bctx, owns = c, true
		how = in.guardOf(in.proxy != nil)
	}
	if err := in.guard(bctx, name, how); err != nil {
		if owns && name != "" {
			go func() { _ = bctx.Close() }()
		}
		return nil, err
	}
	s := newSession(in, name, bctx, owns)
	in.mu.Lock()
	if old := in.sessions[name]; old != nil && !old.isDone() {
		in.mu.Unlock()
		s.retire()
		if owns {
			go func() { _ = bctx.Close() }()
		}
		return old, nil
	}
	in.sessions[name] = s
	in.mu.Unlock()
	if in.dead() {
		s.markDone()
		return nil, s.goneErr("open")
	}
	return s, nil
}

// newContext creates a browser context for a named session, bounded by ctx.
// A context that arrives after ctx ended is closed, not leaked.
func (in *instance) newContext(ctx context.Context, session string) (playwright.BrowserContext, error) {
	if in.browser == nil {
		return nil, executor.Errorf(executor.CodeLaunchFailed, "this browser cannot create more contexts")
	}
	type result struct {
		c   playwright.BrowserContext
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := in.createContext(session)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			if in.dead() {
				return nil, executor.Errorf(executor.CodeTargetGone, "%s", in.deathReason()).Wrap(r.err)
			}
			return nil, executor.Errorf(executor.CodeLaunchFailed, "cannot create a browser context: %s", firstLine(r.err)).Wrap(r.err)
		}
		return r.c, nil
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.c != nil {
				_ = r.c.Close()
			}
		}()
		return nil, executor.AsError(ctx.Err())
	case <-in.deadCh:
		return nil, executor.Errorf(executor.CodeTargetGone, "%s", in.deathReason())
	}
}

// forget drops a closed session so a later Open creates it afresh.
func (in *instance) forget(s *Session) {
	in.mu.Lock()
	mine := in.sessions[s.name] == s
	if mine {
		delete(in.sessions, s.name)
	}
	in.mu.Unlock()
	if mine && s.name != "" && s.ownsCtx {
		in.stopProxy(s.name)
	}
}
