package mcp

import (
	"context"
	"encoding/json"

	"github.com/chromegate/chromegate/executor"
)

// Scripts: the caller's JavaScript in a page. Each tool is one constructor: its
// declaration, its class, the facts the call path needs, its handler.

func evalTool() *Tool {
	return &Tool{
		Name: "eval", Title: "Evaluate JavaScript",
		Output:      &Output{Value: evalOut{}},
		Description: "Run a JavaScript expression in the page. Returns {ok, value} or {ok:false, error}.",
		InputSchema: object([]string{"expression"}, prop{"expression", str("")},
			prop{"await_promise", boolDefault("", true)}, tabIDProp()),
		// eval can do anything a page script can: Mutating, though it
		// has its own switch (enable_eval) and does not also need
		// enable_mutations.
		ReadOnly: no(), Action: ActionEval, Mutating: true, Hashed: []string{"expression"}, PeekPage: true,
		CutHint: "return a smaller value from the expression", TimeoutArg: true,
		Handler: eval,
	}
}

func eval(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		TabID        string `json:"tab_id"`
		Expression   string `json:"expression"`
		AwaitPromise bool   `json:"await_promise"`
	}](c)
	if err != nil {
		return nil, err
	}
	er, err := c.Executor().Eval(ctx, executor.EvalParams{TabID: a.TabID, Expression: a.Expression, AwaitPromise: a.AwaitPromise, ExpectURL: c.expectURL()})
	if err != nil {
		return nil, err
	}
	var value json.RawMessage
	if len(er.Value) > 0 && json.Valid(er.Value) {
		value = er.Value
	}
	return &Result{Value: evalOut{c.pageOf(ctx, er.PageState), er.OK, value, er.Error}, Untrusted: true, Page: &er.PageState}, nil
}
