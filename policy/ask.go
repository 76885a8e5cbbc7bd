package policy

import (
	"context"
	"time"
)

// Asking a person. A policy's decision may ask (Decision.Ask): the call
// runs only if a person, asked through the client's own interface, says
// yes. The engine decides; the asking is the caller's (the MCP server,
// package mcp), and its answer comes back here to be decided and logged:
// Answered turns an ask into an allow only for AnswerAccepted, and writes
// the answer's line to the decision log (the ask's id, the reasons, the
// outcome; never what was shown to the person beyond the reasons, never a
// page's text). Everything else a person's answer can be is a denial.

// The outcomes of an ask, as the decision log records them.
const (
	// AnswerAccepted: the person said yes, explicitly.
	AnswerAccepted = "accepted"
	// AnswerDeclined: the person said no.
	AnswerDeclined = "declined"
	// AnswerCancelled: the person dismissed the question without a choice.
	AnswerCancelled = "cancelled"
	// AnswerTimedOut: no answer came in time.
	AnswerTimedOut = "timed out"
	// AnswerUnavailable: there was no way to ask (a client that cannot,
	// REST, a request the browser makes, a step that cannot wait).
	AnswerUnavailable = "unavailable"
	// AnswerRequested: the question went to the client as an
	// input_required result (protocol 2026-07-28); the retry carrying the
	// answer is decided again and logs its own outcome.
	AnswerRequested = "requested"
)

// Answer is what came of asking a person about an ask.
type Answer struct {
	// ID names the ask: the same in every line about it.
	ID string
	// Ask are the policy's reasons to ask, as decided.
	Ask []string
	// Outcome is one of the Answer constants.
	Outcome string
	// Why, when the outcome is not AnswerAccepted, says what happened in
	// words for the model (the client's error, the missing capability).
	Why string
}

// Answered decides a person's answer a to an ask on in: allowed only when
// a.Outcome is AnswerAccepted and the ask had reasons. It writes the
// answer's line to the decision log. A nil Engine denies.
func (e *Engine) Answered(in Input, a Answer) Decision {
	if e == nil {
		return denyError("no policy engine")
	}
	start := time.Now()
	d := Decision{Allow: a.Outcome == AnswerAccepted && len(a.Ask) > 0}
	if !d.Allow {
		why := "a person was asked and did not allow it (" + a.Outcome + ")"
		if a.Outcome == AnswerUnavailable {
			why = "a person could not be asked"
		}
		if a.Why != "" {
			why += ": " + a.Why
		}
		d.Reasons = []string{why}
	}
	if e.dlog != nil {
		st := e.cur.Load()
		line := logEntry(start, in, d, st.bundles)
		line.Ask, line.AskID, line.Answer = scrubReasons(a.Ask, in.Args), a.ID, a.Outcome
		if err := e.dlog.writeEntry(line, in, d); err != nil {
			e.cfg.log.Error("policy: decision log write failed", "err", err)
		}
	}
	return d
}

// Recheck decides in as Decide does, writing no line to the decision log:
// for a call decided again to check a person's answer, whose line
// Answered writes.
func (e *Engine) Recheck(ctx context.Context, in Input) Decision {
	if e == nil {
		return denyError("no policy engine")
	}
	st := e.cur.Load()
	return e.decideCached(ctx, st, st.calls, in)
}
