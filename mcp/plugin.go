package mcp

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
)

// Plugin tools are an operator's recipes: a name, a description, a JSON
// schema of parameters, and steps that call the built-in tools with
// arguments built from the parameters and from earlier steps' results.
// They are listed, validated and gated like every tool, and each step is
// gated again as if the caller had called its tool (see runPlugin) and
// charged to the caller's rate limit as that call would be.
//
// A plugin file is one JSON object:
//
//	{
//	  "name": "acme_signup",
//	  "description": "Sign someone up for the Acme newsletter and return the confirmation.",
//	  "read_only": false,
//	  "params": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
//	  "steps": [
//	    {"tool": "navigate", "args": {"url": "{{params.site}}"}},
//	    {"tool": "fill_form", "args": {"fields": [{"selector": "#name", "value": "{{params.name}}"}], "submit": true}},
//	    {"name": "read", "tool": "get_text", "args": {"selector": "#result"}}
//	  ],
//	  "result": {"confirmation": "{{steps.read.text}}", "url": "{{steps.read.url}}"}
//	}
//
// Substitution is typed: a string that is exactly one {{reference}} is
// replaced by the referenced value, whatever its JSON type (an absent
// optional parameter drops the argument); a reference inside a longer
// string is formatted into it (scalars only; "| url" query-escapes it).
// Nothing is ever built as JSON text, so a parameter cannot inject
// arguments.

// Limits of a plugin file.
const (
	maxPluginFileBytes   = 256 << 10
	maxPluginSteps       = 32
	maxPluginDescription = 2000
	defaultPluginTimeout = 60 * time.Second
)

