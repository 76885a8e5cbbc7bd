package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
)

// Input is the policy input of q in phase, before anything is read from
// the browser: the tool, its arguments, the principal, the plugin, the
// session, the backend, the secrets' names and a listed page tool. Each
// kind adds what it decides on. A url that does not parse is BAD_ARGS.
func Input(q Question, phase string) (policy.Input, error) {
	in, err := policy.NewInput(phase, q.Tool, q.Class, q.Args)
	if err != nil {
		if errors.Is(err, policy.ErrBadURL) {
			return in, executor.Errorf(executor.CodeBadArgs, "%v", err).WithHint("pass an absolute URL such as https://example.com/")
		}
		return in, executor.Errorf(executor.CodePolicyDenied, "the call could not be described to the policy: %v", err)
	}
	if q.ArgNamesOnly {
		for k := range in.Args {
			in.Args[k] = policy.Redacted
		}
	}
	in.Principal = withRoles(q.Principal)
	in.Plugin = q.Plugin
	in.Session = q.Session
	in.Backend = q.Backend
	in.Secrets = q.Secrets
	in.PageTool = q.PageTool
	in.Flow, in.ReadOrigins = q.Flow, q.ReadOrigins
	return in, nil
}

// name is the tool as the caller called it.
func (q Question) name() string {
	if q.Name != "" {
		return q.Name
	}
	return q.Tool
}

// denied is the Decision of an error met on the way to a decision.
func denied(err error) Decision {
	return Decision{Err: err}
}

// decided is the engine's decision d on in as the gate's.
func decided(d policy.Decision, in policy.Input) Decision {
	if d.Allow {
		return Decision{Allow: true}
	}
	return Decision{Err: policy.DeniedError(d, in), Reason: firstReason(d)}
}

func firstReason(d policy.Decision) string {
	if len(d.Reasons) > 0 {
		return d.Reasons[0]
	}
	return "denied by policy"
}

// decide asks the engine, and tells the operator when the policy failed
// rather than decided (the model is told too, by policy.Hint).
func (g *Gate) decide(ctx context.Context, q Question, in policy.Input) policy.Decision {
	d := g.Engine.Decide(ctx, in)
	g.noteError(q, d)
	return d
}

func (g *Gate) noteError(q Question, d policy.Decision) {
	if !d.Allow && g.Log != nil && strings.HasPrefix(firstReason(d), "policy error: ") {
		g.Log.Warn("policy gate: the policy failed rather than decided; denied", "kind", string(q.Kind), "tool", q.Tool, "session", sessionOf(q), "reason", firstReason(d))
	}
}

// call decides a call on the page it touches, the page tool it calls,
// each frame document its refs are in, and the document under each of
// its points.
func (g *Gate) call(ctx context.Context, q Question) Decision {
	base, err := Input(q, policy.PhaseCall)
	if err != nil {
		return denied(err)
	}
	in := base
	if q.Page != nil {
		doc, err := q.Page(ctx)
		if err != nil {
			return denied(err)
		}
		// Decided on the document the call touches: where the tab's URL
		// does not carry the document's origin (an about:blank a page
		// wrote into), on the origin the browser gave it.
		in.Page = policy.NewDocumentPage(doc.URL, doc.Origin)
		in.Dialog = doc.Dialog
	}
	if q.ReadTool != nil {
		t, err := q.ReadTool(ctx)
		if err != nil {
			return denied(err)
		}
		in.PageTool = t
	}
	if err := ctx.Err(); err != nil {
		// The call's deadline passed while the browser started or the
		// page was read: the call does not run (closed, as a denial
		// would be), and the model is told the truth, a timeout, not a
		// "policy error".
		return denied(executor.Errorf(executor.CodeTimeout, "%s: the call's deadline passed before the policy decided it", q.name()).
			WithHint("retry with a larger timeout_ms").Wrap(err))
	}
	if q.Page == nil || q.Frames == nil {
		if d := decided(g.decide(ctx, q, in), in); !d.Allow {
			return d
		}
		return g.points(ctx, q, in)
	}
	// A call by ref on an element of a frame of another origin touches
	// that frame's document: decided on it too, and the secrets it types
	// go into that document, so they are decided there, not on the page
	// around it.
	docs, err := q.Frames(ctx)
	if err != nil {
		return denied(err)
	}
	top := in
	if len(docs) > 0 {
		top.Secrets = nil
	}
	if d := decided(g.decide(ctx, q, top), top); !d.Allow {
		return d
	}
	for _, doc := range docs {
		if d := g.frameOn(ctx, q, base, doc); !d.Allow {
			return d
		}
	}
	return g.points(ctx, q, in)
}

