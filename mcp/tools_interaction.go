package mcp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
)

// Interaction: input events on an element, or at a point of the viewport.
// Each tool is one constructor: its declaration, its class, the facts the
// call path needs, its handler.

// groupInteraction is the README row of these tools.
var groupInteraction = &ToolGroup{Name: "interaction", Note: "each returns [what it changed](#acting-calls-show-what-changed); `click` `hover` `scroll` `drag` also [at x,y](#coordinates-for-vision-clients)"}

func clickTool() *Tool {
	return newTool(Tool{
		Name: "click", Title: "Click",
		Group:       groupInteraction,
		Output:      &Output{Value: pointOut{}},
		Description: "Click an element or at x,y (CSS px).",
		Rare:        []string{"x", "y"},
		ReadOnly:    no(), Action: ActionInteract, Mutating: true,
		Targets: []TargetArg{{Required: true, Point: true}},
		Changes: true, MayLoad: true, TimeoutArg: true,
	}, atPoint(click))
}

func typeTool() *Tool {
	return newTool(Tool{
		Name: "type", Title: "Type text",
		Group:       groupInteraction,
		Output:      &Output{Value: actionOut{}},
		Description: "Type text key by key (fill: all at once).",
		ReadOnly:    no(), Destructive: no(), Action: ActionInteract, Mutating: true, Secrets: []string{"text"}, SecretRefs: []string{"text"},
		Targets: []TargetArg{{Required: true}},
		Changes: true, MayLoadIf: "press_enter", TimeoutArg: true,
	}, typeText)
}

func fillTool() *Tool {
	return newTool(Tool{
		Name: "fill", Title: "Fill input",
		Group:       groupInteraction,
		Output:      &Output{Value: actionOut{}},
		Description: "Set an input's value at once, replacing it.",
		ReadOnly:    no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true, Secrets: []string{"value"}, SecretRefs: []string{"value"},
		Targets: []TargetArg{{Required: true}},
		Changes: true, TimeoutArg: true,
	}, fill)
}

func pressTool() *Tool {
	return newTool(Tool{
		Name: "press", Title: "Press key",
		Group:       groupInteraction,
		Output:      &Output{Value: actionOut{}},
		Description: "Press a key (Enter, Tab, ArrowDown, a) on an element or the focus.",
		ReadOnly:    no(), Action: ActionInteract, Mutating: true,
		Targets: []TargetArg{{}},
		Changes: true, MayLoad: true, TimeoutArg: true,
	}, press)
}

func hoverTool() *Tool {
	return newTool(Tool{
		Name: "hover", Title: "Hover",
		Group:       groupInteraction,
		Output:      &Output{Value: pointOut{}},
		Description: "Hover an element or x,y, e.g. to open a menu.",
		Rare:        []string{"x", "y"},
		// Not Mutating, nor is scroll: they change nothing the user keeps.
		ReadOnly: no(), Destructive: no(), Idempotent: true, Action: ActionInteract,
		Targets: []TargetArg{{Required: true, Point: true}},
		Changes: true, TimeoutArg: true,
	}, atPoint(hover))
}

func scrollTool() *Tool {
	return newTool(Tool{
		Name: "scroll", Title: "Scroll",
		Group:       groupInteraction,
		Output:      &Output{Value: pointOut{}},
		Description: "Scroll an element into view, or the page (scroller at x,y) by dx/dy px.",
		Rare:        []string{"x", "y"},
		ReadOnly:    no(), Destructive: no(), Action: ActionInteract,
		Targets: []TargetArg{{Point: true}},
		Check:   checkScrollAt,
		Changes: true, TimeoutArg: true,
	}, atPoint(scroll))
}

func selectOptionTool() *Tool {
	return newTool(Tool{
		Name: "select_option", Title: "Select option",
		Group:       groupInteraction,
		Output:      &Output{Value: actionOut{}},
		Description: "Choose a select's options by value or label as shown.",
		ReadOnly:    no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true,
		Targets: []TargetArg{{Required: true}},
		Changes: true, MayLoad: true, TimeoutArg: true,
	}, selectOption)
}

func setFilesTool() *Tool {
	return newTool(Tool{
		Name: "set_files", Title: "Set files",
		Group:       groupInteraction,
		Output:      &Output{Value: actionOut{}},
		Description: "Set a file input's files (paths on the server).",
		ReadOnly:    no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true,
		Targets: []TargetArg{{Required: true}},
		Changes: true, TimeoutArg: true,
	}, setFiles)
}

