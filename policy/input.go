package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// InputVersion is the version of the input document this package builds.
// It changes only when a field changes meaning or disappears; new fields
// may appear without a bump. policies/input.schema.json describes it.
const InputVersion = 1

// The phases of a decision.
const (
	// PhaseCall decides one tool call, just before it runs (and again,
	// for navigations, where the tab landed).
	PhaseCall = "call"
	// PhaseList decides whether a tool appears in tools/list: it should be
	// allowed iff some call of the tool could ever be allowed.
	PhaseList = "list"
	// PhaseRequest decides one request a page, frame or worker makes on
	// its own (a subresource, a fetch, a frame, a popup, a redirect hop);
	// see NewRequestInput.
	PhaseRequest = "request"
)

// The actions a tool can have (Class.Action, input.action).
const (
	ActionNavigate = "navigate"
	ActionRead     = "read"
	ActionInteract = "interact"
	ActionEval     = "eval"
	ActionDownload = "download"
	ActionTabs     = "tabs"
	ActionStatus   = "status"
	ActionPageTool = "page_tool"
	// ActionPlugin is the action of an operator's plugin tool (steps of
	// other tools, each decided on its own); see Input.Plugin.
	ActionPlugin = "plugin"
	// ActionUnknown is the action of a tool whose Class names none (the
	// zero Class); the default policy denies it.
	ActionUnknown = "unknown"
	// ActionRequest is the action of every PhaseRequest input.
	ActionRequest = "request"
)

// Input is the document a policy decides on (input in Rego). Its JSON form
// is documented in policies/README.md and policies/input.schema.json.
type Input struct {
	// Version is InputVersion.
	Version int `json:"version"`
	// Phase is PhaseCall or PhaseList.
	Phase string `json:"phase"`
	// Tool is the MCP tool name ("navigate", "get_text", ...).
	Tool string `json:"tool"`
	// Action is the tool's action (Class.Action; tab_new without a url is
	// ActionTabs).
	Action string `json:"action"`
	// ReadOnly is the tool's MCP read-only hint: true when the tool changes
	// nothing in the browser (reads, status, listing tabs). Navigation is
	// not read-only; safe mode is decided by the policy's own list of
	// mutating tools, which matches Class.Mutating.
	ReadOnly bool `json:"read_only"`
	// Args are the call's arguments, with secret values (typed text, fill
	// values, cookie values, clipboard text, anything named like a password
	// or token) replaced by "[redacted]"; see PolicyArgs. Empty in the list
	// phase.
	Args map[string]any `json:"args"`
	// Target is where a navigation or download will go, nil when the call
	// has no URL (reads, back/forward/reload before they land).
	Target *Target `json:"target"`
	// Page is the tab a read, interaction or eval will touch, taken from the
	// browser at call time, never from the model. Nil when unknown or not
	// relevant (the list phase, status).
	Page *Page `json:"page"`
	// Backend is the executor backend ("cdp", "ext"); empty in the list phase.
	Backend string `json:"backend"`
	// Principal is who is calling.
	Principal Principal `json:"principal"`
	// PageTool describes a WebMCP page tool being called or listed, else nil.
	PageTool *PageTool `json:"page_tool"`
	// Plugin is set when the call is an operator's plugin tool (action
	// ActionPlugin) or one of its steps, else nil.
	Plugin *Plugin `json:"plugin"`
	// Request describes a request a page makes (phase PhaseRequest), else
	// nil.
	Request *Request `json:"request"`
	// Session is the executor session (browser context) the call or the
	// request belongs to: "" for the default session, the MCP session id
	// over HTTP, or a named session.
	Session string `json:"session"`
	// Secrets are the names of the operator's secrets the call refers to
	// (<secret:NAME> in typed text or a filled value), each once; empty
	// when it refers to none. The values never reach the policy: the
	// server substitutes them after the policy allowed the call.
	Secrets []string `json:"secrets"`
	// State is set on the per-origin decisions of the storage-state tools
	// (state_save, state_load, and serve --storage-state): which origin's
	// cookies and storage are saved or restored; see ForStateOrigin. Nil
	// on every other decision, and on the state tools' own call.
	State *StateOrigin `json:"state,omitempty"`
	// Dialog is the JavaScript dialog the page waits on (the one
	// dialog_answer answers), read from the browser at call time; nil when
	// none is open, and in the list and request phases.
	Dialog *Dialog `json:"dialog,omitempty"`
	// Point is set on a call that acts at coordinates of the viewport
	// (click, hover, scroll or drag at x,y): the point, in CSS pixels.
	// Page is then the document under the point (a frame's, where the
	// point falls on a frame), read from the browser; a drag is decided
	// once per point. Nil on every other decision.
	Point *Point `json:"point,omitempty"`
	// Flow is what of the content the session was shown from other
	// origins the call or request carries to where it goes (see Flow);
	// empty when it carries none, in the list phase, and when the server
	// tracks no provenance (serve --flow=off).
	Flow []Flow `json:"flow"`
	// ReadOrigins are the origins whose content the session's model was
	// shown so far, sorted; empty in the list phase and with --flow=off.
	ReadOrigins []string `json:"read_origins"`

	// mutating is the tool's Class.Mutating, for Hint; not part of the
	// document.
	mutating bool
}

