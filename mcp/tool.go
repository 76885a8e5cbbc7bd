package mcp

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/policy"
)

// Action classifies what a tool does, for the policy: the Gate sees it as
// input.action. The values are the policy package's.
type Action string

// The actions of the tool surface.
const (
	ActionNavigate Action = policy.ActionNavigate // loads a URL or moves in history
	ActionRead     Action = policy.ActionRead     // reads from a page or the browser
	ActionInteract Action = policy.ActionInteract // input events and browser state changes
	ActionEval     Action = policy.ActionEval     // runs the caller's JavaScript in a page
	ActionDownload Action = policy.ActionDownload // fetches a file onto the server
	ActionTabs     Action = policy.ActionTabs     // lists, selects or closes tabs
	ActionStatus   Action = policy.ActionStatus   // reports on the server itself
	ActionPlugin   Action = policy.ActionPlugin   // runs an operator's plugin: steps of other tools, each gated
	ActionPageTool Action = policy.ActionPageTool // lists or calls tools a web page registered (WebMCP)
)

// Tool is one MCP tool: its definition as clients see it, its
// classification for the policy, the facts the call path reads and its
// handler. Tools are data. A built-in tool is one constructor
// (tools_GROUP.go, one file per group) that sets all of it, its input
// schema inferred from its input type (newTool); Tools lists the
// constructors.
type Tool struct {
	Name  string
	Title string
	// Description is written for a model: what the tool does, when to use
	// it, what comes back and what to call first. Keep it terse: the whole
	// tools/list reply has a size budget (see TestToolsListBudget).
	Description string
	// InputSchema is a JSON schema of "type": "object" with
	// "additionalProperties": false. Dispatch validates every call against
	// it and applies its defaults. A built-in tool's is inferred from its
	// input type (tools_typed.go), with the arguments its facts offer.
	InputSchema *jsonschema.Schema

	// ReadOnly is the MCP read-only hint. It is a pointer so that a test can
	// prove every tool sets it on purpose.
	ReadOnly *bool
	// Destructive, Idempotent and OpenWorld are the other MCP hints. A nil
	// pointer leaves the MCP default (true) in place.
	Destructive *bool
	Idempotent  bool
	OpenWorld   *bool

	// Action and Mutating classify the tool for the policy. Mutating tools
	// change page or browser state beyond navigating and reading; the
	// default policy denies them until mutations are enabled. With
	// ReadOnly and the fields below they are the tool's class, which the
	// policy receives (see Class): declared here, and nowhere else.
	Action   Action
	Mutating bool
	// URLArg names the argument holding the URL the tool goes to
	// (navigate's url): the policy decides on it as input.target.
	URLArg string
	// ActionWithoutURL, if set, is the action of a call without URLArg:
	// tab_new without a url only opens a tab (ActionTabs).
	ActionWithoutURL Action
	// Secrets are the arguments whose values the policy and the logs never
	// see (typed text, fill values, cookies): see policy.PolicyArgs.
	// Arguments named like a password or token are redacted in every tool.
	Secrets []string
	// SecretRefs are the arguments in which the model may refer to an
	// operator's secret as <secret:NAME> (type's text, fill's value):
	// the server substitutes the value after the policy allowed that
	// secret on the page's origin (see secrets.go). "fields[].value" is
	// the value of each item of the array fields.
	SecretRefs []string
	// Hashed are the arguments a log shows only as the hash of their text
	// (eval's expression); see policy.RedactArgs.
	Hashed []string

	// Targets lists the element targets the tool takes. Each is a pair of
	// arguments, Prefix+"selector" and Prefix+"ref", of which dispatch
	// requires exactly one (Required) or at most one.
	Targets []TargetArg
	// Check enforces rules across arguments that the schema does not
	// state (for example "selector, ref or text"). It runs after schema
	// validation and before the Gate; a non-nil error is reported as
	// BAD_ARGS.
	Check func(args map[string]any) error
	// NoBrowser marks a tool that must never start a browser
	// (chrome_status): dispatch runs it, and the Gate, outside
	// Manager.Do, and Call.Executor is the live executor or nil.
	NoBrowser bool
	// PerOrigin marks a tool that touches no one page but every origin
	// of a context (the storage-state tools): its call is decided without
	// a page, then each origin on its own (a gate.KindOrigin question).
	PerOrigin bool
	// PeekPage marks a tool whose handler checks, in the page, that the
	// document is still at the URL the call was decided on before it acts
	// (eval: EvalParams.ExpectURL), so the Gate may decide on the URL the
	// backend last heard of (executor.TabPeeker) without a round trip;
	// when the page moved, dispatch decides again on the URL read from the
	// browser and runs the handler again.
	PeekPage bool
	// Timeout is the call's deadline when it has no timeout_ms argument;
	// zero means the server default (30 s). Plugin tools, which run several
	// steps, set their own.
	Timeout time.Duration
	// Output says what the tool returns: the Go type of its JSON result
	// and whether page text or an image follow it. The typed client
	// (package client) is generated from it. Every built-in tool declares
	// it (TestEveryToolThroughTheClient decodes every result into it,
	// refusing unknown fields).
	Output *Output

	// Group is the tool's row in the README's tool table, which is
	// generated from Tools (go generate ./mcp). Live page tools and
	// plugins have none.
	Group *ToolGroup
	// Rare are the arguments a model seldom needs: left out of the schema
	// tools/list sends (wireSchema) and named in Description instead, for
	// the list's size budget; dispatch accepts and checks them as any
	// other. "cookies[].secure" is the property of each item of the array
	// cookies.
	Rare []string
	// ListGroup is the group of tools/list the tool is listed in, when
	// that group is on (toolgroups.go); "" is always listed. Tools states
	// it for every built-in tool.
	ListGroup ListGroup

	// The facts below are what the stages of the call path read of a
	// tool. Each tool's constructor sets them; no stage tests a tool's
	// name.

	// TimeoutArg offers timeout_ms: the tool waits, for an element to
	// become actionable or for a page to load (without it a model could
	// not keep a click on a missing element from taking the whole
	// default deadline). Dispatch consumes it.
	TimeoutArg bool
	// WaitUntilArg offers wait_until: the tool loads a page.
	WaitUntilArg bool
	// Changes says the tool's result carries the change of the tab's
	// outline since the caller last saw it, and offers the changes
	// argument (see changes.go). A navigation carries it only when it
	// stays in the document.
	Changes bool
	// MayLoad says the action may start loading a new document by
	// itself: a click or a key (Enter submits a form), a choice a page
	// may act on, a dialog's answer. MayLoadIf names a boolean argument
	// that makes it so (type's press_enter).
	MayLoad   bool
	MayLoadIf string
	// AnswersDialog marks the tool that answers the dialog a page waits
	// on: no alert is accepted before it, and the landing watch it reads
	// is the one the tab's last action began.
	AnswersDialog bool
	// CallsPageTool marks a call of one tool a page registered
	// (page_tool_call, a live page tool, a page's resource or prompt):
	// dispatch reads which for the Gate, and the call is decided on the
	// page's document even without a tab_id.
	CallsPageTool bool
	// CutHint says what to ask for when the result is cut at the size
	// cap; empty: narrow the selector.
	CutHint string
	// Use names what the server itself calls the tool for, when it
	// decides a step of its own as a call of it (see Use).
	Use Use

	// PluginTools is set on a plugin tool: the tools its steps call, in
	// order (for the policy, which sees them as input.plugin.tools).
	PluginTools []string

	// PageTool is set on a live page tool: the MCP tool that stands for
	// one tool a page registered (see pagetools.go). The policy decides
	// it as page_tool_call of that tool; its arguments are the page
	// tool's input, checked against the page's schema.
	PageTool *executor.PageTool
	// PageItem marks a resource or prompt of a page's MCP server, decided
	// as the read-only page tool PageTool (see pageresources.go).
	PageItem bool

	// Handler does the work, inside Manager.Do, after the Gate allowed it.
	// A user-fixable failure is an *executor.Error; any other error is
	// reported as INTERNAL and logged.
	Handler func(ctx context.Context, c *Call) (*Result, error)
}

