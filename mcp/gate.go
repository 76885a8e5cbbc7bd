package mcp

import (
	"context"

	"github.com/chromegate/chromegate/executor"
)

// Gate decides every tool call. Dispatch consults it in exactly one place,
// before the handler and (for navigation) after the page has landed.
//
// Before runs inside Manager.Do, so c.Executor and c.Page are available for
// the policy's page input (for a NoBrowser tool it runs outside, and
// c.Executor may be nil). It returns nil to allow; a denial is an
// *executor.Error with CodePolicyDenied whose message and hint reach the
// model. Any other error also stops the call: an *executor.Error keeps its
// code (a STALE_TAB from c.Page, say), anything else is reported as
// POLICY_DENIED. Fail closed is the contract.
//
// Landed runs after navigate, back, forward, reload and tab_new with a url,
// with the page the tab reached. If it returns an error, dispatch sends that
// tab to about:blank and returns the error; nothing of the page is returned.
//
// Implementations must be safe for concurrent use.
type Gate interface {
	Before(ctx context.Context, c *Call) error
	Landed(ctx context.Context, c *Call, page executor.PageState) error
}

// HopGate is an optional capability of a Gate: deciding a request the
// server's own fetch for a call is about to send — the URL a click led to,
// or a redirect hop — as the call itself was decided, with that URL. A
// handler that fetches (download_file) hands it to the executor
// (DownloadParams.DecideHop); a Gate without it decides no hop. It returns
// nil to allow, else an *executor.Error with CodePolicyDenied.
type HopGate interface {
	Hop(ctx context.Context, c *Call, rawURL string) error
}

// AllowAll is a Gate that allows everything. It exists for tests; a server
// built with it has no policy at all.
var AllowAll Gate = allowAll{}

type allowAll struct{}

func (allowAll) Before(context.Context, *Call) error                     { return nil }
func (allowAll) Landed(context.Context, *Call, executor.PageState) error { return nil }

// ListFilter decides which tools a principal sees in tools/list (the
// policy's "list" phase). Dispatch asks it again at call time, so a hidden
// tool cannot be called by name. Implementations must be safe for concurrent
// use.
type ListFilter interface {
	Visible(ctx context.Context, t *Tool, p Principal) bool
}