// points decides a call at points once per point, on the document under
// it: in is the call's input as decided on the tab's page.
func (g *Gate) points(ctx context.Context, q Question, in policy.Input) Decision {
	if q.Points == nil {
		return Decision{Allow: true}
	}
	spots, err := q.Points(ctx)
	if err != nil {
		return denied(err)
	}
	for _, s := range spots {
		pin := in
		pin.Page = policy.NewDocumentPage(s.URL, s.Origin)
		pin.Point = &policy.Point{X: s.X, Y: s.Y}
		if d := decided(g.decide(ctx, q, pin), pin); !d.Allow {
			return d
		}
	}
	return Decision{Allow: true}
}

// landed decides where a navigation actually arrived, after redirects and
// client-side navigation: the same decision with the landed URL as
// target. A navigation's check on arrival is a navigation decision,
// whatever started it (a click on a link, a redirect, a script):
// Input.Landed builds it, the one builder the policy tests use too.
func (g *Gate) landed(ctx context.Context, q Question) Decision {
	in, err := Input(q, policy.PhaseCall)
	if err != nil {
		return denied(err)
	}
	if in, err = in.Landed(q.URL); err != nil {
		return denied(executor.Errorf(executor.CodePolicyDenied, "the tab landed on a URL that cannot be checked; it was sent back to about:blank and nothing of it was read").Wrap(err))
	}
	d := g.decide(ctx, q, in)
	if d.Allow {
		return Decision{Allow: true}
	}
	// Where the tab landed is the page's choice (a redirect, a link or a
	// script): its host and the policy's reasons, which name it, are the
	// page's words, fenced; the hint is the server's and names no host.
	e := policy.DeniedError(d, in)
	return Decision{Reason: firstReason(d), Err: executor.Errorf(executor.CodePolicyDenied, "the tab landed on a page the policy does not allow; it was sent back to about:blank and nothing of it was read").
		WithHint("navigate to a page of an allowed host: a redirect, a link or a script of the page led off the policy").
		WithPage(fmt.Sprintf("landed on %s: %s", where(in.Target), e.Message))}
}

// hop decides a request the server's fetch for a call is about to send (a
// redirect hop, the URL a click led to) as the call itself was decided,
// with q.URL as its url (Input.Redirected): the tool's action, not a
// navigation's. The URL is the remote server's (or the page's) choice: the
// denial names its host only inside the page fence, and its message and
// hint never do, so a hostile server cannot write into what the model is
// told to do next.
func (g *Gate) hop(ctx context.Context, q Question) Decision {
	in, err := Input(q, policy.PhaseCall)
	if err != nil {
		return denied(err)
	}
	hint := fmt.Sprintf("%s only from allowed hosts: the server of the URL sent it on to a host outside the policy; nothing was stored", q.name())
	if in, err = in.Redirected(q.URL); err != nil {
		return denied(executor.Errorf(executor.CodePolicyDenied, "%s was sent on to a URL that cannot be checked; it was not followed", q.name()).
			WithHint(hint).Wrap(err))
	}
	d := g.decide(ctx, q, in)
	if d.Allow {
		return Decision{Allow: true}
	}
	// The hop's host was chosen by the server of the URL, not by the
	// caller: it and the policy's reasons, which name it, are fenced.
	e := policy.DeniedError(d, in)
	return Decision{Reason: firstReason(d), Err: executor.Errorf(executor.CodePolicyDenied, "%s was sent on to a host the policy does not allow; it was not followed", q.name()).
		WithHint(hint).
		WithPage(fmt.Sprintf("sent on to %s: %s", where(in.Target), e.Message))}
}

// frame decides a call on a frame's document.
func (g *Gate) frame(ctx context.Context, q Question) Decision {
	in, err := Input(q, policy.PhaseCall)
	if err != nil {
		return denied(err)
	}
	return g.frameOn(ctx, q, in, *q.Document)
}

