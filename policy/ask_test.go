package policy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// An ask is a denial to whoever cannot ask: Allow false, the reasons the
// ask's. Deny wins over ask, ask over allow, and an ask that is not a list
// of strings is a policy error.
func TestAskDecisions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, rule string
		allow      bool
		ask        []string
		reason     string
	}{
		{"ask wins over allow", `decision := {"allow": true, "reasons": [], "ask": ["a person decides"]}`, false, []string{"a person decides"}, "a person decides"},
		{"deny wins over ask", `decision := {"allow": false, "reasons": ["no"], "ask": ["a person decides"]}`, false, nil, "no"},
		{"an empty ask allows", `decision := {"allow": true, "reasons": [], "ask": []}`, true, nil, ""},
		{"an ask of the wrong type", `decision := {"allow": true, "reasons": [], "ask": "yes"}`, false, nil, "policy error: data.chromegate.decision.ask is not an array"},
		{"an ask holding a non-string", `decision := {"allow": true, "reasons": [], "ask": [true]}`, false, nil, "policy error: data.chromegate.decision.ask holds a non-string"},
		{"an ask that fails", `decision := {"allow": true, "reasons": [], "ask": [1 / 0]}`, false, nil, "policy error: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The rule decides navigations; the load's probe (a listing) is allowed.
			e := newEngine(t, WithDir(policyDir(t, tc.rule+" if { input.tool == \"navigate\"; x := 0 / 1; x == 0 }\n"+
				`decision := {"allow": true, "reasons": []} if input.tool != "navigate"`)))
			d := e.Decide(t.Context(), navInput(t, "https://example.com/"))
			if d.Allow != tc.allow || !slicesEqual(d.Ask, tc.ask) || !strings.HasPrefix(firstReason(d), tc.reason) {
				t.Errorf("got %+v, want allow %v ask %q reason %q", d, tc.allow, tc.ask, tc.reason)
			}
			// Whoever does not know of asks denies with the ask's reason.
			if len(tc.ask) > 0 {
				err := DeniedError(d, navInput(t, "https://example.com/"))
				if err == nil || !strings.Contains(err.Message, tc.ask[0]) || err.Hint != AskHint {
					t.Errorf("denied error %+v", err)
				}
			}
		})
	}
}

// The default policy never asks; its ask_tools ask for the tools listed.
func TestDefaultPolicyAsksOnlyForAskTools(t *testing.T) {
	t.Parallel()
	in := navInput(t, "https://example.com/")
	if d := newEngine(t, WithData(map[string]any{"allow_domains": []string{"example.com"}})).Decide(t.Context(), in); !d.Allow || d.Ask != nil {
		t.Errorf("default: %+v", d)
	}
	e := newEngine(t, WithData(map[string]any{"allow_domains": []string{"example.com"}, "ask_tools": []string{"navigate"}}))
	if d := e.Decide(t.Context(), in); d.Allow || len(d.Ask) != 1 {
		t.Errorf("ask_tools: %+v", d)
	}
	if d := e.Decide(t.Context(), navInput(t, "https://elsewhere.example/")); d.Allow || d.Ask != nil {
		t.Errorf("ask_tools on a denied host: %+v", d)
	}
}

// The decision log records the ask and, on a line of its own, what came
// of asking: the ask's id and the outcome; only an accepted answer allows.
// Neither line carries an argument's value.
func TestAnswersAreDecidedAndLogged(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	e := newEngine(t, WithDir(policyDir(t, `decision := {"allow": true, "reasons": [], "ask": ["navigation asks"]}`)), WithDecisionLog(&log))
	in := navInput(t, "https://example.com/?q=a-value-the-model-typed")
	d := e.Decide(t.Context(), in)
	for _, tc := range []struct {
		outcome string
		allow   bool
	}{
		{AnswerAccepted, true}, {AnswerDeclined, false}, {AnswerCancelled, false}, {AnswerTimedOut, false}, {AnswerUnavailable, false}, {AnswerRequested, false},
	} {
		a := e.Answered(in, Answer{ID: "ask-" + tc.outcome, Ask: d.Ask, Outcome: tc.outcome, Why: "the client said so"})
		if a.Allow != tc.allow || a.Ask != nil || (!a.Allow && len(a.Reasons) == 0) {
			t.Errorf("%s: %+v", tc.outcome, a)
		}
	}
	if a := e.Answered(in, Answer{ID: "x", Outcome: AnswerAccepted}); a.Allow {
		t.Error("an accepted answer to no ask allowed")
	}
	if a := (*Engine)(nil).Answered(in, Answer{ID: "x", Ask: d.Ask, Outcome: AnswerAccepted}); a.Allow {
		t.Error("a nil engine allowed")
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines:\n%s", len(lines), log.String())
	}
	var first, accepted, declined LogEntry
	for i, v := range []*LogEntry{&first, &accepted, &declined} {
		if err := json.Unmarshal([]byte(lines[i]), v); err != nil {
			t.Fatal(err)
		}
	}
	if first.Allow || !slicesEqual(first.Ask, []string{"navigation asks"}) || first.Answer != "" {
		t.Errorf("the ask's line: %+v", first)
	}
	if !accepted.Allow || accepted.Answer != AnswerAccepted || accepted.AskID != "ask-accepted" || accepted.TargetHost != "example.com" {
		t.Errorf("the accepted answer's line: %+v", accepted)
	}
	if declined.Allow || declined.Answer != AnswerDeclined || !strings.Contains(declined.Reasons[0], "did not allow it") {
		t.Errorf("the declined answer's line: %+v", declined)
	}
	if strings.Contains(log.String(), "a-value-the-model-typed") {
		t.Errorf("the log carries an argument:\n%s", log.String())
	}
}

// A request the browser makes cannot wait for a person: the engine's
// decision is the ask, cached like any other; the gate turns it into a
// denial (policy/gate). Recheck decides without a log line.
func TestRecheckWritesNoLine(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	e := newEngine(t, WithDir(policyDir(t, `decision := {"allow": true, "reasons": [], "ask": ["navigation asks"]}`)), WithDecisionLog(&log))
	if d := e.Recheck(t.Context(), navInput(t, "https://example.com/")); d.Allow || len(d.Ask) != 1 {
		t.Errorf("recheck: %+v", d)
	}
	if log.Len() != 0 {
		t.Errorf("recheck logged:\n%s", log.String())
	}
}
