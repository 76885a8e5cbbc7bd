package gate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// askNavigation asks about every call and request, and lists everything.
const askNavigation = `decision := {"allow": true, "reasons": [], "ask": ["a person decides"]}`

// A call, and what is decided in its course, carries the ask with the
// denial to give if nobody says yes. A listing lists the tool and a tab
// or a dialog is shown (a person could allow them); a request the browser
// makes is denied, saying it cannot wait.
func TestWhereAnAskGoes(t *testing.T) {
	t.Parallel()
	g, log := gateWith(t, askNavigation)
	for kind, q := range every() {
		d := g.Decide(t.Context(), q)
		switch kind {
		case gate.KindList, gate.KindTab, gate.KindDialog, gate.KindAnswer:
			if !d.Allow {
				t.Errorf("%s: %+v", kind, d)
			}
		case gate.KindRequest:
			wantClosed(t, string(kind), d, log, "cannot wait for a person")
			if d.Ask != nil {
				t.Errorf("a request asks: %+v", d)
			}
		default:
			wantClosed(t, string(kind), d, log, "")
			if len(d.Ask) != 1 || !strings.Contains(d.Err.Error()+executor.AsError(d.Err).Page, "a person decides") {
				t.Errorf("%s: %+v", kind, d)
			}
		}
	}
	if v := g.DecideRequest(t.Context(), every()[gate.KindRequest].Request); v.Allow || !strings.Contains(v.Reason, "cannot wait for a person") {
		t.Errorf("a request: %+v", v)
	}
}

// Deny wins over ask across the decisions of one call: its page, its
// frames, its points.
func TestDenyWinsOverAskWithinACall(t *testing.T) {
	t.Parallel()
	g, log := gateWith(t, `decision := {"allow": true, "reasons": [], "ask": ["top asks"]} if input.page.host == "example.com"
decision := {"allow": false, "reasons": ["frame denied"]} if input.page.host == "frame.example"
decision := {"allow": true, "reasons": [], "ask": ["point asks"]} if input.page.host == "point.example"
decision := {"allow": true, "reasons": []} if not input.page`)
	q := every()[gate.KindCall]
	q.Frames = func(context.Context) ([]gate.Document, error) {
		return []gate.Document{{URL: "https://frame.example/"}}, nil
	}
	d := g.Decide(t.Context(), q)
	wantClosed(t, "a denied frame under an asking page", d, log, "frame denied")
	if d.Ask != nil {
		t.Errorf("asks: %+v", d)
	}
	q.Frames = func(context.Context) ([]gate.Document, error) { return nil, nil }
	q.Points = func(context.Context) ([]gate.Spot, error) {
		return []gate.Spot{{Document: gate.Document{URL: "https://point.example/"}}}, nil
	}
	if d := g.Decide(t.Context(), q); d.Allow || strings.Join(d.Ask, "|") != "top asks|point asks" {
		t.Errorf("asks of page and point: %+v", d)
	}
}

// An answer counts only for the ask it answers: anything but an explicit
// yes is a denial, an answer to other reasons than the policy's now is a
// denial, a call the policy now denies stays denied, and a policy that
// fails denies.
func TestAnswersAllowOnlyAnExplicitYesToTheSameAsk(t *testing.T) {
	t.Parallel()
	g, log := gateWith(t, askNavigation)
	answer := func(outcome string, ask ...string) gate.Decision {
		q := every()[gate.KindAnswer]
		q.Answer = &policy.Answer{ID: "a1", Ask: ask, Outcome: outcome}
		return g.Decide(t.Context(), q)
	}
	if d := answer(policy.AnswerAccepted, "a person decides"); !d.Allow {
		t.Errorf("accepted: %+v", d)
	}
	for _, o := range []string{policy.AnswerDeclined, policy.AnswerCancelled, policy.AnswerTimedOut, policy.AnswerUnavailable, policy.AnswerRequested, "yes", ""} {
		wantClosed(t, "answer "+o, answer(o, "a person decides"), log, "")
	}
	wantClosed(t, "an answer to another ask", answer(policy.AnswerAccepted, "something else"), log, "changed")
	wantClosed(t, "an answer to no ask", answer(policy.AnswerAccepted), log, "policy error: ")

	denying, log2 := gateWith(t, `decision := {"allow": input.tool != "navigate", "reasons": ["no navigation"]}`)
	q := every()[gate.KindAnswer]
	wantClosed(t, "an answer the policy now denies", denying.Decide(t.Context(), q), log2, "no navigation")
	failing, log3 := gateWith(t, `decision := {"allow": true, "reasons": []} if input.tool == "chrome_status"
decision := {"allow": true, "reasons": [], "ask": [1 / 0]} if input.tool != "chrome_status"`)
	wantClosed(t, "an answer the policy cannot decide", failing.Decide(t.Context(), q), log3, "policy error: ")
	if d := failing.Decide(t.Context(), every()[gate.KindCall]); d.Ask != nil || d.Allow {
		t.Errorf("an ask the policy cannot evaluate: %+v", d)
	}
}
