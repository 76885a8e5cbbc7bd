package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/mcp/vault"
	"github.com/chromegate/chromegate/policy"
)

// Secrets (package vault) on the one gated path. A call refers to an
// operator's secret as <secret:NAME> in the arguments its tool declares
// (Tool.SecretRefs: type's text, fill's value, fill_form's field values; a
// plugin's steps are such calls too). Then:
//
//  1. Before the Gate, secretRefs reads the references: a malformed one,
//     or a name that is not declared, is BAD_ARGS naming names only.
//  2. The call's gate question carries the names (input.secrets) with
//     the page's origin and the tool; the default policy allows a secret
//     only on the origins the operator bound it to. A gate that cannot
//     decide secrets (the test double) refuses every call that has one.
//  3. Only after the Gate allowed the call, expandSecrets gives the
//     handler a copy of the arguments with the values in; the Gate, the
//     landing check and anything logged keep the references.
//  4. Every value is redacted, as <secret:NAME>, on each way out of the
//     server, in one place each: dispatch's result (MCP tools/call and
//     REST commands: redactResult), every other MCP answer (redactAnswers:
//     resources and prompts of pages, tools/list with page tools),
//     VisibleTools (REST's tool list), the server's log (the slog handler
//     cmd wraps with vault.Handler) and the decision log (vault.Writer).

// secretRefs reads the secret references of c's arguments into
// c.SecretNames.
func (s *Server) secretRefs(c *Call) error {
	c.SecretNames, c.refs = nil, false
	for _, path := range c.Tool.SecretRefs {
		err := eachString(c.Args, path, func(v string) (string, error) {
			if !vault.HasRefs(v) {
				return v, nil
			}
			c.refs = true
			names, err := s.opts.Secrets.Refs(v)
			for _, n := range names {
				if !slices.Contains(c.SecretNames, n) {
					c.SecretNames = append(c.SecretNames, n)
				}
			}
			return v, err
		})
		if err != nil {
			return secretArgErr(c.Tool.Name, path, err)
		}
	}
	return nil
}

// expandSecrets returns c's arguments with each reference replaced by its
// value: a copy, the parts it changes copied too.
func (s *Server) expandSecrets(c *Call) (map[string]any, error) {
	args := c.Args
	for _, path := range c.Tool.SecretRefs {
		var err error
		args, err = replaceStrings(args, path, func(v string) (string, error) {
			if !vault.HasRefs(v) {
				return v, nil
			}
			out, _, err := s.opts.Secrets.Expand(v)
			return out, err
		})
		if err != nil {
			return nil, secretArgErr(c.Tool.Name, path, err)
		}
	}
	return args, nil
}

func secretArgErr(tool, path string, err error) error {
	var unknown *vault.UnknownError
	if errors.As(err, &unknown) {
		hint := "refer to a declared secret as <secret:NAME>; the operator declares secrets (see the README)"
		if len(unknown.Declared) > 0 {
			hint = "refer to one of the declared secrets: <secret:" + strings.Join(unknown.Declared, ">, <secret:") + ">"
		}
		return badArgs("%s: %s: %v", tool, path, err).WithHint(hint)
	}
	return badArgs("%s: %s: %v", tool, path, err).WithHint(`write <secret:NAME> for a secret, and <secret:> for the literal text "<secret:"`)
}

// eachString calls fn on every string at path in args ("name", or
// "list[].name" for a field of each object of an array).
func eachString(args map[string]any, path string, fn func(string) (string, error)) error {
	_, err := replaceStrings(args, path, fn)
	return err
}

// replaceStrings returns args with every string at path replaced by fn's
// result. What it changes is copied; args itself is never written.
func replaceStrings(args map[string]any, path string, fn func(string) (string, error)) (map[string]any, error) {
	if list, field, ok := strings.Cut(path, "[]."); ok {
		items, _ := args[list].([]any)
		if items == nil {
			return args, nil
		}
		newItems := make([]any, len(items))
		changed := false
		for i, it := range items {
			newItems[i] = it
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			nm, err := replaceStrings(m, field, fn)
			if err != nil {
				return nil, err
			}
			if reflect.ValueOf(nm).UnsafePointer() != reflect.ValueOf(m).UnsafePointer() {
				newItems[i], changed = nm, true
			}
		}
		if !changed {
			return args, nil
		}
		out := copyMap(args)
		out[list] = newItems
		return out, nil
	}
	v, ok := args[path].(string)
	if !ok {
		return args, nil
	}
	nv, err := fn(v)
	if err != nil {
		return nil, err
	}
	if nv == v {
		return args, nil
	}
	out := copyMap(args)
	out[path] = nv
	return out, nil
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// redactResult takes every secret's value out of a tool call's result:
// its text, and the error of an isError result.
func (s *Server) redactResult(res *sdk.CallToolResult) {
	v := s.opts.Secrets
	if v.Len() == 0 || res == nil {
		return
	}
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			t.Text = v.Redact(t.Text)
		}
	}
	if ec, ok := res.StructuredContent.(*ErrorContent); ok && ec.Error != nil {
		e := *ec.Error
		e.Message, e.Hint, e.Page = v.Redact(e.Message), v.Redact(e.Hint), v.Redact(e.Page)
		ec.Error = &e
	} else if res.StructuredContent != nil {
		res.StructuredContent = s.redactJSON(res.StructuredContent)
	}
}