// Point is a point of a tab's viewport, in CSS pixels.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Dialog is a JavaScript dialog a page opened: its type (alert, confirm,
// prompt, beforeunload) and its message, which are the page's words.
type Dialog struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Plugin describes a plugin tool: on the plugin's own call, its name and
// the tools of its steps; on each step's decision (which is the step
// tool's, as if the caller had called it), the same plus the step's name.
type Plugin struct {
	Name string `json:"name"`
	// Step is the step being decided, "" on the plugin's own call.
	Step string `json:"step"`
	// Tools are the tools the plugin's steps call, in order.
	Tools []string `json:"tools"`
}

// Page is the document a call touches, parsed like a Target, plus its
// origin: the URL the tab shows, or, where that URL does not carry the
// document's origin (about:blank, data:, blob:), the origin itself; see
// NewDocumentPage.
type Page struct {
	Target
	// Origin is the serialised origin ("https://example.com",
	// "http://127.0.0.1:8080"), or "null" for an opaque origin.
	Origin string `json:"origin"`
	// ShownURL is the URL the tab shows when the page is described by its
	// document's origin instead (an about:blank a page wrote into); empty
	// otherwise. It is for reasons and logs: decide on Target.
	ShownURL string `json:"shown_url,omitempty"`
}

// Principal is the authenticated caller. Transport is "stdio", "http" or
// "rest"; Roles come from the caller's key (HTTP) or configuration (stdio).
type Principal struct {
	Name      string   `json:"name"`
	Roles     []string `json:"roles"`
	Transport string   `json:"transport"`
}

// PageTool is a tool a page registered through WebMCP. Origin is the
// registering document's origin, read from the browser; Annotations are
// the hints the page declared, always readOnlyHint, untrustedContentHint,
// consequentialHint and destructiveHint as booleans, which a policy must
// treat as claims of the page, not facts. A resource or prompt of a page's
// MCP server (@mcp-b/global) is decided as a read-only page tool named
// after it.
type PageTool struct {
	Origin      string         `json:"origin"`
	Name        string         `json:"name"`
	Annotations map[string]any `json:"annotations"`
}

// Class is what the policy input says about a tool, declared with the
// tool itself (the MCP server's tool table) and passed to NewInput: this
// package keeps no table of tools. The zero Class is a tool nobody
// declared: ActionUnknown, which the default policy denies.
type Class struct {
	// Action is the tool's action, one of the Action* constants
	// (input.action).
	Action string
	// ActionWithoutURL, when set, is the action of a call without a URL in
	// URLArg: tab_new is a navigation when it has a url, else only opens a
	// tab (ActionTabs).
	ActionWithoutURL string
	// ReadOnly is the tool's MCP read-only hint (input.read_only).
	ReadOnly bool
	// Mutating says the tool changes what the user has (page state,
	// cookies, clipboard, files, tabs), which safe mode forbids. It is not
	// in the input (a policy keeps its own list, as the default policy's
	// mutating_tools): Hint uses it to guess how a denial could be lifted.
	Mutating bool
	// URLArg names the argument holding the URL the call goes to
	// (navigate's, download_file's, tab_new's url): the input's target is
	// parsed from it. "" for a tool that goes nowhere.
	URLArg string
	// Secrets are the arguments whose values are user secrets: what is
	// typed, filled, written to the clipboard, set as a cookie or passed
	// to a page tool. Under them every value is redacted but those that
	// only say where a value goes (a cookie's name, domain and url).
	Secrets []string
	// Hashed are the arguments a log shows as the hash of their text
	// (eval's source; see RedactArgs). The policy sees them as they are.
	Hashed []string
}

