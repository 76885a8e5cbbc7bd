package policy

import (
	"strings"

	"github.com/chromegate/chromegate/executor"
)

// Hint says how the operator could allow a denied call: the flag or data
// key to set. It uses the policy's own hints when it gave some (the
// default policy does), and otherwise guesses from the input. It returns ""
// for an allowed decision.
func Hint(d Decision, in Input) string {
	if d.Allow {
		return ""
	}
	if len(d.Ask) > 0 {
		return AskHint
	}
	if len(d.Hints) > 0 {
		return strings.Join(d.Hints, "; ")
	}
	if strings.HasPrefix(firstReason(d), policyErrorPrefix) {
		return "the policy failed rather than decided: fix it (chrome_status shows its load error), or ask the operator to"
	}
	var hints []string
	switch in.Action {
	case ActionEval:
		hints = append(hints, "--unsafe-enable-eval (data: enable_eval)")
	case ActionDownload:
		hints = append(hints, "--enable-downloads (data: enable_downloads)")
	case ActionInteract, ActionTabs, ActionPageTool:
		if in.mutating {
			hints = append(hints, "--enable-mutations (data: enable_mutations)")
		}
	}
	for _, t := range []*Target{in.Target, pageTarget(in.Page)} {
		if t != nil && t.Host != "" && (t.Scheme == "http" || t.Scheme == "https") {
			hints = append(hints, "--allow-domain "+t.Host+" (data: allow_domains)")
			break
		}
	}
	if len(hints) == 0 {
		return "the policy forbids this; ask the operator to change it"
	}
	return "if the operator wants to allow it: start chromegate with " + strings.Join(hints, " and ")
}

func pageTarget(p *Page) *Target {
	if p == nil {
		return nil
	}
	return &p.Target
}

// AskHint is what the model is told of an ask no person could answer: it
// cannot answer for the person, only tell them.
const AskHint = "ask the user to allow it: the policy lets this run only on a person's explicit yes, given in the client's own prompt (MCP elicitation), which this client did not give; nothing you send can answer it"

// DeniedError is the POLICY_DENIED error for a denied call: the reasons as
// the message and Hint as the hint, ready to return as the tool's isError
// result. It returns nil for an allowed decision.
func DeniedError(d Decision, in Input) *executor.Error {
	if d.Allow {
		return nil
	}
	msg := strings.Join(d.Reasons, "; ")
	if msg == "" {
		msg = "denied by policy"
	}
	if len(d.Ask) > 0 {
		msg = "the policy asks a person first: " + strings.Join(d.Ask, "; ")
	}
	return executor.Errorf(executor.CodePolicyDenied, "%s", msg).WithHint(Hint(d, in))
}