func dragTool() *Tool {
	return newTool(Tool{
		Name: "drag", Title: "Drag and drop",
		Group:       groupInteraction,
		Output:      &Output{Value: pointOut{}},
		Description: "Drag an element onto another, or from_x,from_y to to_x,to_y.",
		Rare:        []string{"from_x", "from_y", "to_x", "to_y"},
		ReadOnly:    no(), Action: ActionInteract, Mutating: true,
		Targets: []TargetArg{{Prefix: "from_", Required: true, Point: true}, {Prefix: "to_", Required: true, Point: true}},
		Check:   checkDrag,
		Changes: true, TimeoutArg: true,
	}, atPoint(drag))
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

// clickIn is click's input.
type clickIn struct {
	pointIn
	Button string `json:"button,omitempty"`
	Count  int    `json:"count,omitempty"`
	tabIn
}

func (a clickIn) move() pointMove { return pointMove{TabID: a.TabID, Button: a.Button, Count: a.Count} }

func (clickIn) shape(s *jsonschema.Schema) {
	setEnum(s, "button", "left", "right", "middle")
	setRange(s, "count", 1, 3)
}

func click(ctx context.Context, c *Call, a clickIn) (*Result, error) {
	ar, err := c.Executor().Click(ctx, executor.ClickParams{TargetParams: onTarget(a.TabID, a.targetIn), Button: a.Button, Count: a.Count})
	return c.actionResult(ctx, ar, err)
}

// typeIn is type's input.
type typeIn struct {
	targetIn
	Text       string `json:"text"`
	Clear      bool   `json:"clear,omitempty"`
	PressEnter bool   `json:"press_enter,omitempty"`
	tabIn
}

func typeText(ctx context.Context, c *Call, a typeIn) (*Result, error) {
	// A text with a secret goes in whole, guarded: a page that echoes its
	// field as it changes would otherwise hold, and show, every prefix of
	// the value, and could move focus, or navigate, between two of its
	// characters.
	only, err := c.secretOrigin()
	if err != nil {
		return nil, err
	}
	p := executor.TypeParams{TargetParams: onTarget(a.TabID, a.targetIn), Text: a.Text, Clear: a.Clear, PressEnter: a.PressEnter, OnlyOrigin: only}
	if only != "" {
		p.Shown = c.fieldShown(a.Text)
	} else {
		p.Unmark = a.Clear && c.unmarks()
	}
	ar, err := c.Executor().Type(ctx, p)
	return c.actionResult(ctx, ar, err)
}

// fillIn is fill's input.
type fillIn struct {
	targetIn
	Value string `json:"value"`
	tabIn
}

func fill(ctx context.Context, c *Call, a fillIn) (*Result, error) {
	only, err := c.secretOrigin()
	if err != nil {
		return nil, err
	}
	p := executor.FillParams{TargetParams: onTarget(a.TabID, a.targetIn), Value: a.Value, OnlyOrigin: only}
	if only != "" {
		p.Shown = c.fieldShown(a.Value)
	} else {
		p.Unmark = c.unmarks()
	}
	ar, err := c.Executor().Fill(ctx, p)
	return c.actionResult(ctx, ar, err)
}

// pressIn is press's input: the key first, then where.
type pressIn struct {
	Key       string   `json:"key"`
	Modifiers []string `json:"modifiers,omitempty"`
	targetIn
	tabIn
}

func (pressIn) shape(s *jsonschema.Schema) {
	setEnum(s, "modifiers", "Alt", "Control", "Meta", "Shift")
}

func press(ctx context.Context, c *Call, a pressIn) (*Result, error) {
	if a.target().IsZero() {
		if err := c.focusAllowed(ctx, a.TabID); err != nil {
			return nil, err
		}
	}
	ar, err := c.Executor().Press(ctx, executor.PressParams{TabID: a.TabID, Target: a.target(), Key: a.Key, Modifiers: a.Modifiers})
	return c.actionResult(ctx, ar, err)
}

// hoverIn is hover's input.
type hoverIn struct {
	pointIn
	tabIn
}

func (a hoverIn) move() pointMove { return pointMove{TabID: a.TabID} }

func hover(ctx context.Context, c *Call, a hoverIn) (*Result, error) {
	ar, err := c.Executor().Hover(ctx, onTarget(a.TabID, a.targetIn))
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

// scrollIn is scroll's input.
type scrollIn struct {
	pointIn
	DX int `json:"dx,omitempty"`
	DY int `json:"dy,omitempty"`
	tabIn
}

func (a scrollIn) move() pointMove { return pointMove{TabID: a.TabID, DX: a.DX, DY: a.DY} }

func scroll(ctx context.Context, c *Call, a scrollIn) (*Result, error) {
	ar, err := c.Executor().Scroll(ctx, executor.ScrollParams{TabID: a.TabID, Target: a.target(), DX: a.DX, DY: a.DY})
	return c.actionResult(ctx, ar, err)
}

// selectOptionIn is select_option's input.
type selectOptionIn struct {
	targetIn
	Values []string `json:"values"`
	tabIn
}

func selectOption(ctx context.Context, c *Call, a selectOptionIn) (*Result, error) {
	ar, err := c.Executor().SelectOption(ctx, executor.SelectParams{TargetParams: onTarget(a.TabID, a.targetIn), Values: a.Values})
	return c.actionResult(ctx, ar, err)
}

// setFilesIn is set_files's input.
type setFilesIn struct {
	targetIn
	Paths []string `json:"paths"`
	tabIn
}

func setFiles(ctx context.Context, c *Call, a setFilesIn) (*Result, error) {
	ar, err := c.Executor().SetFiles(ctx, executor.SetFilesParams{TargetParams: onTarget(a.TabID, a.targetIn), Paths: a.Paths, Tenant: c.Principal.Tenant()})
	return c.actionResult(ctx, ar, err)
}

// dragIn is drag's input: from a target or point to a target or point.
type dragIn struct {
	FromSelector string  `json:"from_selector,omitempty"`
	FromRef      string  `json:"from_ref,omitempty"`
	FromX        float64 `json:"from_x,omitempty"`
	FromY        float64 `json:"from_y,omitempty"`
	ToSelector   string  `json:"to_selector,omitempty"`
	ToRef        string  `json:"to_ref,omitempty"`
	ToX          float64 `json:"to_x,omitempty"`
	ToY          float64 `json:"to_y,omitempty"`
	tabIn
}

func (a dragIn) move() pointMove { return pointMove{TabID: a.TabID} }

func drag(ctx context.Context, c *Call, a dragIn) (*Result, error) {
	p := executor.DragParams{TabID: a.TabID, From: executor.Target{Selector: a.FromSelector, Ref: a.FromRef}, To: executor.Target{Selector: a.ToSelector, Ref: a.ToRef}}
	ar, err := c.Executor().Drag(ctx, p)
	return c.actionResult(ctx, ar, err)
}
