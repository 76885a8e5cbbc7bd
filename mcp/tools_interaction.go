package mcp

import (
	"context"

	"github.com/chromegate/chromegate/executor"
)

// Interaction: input events on an element, or at a point of the viewport. Each tool is one constructor: its
// declaration, its class, the facts the call path needs, its handler.

func clickTool() *Tool {
	return &Tool{
		Name: "click", Title: "Click",
		Output:      &Output{Value: pointOut{}},
		Description: "Click an element or at x,y (CSS px). Returns the page and any dialogs it opened.",
		InputSchema: object(nil, props(pointProps(""), []prop{
			{"button", enum("", "left", "right", "middle")},
			{"count", intRange("", 1, 3)},
			tabIDProp(),
		})...),
		ReadOnly: no(), Action: ActionInteract, Mutating: true,
		Targets: []TargetArg{{Required: true, Point: true}},
		Changes: true, MayLoad: true, TimeoutArg: true,
		Handler: atPoint(click),
	}
}

func typeTool() *Tool {
	return &Tool{
		Name: "type", Title: "Type text",
		Output:      &Output{Value: actionOut{}},
		Description: "Type text into an element key by key (fill sets it at once). secret:NAME in angle brackets types a secret.",
		InputSchema: object([]string{"text"}, props(targetProps(""), []prop{
			{"text", str("")}, {"clear", boolean("")}, {"press_enter", boolean("")},
			tabIDProp(),
		})...),
		ReadOnly: no(), Destructive: no(), Action: ActionInteract, Mutating: true, Secrets: []string{"text"}, SecretRefs: []string{"text"},
		Targets: []TargetArg{{Required: true}},
		Changes: true, MayLoadIf: "press_enter", TimeoutArg: true,
		Handler: typeText,
	}
}

func fillTool() *Tool {
	return &Tool{
		Name: "fill", Title: "Fill input",
		Output:      &Output{Value: actionOut{}},
		Description: "Set an input's value at once, replacing it. secret:NAME in angle brackets: a secret.",
		InputSchema: object([]string{"value"}, props(targetProps(""), []prop{
			{"value", str("")}, tabIDProp(),
		})...),
		ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true, Secrets: []string{"value"}, SecretRefs: []string{"value"},
		Targets: []TargetArg{{Required: true}},
		Changes: true, TimeoutArg: true,
		Handler: fill,
	}
}

func pressTool() *Tool {
	return &Tool{
		Name: "press", Title: "Press key",
		Output:      &Output{Value: actionOut{}},
		Description: "Press a key (Enter, Tab, ArrowDown, a) on an element or the focused one.",
		InputSchema: object([]string{"key"}, props([]prop{{"key", str("")}},
			[]prop{{"modifiers", array("", enum("", "Alt", "Control", "Meta", "Shift"), 0)}},
			targetProps(""), []prop{tabIDProp()})...),
		ReadOnly: no(), Action: ActionInteract, Mutating: true,
		Targets: []TargetArg{{}},
		Changes: true, MayLoad: true, TimeoutArg: true,
		Handler: press,
	}
}

func hoverTool() *Tool {
	return &Tool{
		Name: "hover", Title: "Hover",
		Output:      &Output{Value: pointOut{}},
		Description: "Hover over an element or at x,y, e.g. to open a menu.",
		InputSchema: object(nil, props(pointProps(""), []prop{tabIDProp()})...),
		// Not Mutating, nor is scroll: they change nothing the user keeps.
		ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract,
		Targets: []TargetArg{{Required: true, Point: true}},
		Changes: true, TimeoutArg: true,
		Handler: atPoint(hover),
	}
}

func scrollTool() *Tool {
	return &Tool{
		Name: "scroll", Title: "Scroll",
		Output:      &Output{Value: pointOut{}},
		Description: "Scroll an element into view, or the page (the scroller at x,y) by dx/dy pixels.",
		InputSchema: object(nil, props(pointProps(""), []prop{
			{"dx", integer("")}, {"dy", integer("")},
			tabIDProp(),
		})...),
		ReadOnly: no(), Destructive: no(), Action: ActionInteract,
		Targets: []TargetArg{{Point: true}},
		Check:   checkScrollAt,
		Changes: true, TimeoutArg: true,
		Handler: atPoint(scroll),
	}
}

func selectOptionTool() *Tool {
	return &Tool{
		Name: "select_option", Title: "Select option",
		Output:      &Output{Value: actionOut{}},
		Description: "Choose a select's options by value or label as shown (a cut one too).",
		InputSchema: object([]string{"values"}, props(targetProps(""), []prop{
			{"values", strList("", 0)}, tabIDProp(),
		})...),
		ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true,
		Targets: []TargetArg{{Required: true}},
		Changes: true, MayLoad: true, TimeoutArg: true,
		Handler: selectOption,
	}
}

func setFilesTool() *Tool {
	return &Tool{
		Name: "set_files", Title: "Set files",
		Output:      &Output{Value: actionOut{}},
		Description: "Set a file input's files (paths on the server).",
		InputSchema: object([]string{"paths"}, props(targetProps(""), []prop{
			{"paths", strList("", 0)}, tabIDProp(),
		})...),
		ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true,
		Targets: []TargetArg{{Required: true}},
		Changes: true, TimeoutArg: true,
		Handler: setFiles,
	}
}

