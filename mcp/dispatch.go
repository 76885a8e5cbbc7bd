package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/executor"
)

// blankTimeout bounds sending a tab that landed outside policy to
// about:blank; it runs even when the call's own deadline has passed.
const blankTimeout = 5 * time.Second

// recoverStage turns a panic anywhere after it into an INTERNAL reply.
func (s *Server) recoverStage(next step) step {
	return func(ctx context.Context, c *Call) (r *Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				r, err, c.reply = nil, nil, s.recovered(c.Tool.Name, p)
			}
		}()
		return next(ctx, c)
	}
}

// aclStage refuses a tool the principal may not see before its arguments
// are looked at, so its error messages cannot describe its schema.
func (s *Server) aclStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		if !s.visible(ctx, c.Tool, c.Principal) {
			err := executor.Errorf(executor.CodePolicyDenied, "tool %s is not available to %s", c.Tool.Name, c.Principal.Name).
				WithHint("use the tools that tools/list shows")
			s.recordRefused(c.Tool, c.Session, c.Principal, err)
			return nil, err
		}
		return next(ctx, c)
	}
}

// rateStage charges the call to the key's rate limit. A plugin is charged
// per step (pluginStep), not per call: what it costs is what it runs.
func (s *Server) rateStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		if p := c.Principal; p.Rate != nil && c.Tool.Action != ActionPlugin {
			wait, ok, err := p.Rate.Take(ctx, time.Now())
			if err == nil && !ok {
				err = rateLimited(p, wait)
			}
			if err != nil {
				s.recordRefused(c.Tool, c.Session, p, err)
				return nil, err
			}
		}
		return next(ctx, c)
	}
}

// decodeStage sets Call.Args from the raw arguments: decoded, validated,
// defaults applied.
func (s *Server) decodeStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		args, rpcErr, err := decodeArgs(c.entry, c.raw)
		if rpcErr != nil {
			return nil, rpcErr
		}
		if err != nil {
			s.recordRefused(c.Tool, c.Session, c.Principal, err)
			return nil, err
		}
		c.Args = args
		return next(ctx, c)
	}
}

// deadlineStage bounds the rest of the call by its timeout, and tells a
// gate that keeps per-session state whose the session is.
func (s *Server) deadlineStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		ctx, cancel := context.WithTimeout(ctx, callTimeout(c.Tool, c.Args))
		defer cancel()
		s.bindSession(c.Session, c.Principal)
		return next(ctx, c)
	}
}

// browserStage runs the rest of the call inside Manager.Do, on the
// session's executor (started on first use); a NoBrowser tool runs on the
// live executor, or none, and never starts one.
func (s *Server) browserStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		if c.Tool.NoBrowser {
			c.ex, _ = s.opts.Manager.Current(c.Session)
			return next(ctx, c)
		}
		var out *Result
		err := s.opts.Manager.Do(ctx, c.Session, func(ctx context.Context, ex executor.Executor) error {
			c.ex = ex
			s.startState(ctx, c.Session, c.Principal, ex)
			s.restoreCheckpoint(ctx, c, ex)
			var err error
			out, err = next(ctx, c)
			return err
		})
		return out, err
	}
}

// callTimeout is a call's deadline: its timeout_ms argument, else the
// tool's own default, else defaultTimeoutMs.
func callTimeout(t *Tool, args map[string]any) time.Duration {
	if ms, ok := args["timeout_ms"].(float64); ok && t.PageTool == nil {
		return time.Duration(ms) * time.Millisecond
	}
	if t.Timeout > 0 {
		return t.Timeout
	}
	return time.Duration(defaultTimeoutMs) * time.Millisecond
}

// pageMovedStage decides again, once, a call decided on the URL the
// backend last heard of (Tool.PeekPage) when the page was elsewhere and
// nothing ran: on the URL read from the browser.
func (s *Server) pageMovedStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		r, err := next(ctx, c)
		if errors.Is(err, executor.ErrPageMoved) {
			c.noPeek, c.peeked, c.before = true, false, nil
			r, err = next(ctx, c)
		}
		return r, err
	}
}

// resolveStage gives the call its lazy readers of the page, the points and
// the page tool it is about: each reads the browser once, when first asked
// (by the gate or the handler).
func (s *Server) resolveStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		t, ex := c.Tool, c.ex
		c.Page = c.pageFunc(ex)
		if len(points(c)) > 0 && ex != nil {
			c.Points = c.pointsFunc(ex)
		}
		switch {
		case t.PageItem:
			c.PageTool = c.pageItemFunc()
		case t.CallsPageTool:
			c.PageTool = c.pageToolFunc(ex)
		}
		return next(ctx, c)
	}
}

// gateStage asks the policy about the call. A tab that shows a page
// outside the policy (it navigated itself there, or a page opened it) is
// not described, and is sent away from it.
func (s *Server) gateStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		if err := s.before(ctx, c); err != nil {
			if c.before != nil && !c.asked && s.outside(ctx, c, documentURL(*c.before)) {
				return nil, outsideErr(c, err, s.blankOutside(ctx, c, c.ex, c.before.ID))
			}
			return nil, err
		}
		if c.before != nil {
			s.drove(c.Session, c.before.ID)
		}
		return next(ctx, c)
	}
}

