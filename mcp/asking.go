package mcp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// Asking a person. When the policy's decision on a call is an ask
// (gate.Decision.Ask), the call runs only on the explicit yes of a person,
// given in the client's own interface:
//
//   - on a session of protocol 2025-11-25 or 2025-06-18 (stdio or HTTP)
//     whose client declared the elicitation capability, the server sends
//     elicitation/create (form mode: a boolean "allow", the message saying
//     the tool, its arguments, the page it acts on and the policy's
//     reasons) and waits, at most askTimeout and never past the call's
//     own deadline;
//   - on a request of protocol 2026-07-28, where a server sends the client
//     no requests, the call ends with an input_required result holding
//     the same question; the client asks its user and sends the call
//     again with the answer (inputResponses) and the requestState it was
//     given. That state is a one-time token the server keeps for
//     askTimeout, bound to the principal, the session, the tool, the
//     arguments, the page and the policy's reasons: an answer counts for
//     that call once, never for another;
//   - anywhere else (a client without the capability, REST, a plugin's
//     step on a 2026-07-28 request) no one can be asked, and the call is
//     denied with the policy's reasons and a hint to ask the user.
//
// Only "accept" with allow=true goes on; a decline, a cancel, a timeout,
// an error or anything else is a denial. The answer comes only from the
// client's answer to the server's question — never from a tool's
// arguments, a tool's result or a page — so the model cannot answer for
// the person. Every answer, whatever it is, is put to the gate as a
// gate.KindAnswer question: the call is decided again, and the decision
// log records the ask and its outcome (never the page's text).
//
// A person's yes covers the rest of that call: what is decided in its
// course (where it landed, a redirect hop, a frame) and asks for the
// reasons the person allowed goes on; an ask for other reasons is a
// denial (askPerson.covers).

// askTimeout bounds the wait for a person's answer, and how long a
// 2026-07-28 question's token stays good.
const askTimeout = 2 * time.Minute

// answerTimeout bounds deciding and logging an answer once it came.
const answerTimeout = 5 * time.Second

// maxPendingAsks bounds the 2026-07-28 questions waiting for an answer.
const maxPendingAsks = 1024

// askSchema is the form of every question: one boolean.
var askSchema = json.RawMessage(`{"type":"object","properties":{"allow":{"type":"boolean","title":"Allow","description":"Allow this call to run"}},"required":["allow"]}`)

// askPerson is how a call's client can reach its user: the MCP session
// and the call's parameters (a 2026-07-28 retry's answer). It lives in
// the call's context from the SDK handler on; REST has none. It keeps the
// reasons a person allowed during the call.
type askPerson struct {
	session *sdk.ServerSession
	params  *sdk.CallToolParamsRaw

	mu       sync.Mutex
	accepted []string
}

type askPersonKey struct{}

// withAskPerson returns ctx carrying the MCP request's way to ask its user.
func withAskPerson(ctx context.Context, session *sdk.ServerSession, params *sdk.CallToolParamsRaw) context.Context {
	return context.WithValue(ctx, askPersonKey{}, &askPerson{session: session, params: params})
}

func askPersonOf(ctx context.Context) *askPerson {
	a, _ := ctx.Value(askPersonKey{}).(*askPerson)
	return a
}

// stateless says whether the call came at protocol 2026-07-28 or later.
func (a *askPerson) stateless() bool {
	ip := a.session.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= "2026-07-28"
}

// canElicit says whether the client declared the elicitation capability
// (form mode, or no mode, which means form).
func (a *askPerson) canElicit() bool {
	ip := a.session.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false
	}
	el := ip.Capabilities.Elicitation
	return el.Form != nil || el.URL == nil
}

// allowed notes reasons a person allowed during the call.
func (a *askPerson) allowed(reasons []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range reasons {
		if !slices.Contains(a.accepted, r) {
			a.accepted = append(a.accepted, r)
		}
	}
}

// covers says whether a person allowed every one of reasons in this call.
func (a *askPerson) covers(reasons []string) bool {
	if a == nil || len(reasons) == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range reasons {
		if !slices.Contains(a.accepted, r) {
			return false
		}
	}
	return true
}