func dragTool() *Tool {
	return &Tool{
		Name: "drag", Title: "Drag and drop",
		Output:      &Output{Value: pointOut{}},
		Description: "Drag one element onto another, or from_x,from_y to to_x,to_y.",
		InputSchema: object(nil, props(pointProps("from_"), pointProps("to_"), []prop{tabIDProp()})...),
		ReadOnly:    no(), Action: ActionInteract, Mutating: true,
		Targets: []TargetArg{{Prefix: "from_", Required: true, Point: true}, {Prefix: "to_", Required: true, Point: true}},
		Check:   checkDrag,
		Changes: true, TimeoutArg: true,
		Handler: atPoint(drag),
	}
}

type actionOut struct {
	pageOut
	Values []string `json:"values,omitempty"`
	changesOut
}

// actionResult reports an action. The values a select ended up with are
// its options' values, which the page wrote.
func (c *Call) actionResult(ctx context.Context, ar executor.ActionResult, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	p := c.pageOf(ctx, ar.PageState)
	r := pageResult(actionOut{pageOut: p, Values: ar.Selected}, p, ar.PageState)
	r.Untrusted = r.Untrusted || len(ar.Selected) > 0
	return r, nil
}

func click(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Button string `json:"button"`
		Count  int    `json:"count"`
	}](c)
	if err != nil {
		return nil, err
	}
	ar, err := c.Executor().Click(ctx, executor.ClickParams{TargetParams: a.params(), Button: a.Button, Count: a.Count})
	return c.actionResult(ctx, ar, err)
}

func typeText(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Text       string `json:"text"`
		Clear      bool   `json:"clear"`
		PressEnter bool   `json:"press_enter"`
	}](c)
	if err != nil {
		return nil, err
	}
	// A text with a secret goes in whole, guarded: a page that echoes its
	// field as it changes would otherwise hold, and show, every prefix of
	// the value, and could move focus, or navigate, between two of its
	// characters.
	only, err := c.secretOrigin()
	if err != nil {
		return nil, err
	}
	p := executor.TypeParams{TargetParams: a.params(), Text: a.Text, Clear: a.Clear, PressEnter: a.PressEnter, OnlyOrigin: only}
	if only != "" {
		p.Shown = c.fieldShown(a.Text)
	} else {
		p.Unmark = a.Clear && c.unmarks()
	}
	ar, err := c.Executor().Type(ctx, p)
	return c.actionResult(ctx, ar, err)
}

func fill(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Value string `json:"value"`
	}](c)
	if err != nil {
		return nil, err
	}
	only, err := c.secretOrigin()
	if err != nil {
		return nil, err
	}
	p := executor.FillParams{TargetParams: a.params(), Value: a.Value, OnlyOrigin: only}
	if only != "" {
		p.Shown = c.fieldShown(a.Value)
	} else {
		p.Unmark = c.unmarks()
	}
	ar, err := c.Executor().Fill(ctx, p)
	return c.actionResult(ctx, ar, err)
}

func press(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Key       string   `json:"key"`
		Modifiers []string `json:"modifiers"`
	}](c)
	if err != nil {
		return nil, err
	}
	if a.target().IsZero() {
		if err := c.focusAllowed(ctx, a.TabID); err != nil {
			return nil, err
		}
	}
	ar, err := c.Executor().Press(ctx, executor.PressParams{TabID: a.TabID, Target: a.target(), Key: a.Key, Modifiers: a.Modifiers})
	return c.actionResult(ctx, ar, err)
}

func hover(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[targetArgs](c)
	if err != nil {
		return nil, err
	}
	ar, err := c.Executor().Hover(ctx, a.params())
	return c.actionResult(ctx, ar, err)
}

func checkScroll(args map[string]any) error {
	_, dx := args["dx"]
	_, dy := args["dy"]
	if targetOf(args, "").IsZero() && !dx && !dy {
		return badArgs("nothing to scroll").WithHint("pass a selector or ref to scroll into view, or dx/dy in pixels")
	}
	return nil
}

func scroll(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		DX int `json:"dx"`
		DY int `json:"dy"`
	}](c)
	if err != nil {
		return nil, err
	}
	ar, err := c.Executor().Scroll(ctx, executor.ScrollParams{TabID: a.TabID, Target: a.target(), DX: a.DX, DY: a.DY})
	return c.actionResult(ctx, ar, err)
}

func selectOption(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Values []string `json:"values"`
	}](c)
	if err != nil {
		return nil, err
	}
	ar, err := c.Executor().SelectOption(ctx, executor.SelectParams{TargetParams: a.params(), Values: a.Values})
	return c.actionResult(ctx, ar, err)
}

func setFiles(ctx context.Context, c *Call) (*Result, error) {
	a, err := bind[struct {
		targetArgs
		Paths []string `json:"paths"`
	}](c)
	if err != nil {
		return nil, err
	}
	ar, err := c.Executor().SetFiles(ctx, executor.SetFilesParams{TargetParams: a.params(), Paths: a.Paths, Tenant: c.Principal.Tenant()})
	return c.actionResult(ctx, ar, err)
}

func drag(ctx context.Context, c *Call) (*Result, error) {
	p := executor.DragParams{TabID: c.TabID(), From: c.Target("from_"), To: c.Target("to_")}
	ar, err := c.Executor().Drag(ctx, p)
	return c.actionResult(ctx, ar, err)
}