// frameOn decides in on the frame document doc. A denial names the
// frame's host only inside the page fence: the host is the frame's
// choice.
func (g *Gate) frameOn(ctx context.Context, q Question, in policy.Input, doc Document) Decision {
	in.Page = policy.NewDocumentPage(doc.URL, doc.Origin)
	d := g.decide(ctx, q, in)
	if d.Allow {
		return Decision{Allow: true}
	}
	e := policy.DeniedError(d, in)
	host := "an unknown page"
	if in.Page != nil {
		host = where(&in.Page.Target)
	}
	return Decision{Reason: firstReason(d), Err: executor.Errorf(executor.CodePolicyDenied, "%s: the frame's document is on a page the policy does not allow; nothing of it was read or touched", q.name()).
		WithHint("act on the page's own elements, or on frames the snapshot shows").
		WithPage(fmt.Sprintf("frame on %s: %s", host, e.Message))}
}

// origin decides one origin of a storage-state call: the call's input
// with input.state naming the origin and input.target its URL.
func (g *Gate) origin(ctx context.Context, q Question) Decision {
	in, err := Input(q, policy.PhaseCall)
	if err != nil {
		return denied(err)
	}
	if in, err = in.ForStateOrigin(q.State.Op, q.State.Source, q.State.Origin); err != nil {
		return denied(executor.Errorf(executor.CodePolicyDenied, "not an origin the policy can decide").Wrap(err))
	}
	return decided(g.decide(ctx, q, in), in)
}

// tab decides a tab's URL as a navigation of the caller's there, screened
// (policy.Engine.Screen: only a denial is logged).
func (g *Gate) tab(ctx context.Context, q Question) Decision {
	in, err := Input(q, policy.PhaseCall)
	if err != nil {
		return denied(err)
	}
	url := q.URL
	if q.Page != nil {
		doc, err := q.Page(ctx)
		if err != nil {
			return denied(err)
		}
		url = doc.URL
	}
	if in, err = in.Landed(url); err != nil {
		return denied(executor.Errorf(executor.CodePolicyDenied, "the tab's page cannot be checked").Wrap(err))
	}
	d := g.Engine.Screen(ctx, in)
	g.noteError(q, d)
	return decided(d, in)
}

// dialog decides whether a dialog of the page at q.URL may be heard of.
func (g *Gate) dialog(ctx context.Context, q Question) Decision {
	if q.URL == "" || executor.OriginHidden(q.URL) {
		return denied(executor.Errorf(executor.CodePolicyDenied, "the dialog's page is not named by a URL that carries its origin").
			WithHint("the dialog is dismissed and nothing of it is shown; work on pages of allowed hosts"))
	}
	return g.tab(ctx, q)
}

// document decides what a document produced: the frame decision, failing
// closed on a document whose origin is unknown (about:srcdoc,
// about:blank, data:, blob: without an origin from the browser, or
// nothing at all).
func (g *Gate) document(ctx context.Context, q Question) Decision {
	if d := q.Document; d.Origin == "" && (d.URL == "" || executor.OriginHidden(d.URL)) {
		return denied(executor.Errorf(executor.CodePolicyDenied, "the document's origin is unknown").
			WithHint("what that document produced is withheld; work on pages of allowed hosts"))
	}
	return g.frame(ctx, q)
}

// list decides the list phase: a tool is listed only if the principal
// could ever use it.
func (g *Gate) list(ctx context.Context, q Question) Decision {
	in, err := Input(q, policy.PhaseList)
	if err != nil {
		return denied(err)
	}
	d := g.Engine.DecideList(ctx, in)
	g.noteError(q, d)
	return decided(d, in)
}

// request decides a request a page made, with the policy's request phase,
// for the principal that drives its session (Sessions).
func (g *Gate) request(ctx context.Context, q Question) Decision {
	in, err := policy.NewRequestInput(q.Request, g.Sessions.Principal(q.Request.Session))
	if err != nil {
		const why = "the request's URL could not be checked"
		return Decision{Reason: why, Err: executor.Errorf(executor.CodePolicyDenied, why).
			WithHint("the request failed as a network error in the page").Wrap(err)}
	}
	in.Flow, in.ReadOrigins = g.Sessions.Provenance(q.Request.Session, in.Request.URL)
	d, _ := g.Engine.DecideRequest(ctx, in)
	g.noteError(q, d)
	return decided(d, in)
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
