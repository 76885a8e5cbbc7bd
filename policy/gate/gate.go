// Package gate answers every policy question chromegate asks, in one
// place: a Question in, a Decision out, through Decide. The MCP server
// asks it about each call (before it runs, where it landed, each redirect
// hop of its fetch, each frame and point it touches, each origin of a
// storage state), about each tool it lists and each tab it shows; the
// egress boundary asks it about each request a page makes
// (executor/egress → gate → policy, injected as the boundary's Decider,
// so the backends, which import executor/egress, never import policy).
//
// The rule: Decide fails closed. No policy loaded, an evaluation error, a
// question of a kind it does not know, a field the kind needs that is
// missing, a panic on the way: each is a denial with a clear reason, a
// hint for the model, and a line in the operator's log that names the
// question's kind, tool and session, never its arguments or a secret.
//
// A Question says what is asked, not how to find it out: what a decision
// reads from the browser (the page a call touches, the page tool it calls,
// the frames of its refs, the documents under its points) comes as
// functions the gate calls when, and only when, it needs them, so the page
// is read at decision time and never taken from the model.
//
// The gate is the only importer of the policy engine on the call path; its
// test double, gatetest.AllowAll, lives apart so that no server is built
// with it by accident.
package gate

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policy"
)

// Kind is what a Question asks.
type Kind string

// The kinds of question.
const (
	// KindCall decides a tool call before it runs: on the page it touches
	// (Question.Page), the page tool it calls (PageTool), the frames its
	// refs are in (Frames) and the documents under its points (Points).
	KindCall Kind = "call"
	// KindLanded decides where a call's tab arrived (URL), as a
	// navigation there.
	KindLanded Kind = "landed"
	// KindHop decides a request the server's own fetch for a call is
	// about to send (URL): the URL a click led to, or a redirect hop.
	KindHop Kind = "hop"
	// KindFrame decides a call on the document of a frame (Document).
	KindFrame Kind = "frame"
	// KindOrigin decides one origin of a storage-state call (State).
	KindOrigin Kind = "origin"
	// KindTab decides whether a tab's page may be shown to the caller:
	// a tab is shown when the caller could have navigated it there. The
	// page is Page's document URL, read when needed, else URL.
	KindTab Kind = "tab"
	// KindDialog decides whether the caller may hear of a dialog of the
	// page at URL: not when the URL is missing or does not carry its
	// document's origin (a blob: or about:blank document a page wrote,
	// which the page may not be decided on while the dialog blocks it),
	// else as KindTab.
	KindDialog Kind = "dialog"
	// KindDocument decides whether what a document produced (a console
	// message, a network entry, a dialog) may be shown to the caller: as
	// KindFrame decides the document, and denied when the document is
	// named by neither an origin nor a URL that carries one.
	KindDocument Kind = "document"
	// KindList decides whether a tool is listed for the principal (the
	// policy's list phase).
	KindList Kind = "list"
	// KindRequest decides a request a page makes (Request), for the
	// principal that drives its session (Sessions).
	KindRequest Kind = "request"
)

// Question is one thing the policy is asked. Which fields a kind needs is
// said on the Kind constants and the fields; a kind missing one is denied.
type Question struct {
	Kind Kind

	// Name is the tool as the caller called it, for messages (a live page
	// tool's own name); "" is Tool.
	Name string
	// Tool, Class and Args are the tool and arguments as the policy knows
	// them (a live page tool is page_tool_call with its arguments), passed
	// to policy.NewInput. Every kind but KindRequest needs Tool.
	Tool  string
	Class policy.Class
	Args  map[string]any
	// ArgNamesOnly has the policy see the arguments' names only, every
	// value redacted: a plugin's parameters are the caller's words.
	ArgNamesOnly bool

	Principal policy.Principal
	Session   string
	Backend   string
	Plugin    *policy.Plugin
	// Secrets are the names of the operator's secrets the call refers to.
	Secrets []string
	// PageTool is the page tool a listed tool stands for.
	PageTool *policy.PageTool
	// Flow and ReadOrigins are input.flow and input.read_origins: what
	// of the content the session was shown the call carries where it
	// goes, and the origins it was shown (the server's provenance,
	// mcp/flow); nil when it tracks none.
	Flow        []policy.Flow
	ReadOrigins []string

	// KindCall reads these when it needs them; nil where the call touches
	// none. Page is the document of the tab the call touches (KindTab's
	// tab too); PageTool the page tool it calls; Frames the documents of
	// frames of other origins its refs are in; Points the documents under
	// its points.
	Page     func(context.Context) (Document, error)
	ReadTool func(context.Context) (*policy.PageTool, error)
	Frames   func(context.Context) ([]Document, error)
	Points   func(context.Context) ([]Spot, error)

	// URL is where a KindLanded tab arrived, a KindHop request's URL, the
	// document URL of a KindTab tab without Page, or a KindDialog page's.
	URL string
	// Document is a KindFrame question's frame document, or a
	// KindDocument question's document.
	Document *Document
	// State is a KindOrigin question's origin, operation and source.
	State *policy.StateOrigin
	// Request is a KindRequest question's request.
	Request *egress.Request
}

// Document is a document a call touches: its URL and the security origin
// the browser gave it ("" when the URL's own origin stands), and the
// dialog it waits on, if any.
type Document struct {
	URL    string
	Origin string
	Dialog *policy.Dialog
}

// Spot is a point of a call at coordinates and the document under it.
type Spot struct {
	Document
	X, Y float64
}

