package policy

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
)

// DecideList decides a list-phase input (is the tool listed for the
// principal; dispatch asks it again on every call) as Decide does. A list
// input holds no page, no target and no arguments, so the same few inputs
// come back on every call; they are answered from a cache of their own
// (see decideCached). An input of another phase is Decide's.
func (e *Engine) DecideList(ctx context.Context, in Input) Decision {
	if e == nil {
		return denyError("no policy engine")
	}
	if in.Phase != PhaseList {
		return e.Decide(ctx, in)
	}
	start := time.Now()
	st := e.cur.Load()
	return e.logged(st, start, in, e.decideCached(ctx, st, st.lists, in))
}

// maxCachedInput bounds the JSON of an input whose decision is cached: a
// call with a long argument (a script, a long text) is decided afresh.
const maxCachedInput = 4096

// decideCached decides in on st from cache when the policy in force is a
// function of its input and data alone (st.deterministic: it calls no
// builtin that reads the clock, the network or chance, which OPA marks
// nondeterministic). The cache belongs to the policy revision: a reload
// starts an empty one. The key is the whole input, as the policy reads
// it. Errors and timeouts deny and are never cached. The caller writes
// the decision log, cached or not.
func (e *Engine) decideCached(ctx context.Context, st *state, cache *requestCache, in Input) Decision {
	if !st.deterministic {
		return e.decide(ctx, st, in)
	}
	start := time.Now()
	k, err := json.Marshal(in)
	if err != nil || len(k) > maxCachedInput {
		return e.decide(ctx, st, in)
	}
	if d, ok := cache.get(string(k)); ok {
		d.EvalMicros = time.Since(start).Microseconds()
		return d
	}
	d := e.decide(ctx, st, in)
	if !strings.HasPrefix(firstReason(d), policyErrorPrefix) {
		cache.put(string(k), Decision{Allow: d.Allow, Reasons: d.Reasons, Ask: d.Ask, Hints: d.Hints})
	}
	return d
}

// usesNondeterministic reports whether a policy calls a builtin whose
// result is not a function of its arguments (time.now_ns, http.send,
// rand.intn, uuid.rfc4122, net.lookup_ip_addr, opa.runtime, ...): its
// decisions are then never cached.
func usesNondeterministic(modules map[string]*ast.Module) bool {
	found := false
	check := func(op ast.Ref) {
		if b, ok := ast.BuiltinMap[op.String()]; ok && b.IsNondeterministic() {
			found = true
		}
	}
	vis := ast.NewGenericVisitor(func(x any) bool {
		if found {
			return true
		}
		switch x := x.(type) {
		case *ast.Expr:
			if x.IsCall() {
				check(x.Operator())
			}
		case ast.Call:
			if len(x) > 0 {
				if op, ok := x[0].Value.(ast.Ref); ok {
					check(op)
				}
			}
		}
		return false
	})
	for _, m := range modules {
		vis.Walk(m)
		if found {
			return true
		}
	}
	return false
}
