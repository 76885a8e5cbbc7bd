package mcp

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policy"
)

// SessionBinder learns which principal drives a session, so that the
// requests its pages make are decided for that principal. Dispatch calls
// it on every call. Implementations must be safe for concurrent use.
type SessionBinder interface {
	BindSession(session string, p Principal)
	ForgetSession(session string)
}

// TabFilter decides whether a tab's URL may be shown to the caller: a tab
// that shows a page outside the policy (a popup the page opened, a tab
// that navigated itself away) is not listed, so nothing of it — path,
// query, title — reaches the model.
type TabFilter interface {
	TabVisible(ctx context.Context, c *Call, url string) bool
}

var (
	_ SessionBinder  = (*PolicyGate)(nil)
	_ TabFilter      = (*PolicyGate)(nil)
	_ egress.Decider = (*PolicyGate)(nil)
)

// BindSession records who drives session.
func (g *PolicyGate) BindSession(session string, p Principal) {
	pp := policy.Principal{Name: p.Name, Roles: p.Roles, Transport: p.Transport}
	if pp.Roles == nil {
		pp.Roles = []string{}
	}
	if cur, ok := g.principals.Load(session); ok {
		if c := cur.(policy.Principal); c.Name == pp.Name && c.Transport == pp.Transport && slices.Equal(c.Roles, pp.Roles) {
			return
		}
	}
	g.principals.Store(session, pp)
}

// ForgetSession drops what BindSession learnt of a session that ended.
func (g *PolicyGate) ForgetSession(session string) { g.principals.Delete(session) }

// forgetSession drops a closed session's principal and request denials.
func (s *Server) forgetSession(session string) {
	if b, ok := s.opts.Gate.(SessionBinder); ok {
		b.ForgetSession(session)
	}
	s.opts.Egress.Forget(session)
	s.drivenTabs.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), session+"\x00") {
			s.drivenTabs.Delete(k)
		}
		return true
	})
}

// DecideRequest decides a request a page made, with the policy's request
// phase, for the principal that drives its session (no principal — a
// session no call has bound — decides as an anonymous one, which the
// default policy treats like any other; a policy keyed on roles denies).
// It fails closed.
func (g *PolicyGate) DecideRequest(ctx context.Context, r *egress.Request) egress.Verdict {
	var p policy.Principal
	if v, ok := g.principals.Load(r.Session); ok {
		p = v.(policy.Principal)
	}
	in, err := policy.NewRequestInput(policy.RequestInput{
		Request: policy.Request{
			URL: r.URL, Method: r.Method, ResourceType: r.ResourceType,
			Navigation: r.Navigation, TopLevel: r.TopLevel,
			FrameOrigin: r.FrameOrigin, PageOrigin: r.PageOrigin, Via: r.Via,
		},
		Addr: r.Addr, Principal: p, Session: r.Session, Backend: r.Backend,
	})
	if err != nil {
		return egress.Verdict{Reason: "the request's URL could not be checked"}
	}
	d, _ := g.Engine.DecideRequest(ctx, in)
	if d.Allow {
		return egress.Verdict{Allow: true}
	}
	reason := "denied by policy"
	if len(d.Reasons) > 0 {
		reason = d.Reasons[0]
	}
	return egress.Verdict{Reason: reason}
}

// TabVisible decides a tab's URL as a navigation of the caller's: a tab is
// shown when the caller could have navigated it there.
func (g *PolicyGate) TabVisible(ctx context.Context, c *Call, url string) bool {
	in, err := g.input(policy.PhaseCall, c.Tool, nil, c.Principal)
	if err != nil {
		return false
	}
	if in, err = in.Landed(url); err != nil {
		return false
	}
	if c.Executor() != nil {
		in.Backend = c.Executor().Backend()
	}
	in.Session = c.Session
	return g.Engine.Screen(ctx, in).Allow
}