// action is the class's input.action for a call with (or without) a URL.
func (c Class) action(hasURL bool) string {
	switch {
	case c.Action == "":
		return ActionUnknown
	case !hasURL && c.ActionWithoutURL != "":
		return c.ActionWithoutURL
	}
	return c.Action
}

// NewInput builds the input for a call (phase PhaseCall) or a listing
// (PhaseList) of tool, whose class is class: version, phase, tool, action,
// read-only hint, args passed through PolicyArgs, and the target parsed
// from the class's URLArg when the call has one. The caller fills Page,
// Backend, Principal and PageTool.
//
// An unparsable url is an error wrapping ErrBadURL: the call must then be
// refused (BAD_ARGS), never run.
func NewInput(phase, tool string, class Class, args map[string]any) (Input, error) {
	var raw string
	if class.URLArg != "" {
		raw, _ = args[class.URLArg].(string)
	}
	in := Input{
		Version:  InputVersion,
		Phase:    phase,
		Tool:     tool,
		Action:   class.action(raw != ""),
		ReadOnly: class.ReadOnly,
		Args:     PolicyArgs(class, args),
		mutating: class.Mutating,
	}
	if raw != "" {
		t, err := ParseTarget(raw)
		if err != nil {
			return Input{}, fmt.Errorf("%s: %s: %w", tool, class.URLArg, err)
		}
		in.Target = &t
	}
	return in, nil
}

// Landed returns the input for the second check of a call after which the
// tab shows another URL: a navigation after redirects and client-side
// navigation, back/forward/reload, or an interaction that navigated (a
// click on a link). It keeps the tool, principal and page, and decides a
// navigation (action "navigate") to rawURL, so a policy checks the landing
// as it checks any navigation. An unparsable URL is an error: the tab must
// then be treated as landed outside policy.
func (in Input) Landed(rawURL string) (Input, error) {
	t, err := ParseTarget(rawURL)
	if err != nil {
		return in, err
	}
	in.Action = ActionNavigate
	in.ReadOnly = false
	in.Target = &t
	return in, nil
}

// Redirected returns the input for a request the server's own fetch for a
// call (download_file) is about to send: a redirect hop, or the URL a
// click led to. It keeps the tool, action, principal and page, and decides
// the call as if it had been made with rawURL as its url (args.url and the
// target both), so a policy decides each hop as it decided the call. An
// unparsable URL is an error: the hop must then be refused.
func (in Input) Redirected(rawURL string) (Input, error) {
	t, err := ParseTarget(rawURL)
	if err != nil {
		return in, err
	}
	args := make(map[string]any, len(in.Args)+1)
	for k, v := range in.Args {
		args[k] = v
	}
	args["url"] = rawURL
	in.Args = args
	in.Target = &t
	return in, nil
}

// StateOrigin is one origin whose storage state a state tool saves or
// restores: the policy decides it per origin, saving like a read of the
// origin and restoring like a navigation to it (input.target is the
// origin's URL).
type StateOrigin struct {
	// Op is "save" or "load".
	Op string `json:"op"`
	// Origin is "scheme://host[:port]"; for a cookie, the host of its
	// domain (leading dot dropped) as "https://host" or, for a cookie
	// that is not Secure, "http://host".
	Origin string `json:"origin"`
	// Source is "tool" for a state_save or state_load call, "serve" for
	// the file of serve --storage-state restored into a new context,
	// "checkpoint" for a fleet's checkpoint of a session: saved after each
	// acting call and restored by the replica that takes the session over.
	Source string `json:"source"`
}

// The values of StateOrigin.Op and StateOrigin.Source.
const (
	StateSave  = "save"
	StateLoad  = "load"
	StateTool  = "tool"
	StateServe = "serve"
	// StateCheckpoint is a fleet's checkpoint of a session (serve
	// --redis-url with a checkpoint key).
	StateCheckpoint = "checkpoint"
)

// ForStateOrigin returns the input for one origin of a storage-state call:
// the call's input with input.state naming the origin and input.target its
// URL. An origin that does not parse as an http(s) URL is an error: its
// state must then be skipped.
func (in Input) ForStateOrigin(op, source, origin string) (Input, error) {
	t, err := ParseTarget(origin)
	if err != nil {
		return in, err
	}
	in.Target = &t
	in.Page = nil
	in.State = &StateOrigin{Op: op, Origin: origin, Source: source}
	return in, nil
}