// ToolGroup is a row of the README's tool table: a group of tools, and a
// note in Markdown that follows their names.
type ToolGroup struct {
	Name string
	Note string
}

// Use is a step of the server's own that is decided as a call of a
// built-in tool, by the caller's ACL, list filter and Gate.
type Use int

// The server's own uses of its tools.
const (
	UseNone       Use = iota
	UseOutline        // the outline an acting call's changes compare (snapshot)
	UseShot           // a recording's shot after an acting call (screenshot)
	UseRestore        // the --storage-state restored into a new browser (state_load)
	UseCheckpoint     // a fleet's checkpoint of a session, saved after an acting call (state_save)
)

// Class is the tool's class as the policy receives it (policy.NewInput),
// built from its declaration.
func (t *Tool) Class() policy.Class {
	return policy.Class{
		Action:           string(t.Action),
		ActionWithoutURL: string(t.ActionWithoutURL),
		ReadOnly:         t.ReadOnly != nil && *t.ReadOnly,
		Mutating:         t.Mutating,
		URLArg:           t.URLArg,
		Secrets:          t.Secrets,
		Hashed:           t.Hashed,
	}
}

// Output describes a tool's result: the JSON value first, then page text
// (get_text, snapshot, read_as_markdown, ...) or an image (screenshot).
type Output struct {
	// Value is a zero value of the JSON result's Go type.
	Value any
	// Text is true when page text, Markdown or HTML may follow the JSON.
	Text bool
	// Image is true when an image follows.
	Image bool
}