// visibleTabs lists tabs as the caller may see them: a tab that shows a
// page outside the policy keeps its id (so it can be selected away from
// or closed) but not its URL or title, and says why. It also returns how
// many were redacted.
func (c *Call) visibleTabs(ctx context.Context, tabs []executor.Tab) ([]tabOut, int) {
	f, _ := c.srv.opts.Gate.(TabFilter)
	out := make([]tabOut, len(tabs))
	n := 0
	for i, t := range tabs {
		out[i] = tabOf(t)
		if f != nil && !f.TabVisible(ctx, c, c.tabDocument(ctx, t)) {
			out[i] = tabOut{TabID: t.ID, Selected: t.Selected, Note: outsideNote}
			n++
		}
	}
	return out, n
}

// documentURL is what a tab is decided on: its URL, or, where that URL
// does not carry its document's origin (an about:blank a page wrote
// into), the origin the browser gave the document (see
// policy.NewDocumentPage). t must come from TabInfo, which reads that
// origin; see tabDocument.
func documentURL(t executor.Tab) string {
	if !executor.OriginHidden(t.URL) {
		return t.URL
	}
	return policy.NewDocumentPage(t.URL, t.Origin).URL
}

// tabDocument is documentURL for a tab as Tabs lists it (without its
// document's origin): the origin is read for that tab alone, and only
// where the URL does not carry it. "" when it cannot be read, which no
// decision allows.
func (c *Call) tabDocument(ctx context.Context, t executor.Tab) string {
	if !executor.OriginHidden(t.URL) || c.Executor() == nil {
		return t.URL
	}
	info, err := c.Executor().TabInfo(ctx, t.ID)
	if err != nil {
		c.srv.log.Debug("the origin of a tab's document could not be read; it is listed as outside the policy", "tab", t.ID, "err", err)
		return ""
	}
	return documentURL(info)
}

// outsideNote replaces the URL and title of a tab outside the policy.
const outsideNote = "shows a page outside the policy: its URL and title are not shown"

// hiddenNote is what a tab listing says about the tabs it redacted.
func hiddenNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d tab(s) show pages outside the policy; their URLs and titles are not shown", n)
}

// BlockedNotePrefix starts the content a result ends with when the policy
// blocked requests of the page while the call ran (see blockedNote).
const BlockedNotePrefix = "[chromegate: the policy blocked "

// blockedNote says which requests the policy blocked while a call ran: the
// count in the server's words, the hosts (which the page chose) fenced.
// Host names are normalised by the browser; anything else is dropped.
func blockedNote(s *egress.Summary) string {
	if s == nil {
		return ""
	}
	hosts := make([]string, 0, len(s.Hosts))
	for _, h := range s.Hosts {
		if h = safeHost(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	note := fmt.Sprintf("%s%d request(s) the page made; they failed as network errors in the page]", BlockedNotePrefix, s.Count)
	if len(hosts) == 0 {
		return note
	}
	more := ""
	if s.More > 0 {
		more = fmt.Sprintf(" and %d more", s.More)
	}
	return note + "\n" + fence("to "+strings.Join(hosts, ", ")+more)
}

func safeHost(h string) string {
	if len(h) > 253 {
		return ""
	}
	for _, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-', r == '_', r == ':', r == '[', r == ']':
		case r == '(' || r == ')' || r == ' ':
			// "(no host)"
		default:
			return ""
		}
	}
	return h
}

// blockedLoad tells whether a call that failed did so because the policy
// blocked the document it was loading: a navigation (or an action that
// navigated) whose document request, or a redirect hop of it, was denied
// while the call ran. Chromium reports such a load as a network error
// (ERR_BLOCKED_BY_CLIENT, ERR_TUNNEL_CONNECTION_FAILED, a reset); the model
// is told the truth, POLICY_DENIED, instead.
//
// what is the call's error, or the URL the tab was left on: only a network
// error, or Chromium's error page, can be a blocked load.
func (s *Server) blockedLoad(c *Call, what string) *egress.Denial {
	if s.opts.Egress == nil || c.Tool.Action == ActionStatus {
		return nil
	}
	if !strings.Contains(what, "net::ERR_") && !strings.HasPrefix(what, "chrome-error:") {
		return nil
	}
	tunnel := strings.Contains(what, "ERR_TUNNEL_CONNECTION_FAILED") || strings.HasPrefix(what, "chrome-error:")
	for _, d := range s.opts.Egress.Since(c.Session, c.mark) {
		if d.Navigation || tunnel && d.Method == "CONNECT" {
			return &d
		}
	}
	return nil
}