// NewPage describes the URL a tab shows. A URL that does not parse gives a
// page with only URL set (and IPClassNone), which no policy that checks the
// scheme will allow.
func NewPage(rawURL string) *Page {
	t, err := ParseTarget(rawURL)
	if err != nil {
		return &Page{Target: Target{URL: rawURL, IPClass: IPClassNone}, Origin: "null"}
	}
	return &Page{Target: t, Origin: origin(t)}
}

// NewDocumentPage describes the document a tab shows: its URL, rawURL, and
// the security origin the browser gave the document, origin ("" when the
// URL's own origin stands; see executor.Tab.Origin). A read or an action
// is decided on the document it touches, so where the two disagree — an
// about:blank, data: or blob: document whose origin is its creator's —
// the page is the origin: an about:blank written by a page of
// other.example is a page of other.example, and one of an opaque origin
// is a page of the opaque origin "null", which no URL rule allows.
// ShownURL then keeps rawURL.
func NewDocumentPage(rawURL, origin string) *Page {
	p := NewPage(rawURL)
	if origin == "" || origin == p.Origin && origin != "null" {
		return p
	}
	d := NewPage(origin)
	if t, err := ParseTarget(origin); err != nil || t.Host == "" || origin != d.Origin {
		// Not a tuple origin as browsers serialise one: opaque.
		d = &Page{Target: Target{URL: "null", IPClass: IPClassNone}, Origin: "null"}
	}
	d.ShownURL = rawURL
	return d
}

// origin serialises a target's origin the way browsers do.
func origin(t Target) string {
	scheme := t.Scheme
	if scheme == "blob" || scheme == "filesystem" {
		if t.Host == "" {
			return "null"
		}
		scheme = strings.SplitN(strings.TrimPrefix(t.URL, t.Scheme+":"), ":", 2)[0]
	}
	def, special := specialPorts[scheme]
	if !special || t.Host == "" {
		if scheme == "file" {
			return "file://"
		}
		if t.Host != "" && strings.HasPrefix(t.URL, t.Scheme+"://") {
			// chrome://, chrome-extension:// and other standard schemes
			return scheme + "://" + t.Host
		}
		return "null"
	}
	if t.Port != def {
		return fmt.Sprintf("%s://%s:%d", scheme, t.Host, t.Port)
	}
	return scheme + "://" + t.Host
}

// Redacted is what replaces a secret value in policy input and logs.
const Redacted = "[redacted]"

// secretKeys are argument names whose values are secrets wherever they
// appear, in every tool.
var secretKeys = []string{"password", "passwd", "secret", "token", "authorization", "cookie", "apikey", "api_key", "credential"}

func isSecretKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range secretKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// PolicyArgs returns a copy of args fit for the policy input: the values of
// secrets (typed text, fill values, cookie values, clipboard text, form
// field values, page-tool arguments, and any key named like a password or
// token) are replaced by Redacted, keeping the structure (a cookie keeps
// its name, domain and url, so a policy can decide on where it goes). The
// eval expression is kept: a policy may restrict what scripts run.
//
// Policies never need secret values to decide, and keeping them out means
// a policy's print, trace or reasons cannot leak them.
func PolicyArgs(class Class, args map[string]any) map[string]any {
	return redact(class, args, false)
}

// RedactArgs returns a copy of args fit for a log line: PolicyArgs, plus
// the class's Hashed arguments (the eval expression) replaced by
// "sha256:<hex>" of their text. The decision
// log never contains args at all; this is for whatever else logs calls.
func RedactArgs(class Class, args map[string]any) map[string]any {
	return redact(class, args, true)
}

func redact(class Class, args map[string]any, hash bool) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		switch {
		case contains(class.Secrets, k):
			out[k] = redactValues(v)
		case isSecretKey(k):
			out[k] = Redacted
		case hash && contains(class.Hashed, k):
			if s, ok := v.(string); ok {
				out[k] = HashSecret(s)
			} else {
				out[k] = Redacted
			}
		default:
			out[k] = redactKeys(v)
		}
	}
	return out
}

