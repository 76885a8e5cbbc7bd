package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
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
// classification for the policy and its handler. Tools are data; every tool
// comes from the one table returned by Tools.
type Tool struct {
	Name  string
	Title string
	// Description is written for a model: what the tool does, when to use
	// it, what comes back and what to call first. Keep it terse: the whole
	// tools/list reply has a size budget (see TestToolsListSize).
	Description string
	// InputSchema is a JSON schema of "type": "object" with
	// "additionalProperties": false. Dispatch validates every call against
	// it and applies its defaults.
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
	// a page, then each origin on its own (OriginGate).
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

// Definition returns the tool as MCP clients see it in tools/list.
//
// Title is not sent: clients show the name instead, and 27 titles would
// spend over 500 characters of the tools/list budget (see
// TestToolsListSize) that the descriptions use better. It stays in the
// table for human-facing surfaces (the README table, REST docs).
func (t *Tool) Definition() *sdk.Tool {
	ann := &sdk.ToolAnnotations{
		DestructiveHint: t.Destructive,
		IdempotentHint:  t.Idempotent,
		OpenWorldHint:   t.OpenWorld,
	}
	if t.ReadOnly != nil {
		ann.ReadOnlyHint = *t.ReadOnly
	}
	// The schema on the wire leaves out additionalProperties: false.
	// Dispatch still refuses unknown arguments (by name, with the accepted
	// ones), and the 28 characters it costs on every tool are better spent
	// on descriptions.
	wire := *t.InputSchema
	wire.AdditionalProperties = nil
	return &sdk.Tool{
		Name:        t.Name,
		Description: t.Description,
		InputSchema: &wire,
		Annotations: ann,
	}
}

// Principal is who is calling: fed to the policy and to ListFilter.
type Principal struct {
	Name      string   `json:"name"`
	Roles     []string `json:"roles"`
	Transport string   `json:"transport"` // stdio | http | rest

	// Tools is the key's tool ACL (nil: every tool the policy allows). It
	// narrows tools/list and is checked again at every call.
	Tools *ToolACL `json:"-"`
	// Rate is the key's budget of tool calls (nil: unlimited).
	Rate *RateLimit `json:"-"`
	// Expires is when the key stops working (zero: never).
	Expires time.Time `json:"-"`
}

// LocalPrincipal is the one principal of a stdio server: the local user.
var LocalPrincipal = Principal{Name: "local", Transport: "stdio"}

// Tenant names p's own directories under the server's file roots
// (executor.TenantRoot): "" for stdio's principal, the machine's own user
// who runs the server and keeps the roots' top level; p's name for every
// principal over HTTP, keyless loopback callers included, so that no
// HTTP caller sees, guesses or reads another's files, or stdio's.
func (p Principal) Tenant() string {
	if p.Transport == LocalPrincipal.Transport {
		return ""
	}
	return p.Name
}

// Call is one tool call as the Gate and the handler see it.
type Call struct {
	Tool *Tool
	// Args are the arguments after schema validation, with defaults
	// applied. The Gate and the handler read the same map, so what the
	// policy decided on is what runs.
	Args      map[string]any
	Session   string
	Principal Principal
	// Page reads the tab the call acts on (the tab_id argument, or the
	// selected tab) from the executor, once per call, when first asked. It
	// is for the policy's page input; it fails when no browser is running
	// (NoBrowser tools) or the tab does not exist.
	Page func(ctx context.Context) (executor.Tab, error)
	// Plugin is set on a step of a plugin tool: which plugin runs it, and
	// which step it is. The Gate decides the step as if the caller had
	// called its tool, and tells the policy where it comes from.
	Plugin *PluginStep

	// PageTool resolves, for the tools that call a page tool, which one:
	// read from the executor once per call when first asked, for the
	// policy's page_tool input and for the handler. Nil for other tools.
	PageTool func(ctx context.Context) (executor.PageTool, error)

	// Points hit-tests the call's points (a call at coordinates), once
	// per call, for the Gate and the handler; nil for a call without.
	Points func(ctx context.Context) ([]executor.Hit, error)

	// SecretNames are the operator's secrets the call refers to
	// (<secret:NAME> in its Tool.SecretRefs), each once, read before the
	// Gate: the policy decides on them with the page's origin.
	SecretNames []string
	refs        bool // an argument holds <secret:…>: a reference or the escape

	ex     executor.Executor
	srv    *Server
	before *executor.Tab      // what Page returned, if the Gate asked
	peeked bool               // before is what the backend last heard of (PeekPage), not read from the browser
	noPeek bool               // the page moved under a peeked decision: read it
	frame  *executor.FrameDoc // the frame document the call's first ref is in, if the Gate decided one
	mark   uint64             // the session's last request denial when the call began
	rec    *callRecord        // the call's record, when the server keeps one

	landing *helpers.LandingWatch // the watch for navigations armLanding began, if any
}

// expectURL is the URL a PeekPage handler must find the page at: the one
// the Gate decided on, when it was peeked; "" when it was read.
func (c *Call) expectURL() string {
	if c.peeked && c.before != nil {
		return c.before.URL
	}
	return ""
}

// Executor returns the executor the call runs on: set for the Gate and the
// handler inside Manager.Do; for a NoBrowser tool, the live executor or nil.
func (c *Call) Executor() executor.Executor { return c.ex }

// decideHop is the executor.HopFunc of a fetch the server makes for the
// call: each hop is the Gate's (HopGate) to decide, and a Gate that cannot
// decide hops leaves them to the egress boundary. Whatever goes wrong
// deciding a hop refuses it.
func (c *Call) decideHop() executor.HopFunc {
	g, ok := c.srv.opts.Gate.(HopGate)
	if !ok {
		return nil
	}
	return func(ctx context.Context, rawURL string) error {
		err := c.srv.gateErr(c.Tool, g.Hop(ctx, c, rawURL))
		if e := executor.AsError(err); e != nil && e.Code != executor.CodePolicyDenied {
			return &executor.Error{Code: executor.CodePolicyDenied, Message: fmt.Sprintf("%s: a redirect could not be decided (%s); it was not followed", c.Tool.Name, e.Message),
				Hint: "the call was denied; tell the operator to check the server log", Err: err}
		}
		return err
	}
}

// Bind decodes the validated arguments into v, a pointer to a struct whose
// json tags are the schema's property names. It goes from Args, never from
// the raw request, so the handler sees exactly what the Gate saw.
func (c *Call) Bind(v any) error {
	b, err := json.Marshal(c.Args)
	if err != nil {
		return executor.Errorf(executor.CodeInternal, "re-encode arguments: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return executor.Errorf(executor.CodeBadArgs, "arguments: %v", err)
	}
	return nil
}

// TabID returns the tab_id argument, "" (the selected tab) when absent.
func (c *Call) TabID() string {
	if c.Tool.PageTool != nil {
		return c.Tool.PageTool.TabID
	}
	return argString(c.Args, "tab_id")
}

// Target returns the element target named by prefix+"selector" and
// prefix+"ref"; the zero Target when neither is set.
func (c *Call) Target(prefix string) executor.Target {
	return targetOf(c.Args, prefix)
}

func targetOf(args map[string]any, prefix string) executor.Target {
	return executor.Target{Selector: argString(args, prefix+"selector"), Ref: argString(args, prefix+"ref")}
}

func argString(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

// pageFunc memoises one TabInfo read per call, and keeps it so dispatch
// can tell whether the call moved the tab to another page.
func (c *Call) pageFunc(ex executor.Executor) func(context.Context) (executor.Tab, error) {
	var (
		once sync.Once
		tab  executor.Tab
		err  error
	)
	tabID := c.TabID()
	return func(ctx context.Context) (executor.Tab, error) {
		once.Do(func() {
			if ex == nil {
				err = executor.Errorf(executor.CodeNoBackend, "no browser is running")
				return
			}
			if pk, ok := ex.(executor.TabPeeker); ok && c.Tool.PeekPage && !c.noPeek {
				if t, ok := pk.PeekTab(tabID); ok {
					tab, c.before, c.peeked = t, &t, true
					return
				}
			}
			tab, err = ex.TabInfo(ctx, tabID)
			if err == nil {
				c.before = &tab
			}
		})
		return tab, err
	}
}

// Result is what a handler returns; dispatch turns it into the MCP result
// (the envelope: compact JSON text, page text, an image, the untrusted
// marker, the size cap).
type Result struct {
	// Value, if non-nil, is sent first as compact JSON.
	Value any
	// Text, if non-empty, follows Value on the next line, verbatim: page
	// text or markup, which would be unreadable and larger as a JSON string.
	Text string
	// Image, if set, is sent as an MCP image after the text.
	Image *Image
	// Untrusted marks a result carrying free-form text that a page wrote
	// (see fence).
	Untrusted bool
	// IsError marks a result that reports a failure the page gave (a page
	// tool that threw): an isError result with the page's words, fenced.
	IsError bool
	// Landed is the page a navigation reached. Dispatch asks Gate.Landed
	// about it before anything of the page is returned.
	Landed *executor.PageState
	// TotalChars, when set, says that Text was already cut while it was
	// read (a page tool's result bounded in the page): the length of the
	// whole. The result then ends with the truncation note.
	TotalChars int
	// Page is the page a call left the tab on, or read. When its URL is
	// not the one the Gate decided on (a click followed a link, a form
	// posted, the page navigated itself while it was read), dispatch
	// treats it as a landing too, and nothing of a page that lands outside
	// the policy is returned. Every handler whose executor result carries
	// a PageState sets it.
	Page *executor.PageState

	// seen is the outline the result shows the caller of its tab (a
	// snapshot's, or an acting call's change): runCall keeps it as what
	// the caller last saw (changes.go).
	seen *seenOutline
}

// Image is an encoded image result.
type Image struct {
	Data     []byte
	MIMEType string
}
