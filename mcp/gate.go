package mcp

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// The server's side of the one gate (package policy/gate): every policy
// question the server has — a call before it runs and where it landed, a
// listed tool, a plugin step, a redirect hop of its fetch, a frame or a
// document it touches, an origin of a storage state, a tab it shows — is
// a gate.Question built here from the Call, and Options.Gate answers it
// with one method, Decide. There is no other way to a decision, and no
// capability of the gate is checked at run time: what a gate cannot
// decide, it denies.
//
// What a decision reads from the browser (the tab's page, the page tool a
// call calls, the frames of its refs, the documents under its points) is
// handed to the gate as functions it calls when it decides, so the page
// is read at decision time and never taken from the model, and a gate
// that needs none of it (a test double) reads nothing.

// ask puts q to the gate. A denial always carries an error. A gate that
// panics (gate.Gate never does) stops the call the question is part of:
// dispatch turns the panic into INTERNAL, and visible hides the tool.
func (s *Server) ask(ctx context.Context, q gate.Question) gate.Decision {
	d := s.opts.Gate.Decide(ctx, q)
	if !d.Allow && d.Err == nil {
		d.Err = executor.Errorf(executor.CodePolicyDenied, "denied by policy")
	}
	return d
}

// allowed is ask's answer as an error: nil to allow.
func (s *Server) allowed(ctx context.Context, q gate.Question) error {
	if d := s.ask(ctx, q); !d.Allow {
		return d.Err
	}
	return nil
}

// toolQuestion asks kind about tool t called with args by p. A live page
// tool is a call of page_tool_call to the policy, its class and arguments
// those of page_tool_call. A plugin is described by what the operator
// declared (its class) and what its steps call; its parameters are the
// caller's words (a post, a password): the policy sees their names only,
// and each step's arguments reach it as that tool's.
func toolQuestion(kind gate.Kind, t *Tool, args map[string]any, p Principal) gate.Question {
	q := gate.Question{Kind: kind, Name: t.Name, Tool: t.Name, Class: t.Class(), Args: args,
		Principal: policy.Principal{Name: p.Name, Roles: p.Roles, Transport: p.Transport}}
	if t.PageTool != nil {
		q.Tool, q.Class = "page_tool_call", pageToolCallClass()
		if kind != gate.KindList {
			q.Args = map[string]any{"name": t.PageTool.Name, "tab_id": t.PageTool.TabID, "arguments": args}
		}
	}
	if t.Action == ActionPlugin {
		q.Plugin = &policy.Plugin{Name: t.Name, Tools: t.PluginTools}
		q.ArgNamesOnly = true
	}
	return q
}

// question asks kind about c: its tool and arguments, principal, plugin
// step, session, backend and the names of the secrets it refers to.
func (c *Call) question(kind gate.Kind) gate.Question {
	q := toolQuestion(kind, c.Tool, c.Args, c.Principal)
	q.Plugin = stepOf(c.Plugin)
	q.Session = c.Session
	q.Secrets = c.SecretNames
	if c.Executor() != nil {
		q.Backend = c.Executor().Backend()
	}
	return q
}

// before decides c before it runs: on the page it touches (read from the
// browser, never taken from the model), the page tool it calls, the
// frame documents its refs are in and the documents under its points.
func (s *Server) before(ctx context.Context, c *Call) error {
	q := c.question(gate.KindCall)
	if needsPage(c) && c.Page != nil {
		q.Page = func(ctx context.Context) (gate.Document, error) {
			tab, err := c.Page(ctx)
			if err != nil {
				return gate.Document{}, err
			}
			doc := gate.Document{URL: tab.URL, Origin: tab.Origin}
			if d := tab.Dialog; d != nil {
				doc.Dialog = &policy.Dialog{Type: d.Type, Message: d.Message}
			}
			return doc, nil
		}
		q.Frames = func(ctx context.Context) ([]gate.Document, error) {
			docs, err := refDocs(ctx, c)
			if err != nil {
				return nil, err
			}
			out := make([]gate.Document, len(docs))
			for i, d := range docs {
				out[i] = gate.Document{URL: d.URL, Origin: d.Origin}
			}
			if len(docs) > 0 {
				c.frame = &docs[0]
			}
			return out, nil
		}
	}
	if c.PageTool != nil {
		q.ReadTool = func(ctx context.Context) (*policy.PageTool, error) {
			t, err := c.PageTool(ctx)
			if err != nil {
				return nil, err
			}
			return policyPageTool(t), nil
		}
	}
	if c.Points != nil {
		q.Points = func(ctx context.Context) ([]gate.Spot, error) {
			hits, err := c.Points(ctx)
			if err != nil {
				return nil, err
			}
			out := make([]gate.Spot, len(hits))
			for i, h := range hits {
				out[i] = gate.Spot{Document: gate.Document{URL: h.URL, Origin: h.Origin}, X: h.X, Y: h.Y}
			}
			return out, nil
		}
	}
	s.callFlows(ctx, c, &q)
	return s.gateErr(c.Tool, s.allowed(ctx, q))
}

// landed decides where c's navigation actually arrived, after redirects
// and client-side navigation. If it is denied, dispatch sends that tab to
// about:blank and returns the error; nothing of the page is returned.
func (s *Server) landed(ctx context.Context, c *Call, page executor.PageState) error {
	q := c.question(gate.KindLanded)
	q.URL = page.URL
	s.urlFlows(c, &q, page.URL)
	return s.gateErr(c.Tool, s.allowed(ctx, q))
}