var (
	pluginNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	// templateRe matches one {{reference}} with an optional filter.
	templateRe = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.-]*)\s*(?:\|\s*([a-z]*)\s*)?\}\}`)
)

// PluginStep tells the Gate that a call is a step of a plugin tool.
type PluginStep struct {
	Plugin string   // the plugin tool's name
	Step   string   // the step's name
	Tools  []string // the tools of all the plugin's steps, in order
}

// Plugin is a plugin tool loaded from a file.
type Plugin struct {
	// File is the path the plugin was read from.
	File string
	def  pluginDef
	tool *Tool // without its handler, which the Server binds
}

// Name is the plugin tool's name.
func (p *Plugin) Name() string { return p.def.Name }

// Tools lists the tools of the plugin's steps, in order.
func (p *Plugin) Tools() []string {
	out := make([]string, len(p.def.Steps))
	for i, st := range p.def.Steps {
		out[i] = st.Tool
	}
	return out
}

// pluginDef is the file format.
type pluginDef struct {
	Name        string             `json:"name"`
	Title       string             `json:"title,omitempty"`
	Description string             `json:"description"`
	ReadOnly    *bool              `json:"read_only"`
	TimeoutMs   int                `json:"timeout_ms,omitempty"`
	Params      *jsonschema.Schema `json:"params,omitempty"`
	Steps       []pluginStepDef    `json:"steps"`
	// Output names the step whose result the plugin returns (default:
	// the last step). With Result set, only that step's text and image
	// are returned, and only when Output is given.
	Output string `json:"output,omitempty"`
	// Result, if set, is the plugin's JSON result, with references
	// substituted, in place of the output step's JSON.
	Result any `json:"result,omitempty"`
}

type pluginStepDef struct {
	// Name is how later steps refer to this one (default: the tool's
	// name, which must then be unique).
	Name string         `json:"name,omitempty"`
	Tool string         `json:"tool"`
	Args map[string]any `json:"args,omitempty"`
}

// PluginError is a plugin file that did not load, and why.
type PluginError struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

func (e PluginError) Error() string { return e.File + ": " + e.Reason }

// Plugins is what LoadPlugins found in a directory.
type Plugins struct {
	Dir      string
	Loaded   []*Plugin
	Rejected []PluginError
}

// Status reports the plugins for chrome_status.
func (ps *Plugins) Status() map[string]any {
	names := make([]string, len(ps.Loaded))
	for i, p := range ps.Loaded {
		names[i] = p.Name()
	}
	rejected := ps.Rejected
	if rejected == nil {
		rejected = []PluginError{}
	}
	return map[string]any{"dir": ps.Dir, "loaded": names, "rejected": rejected}
}

// LoadPlugins reads every *.json file of dir (not its subdirectories) as a
// plugin tool. A file that is not a valid plugin, or whose name is taken
// (by a built-in tool or an earlier file, in name order), is rejected with
// its reason and the others still load. The error is only for a directory
// that cannot be read.
func LoadPlugins(dir string) (*Plugins, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("plugins: %w", err)
	}
	builtins := builtinTools()
	ps := &Plugins{Dir: dir}
	taken := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.EqualFold(filepath.Ext(e.Name()), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		p, err := loadPluginFile(path, builtins)
		if err == nil {
			if other, dup := taken[p.Name()]; dup {
				err = fmt.Errorf("name %q is already taken by %s", p.Name(), filepath.Base(other))
			}
		}
		if err != nil {
			ps.Rejected = append(ps.Rejected, PluginError{File: path, Reason: err.Error()})
			continue
		}
		taken[p.Name()] = path
		ps.Loaded = append(ps.Loaded, p)
	}
	return ps, nil
}

func loadPluginFile(path string, builtins map[string]*Tool) (*Plugin, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPluginFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPluginFileBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxPluginFileBytes)
	}
	p, err := ParsePlugin(data, builtins)
	if err != nil {
		return nil, err
	}
	p.File = path
	return p, nil
}

func builtinTools() map[string]*Tool {
	m := map[string]*Tool{}
	for _, t := range Tools() {
		m[t.Name] = t
	}
	return m
}

// ParsePlugin parses and checks one plugin file against the tools its
// steps may call (nil: the built-in tools). Every problem that can be
// found before a call is an error here: unknown fields, a name that is
// taken or malformed, a schema that does not resolve, a step tool or
// argument that does not exist, a reference to an undeclared parameter or
// a later step, read_only claimed by a plugin with a step that is not.
func ParsePlugin(data []byte, tools map[string]*Tool) (*Plugin, error) {
	if tools == nil {
		tools = builtinTools()
	}
	var def pluginDef
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&def); err != nil {
		return nil, fmt.Errorf("not a plugin: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("not a plugin: data after the JSON object")
	}
	def.Result = plainNumbers(def.Result)
	for i := range def.Steps {
		if a, ok := plainNumbers(def.Steps[i].Args).(map[string]any); ok {
			def.Steps[i].Args = a
		}
	}
	switch {
	case !pluginNameRe.MatchString(def.Name):
		return nil, fmt.Errorf("name %q: want lower case letters, digits and _, starting with a letter, at most 64", def.Name)
	case tools[def.Name] != nil:
		return nil, fmt.Errorf("name %q is a built-in tool", def.Name)
	case strings.TrimSpace(def.Description) == "":
		return nil, errors.New("description is missing: the model reads it to decide when to call the plugin")
	case len(def.Description) > maxPluginDescription:
		return nil, fmt.Errorf("description is longer than %d bytes", maxPluginDescription)
	case def.ReadOnly == nil:
		return nil, errors.New(`read_only is missing: say true only if no step changes anything`)
	case def.TimeoutMs < 0 || def.TimeoutMs > maxTimeoutMs:
		return nil, fmt.Errorf("timeout_ms must be between 1 and %d", maxTimeoutMs)
	case len(def.Steps) == 0:
		return nil, errors.New("steps is empty")
	case len(def.Steps) > maxPluginSteps:
		return nil, fmt.Errorf("%d steps is more than %d", len(def.Steps), maxPluginSteps)
	}

	params := def.Params
	if params == nil {
		params = &jsonschema.Schema{Type: "object"}
	}
	if params.Type != "object" {
		return nil, errors.New(`params must be a JSON schema with "type": "object"`)
	}
	for name := range params.Properties {
		if !pluginNameRe.MatchString(name) {
			return nil, fmt.Errorf("params: property %q: want lower case letters, digits and _", name)
		}
	}
	if params.AdditionalProperties == nil {
		params.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	}
	if _, err := params.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	def.Params = params

	seen := map[string]bool{}
	readOnly, mutating, destructive := true, false, false
	for i := range def.Steps {
		st := &def.Steps[i]
		where := fmt.Sprintf("step %d", i+1)
		t := tools[st.Tool]
		if t == nil {
			return nil, fmt.Errorf("%s: unknown tool %q (steps call built-in tools)", where, st.Tool)
		}
		if st.Name == "" {
			st.Name = st.Tool
		}
		where = fmt.Sprintf("step %d (%s)", i+1, st.Name)
		if !pluginNameRe.MatchString(st.Name) {
			return nil, fmt.Errorf("%s: name: want lower case letters, digits and _", where)
		}
		if seen[st.Name] {
			return nil, fmt.Errorf("%s: another step has this name; give each step calling %s a name of its own", where, st.Tool)
		}
		for k := range st.Args {
			if _, ok := t.InputSchema.Properties[k]; !ok {
				return nil, fmt.Errorf("%s: %s has no argument %q (it takes %s)", where, st.Tool, k, strings.Join(propNames(t.InputSchema), ", "))
			}
		}
		if err := checkRefs(st.Args, params, seen); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		seen[st.Name] = true
		readOnly = readOnly && t.ReadOnly != nil && *t.ReadOnly
		mutating = mutating || t.Mutating
		destructive = destructive || t.Destructive == nil || *t.Destructive
	}
	if *def.ReadOnly && !readOnly {
		return nil, errors.New("read_only is true, but a step calls a tool that is not read-only")
	}
	if def.Output == "" {
		if def.Result == nil {
			def.Output = def.Steps[len(def.Steps)-1].Name
		}
	} else if !seen[def.Output] {
		return nil, fmt.Errorf("output: no step is named %q", def.Output)
	}
	if err := checkRefs(def.Result, params, seen); err != nil {
		return nil, fmt.Errorf("result: %w", err)
	}

	timeout := defaultPluginTimeout
	if def.TimeoutMs > 0 {
		timeout = time.Duration(def.TimeoutMs) * time.Millisecond
	}
	t := &Tool{
		Name:        def.Name,
		Title:       def.Title,
		Description: def.Description,
		InputSchema: params,
		ReadOnly:    def.ReadOnly,
		Idempotent:  *def.ReadOnly,
		Action:      ActionPlugin,
		Mutating:    mutating,
		Timeout:     timeout,
	}
	if !destructive {
		t.Destructive = no()
	}
	p := &Plugin{def: def, tool: t}
	t.PluginTools = p.Tools()
	return p, nil
}

// plainNumbers turns the json.Numbers of a decoded value into float64, as
// encoding/json decodes arguments everywhere else.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x.String()
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = plainNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainNumbers(e)
		}
	}
	return v
}

// checkRefs checks every reference in v: parameters must be declared,
// steps must come earlier, filters must exist.
func checkRefs(v any, params *jsonschema.Schema, earlier map[string]bool) error {
	return walkStrings(v, func(s string) error {
		matches := templateRe.FindAllStringSubmatchIndex(s, -1)
		rest := templateRe.ReplaceAllString(s, "")
		if strings.Contains(rest, "{{") || strings.Contains(rest, "}}") {
			return fmt.Errorf("%q: a {{ or }} that is not a reference like {{params.name}} or {{steps.name.field}}", s)
		}
		for _, m := range matches {
			ref, filter := s[m[2]:m[3]], ""
			if m[4] >= 0 {
				filter = s[m[4]:m[5]]
			}
			if filter != "" && filter != "url" {
				return fmt.Errorf("{{%s | %s}}: unknown filter (there is url)", ref, filter)
			}
			parts := strings.Split(ref, ".")
			switch {
			case len(parts) >= 2 && parts[0] == "params":
				if _, ok := params.Properties[parts[1]]; !ok {
					return fmt.Errorf("{{%s}}: params declares no %q", ref, parts[1])
				}
			case len(parts) >= 2 && parts[0] == "steps":
				if !earlier[parts[1]] {
					return fmt.Errorf("{{%s}}: no earlier step is named %q", ref, parts[1])
				}
			default:
				return fmt.Errorf("{{%s}}: a reference starts with params.NAME or steps.NAME", ref)
			}
		}
		return nil
	})
}

func walkStrings(v any, fn func(string) error) error {
	switch x := v.(type) {
	case string:
		return fn(x)
	case map[string]any:
		for _, e := range x {
			if err := walkStrings(e, fn); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := walkStrings(e, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// pluginEnv is what references resolve against during a run.
type pluginEnv struct {
	params map[string]any
	steps  map[string]any
}

// lookup resolves a reference; ok is false when it names nothing.
func (env *pluginEnv) lookup(ref string) (any, bool) {
	parts := strings.Split(ref, ".")
	var cur any
	switch parts[0] {
	case "params":
		cur = env.params
	case "steps":
		cur = env.steps
	default:
		return nil, false
	}
	for _, p := range parts[1:] {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[p]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// expand substitutes the references in v. present is false when v is a
// lone reference to nothing (an optional parameter left out), which drops
// the argument that holds it.
func (env *pluginEnv) expand(v any) (out any, present bool, err error) {
	switch x := v.(type) {
	case string:
		return env.expandString(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ev, ok, err := env.expand(e)
			if err != nil {
				return nil, false, err
			}
			if ok {
				m[k] = ev
			}
		}
		return m, true, nil
	case []any:
		a := make([]any, 0, len(x))
		for _, e := range x {
			ev, ok, err := env.expand(e)
			if err != nil {
				return nil, false, err
			}
			if !ok {
				return nil, false, fmt.Errorf("%v has no value, and a list cannot leave it out", e)
			}
			a = append(a, ev)
		}
		return a, true, nil
	}
	return v, true, nil
}

func (env *pluginEnv) expandString(s string) (any, bool, error) {
	ms := templateRe.FindAllStringSubmatchIndex(s, -1)
	if len(ms) == 0 {
		return s, true, nil
	}
	if len(ms) == 1 && ms[0][0] == 0 && ms[0][1] == len(s) && ms[0][4] < 0 {
		v, ok := env.lookup(s[ms[0][2]:ms[0][3]])
		return v, ok, nil
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(s[last:m[0]])
		last = m[1]
		ref := s[m[2]:m[3]]
		v, ok := env.lookup(ref)
		if !ok || v == nil {
			return nil, false, fmt.Errorf("{{%s}} has no value", ref)
		}
		var str string
		switch x := v.(type) {
		case string:
			str = x
		case float64:
			str = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			str = strconv.FormatBool(x)
		default:
			return nil, false, fmt.Errorf("{{%s}} is a list or an object; only a whole string can take it", ref)
		}
		if m[4] >= 0 && s[m[4]:m[5]] == "url" {
			str = url.QueryEscape(str)
		}
		b.WriteString(str)
	}
	b.WriteString(s[last:])
	return b.String(), true, nil
}

// stepOutput is a step's result as later steps see it: the fields of its
// JSON, plus "text" for the text that follows it (page text, Markdown).
func stepOutput(r *Result) (map[string]any, error) {
	out := map[string]any{}
	if r.Value != nil {
		b, err := json.Marshal(r.Value)
		if err != nil {
			return nil, err
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
		if m, ok := v.(map[string]any); ok {
			out = m
		} else {
			out["value"] = v
		}
	}
	if _, taken := out["text"]; !taken && r.Text != "" {
		out["text"] = r.Text
	}
	return out, nil
}

// pluginHandler runs a plugin's steps in order on the call's executor.
// Each step is decided as if the caller had called its tool: the list
// phase (ACLs included) and the call phase, both told which plugin asks,
// then the landing check of wherever the step left the tab. The first
// step that fails stops the plugin, and the error names it.
func (s *Server) pluginHandler(p *Plugin) func(ctx context.Context, c *Call) (*Result, error) {
	tools := p.Tools()
	return func(ctx context.Context, c *Call) (*Result, error) {
		env := &pluginEnv{params: c.Args, steps: map[string]any{}}
		var out *Result
		untrusted := false
		for i, st := range p.def.Steps {
			step := &PluginStep{Plugin: p.Name(), Step: st.Name, Tools: tools}
			r, err := s.pluginStep(ctx, c, step, st, env)
			if err != nil {
				e := *executor.AsError(err)
				e.Message = fmt.Sprintf("plugin %s stopped at step %d (%s, %s): %s", p.Name(), i+1, st.Name, st.Tool, e.Message)
				return nil, &e
			}
			o, err := stepOutput(r)
			if err != nil {
				return nil, executor.Errorf(executor.CodeInternal, "plugin %s step %s: result: %v", p.Name(), st.Name, err)
			}
			env.steps[st.Name] = o
			untrusted = untrusted || r.Untrusted
			if st.Name == p.def.Output {
				out = r
			}
		}
		res := &Result{Untrusted: untrusted}
		if out != nil {
			res.Value, res.Text, res.Image = out.Value, out.Text, out.Image
			if p.def.Result == nil {
				res.seen = out.seen // the caller is shown the step's outline
			}
		}
		if p.def.Result != nil {
			v, _, err := env.expand(p.def.Result)
			if err != nil {
				return nil, executor.Errorf(executor.CodeBadArgs, "plugin %s: result: %v", p.Name(), err).
					WithHint("the plugin file is wrong; tell the operator")
			}
			res.Value = v
		}
		return res, nil
	}
}

// pluginStep builds one step's arguments, validates them like any call's,
// and runs the step through the gate on the plugin call's executor.
func (s *Server) pluginStep(ctx context.Context, parent *Call, step *PluginStep, st pluginStepDef, env *pluginEnv) (*Result, error) {
	start := time.Now()
	e, ok := s.entry(st.Tool)
	if !ok {
		return nil, executor.Errorf(executor.CodeInternal, "tool %s is not registered", st.Tool)
	}
	if !s.visibleStep(ctx, e.tool, parent.Principal, step) {
		return nil, executor.Errorf(executor.CodePolicyDenied, "tool %s is not available to %s", st.Tool, parent.Principal.Name).
			WithHint("the plugin needs a tool the policy or your key does not allow; tell the operator")
	}
	// Every step is charged to the key's rate limit, as the call of its
	// tool would be: a step over the limit stops the plugin with
	// RATE_LIMITED and when to retry.
	if r := parent.Principal.Rate; r != nil {
		wait, ok, err := r.Take(ctx, start)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, rateLimited(parent.Principal, wait)
		}
	}
	built, _, err := env.expand(st.Args)
	if err != nil {
		return nil, badArgs("%v", err).WithHint("check the plugin's parameters; if they are right, the plugin file is wrong")
	}
	// A JSON round trip gives the step the plain JSON types a client's
	// arguments have (earlier results may hold Go types).
	raw, err := json.Marshal(built)
	if err != nil {
		return nil, executor.Errorf(executor.CodeInternal, "encode step arguments: %v", err)
	}
	args := map[string]any{}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, executor.Errorf(executor.CodeInternal, "decode step arguments: %v", err)
	}
	args, err = validateArgs(e, args)
	if err != nil {
		return nil, err
	}
	if ms, ok := args["timeout_ms"].(float64); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	c := &Call{Tool: e.tool, Args: args, Session: parent.Session, Principal: parent.Principal, Plugin: step, srv: s, ex: parent.ex}
	r, err := s.gated(ctx, c)
	s.log.Debug("plugin step", "plugin", step.Plugin, "step", step.Step, "tool", st.Tool,
		"ms", time.Since(start).Milliseconds(), "ok", err == nil)
	return r, err
}

// pluginExamples are the example plugins shipped in the binary; see
// examples/plugins/README.md.
//
//go:embed examples/plugins
var pluginExamples embed.FS

// PluginExamples returns the example plugins shipped with chromegate: the
// plugin files at the top, the policy data they need under policy/.
func PluginExamples() fs.FS {
	sub, _ := fs.Sub(pluginExamples, "examples/plugins") // the directory is embedded
	return sub
}

// WritePluginExamples writes the example plugins to dir (created if
// needed) and returns the paths written. It never overwrites a file.
func WritePluginExamples(dir string) ([]string, error) {
	var written []string
	src := PluginExamples()
	err := fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(src, path)
		if err != nil {
			return err
		}
		f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		written = append(written, dst)
		return f.Close()
	})
	slices.Sort(written)
	return written, err
}