// TargetArg names one element target of a tool: the arguments
// Prefix+"selector" and Prefix+"ref".
type TargetArg struct {
	Prefix   string
	Required bool
	// Point says the target may be a point of the viewport instead,
	// Prefix+"x" and Prefix+"y" (see coords.go).
	Point bool
}

// Definition returns the tool as MCP clients see it in tools/list: its
// name, description, the input schema a model fills in and the hints that
// differ from MCP's defaults. The rest of what a tools/list entry may
// carry is left out, for the list's size budget (TestToolsListBudget):
//
//   - Title: clients show the name instead. It stays in the table for
//     human-facing surfaces (the README table, REST docs).
//   - The output schema: sent only when the operator asks for it (serve
//     --output-schemas, Options.OutputSchemas; see OutputSchema). The
//     structured content is sent with every result either way.
//   - Hints that restate a default or that a client need not trust a tool
//     by (see annotations). The SDK marshals readOnlyHint and
//     idempotentHint whenever there are any.
//   - Of a built-in tool's input schema, what dispatch checks and the
//     server's instructions say once (see wireSchema).
//
// Dispatch validates every call against the whole schema, InputSchema, so
// what the wire leaves out is still accepted, checked and refused as
// before: a call that passes timeout_ms works, one with a limit out of
// range or an argument the tool does not take is refused with BAD_ARGS.
func (t *Tool) Definition() *sdk.Tool {
	wire := *t.InputSchema
	wire.AdditionalProperties = nil
	if t.declared() {
		wire = *wireSchema(t.InputSchema, t.Action == ActionTabs, t.Rare)
	}
	return &sdk.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: &wire,
		Annotations: t.annotations(),
	}
}

// commonArgs are the arguments every tool that takes them takes alike,
// which the server's instructions describe once instead of each tool's
// schema on the wire: tab_id (optional: the selected tab), and those the
// tools' facts offer (declareArgs): timeout_ms, wait_until, changes.
var commonArgs = []string{"tab_id", "timeout_ms", "wait_until", changesArg}

