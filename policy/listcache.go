package policy

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// DecideList decides a list-phase input (is the tool listed for the
// principal; dispatch asks it again on every call) as Decide does, from a
// cache of the policy revision in force: a list input holds no page, no
// target and no arguments, so the same few inputs come back on every call
// and the answer only changes with the policy, whose reload starts an
// empty cache. The key is the whole input, as the policy reads it. Errors
// and timeouts deny and are never cached. Every decision, cached or not,
// is written to the decision log, as Decide writes it. An input of
// another phase is Decide's.
func (e *Engine) DecideList(ctx context.Context, in Input) Decision {
	if e == nil {
		return denyError("no policy engine")
	}
	if in.Phase != PhaseList {
		return e.Decide(ctx, in)
	}
	start := time.Now()
	st := e.cur.Load()
	k, err := json.Marshal(in)
	if err != nil {
		return e.Decide(ctx, in)
	}
	if d, ok := st.lists.get(string(k)); ok {
		d.EvalMicros = time.Since(start).Microseconds()
		return e.logged(start, in, d)
	}
	d := e.decide(ctx, st, in)
	if !strings.HasPrefix(firstReason(d), policyErrorPrefix) {
		st.lists.put(string(k), Decision{Allow: d.Allow, Reasons: d.Reasons, Hints: d.Hints})
	}
	return e.logged(start, in, d)
}
