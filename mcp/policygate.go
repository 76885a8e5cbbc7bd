package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
)

// PolicyGate is the Gate and ListFilter every real server uses: each call,
// each landing and each listed tool is a decision of the Rego engine.
// Anything that goes wrong on the way to a decision denies.
type PolicyGate struct {
	Engine *policy.Engine

	principals sync.Map // session → policy.Principal; see BindSession
}

var (
	_ Gate       = (*PolicyGate)(nil)
	_ ListFilter = (*PolicyGate)(nil)
	_ StepFilter = (*PolicyGate)(nil)
	_ HopGate    = (*PolicyGate)(nil)
	_ SecretGate = (*PolicyGate)(nil)
)

// Before decides a call. The page input is read from the browser at call
// time (the tab the call touches), never taken from the model.
func (g *PolicyGate) Before(ctx context.Context, c *Call) error {
	in, err := g.callInput(c)
	if err != nil {
		return err
	}
	frames := false
	if needsPage(c) && c.Page != nil {
		frames = true
		tab, err := c.Page(ctx)
		if err != nil {
			return err
		}
		// Decided on the document the call touches: where the tab's URL
		// does not carry the document's origin (an about:blank a page
		// wrote into), on the origin the browser gave it.
		in.Page = policy.NewDocumentPage(tab.URL, tab.Origin)
		if d := tab.Dialog; d != nil {
			in.Dialog = &policy.Dialog{Type: d.Type, Message: d.Message}
		}
	}
	if c.PageTool != nil {
		t, err := c.PageTool(ctx)
		if err != nil {
			return err
		}
		in.PageTool = policyPageTool(t)
	}
	if err := ctx.Err(); err != nil {
		// The call's deadline passed while the browser started or the
		// page was read: the call does not run (closed, as a denial
		// would be), and the model is told the truth, a timeout, not a
		// "policy error".
		return executor.Errorf(executor.CodeTimeout, "%s: the call's deadline passed before the policy decided it", c.Tool.Name).
			WithHint("retry with a larger timeout_ms").Wrap(err)
	}
	if !frames {
		if err := decided(g.Engine.Decide(ctx, in), in); err != nil {
			return err
		}
		return g.decidePoints(ctx, c, in)
	}
	// A call by ref on an element of a frame of another origin touches
	// that frame's document: decided on it too, and the secrets it types
	// go into that document, so they are decided there, not on the page
	// around it.
	docs, err := refDocs(ctx, c)
	if err != nil {
		return err
	}
	top := in
	if len(docs) > 0 {
		top.Secrets = nil
	}
	if err := decided(g.Engine.Decide(ctx, top), top); err != nil {
		return err
	}
	for _, d := range docs {
		if err := g.Frame(ctx, c, d.URL, d.Origin); err != nil {
			return err
		}
	}
	if len(docs) > 0 {
		c.frame = &docs[0]
	}
	return g.decidePoints(ctx, c, in)
}