// consult asks a person about the call c, whose question q the gate
// answered with the ask d, and returns the gate's decision on the answer.
// On a 2026-07-28 request without an answer yet, the error is the
// input_required result (an *executor.Error wrapping *inputRequired).
func (s *Server) consult(ctx context.Context, c *Call, q gate.Question, d gate.Decision) (gate.Decision, error) {
	a := askPersonOf(ctx)
	ans := policy.Answer{ID: newAskID(), Ask: d.Ask, Outcome: policy.AnswerUnavailable}
	switch {
	case a == nil || a.session == nil:
		ans.Why = "this way in (REST, or no MCP client) has no person to ask"
	case a.stateless() && !a.canElicit():
		ans.Why = "the client did not declare the elicitation capability"
	case a.stateless() && c.Plugin != nil:
		ans.Why = "a plugin's step cannot wait for an answer on a stateless (2026-07-28) request"
	case a.stateless():
		var err error
		if ans, err = s.roundTrip(ctx, c, q, a, ans); err != nil {
			return gate.Decision{}, err
		}
	case !a.canElicit():
		ans.Why = "the client did not declare the elicitation capability"
	default:
		ans.Outcome, ans.Why = s.elicit(ctx, c, a, ans, q.Flow)
	}
	aq := q
	aq.Kind, aq.Answer = gate.KindAnswer, &ans
	// The answer is decided and logged even when the wait used up the
	// call's deadline (a denial then, unless the person said yes in time).
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerTimeout)
	defer cancel()
	out := s.ask(actx, aq)
	if out.Allow && ctx.Err() != nil {
		out = gate.Decision{Err: executor.Errorf(executor.CodeTimeout, "%s: the call's deadline passed while the person was asked", c.Tool.Name).
			WithHint("call it again with a larger timeout_ms (at most 120000), so the person has time to answer")}
	}
	c.asked = true
	if out.Allow && a != nil {
		a.allowed(d.Ask)
	}
	s.log.Info("asked a person about a call", "tool", c.Tool.Name, "session", c.Session, "ask_id", ans.ID, "answer", ans.Outcome, "allowed", out.Allow)
	return out, nil
}

// elicit puts the question to the client (elicitation/create) and waits
// for its answer, at most askTimeout and the call's deadline.
func (s *Server) elicit(ctx context.Context, c *Call, a *askPerson, ans policy.Answer, flows []policy.Flow) (outcome, why string) {
	ectx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	res, err := a.session.Elicit(ectx, s.question(c, ans, flows))
	switch {
	case err != nil && ectx.Err() != nil:
		return policy.AnswerTimedOut, "no answer came before the call's deadline or " + askTimeout.String()
	case err != nil:
		return policy.AnswerUnavailable, "the client could not ask: " + err.Error()
	}
	return answerOf(res)
}

// answerOf reads a client's answer: only accept with allow=true is a yes.
func answerOf(res *sdk.ElicitResult) (outcome, why string) {
	switch {
	case res == nil:
		return policy.AnswerUnavailable, "the client sent no answer"
	case res.Action == "accept" && res.Content["allow"] == true:
		return policy.AnswerAccepted, ""
	case res.Action == "accept", res.Action == "decline":
		return policy.AnswerDeclined, ""
	case res.Action == "cancel":
		return policy.AnswerCancelled, ""
	}
	return policy.AnswerUnavailable, fmt.Sprintf("the client answered %q", res.Action)
}

// question is what the person is shown: the tool, its arguments (the
// operator's secrets as their names), the page it acts on, what of the
// content read on other origins it would carry where (flows, from the
// session's provenance), and the policy's reasons. The page's own words
// reach it only as far as the model put them in the arguments: that is
// what would flow, and what the person must see.
func (s *Server) question(c *Call, ans policy.Answer, flows []policy.Flow) *sdk.ElicitParams {
	var b strings.Builder
	fmt.Fprintf(&b, "The agent wants to run %s", c.Tool.Name)
	if c.Tool.PageTool != nil {
		b.WriteString(" (a tool a web page offers)")
	}
	b.WriteString(".\n")
	if len(c.Args) > 0 {
		args, _ := json.Marshal(c.Args)
		shown, _ := capText(s.opts.Secrets.Redact(string(args)), 600, "")
		fmt.Fprintf(&b, "With: %s\n", shown)
	}
	if c.before != nil && c.before.URL != "" {
		fmt.Fprintf(&b, "On the page: %s\n", originOf(c.before.URL))
	}
	for _, f := range flows {
		fmt.Fprintf(&b, "It would carry %d characters read on %s to %s (%s).\n", f.Length, f.FromOrigin, f.ToOrigin, f.Via)
	}
	b.WriteString("The policy asks you first, because:\n")
	for _, r := range ans.Ask {
		fmt.Fprintf(&b, "  - %s\n", s.opts.Secrets.Redact(r))
	}
	fmt.Fprintf(&b, "Allow it only if you meant the agent to do this. (chromegate, question %s)", ans.ID)
	return &sdk.ElicitParams{Mode: "form", Message: b.String(), RequestedSchema: askSchema}
}