// landedStage decides where a successful call left the tab: a page that
// navigated (the handler says so, or the tab's URL changed under an
// interaction) is decided again, and a tab that landed outside the policy,
// or on a load the egress boundary refused, is blanked and nothing of it
// returned.
func (s *Server) landedStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		r, err := next(ctx, c)
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, executor.Errorf(executor.CodeInternal, "tool %s returned no result", c.Tool.Name)
		}
		if r.Page != nil {
			s.drove(c.Session, r.Page.TabID)
		}
		if r.Landed == nil && r.Page != nil && c.before != nil && r.Page.URL != c.before.URL && r.Page.TabID == c.before.ID {
			r.Landed = r.Page // the interaction navigated the tab
		}
		if r.Landed != nil {
			if d := s.blockedLoad(c, r.Landed.URL); d != nil {
				// The tab shows Chromium's error page for a load the policy
				// blocked: say which, rather than "chrome-error:".
				s.blank(ctx, c.ex, r.Landed.TabID)
				return nil, blockedErr(d)
			}
			if err := s.landed(ctx, c, *r.Landed); err != nil {
				s.blank(ctx, c.ex, r.Landed.TabID)
				return nil, err
			}
		}
		return r, nil
	}
}

// blockedStage says which load the egress boundary refused when a call
// failed on one, and blanks the tab's error page.
func (s *Server) blockedStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		r, err := next(ctx, c)
		if err == nil {
			return r, nil
		}
		if d := s.blockedLoad(c, err.Error()); d != nil {
			s.blank(ctx, c.ex, c.TabID())
			return nil, blockedErr(d)
		}
		return nil, err
	}
}

// describeStage describes the call's target elements for the record.
func (s *Server) describeStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		s.describeTargets(ctx, c, c.ex)
		return next(ctx, c)
	}
}

// watchStage watches, from before the call acts, for the navigations it
// starts (landing.go).
func (s *Server) watchStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		s.armLanding(ctx, c, c.ex)
		return next(ctx, c)
	}
}

// runStage runs the tool's handler: the end of the path.
func (s *Server) runStage(_ step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		return s.handle(ctx, c)
	}
}

// handle runs the tool's handler, with the values of the secrets the Gate
// allowed in its arguments; the call keeps the references for everything
// after it (the landing check).
func (s *Server) handle(ctx context.Context, c *Call) (*Result, error) {
	if !c.refs {
		return c.Tool.Handler(ctx, c)
	}
	args, err := s.expandSecrets(c)
	if err != nil {
		return nil, err
	}
	refs := c.Args
	c.Args = args
	defer func() { c.Args = refs }()
	return c.Tool.Handler(ctx, c)
}

// finish logs the call and builds its MCP result.
func (s *Server) finish(t *Tool, session string, start time.Time, out *Result, err error) *sdk.CallToolResult {
	ms := time.Since(start).Milliseconds()
	if err != nil {
		e := executor.AsError(err)
		if e.Code == executor.CodeInternal {
			s.log.Error("tool call failed with a bug", "tool", t.Name, "session", session, "ms", ms, "err", err)
		} else {
			s.log.Info("tool call failed", "tool", t.Name, "session", session, "ms", ms, "code", e.Code)
		}
		return s.errorResult(e)
	}
	s.log.Debug("tool call", "tool", t.Name, "session", session, "ms", ms)
	res, err := s.envelope(t, out)
	if err != nil {
		s.log.Error("tool result could not be encoded", "tool", t.Name, "err", err)
		return s.errorResult(executor.Errorf(executor.CodeInternal, "the result of %s could not be encoded", t.Name))
	}
	return res
}

// recovered turns a panic into an INTERNAL result; the stack goes to the
// log, not to the model.
func (s *Server) recovered(tool string, r any) *sdk.CallToolResult {
	s.log.Error("tool call panicked", "tool", tool, "panic", r, "stack", string(debug.Stack()))
	return s.errorResult(executor.Errorf(executor.CodeInternal, "the server hit a bug running %s", tool).
		WithHint("retry; if it persists, report it with the server log"))
}

// gateErr normalises a Gate error: typed errors keep their code (a denial,
// or a STALE_TAB from reading the page); anything else still stops the call,
// as POLICY_DENIED.
func (s *Server) gateErr(t *Tool, err error) error {
	if err == nil {
		return nil
	}
	var e *executor.Error
	if errors.As(err, &e) {
		return e
	}
	s.log.Error("the gate failed; denying", "tool", t.Name, "err", err)
	return &executor.Error{Code: executor.CodePolicyDenied, Message: "the policy could not decide this call",
		Hint: "the call was denied; tell the operator to check the server log", Err: err}
}

// blank sends a tab that landed outside policy to about:blank.
func (s *Server) blank(ctx context.Context, ex executor.Executor, tabID string) {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), blankTimeout)
	defer cancel()
	for try := 0; ; try++ {
		_, err := ex.Navigate(bctx, executor.NavigateParams{TabID: tabID, URL: "about:blank", LeaveDialog: true})
		if err == nil {
			return
		}
		// A blocked load's error page may still be committing: it
		// interrupts the first attempt.
		if try < 3 && strings.Contains(err.Error(), "interrupted by another navigation") && bctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		s.log.Warn("could not blank a tab that landed outside policy", "tab", tabID, "err", err)
		return
	}
}