// callInput is the call phase's input for c before the page is read: the
// tool, its arguments, the principal, the plugin step, the session and the
// backend. Before, Landed and Hop each add what they decide on.
func (g *PolicyGate) callInput(c *Call) (policy.Input, error) {
	in, err := g.input(policy.PhaseCall, c.Tool, c.Args, c.Principal)
	if err != nil {
		return in, err
	}
	in.Plugin = stepOf(c.Plugin)
	in.Session = c.Session
	in.Secrets = c.SecretNames
	if c.Executor() != nil {
		in.Backend = c.Executor().Backend()
	}
	return in, nil
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

// Landed decides where a navigation actually arrived, after redirects and
// client-side navigation: the same decision with the landed URL as target.
func (g *PolicyGate) Landed(ctx context.Context, c *Call, page executor.PageState) error {
	in, err := g.callInput(c)
	if err != nil {
		return err
	}
	// A navigation's check on arrival is a navigation decision, whatever
	// started it (a click on a link, a redirect, a script): Input.Landed
	// builds it, the one builder the policy tests use too.
	if in, err = in.Landed(page.URL); err != nil {
		return executor.Errorf(executor.CodePolicyDenied, "the tab landed on a URL that cannot be checked; it was sent back to about:blank and nothing of it was read").Wrap(err)
	}
	d := g.Engine.Decide(ctx, in)
	if d.Allow {
		return nil
	}
	// Where the tab landed is the page's choice (a redirect, a link, a
	// script): its host and the policy's reasons, which name it, are the
	// page's words, fenced; the hint is the server's and names no host.
	e := policy.DeniedError(d, in)
	return executor.Errorf(executor.CodePolicyDenied, "the tab landed on a page the policy does not allow; it was sent back to about:blank and nothing of it was read").
		WithHint("navigate to a page of an allowed host: a redirect, a link or a script of the page led off the policy").
		WithPage(fmt.Sprintf("landed on %s: %s", where(in.Target), e.Message))
}

// where names a URL's place for a fenced note: its host, or its scheme.
func where(t *policy.Target) string {
	switch {
	case t == nil:
		return "an unknown page"
	case t.Host != "":
		return t.Host
	}
	return "a " + t.Scheme + ": URL"
}

// Hop decides a request the server's fetch for c is about to send (a
// redirect hop, the URL a click led to) as c itself was decided, with
// rawURL as its url (Input.Redirected): the tool's action, not a
// navigation's. The URL is the remote server's (or the page's) choice: the
// denial names its host only inside the page fence, and its message and
// hint never do, so a hostile server cannot write into what the model is
// told to do next.
func (g *PolicyGate) Hop(ctx context.Context, c *Call, rawURL string) error {
	in, err := g.callInput(c)
	if err != nil {
		return err
	}
	hint := fmt.Sprintf("%s only from allowed hosts: the server of the URL sent it on to a host outside the policy; nothing was stored", c.Tool.Name)
	if in, err = in.Redirected(rawURL); err != nil {
		return executor.Errorf(executor.CodePolicyDenied, "%s was sent on to a URL that cannot be checked; it was not followed", c.Tool.Name).
			WithHint(hint).Wrap(err)
	}
	d := g.Engine.Decide(ctx, in)
	if d.Allow {
		return nil
	}
	// The hop's host was chosen by the server of the URL, not by the
	// caller: it and the policy's reasons, which name it, are fenced.
	e := policy.DeniedError(d, in)
	return executor.Errorf(executor.CodePolicyDenied, "%s was sent on to a host the policy does not allow; it was not followed", c.Tool.Name).
		WithHint(hint).
		WithPage(fmt.Sprintf("sent on to %s: %s", where(in.Target), e.Message))
}

// Visible decides the list phase: a tool is listed only if the principal
// could ever use it.
func (g *PolicyGate) Visible(ctx context.Context, t *Tool, p Principal) bool {
	in, err := g.input(policy.PhaseList, t, nil, p)
	if err != nil {
		return false
	}
	if t.PageTool != nil {
		in.PageTool = policyPageTool(*t.PageTool)
	}
	return g.Engine.DecideList(ctx, in).Allow
}

// VisibleStep decides the list phase for a tool used as a step of a
// plugin: the same decision, with input.plugin naming the plugin and step.
func (g *PolicyGate) VisibleStep(ctx context.Context, t *Tool, p Principal, step *PluginStep) bool {
	in, err := g.input(policy.PhaseList, t, nil, p)
	if err != nil {
		return false
	}
	in.Plugin = stepOf(step)
	return g.Engine.DecideList(ctx, in).Allow
}

// stepOf describes a plugin step to the policy; nil for a direct call.
func stepOf(s *PluginStep) *policy.Plugin {
	if s == nil {
		return nil
	}
	return &policy.Plugin{Name: s.Plugin, Step: s.Step, Tools: s.Tools}
}

// Status reports the policy in force for chrome_status.
func (g *PolicyGate) Status(context.Context) map[string]any {
	return map[string]any{"policy": g.Engine.Status()}
}

func (g *PolicyGate) input(phase string, t *Tool, args map[string]any, p Principal) (policy.Input, error) {
	name, class := t.Name, t.Class()
	if t.PageTool != nil {
		// A live page tool is a call of page_tool_call to the policy, its
		// class and arguments those of page_tool_call.
		name, class = "page_tool_call", pageToolCallClass()
		if phase == policy.PhaseCall {
			args = map[string]any{"name": t.PageTool.Name, "tab_id": t.PageTool.TabID, "arguments": args}
		}
	}
	in, err := policy.NewInput(phase, name, class, args)
	if err != nil {
		if errors.Is(err, policy.ErrBadURL) {
			return in, executor.Errorf(executor.CodeBadArgs, "%v", err).WithHint("pass an absolute URL such as https://example.com/")
		}
		return in, executor.Errorf(executor.CodePolicyDenied, "the call could not be described to the policy: %v", err)
	}
	if t.Action == ActionPlugin {
		// A plugin is described by what the operator declared (its class)
		// and what its steps call.
		in.Plugin = &policy.Plugin{Name: t.Name, Tools: t.PluginTools}
		// A plugin's parameters are the caller's words (a post, a
		// password): the policy sees their names only. Each step's
		// arguments reach it as that tool's, redacted as that tool's.
		for k := range in.Args {
			in.Args[k] = policy.Redacted
		}
	}
	in.Principal = policy.Principal{Name: p.Name, Roles: p.Roles, Transport: p.Transport}
	if in.Principal.Roles == nil {
		in.Principal.Roles = []string{}
	}
	return in, nil
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

// decided turns a decision into the Gate's answer. The nil check is explicit
// so that an allowed decision never becomes a non-nil error interface.
func decided(d policy.Decision, in policy.Input) error {
	if d.Allow {
		return nil
	}
	return policy.DeniedError(d, in)
}
