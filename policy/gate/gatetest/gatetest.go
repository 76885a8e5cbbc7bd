// Package gatetest holds test doubles of the policy gate. Nothing outside
// tests may use them: a server built with AllowAll has no policy at all.
package gatetest

import (
	"context"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy/gate"
)

// AllowAll is a test double of the policy gate that allows every question
// but a call that refers to a secret: it has no policy binding secrets to
// origins, so it cannot decide one, and denies it, as any gate does what
// it cannot decide.
var AllowAll gate.Decider = allowAll{}

type allowAll struct{}

func (allowAll) Decide(_ context.Context, q gate.Question) gate.Decision {
	if q.Kind == gate.KindCall && len(q.Secrets) > 0 {
		name := q.Name
		if name == "" {
			name = q.Tool
		}
		return Deny(executor.Errorf(executor.CodePolicyDenied, "%s refers to a secret, and this server's gate cannot decide secrets", name).
			WithHint("nothing was typed; the operator runs chromegate with its policy to use secrets"))
	}
	return gate.Decision{Allow: true}
}

// Func is a test double of the policy gate made of a function.
type Func func(ctx context.Context, q gate.Question) gate.Decision

// Decide calls f.
func (f Func) Decide(ctx context.Context, q gate.Question) gate.Decision { return f(ctx, q) }

// Calls is a test double that decides calls (gate.KindCall) with decide,
// and answers every other question as AllowAll does. decide returns nil
// to allow.
func Calls(decide func(ctx context.Context, q gate.Question) error) gate.Decider {
	return Func(func(ctx context.Context, q gate.Question) gate.Decision {
		if q.Kind == gate.KindCall {
			if err := decide(ctx, q); err != nil {
				return Deny(err)
			}
		}
		return AllowAll.Decide(ctx, q)
	})
}

// Deny is the denial of a test double: err as the model is told it.
func Deny(err error) gate.Decision {
	return gate.Decision{Err: err, Reason: err.Error()}
}