// decideHop is the executor.HopFunc of a fetch the server makes for the
// call: each hop (the URL a click led to, a redirect) is decided as the
// call was, with that URL. Whatever goes wrong deciding a hop refuses it.
func (c *Call) decideHop() executor.HopFunc {
	return func(ctx context.Context, rawURL string) error {
		q := c.question(gate.KindHop)
		q.URL = rawURL
		c.srv.urlFlows(c, &q, rawURL)
		err := c.srv.gateErr(c.Tool, c.srv.allowed(ctx, q))
		if e := executor.AsError(err); e != nil && e.Code != executor.CodePolicyDenied {
			return &executor.Error{Code: executor.CodePolicyDenied, Message: fmt.Sprintf("%s: a redirect could not be decided (%s); it was not followed", c.Tool.Name, e.Message),
				Hint: "the call was denied; tell the operator to check the server log", Err: err}
		}
		return err
	}
}

// tabVisible decides whether a tab's page (its document URL) may be shown
// to c's caller: a tab is shown when the caller could have navigated it
// there.
func (c *Call) tabVisible(ctx context.Context, url string) bool {
	q := toolQuestion(gate.KindTab, c.Tool, nil, c.Principal)
	q.URL = url
	c.screened(&q)
	return c.srv.ask(ctx, q).Allow
}

// pageOutside says whether a tab shows a page outside the policy for c's
// caller: the page's document URL is read (read) only if the gate needs
// it. A tab whose page cannot be read is not said to be outside.
func (c *Call) pageOutside(ctx context.Context, read func(context.Context) (string, error)) bool {
	var readErr error
	q := toolQuestion(gate.KindTab, c.Tool, nil, c.Principal)
	q.Page = func(ctx context.Context) (gate.Document, error) {
		var url string
		url, readErr = read(ctx)
		return gate.Document{URL: url}, readErr
	}
	c.screened(&q)
	return !c.srv.ask(ctx, q).Allow && readErr == nil
}

// screened completes a question about what c's caller may be shown (a
// tab, a dialog): the session and backend, without the call's arguments.
func (c *Call) screened(q *gate.Question) {
	q.Session = c.Session
	if c.Executor() != nil {
		q.Backend = c.Executor().Backend()
	}
}

// visible decides whether p sees t in tools/list (the policy's list
// phase). Dispatch asks it again at call time, so a hidden tool cannot be
// called by name. The key's tool ACL is checked first.
func (s *Server) visible(ctx context.Context, t *Tool, p Principal) (ok bool) {
	if !p.Tools.Allows(t.Name) {
		return false
	}
	defer s.hideOnPanic(t, &ok)
	q := toolQuestion(gate.KindList, t, nil, p)
	if t.PageTool != nil {
		q.PageTool = policyPageTool(*t.PageTool)
	}
	return s.ask(ctx, q).Allow
}

// visibleStep decides whether p may use t as a step of a plugin: the list
// phase, told which plugin asks (a policy may allow a tool only inside a
// plugin). The key's tool ACL holds at every step.
func (s *Server) visibleStep(ctx context.Context, t *Tool, p Principal, step *PluginStep) (ok bool) {
	if !p.Tools.Allows(t.Name) {
		return false
	}
	defer s.hideOnPanic(t, &ok)
	q := toolQuestion(gate.KindList, t, nil, p)
	q.Plugin = stepOf(step)
	return s.ask(ctx, q).Allow
}

// hideOnPanic hides t (sets *ok false) if the list decision panicked: a
// listing has no call to fail.
func (s *Server) hideOnPanic(t *Tool, ok *bool) {
	if r := recover(); r != nil {
		s.log.Error("the gate panicked deciding a listing; hiding the tool", "tool", t.Name, "panic", r, "stack", string(debug.Stack()))
		*ok = false
	}
}

// bindSession tells the gate's sessions who drives session, so that the
// requests its pages make are decided for that principal.
func (s *Server) bindSession(session string, p Principal) {
	s.opts.Sessions.Bind(session, policy.Principal{Name: p.Name, Roles: p.Roles, Transport: p.Transport})
}

// policyPageTool describes a page tool to the policy: its origin, name and
// the page's annotations under their WebMCP names.
func policyPageTool(t executor.PageTool) *policy.PageTool {
	a := t.Annotations
	return &policy.PageTool{Origin: t.Origin, Name: t.Name, Annotations: map[string]any{
		"readOnlyHint": a.ReadOnly, "untrustedContentHint": a.UntrustedContent,
		"consequentialHint": a.Consequential, "destructiveHint": a.Destructive,
	}}
}

// stepOf describes a plugin step to the policy; nil for a direct call.
func stepOf(s *PluginStep) *policy.Plugin {
	if s == nil {
		return nil
	}
	return &policy.Plugin{Name: s.Plugin, Step: s.Step, Tools: s.Tools}
}

// needsPage says whether a decision depends on the page a tool touches:
// everything but status and the tab bookkeeping tools, and listing the page
// tools of every tab (each listed tool is then decided on its own origin).
func needsPage(c *Call) bool {
	if c.Tool.PerOrigin {
		return false
	}
	switch c.Tool.Action {
	case ActionStatus, ActionTabs, ActionPlugin:
		// A plugin's own call touches no page: its steps are decided
		// with theirs.
		return false
	case ActionPageTool:
		return c.Tool.CallsPageTool || c.TabID() != ""
	}
	return true
}