// HashSecret is how a secret that must stay recognisable (an eval source)
// appears in logs: "sha256:" and the hex digest of its text.
func HashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// redactValues replaces every string, number and bool under v by Redacted,
// except under keys that only say where a value goes (name, domain, url,
// path, selector, ref), which stay readable.
func redactValues(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			switch strings.ToLower(k) {
			case "name", "domain", "url", "path", "selector", "ref", "secure", "httponly", "samesite", "expires":
				out[k] = redactKeys(e)
			default:
				out[k] = redactValues(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValues(e)
		}
		return out
	case nil:
		return nil
	default:
		return Redacted
	}
}

// redactKeys copies v, redacting values under secret-looking keys.
func redactKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if isSecretKey(k) {
				out[k] = Redacted
			} else {
				out[k] = redactKeys(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactKeys(e)
		}
		return out
	}
	return v
}

// MarshalJSON writes the input document as a policy sees it: args is an
// object and roles an array even when empty.
func (in Input) MarshalJSON() ([]byte, error) {
	type plain Input
	p := plain(in)
	if p.Args == nil {
		p.Args = map[string]any{}
	}
	if p.Principal.Roles == nil {
		p.Principal.Roles = []string{}
	}
	if p.Flow == nil {
		p.Flow = []Flow{}
	}
	if p.ReadOrigins == nil {
		p.ReadOrigins = []string{}
	}
	if p.Plugin != nil && p.Plugin.Tools == nil {
		pl := *p.Plugin
		pl.Tools = []string{}
		p.Plugin = &pl
	}
	if p.PageTool != nil && p.PageTool.Annotations == nil {
		pt := *p.PageTool
		pt.Annotations = map[string]any{}
		p.PageTool = &pt
	}
	return json.Marshal(p)
}

// knownTerms holds one shared term per string that recurs in every input
// (tools, actions, phases, schemes, IP classes, transports), so building an
// input allocates only for what is particular to the call. Terms are
// immutable once built, as OPA's own interned terms are.
var knownTerms = func() map[string]*ast.Term {
	m := map[string]*ast.Term{}
	add := func(ss ...string) {
		for _, s := range ss {
			m[s] = ast.StringTerm(s)
		}
	}
	add(PhaseCall, PhaseList, PhaseRequest, ActionNavigate, ActionRead, ActionInteract, ActionEval,
		ActionDownload, ActionTabs, ActionStatus, ActionPageTool, ActionPlugin, ActionUnknown, ActionRequest, "",
		"GET", "POST", "CONNECT", "proxy", "route", "document", "stylesheet", "image", "script", "font",
		"media", "xhr", "fetch", "websocket", "eventsource", "ping", "other",
		"http", "https", "about", "about:blank", "data", "file", "javascript", "chrome", "blob",
		IPClassLoopback, IPClassPrivate, IPClassLinkLocal, IPClassPublic, IPClassUnresolved, IPClassNone,
		"stdio", "http", "rest", "cdp", "ext", "extension", "null")
	return m
}()

func strTerm(s string) *ast.Term {
	if t, ok := knownTerms[s]; ok {
		return t
	}
	return ast.StringTerm(s)
}