// blockedErr is the error of a call whose page load the policy blocked.
// The host is the one a redirect, a link or a script chose, and the
// policy's reason names it: both go in the fenced part, never in the
// message or the hint.
func blockedErr(d *egress.Denial) error {
	return executor.Errorf(executor.CodePolicyDenied, "the page could not load: the policy blocked its request; nothing of it was read").
		WithHint("navigate to a page of an allowed host; a redirect, a link or a page script led off the allowlist").
		WithPage(fmt.Sprintf("blocked request to %s: %s", cmp.Or(safeHost(d.Host), "(no host)"), d.Reason))
}

// outside says whether url is a page outside the policy for c's caller:
// one it could not have navigated to.
func (s *Server) outside(ctx context.Context, c *Call, url string) bool {
	f, ok := s.opts.Gate.(TabFilter)
	return ok && !f.TabVisible(ctx, c, url)
}

// outsideErr is the error of a call that found its tab on a page outside
// the policy; blanked says whether the gate stage sent the tab to about:blank (see
// blankOutside). denial is the Gate's answer: its reasons name the page's
// host, so they are fenced.
func outsideErr(c *Call, denial error, blanked bool) error {
	page := "the tab showed a page outside the policy"
	if e := executor.AsError(denial); e != nil && e.Code == executor.CodePolicyDenied {
		page = e.Message
	}
	fate := "it was sent to about:blank"
	if !blanked {
		fate = "it is the user's own tab, left as it was"
	}
	return executor.Errorf(executor.CodePolicyDenied, "%s is not allowed: the tab showed a page outside the policy; %s and nothing of it was read", c.Tool.Name, fate).
		WithHint("navigate the tab to an allowed page, or use another tab").
		WithPage(page)
}

// userBrowser is implemented by an executor whose tabs are the user's own
// (the extension in the user's Chrome), as opposed to a browser or context
// chromegate made for its sessions.
type userBrowser interface{ UserBrowser() bool }

// blankOutside sends a tab a call found outside the policy to about:blank,
// and says whether it did. Every tab of a browser chromegate made is the
// agent's, and is blanked. In the user's own browser, only a tab this
// session has driven (a call touched it while it was allowed, or a call
// opened it) is: a user's tab the model merely named is refused and left
// alone, since blanking it would throw away the user's work (an unsent
// message, a form). Either way nothing of the page reaches the model.
func (s *Server) blankOutside(ctx context.Context, c *Call, ex executor.Executor, tabID string) bool {
	if u, ok := ex.(userBrowser); ok && u.UserBrowser() && !s.driven(c.Session, tabID) {
		return false
	}
	s.blank(ctx, ex, tabID)
	return true
}

// drove records that a call of session touched or opened tabID.
func (s *Server) drove(session, tabID string) {
	if tabID != "" {
		s.drivenTabs.Store(session+"\x00"+tabID, struct{}{})
	}
}

func (s *Server) driven(session, tabID string) bool {
	_, ok := s.drivenTabs.Load(session + "\x00" + tabID)
	return ok
}

// egressNoteStage notes the requests of the session's pages the egress
// boundary refused while the call ran (Call.note, which the envelope adds).
func (s *Server) egressNoteStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		c.mark = s.opts.Egress.Mark(c.Session)
		r, err := next(ctx, c)
		c.note = blockedNote(egress.Summarize(s.opts.Egress.Since(c.Session, c.mark)))
		return r, err
	}
}