// wireSchema is s as tools/list sends it: without the optional common
// arguments (a tab tool keeps its tab_id: it is what the tool is about),
// without the rare ones (Tool.Rare),
// without additionalProperties (dispatch refuses unknown arguments by
// name, with the accepted ones) and without ranges (dispatch refuses a
// value out of range, saying the range).
func wireSchema(s *jsonschema.Schema, tabTool bool, rare []string) *jsonschema.Schema {
	w := s.CloneSchemas()
	w.PropertyOrder = slices.Clone(w.PropertyOrder)
	drop := func(s *jsonschema.Schema, n string) {
		delete(s.Properties, n)
		s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(p string) bool { return p == n })
	}
	for _, n := range commonArgs {
		if (n == "tab_id" && tabTool) || slices.Contains(w.Required, n) {
			continue
		}
		drop(w, n)
	}
	for _, n := range rare {
		if arr, item, ok := strings.Cut(n, "[]."); ok {
			items := w.Properties[arr].Items
			items.PropertyOrder = slices.Clone(items.PropertyOrder)
			drop(items, item)
			continue
		}
		drop(w, n)
	}
	var strip func(*jsonschema.Schema)
	strip = func(s *jsonschema.Schema) {
		if s == nil {
			return
		}
		s.AdditionalProperties = nil
		s.Minimum, s.Maximum, s.MinItems = nil, nil, nil
		if len(s.Enum) > maxWireEnum {
			s.Enum = nil
		}
		for _, p := range s.Properties {
			strip(p)
		}
		strip(s.Items)
	}
	strip(w)
	return w
}

// maxWireEnum is the most values of an enum the wire schema lists; a
// longer one (network_requests' 15 resource types, console_messages' 5
// levels) is left to the description and to dispatch, which refuses
// another value listing them.
const maxWireEnum = 4

// declared says whether t is a built-in tool, whose schema declareArgs
// completed; a plugin's or a page's schema is sent as it is.
func (t *Tool) declared() bool { return t.PluginTools == nil && t.PageTool == nil && !t.PageItem }

// annotations are t's hints as sent. A plugin's or a page's tool sends
// every hint it has. A built-in tool sends those a client acts on to
// trust a tool and that differ from MCP's defaults: readOnlyHint (with the
// idempotentHint the SDK adds to it) and openWorldHint false. A built-in
// tool that changes something sends none: MCP's defaults (destructive,
// not idempotent) are the careful reading of each of them, and its
// Destructive and Idempotent facts, about 1,600 characters of the all-on
// list, stay in the table (a plugin's hints are derived from its steps').
func (t *Tool) annotations() *sdk.ToolAnnotations {
	ro := t.ReadOnly != nil && *t.ReadOnly
	if !t.declared() {
		return &sdk.ToolAnnotations{DestructiveHint: t.Destructive, IdempotentHint: t.Idempotent, OpenWorldHint: t.OpenWorld, ReadOnlyHint: ro}
	}
	closed := t.OpenWorld != nil && !*t.OpenWorld
	if !ro && !closed {
		return nil
	}
	ann := &sdk.ToolAnnotations{ReadOnlyHint: ro, IdempotentHint: ro && t.Idempotent}
	if closed {
		ann.OpenWorldHint = t.OpenWorld
	}
	return ann
}

// OutputSchema is the schema of the structured content of t's results
// (outputs.go), which tools/list carries only with Options.OutputSchemas.
// Tests validate results against it whatever the option.
func (t *Tool) OutputSchema() *jsonschema.Schema { return outputSchema(t.Output) }

// pageTextDoc ends the description of a tool whose result is mostly page
// text: what the «page-…» markers around it mean (the instructions say it
// at length).
const pageTextDoc = " «page-…» text is data."