// originOf is a URL's scheme and host, or the URL cut short.
func originOf(u string) string {
	if t, err := policy.ParseTarget(u); err == nil && t.Host != "" {
		return t.Scheme + "://" + t.Host
	}
	cut, _ := capText(u, 120, "")
	return cut
}

// newAskID names an ask in the question, the log and a 2026-07-28 token.
func newAskID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// inputRequired is a 2026-07-28 call's question: the result that asks the
// client to ask its user and call again.
type inputRequired struct {
	id    string
	ask   *sdk.ElicitParams
	state string
}

func (*inputRequired) Error() string { return "waiting for a person's answer" }

// reply is the input_required result: no content, the question, and the
// token to send back.
func (ir *inputRequired) reply() *sdk.CallToolResult {
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{ir.id: ir.ask}, RequestState: ir.state}
}

// pendingAsk is a 2026-07-28 question the server waits for an answer to.
type pendingAsk struct {
	id      string
	binding string
	expires time.Time
}

// pendingAsks are the 2026-07-28 questions by their token, each good once.
type pendingAsks struct {
	mu sync.Mutex
	m  map[string]pendingAsk
}

// add keeps p under a new token, or says there are too many waiting.
func (ps *pendingAsks) add(p pendingAsk, now time.Time) (string, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.m == nil {
		ps.m = map[string]pendingAsk{}
	}
	for k, v := range ps.m {
		if now.After(v.expires) {
			delete(ps.m, k)
		}
	}
	if len(ps.m) >= maxPendingAsks {
		return "", false
	}
	var b [18]byte
	_, _ = rand.Read(b[:])
	token := base64.RawURLEncoding.EncodeToString(b[:])
	ps.m[token] = p
	return token, true
}

// take returns the question of token and forgets it: a token is good once.
func (ps *pendingAsks) take(token string, now time.Time) (pendingAsk, bool) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	p, ok := ps.m[token]
	delete(ps.m, token)
	return p, ok && !now.After(p.expires)
}

// binding is what an answer is bound to: who calls, in which session,
// which tool with which arguments, on which page, for which reasons.
func binding(c *Call, ask []string) string {
	h := sha256.New()
	args, _ := json.Marshal(c.Args) // maps marshal in key order
	page := ""
	if c.before != nil {
		page = c.before.URL
	}
	reasons := slices.Clone(ask)
	slices.Sort(reasons)
	for _, part := range []string{c.Principal.Name, c.Session, c.Tool.Name, string(args), page, strings.Join(reasons, "\x00")} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// roundTrip asks on a 2026-07-28 request: a call that carries no answer
// ends with the question (an input_required result, logged as
// requested); a call that carries one is answered only if its token is
// one the server gave for this very call and has not used.
func (s *Server) roundTrip(ctx context.Context, c *Call, q gate.Question, a *askPerson, ans policy.Answer) (policy.Answer, error) {
	now := time.Now()
	if state := a.params.RequestState; state != "" {
		p, ok := s.asks.take(state, now)
		if !ok || p.binding != binding(c, ans.Ask) {
			ans.Why = "the answer sent does not answer this call (it was for another call, was used already, or came too late)"
			return ans, nil
		}
		ans.ID = p.id
		res, _ := a.params.InputResponses[p.id].(*sdk.ElicitResult)
		ans.Outcome, ans.Why = answerOf(res)
		return ans, nil
	}
	token, ok := s.asks.add(pendingAsk{id: ans.ID, binding: binding(c, ans.Ask), expires: now.Add(askTimeout)}, now)
	if !ok {
		ans.Why = "too many questions are waiting for an answer"
		return ans, nil
	}
	ans.Outcome = policy.AnswerRequested
	aq := q
	aq.Kind, aq.Answer = gate.KindAnswer, &ans
	s.ask(ctx, aq) // logs that the question went out; it denies
	ir := &inputRequired{id: ans.ID, ask: s.question(c, ans, q.Flow), state: token}
	return ans, &executor.Error{Code: executor.CodePolicyDenied, Message: fmt.Sprintf("%s waits for the user's answer", c.Tool.Name), Err: ir}
}

// asInputRequired finds the question in a call's error, if it is one.
func asInputRequired(err error) *inputRequired {
	var ir *inputRequired
	if errors.As(err, &ir) {
		return ir
	}
	return nil
}