// redactJSON redacts a value by its JSON form; the vault catches a value
// in its JSON-escaped form too.
func (s *Server) redactJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	red := s.opts.Secrets.Redact(string(b))
	if red == string(b) {
		return v
	}
	return json.RawMessage(red)
}

// redactAnswers is the MCP middleware that redacts every answer other than
// tools/call (which dispatch redacted): page resources and prompts, and
// tools/list, whose page tools a page described.
func (s *Server) redactAnswers(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || method == "tools/call" || s.opts.Secrets.Len() == 0 {
			if err != nil && s.opts.Secrets.Len() > 0 {
				if red := s.opts.Secrets.Redact(err.Error()); red != err.Error() {
					err = errors.New(red)
				}
			}
			return res, err
		}
		b, merr := json.Marshal(res)
		if merr != nil {
			return res, err
		}
		red := s.opts.Secrets.Redact(string(b))
		if red == string(b) {
			return res, nil
		}
		out := reflect.New(reflect.TypeOf(res).Elem()).Interface()
		if uerr := json.Unmarshal([]byte(red), out); uerr != nil {
			s.log.Error("a redacted answer could not be decoded; answering with an error", "method", method)
			return nil, errors.New("the answer held a secret and could not be redacted")
		}
		return out.(sdk.Result), nil
	}
}

// secretOrigin is the origin the Gate allowed the call's secrets on: that
// of the document it read for the decision. The executor inserts a secret
// only while the target's document is of it (TypeParams.OnlyOrigin). It
// is "" for a call without secrets.
func (c *Call) secretOrigin() (string, error) {
	if len(c.SecretNames) == 0 {
		return "", nil
	}
	if c.before == nil {
		return "", executor.Errorf(executor.CodePolicyDenied, "%s: the page the secret would go into was not read for the decision; nothing was typed", c.Tool.Name).
			WithHint("the operator's gate must read the page to decide secrets")
	}
	o := policy.NewDocumentPage(c.before.URL, c.before.Origin).Origin
	if c.frame != nil {
		// typed into a frame's document: the Gate decided the secrets there
		o = policy.NewDocumentPage(c.frame.URL, c.frame.Origin).Origin
	}
	if o == "" || o == "null" {
		return "", executor.Errorf(executor.CodePolicyDenied, "%s: the page has no origin a secret can be bound to; nothing was typed", c.Tool.Name)
	}
	return o, nil
}

// secretsOutStage takes every secret's value out of the call's reply, on
// every way out.
func (s *Server) secretsOutStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		r, err := next(ctx, c)
		s.redactResult(c.reply)
		return r, err
	}
}

// secretsInStage reads which operator secrets the call's arguments name,
// for the gate to decide with the page's origin.
func (s *Server) secretsInStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		if err := s.secretRefs(c); err != nil {
			return nil, err
		}
		return next(ctx, c)
	}
}

// The field rule (executor.SecretMark): a secret is a property of the field
// it was typed into, not a string to find. A text holding a secret goes in
// guarded (secretOrigin) and marks the field with fieldShown, its text with
// each secret as <secret:NAME>; every read of the field's value shows that
// mark from then on, edited or not. A plain fill, or a type that clears
// the field, on a server that holds secrets takes the mark off (Unmark):
// the field then holds only what the model typed. Taking a mark off costs
// a round trip to the page, so it is done only once the server marked a
// field (fieldMarks). Redaction (package vault)
// stays the second layer, for what a page copies where the browser cannot
// tell.

// fieldShown is what a field reads as once text, with its secrets' values
// expanded, is typed into it: text redacted, or "" when text holds no
// secret.
func (c *Call) fieldShown(text string) string {
	v := c.srv.opts.Secrets
	if v.Len() == 0 {
		return ""
	}
	if red := v.Redact(text); red != text {
		c.srv.marked.Store(true)
		return red
	}
	return ""
}

// fieldMarks is set once a field was marked: before that, no field of any
// page can hold a mark.
type fieldMarks struct{ atomic.Bool }

// unmarks says whether a plain text that replaces a field's content takes
// a secret's mark off it: once the server marked a field.
func (c *Call) unmarks() bool { return c.srv.marked.Load() }