// astValue builds the input as a Rego value directly, without a JSON round
// trip: this is on the path of every decision.
func (in Input) astValue() (ast.Value, error) {
	// The interned empty values are shared and never modified, by OPA or
	// by us.
	args := ast.InternedEmptyObjectValue.(ast.Object)
	if len(in.Args) > 0 {
		v, err := ast.InterfaceToValue(in.Args)
		if err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		o, ok := v.(ast.Object)
		if !ok {
			return nil, errors.New("args is not an object")
		}
		args = o
	}
	roles := make([]*ast.Term, len(in.Principal.Roles))
	for i, r := range in.Principal.Roles {
		roles[i] = ast.StringTerm(r)
	}
	target := ast.InternedNullTerm
	if in.Target != nil {
		target = ast.ObjectTerm(targetItems(*in.Target)...)
	}
	page := ast.InternedNullTerm
	if in.Page != nil {
		items := append(targetItems(in.Page.Target), [2]*ast.Term{ast.InternedTerm("origin"), strTerm(in.Page.Origin)})
		if in.Page.ShownURL != "" {
			items = append(items, [2]*ast.Term{ast.InternedTerm("shown_url"), strTerm(in.Page.ShownURL)})
		}
		page = ast.ObjectTerm(items...)
	}
	pageTool := ast.InternedNullTerm
	if in.PageTool != nil {
		ann := ast.InternedEmptyObjectValue.(ast.Object)
		if len(in.PageTool.Annotations) > 0 {
			v, err := ast.InterfaceToValue(in.PageTool.Annotations)
			if err != nil {
				return nil, fmt.Errorf("page_tool.annotations: %w", err)
			}
			o, ok := v.(ast.Object)
			if !ok {
				return nil, errors.New("page_tool.annotations is not an object")
			}
			ann = o
		}
		pageTool = ast.ObjectTerm(
			ast.Item(ast.InternedTerm("origin"), ast.StringTerm(in.PageTool.Origin)),
			ast.Item(ast.InternedTerm("name"), ast.StringTerm(in.PageTool.Name)),
			ast.Item(ast.InternedTerm("annotations"), ast.NewTerm(ann)),
		)
	}
	plugin := ast.InternedNullTerm
	if in.Plugin != nil {
		tools := make([]*ast.Term, len(in.Plugin.Tools))
		for i, t := range in.Plugin.Tools {
			tools[i] = strTerm(t)
		}
		plugin = ast.ObjectTerm(
			ast.Item(ast.InternedTerm("name"), ast.StringTerm(in.Plugin.Name)),
			ast.Item(ast.InternedTerm("step"), ast.StringTerm(in.Plugin.Step)),
			ast.Item(ast.InternedTerm("tools"), ast.ArrayTerm(tools...)),
		)
	}
	secrets := ast.InternedNullTerm
	if in.Secrets != nil {
		names := make([]*ast.Term, len(in.Secrets))
		for i, n := range in.Secrets {
			names[i] = ast.StringTerm(n)
		}
		secrets = ast.ArrayTerm(names...)
	}
	obj := ast.NewObject(
		ast.Item(ast.InternedTerm("version"), ast.InternedTerm(in.Version)),
		ast.Item(ast.InternedTerm("phase"), strTerm(in.Phase)),
		ast.Item(ast.InternedTerm("tool"), strTerm(in.Tool)),
		ast.Item(ast.InternedTerm("action"), strTerm(in.Action)),
		ast.Item(ast.InternedTerm("read_only"), ast.InternedTerm(in.ReadOnly)),
		ast.Item(ast.InternedTerm("args"), ast.NewTerm(args)),
		ast.Item(ast.InternedTerm("target"), target),
		ast.Item(ast.InternedTerm("page"), page),
		ast.Item(ast.InternedTerm("backend"), strTerm(in.Backend)),
		ast.Item(ast.InternedTerm("principal"), ast.ObjectTerm(
			ast.Item(ast.InternedTerm("name"), ast.StringTerm(in.Principal.Name)),
			ast.Item(ast.InternedTerm("roles"), ast.ArrayTerm(roles...)),
			ast.Item(ast.InternedTerm("transport"), strTerm(in.Principal.Transport)),
		)),
		ast.Item(ast.InternedTerm("page_tool"), pageTool),
		ast.Item(ast.InternedTerm("plugin"), plugin),
		ast.Item(ast.InternedTerm("request"), requestTerm(in.Request)),
		ast.Item(ast.InternedTerm("session"), strTerm(in.Session)),
		ast.Item(ast.InternedTerm("secrets"), secrets),
		ast.Item(ast.InternedTerm("flow"), flowTerm(in.Flow)),
		ast.Item(ast.InternedTerm("read_origins"), stringsTerm(in.ReadOrigins)),
	)
	if in.State != nil {
		// Only on the per-origin decisions of the storage-state tools,
		// as MarshalJSON leaves it out elsewhere.
		obj.Insert(ast.InternedTerm("state"), ast.ObjectTerm(
			ast.Item(ast.InternedTerm("op"), ast.StringTerm(in.State.Op)),
			ast.Item(ast.InternedTerm("origin"), ast.StringTerm(in.State.Origin)),
			ast.Item(ast.InternedTerm("source"), ast.StringTerm(in.State.Source)),
		))
	}
	if in.Dialog != nil {
		// Absent when no dialog is open, as in the JSON form (omitempty).
		obj.Insert(ast.InternedTerm("dialog"), ast.ObjectTerm(
			ast.Item(ast.InternedTerm("type"), strTerm(in.Dialog.Type)),
			ast.Item(ast.InternedTerm("message"), strTerm(in.Dialog.Message)),
		))
	}
	return obj, nil
}