// Decision is the gate's answer.
type Decision struct {
	Allow bool
	// Err is why not, ready for the model: an *executor.Error with
	// CodePolicyDenied (BAD_ARGS for a call whose url does not parse,
	// TIMEOUT for a call whose deadline passed while its page was read,
	// or the error reading the page met, such as STALE_TAB). Nil when
	// Allow.
	Err error
	// Reason is the first reason of a denial, in words for the network
	// log and the decision log; "" when Allow.
	Reason string
}

// Decider answers questions. Gate is the real one; implementations must be
// safe for concurrent use and fail closed.
type Decider interface {
	Decide(ctx context.Context, q Question) Decision
}

// Gate decides with the Rego engine. A Gate without an Engine denies
// everything.
type Gate struct {
	Engine *policy.Engine
	// Sessions says who drives each session, for KindRequest.
	Sessions *Sessions
	// Log is the operator's log of what failed on the way to a decision;
	// nil discards it.
	Log *slog.Logger
}

var (
	_ Decider        = (*Gate)(nil)
	_ egress.Decider = (*Gate)(nil)
)

// New returns a gate over eng that logs to log.
func New(eng *policy.Engine, log *slog.Logger) *Gate {
	return &Gate{Engine: eng, Sessions: &Sessions{}, Log: log}
}

// Decide answers q. It never panics and never allows what it could not
// decide.
func (g *Gate) Decide(ctx context.Context, q Question) (d Decision) {
	defer g.recovered(&d, q.Kind, q.Tool, sessionOf(q))
	if g == nil || g.Engine == nil {
		return g.failed(q, "no policy is loaded")
	}
	if why := missing(q); why != "" {
		return g.failed(q, why)
	}
	switch q.Kind {
	case KindCall:
		d = g.call(ctx, q)
	case KindLanded:
		d = g.landed(ctx, q)
	case KindHop:
		d = g.hop(ctx, q)
	case KindFrame:
		d = g.frame(ctx, q)
	case KindOrigin:
		d = g.origin(ctx, q)
	case KindTab:
		d = g.tab(ctx, q)
	case KindDialog:
		d = g.dialog(ctx, q)
	case KindDocument:
		d = g.document(ctx, q)
	case KindList:
		d = g.list(ctx, q)
	case KindRequest:
		d = g.request(ctx, q)
	default:
		return g.failed(q, "a question of a kind the gate does not know")
	}
	return g.checked(q, d)
}

// DecideRequest is the egress boundary's Decider: a KindRequest question.
func (g *Gate) DecideRequest(ctx context.Context, r *egress.Request) egress.Verdict {
	d := g.Decide(ctx, Question{Kind: KindRequest, Request: r})
	return egress.Verdict{Allow: d.Allow, Reason: d.Reason}
}

// Status reports the policy in force, for chrome_status.
func (g *Gate) Status(context.Context) map[string]any {
	return map[string]any{"policy": g.Engine.Status()}
}

// recovered turns a panic on the way to a decision into a denial, logged
// with the stack. It is Decide's deferred call, so the question itself is
// not kept for it (a request's question stays on the stack).
func (g *Gate) recovered(d *Decision, kind Kind, tool, session string) {
	if r := recover(); r != nil {
		*d = g.failed(Question{Kind: kind, Tool: tool, Session: session}, "the decision failed", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	}
}

// missing names a field q's kind needs that it lacks, "" when none is.
func missing(q Question) string {
	switch {
	case q.Kind == KindRequest && q.Request == nil:
		return "a request question without its request"
	case q.Kind == KindRequest:
		return ""
	case q.Tool == "":
		return "a question without its tool"
	case q.Kind == KindFrame && (q.Document == nil || q.Document.URL == "" && q.Document.Origin == ""):
		return "a frame question without its document"
	case q.Kind == KindDocument && q.Document == nil:
		return "a document question without its document"
	case q.Kind == KindOrigin && q.State == nil:
		return "an origin question without its origin"
	}
	return ""
}

// checked makes sure a denial says why, whatever the kind's code did.
func (g *Gate) checked(q Question, d Decision) Decision {
	if d.Allow {
		return Decision{Allow: true}
	}
	if d.Err == nil {
		return g.failed(q, "a denial without a reason")
	}
	if d.Reason == "" {
		d.Reason = "denied by policy"
		if e := executor.AsError(d.Err); e != nil && e.Message != "" {
			d.Reason = e.Message
		}
	}
	return d
}

// failHint is what the model is told of a question the gate could not
// decide: the server's words, never the page's.
const failHint = "the server's policy could not decide this, so it is refused; tell the operator to check the server log"

// failed is the denial of a question the gate could not decide, logged
// for the operator with the question's kind, tool and session only.
func (g *Gate) failed(q Question, why string, attrs ...any) Decision {
	log := slog.New(slog.DiscardHandler)
	if g != nil && g.Log != nil {
		log = g.Log
	}
	log.Error("policy gate: denied a question it could not decide", append([]any{"why", why, "kind", string(q.Kind), "tool", q.Tool, "session", sessionOf(q)}, attrs...)...)
	return Decision{
		Err:    executor.Errorf(executor.CodePolicyDenied, "policy error: %s", why).WithHint(failHint),
		Reason: "policy error: " + why,
	}
}

func sessionOf(q Question) string {
	if q.Kind == KindRequest && q.Request != nil {
		return q.Request.Session
	}
	return q.Session
}
