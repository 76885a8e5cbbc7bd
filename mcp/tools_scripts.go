package mcp

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
)

// Scripts: the caller's JavaScript in a page. Each tool is one
// constructor: its declaration, its class, the facts the call path needs,
// its handler.

// groupScripts is the README row of these tools.
var groupScripts = &ToolGroup{Name: "scripts"}

func evalTool() *Tool {
	return newTool(Tool{
		Name: "eval", Title: "Evaluate JavaScript",
		Group:       groupScripts,
		Output:      &Output{Value: evalOut{}},
		Description: "Run a JavaScript expression in the page; returns its value." + pageTextDoc,
		// eval can do anything a page script can: Mutating, though it
		// has its own switch (enable_eval) and does not also need
		// enable_mutations.
		ReadOnly: no(), Action: ActionEval, Mutating: true, Hashed: []string{"expression"}, PeekPage: true,
		CutHint: "return a smaller value from the expression", TimeoutArg: true,
	}, eval)
}

// evalIn is eval's input.
type evalIn struct {
	Expression   string `json:"expression"`
	AwaitPromise bool   `json:"await_promise,omitempty"`
	tabIn
}

func (evalIn) shape(s *jsonschema.Schema) { setDefault(s, "await_promise", true) }

func eval(ctx context.Context, c *Call, a evalIn) (*Result, error) {
	er, err := c.Executor().Eval(ctx, executor.EvalParams{TabID: a.TabID, Expression: a.Expression, AwaitPromise: a.AwaitPromise, ExpectURL: c.expectURL()})
	if err != nil {
		return nil, err
	}
	var value json.RawMessage
	if len(er.Value) > 0 && json.Valid(er.Value) {
		value = er.Value
	}
	// The model reads the value alone (lean.go); a value without a
	// string in it carries no words of the page, and is not fenced.
	var head any = value
	switch {
	case !er.OK:
		head = struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}{false, er.Error}
	case value == nil:
		head = json.RawMessage("null")
	}
	return &Result{Value: evalOut{c.pageOf(ctx, er.PageState), er.OK, value, er.Error}, Head: head, Untrusted: true, Page: &er.PageState}, nil
}