// decodeArgs parses and validates a call's arguments. It returns a JSON-RPC
// error for arguments that are not a JSON object, a BAD_ARGS error for
// arguments the model got wrong, or the validated map with defaults applied.
//
// Names are matched exactly: the raw JSON goes into a map, never into a Go
// struct (encoding/json matches struct fields case-insensitively), and the
// schema refuses properties it does not define. Handlers decode from this
// map, so the Gate and the handler see the same values even when the raw
// JSON repeats a key.
func decodeArgs(e *entry, raw json.RawMessage) (map[string]any, error, error) {
	raw = bytes.TrimSpace(raw)
	args := map[string]any{}
	if len(raw) > 0 && !bytes.Equal(raw, []byte("null")) {
		if raw[0] != '{' {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call arguments must be a JSON object"}, nil
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call arguments are not valid JSON"}, nil
		}
	}
	args, err := validateArgs(e, args)
	return args, nil, err
}

// validateArgs checks decoded arguments against the tool's schema and
// rules, and applies the schema's defaults. Its errors are BAD_ARGS.
func validateArgs(e *entry, args map[string]any) (map[string]any, error) {
	t := e.tool
	schema := t.InputSchema
	accepted := propNames(schema)
	var unknown []string
	for k := range args {
		// A page tool's schema is the page's: it says itself whether it
		// takes other properties, and Validate holds it to that.
		if _, ok := schema.Properties[k]; !ok && t.PageTool == nil {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		hint := "this tool takes no arguments"
		if len(accepted) > 0 {
			hint = "accepted arguments: " + strings.Join(accepted, ", ")
		}
		return nil, badArgs("unknown argument %s", quoteList(unknown)).WithHint(hint)
	}
	var missing []string
	for _, r := range schema.Required {
		if _, ok := args[r]; !ok {
			missing = append(missing, r)
		}
	}
	// A page tool's schema is the page's words: its property names and
	// enum values go fenced, never into the cause or the Next line.
	if len(missing) > 0 {
		if t.PageTool != nil {
			return nil, pageArgsErr(t.PageTool.Name, "missing required argument "+quoteList(missing))
		}
		return nil, badArgs("missing required argument %s", quoteList(missing)).
			WithHint("required: " + strings.Join(schema.Required, ", "))
	}
	if err := e.resolved.Validate(args); err != nil {
		if t.PageTool != nil {
			return nil, pageArgsErr(t.PageTool.Name, schemaMessage(err))
		}
		return nil, badArgs("%s", schemaMessage(err)).WithHint("fix that argument and retry; the tool's input schema lists the types")
	}
	if err := e.resolved.ApplyDefaults(&args); err != nil {
		return nil, executor.Errorf(executor.CodeInternal, "apply defaults: %v", err)
	}
	for _, ta := range t.Targets {
		if err := checkTarget(args, ta); err != nil {
			return nil, err
		}
	}
	if t.PageTool == nil {
		if err := checkSelectors(args); err != nil {
			return nil, err
		}
	}
	if v, ok := args["timeout_ms"].(float64); ok && t.PageTool == nil && (v < 1 || v > maxTimeoutMs) {
		return nil, badArgs("timeout_ms must be between 1 and %d (got %v)", maxTimeoutMs, v).
			WithHint(fmt.Sprintf("pass a timeout_ms of at most %d, or leave it out for %d", maxTimeoutMs, defaultTimeoutMs))
	}
	if t.Check != nil {
		if err := t.Check(args); err != nil {
			return nil, err
		}
	}
	return args, nil
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// schemaMessage turns a jsonschema-go error into the part a model can act
// on: "validating root: validating /properties/cookies: validating
// /properties/cookies/items: required: missing properties: ["value"]"
// becomes `cookies[]: required: missing properties: ["value"]`. The
// library reports schema locations, not instance paths, so an array index is
// shown as [].
func schemaMessage(err error) string {
	msg := err.Error()
	loc := ""
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		l, after, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		loc, msg = l, after
	}
	var path strings.Builder
	parts := strings.Split(strings.TrimPrefix(loc, "/"), "/")
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties":
			if i+1 < len(parts) {
				if path.Len() > 0 {
					path.WriteByte('.')
				}
				path.WriteString(parts[i+1])
				i++
			}
		case "items":
			path.WriteString("[]")
		}
	}
	// Bounds are printed as rationals and floats ("9/1 is greater than
	// 3.000000"); integers read better.
	msg = ratio.ReplaceAllString(msg, "$1")
	msg = zeros.ReplaceAllString(msg, "$1")
	if path.Len() > 0 {
		return path.String() + ": " + msg
	}
	return msg
}

var (
	ratio = regexp.MustCompile(`\b(-?\d+)/1\b`)
	zeros = regexp.MustCompile(`\b(\d+)\.0+\b`)
)
