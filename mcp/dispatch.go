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
	"github.com/chromegate/chromegate/executor/egress"
)

// blankTimeout bounds sending a tab that landed outside policy to
// about:blank; it runs even when the call's own deadline has passed.
const blankTimeout = 5 * time.Second

// dispatch is the one path of every tool call: decode, validate, gate, run,
// envelope. It never panics and never returns a Go error for anything the
// caller can fix: those are isError results. The only error it returns is a
// JSON-RPC invalid-params error for arguments that are not a JSON object
// (the client, not the model, got the protocol wrong).
func (s *Server) dispatch(ctx context.Context, e *entry, session string, p Principal, raw json.RawMessage) (res *sdk.CallToolResult, rpcErr error) {
	t := e.tool
	start := time.Now()
	// Last, on every way out: no result carries a secret's value.
	defer func() { s.redactResult(res) }()
	defer func() {
		if r := recover(); r != nil {
			res, rpcErr = s.recovered(t.Name, r), nil
		}
	}()

	// A hidden tool is refused before its arguments are looked at, so its
	// error messages cannot describe its schema.
	if !s.visible(ctx, t, p) {
		err := executor.Errorf(executor.CodePolicyDenied, "tool %s is not available to %s", t.Name, p.Name).
			WithHint("use the tools that tools/list shows")
		s.recordRefused(t, session, p, err)
		return s.finish(t, session, start, nil, err), nil
	}
	if p.Rate != nil && t.Action != ActionPlugin {
		// A plugin is charged per step (pluginStep), not per call: what
		// it costs is what it runs.
		if wait, ok := p.Rate.Take(start); !ok {
			err := rateLimited(p, wait)
			s.recordRefused(t, session, p, err)
			return s.finish(t, session, start, nil, err), nil
		}
	}
	args, rpcErr, err := decodeArgs(e, raw)
	if rpcErr != nil {
		return nil, rpcErr
	}
	if err != nil {
		s.recordRefused(t, session, p, err)
		return s.finish(t, session, start, nil, err), nil
	}

	ctx, cancel := context.WithTimeout(ctx, callTimeout(t, args))
	defer cancel()

	s.bindSession(session, p)
	c := &Call{Tool: t, Args: args, Session: session, Principal: p, srv: s, mark: s.opts.Egress.Mark(session)}
	var out *Result
	run := func(ctx context.Context, ex executor.Executor) error {
		if !t.NoBrowser {
			s.startState(ctx, session, p, ex)
		}
		out, err = s.runCall(ctx, c, ex)
		return err
	}
	if t.NoBrowser {
		ex, _ := s.opts.Manager.Current(session)
		err = run(ctx, ex)
	} else {
		err = s.opts.Manager.Do(ctx, session, run)
	}
	res = s.finish(t, session, start, out, err)
	if note := blockedNote(egress.Summarize(s.opts.Egress.Since(session, c.mark))); note != "" {
		// A content of its own, after the result: the result's JSON and
		// its fence stay as they are.
		res.Content = append(res.Content, &sdk.TextContent{Text: note})
	}
	return res, nil
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

// runCall is the gated part of a call, on ex: the Gate, the handler, and
// the landing check of wherever the call left the tab. Every tool call runs
// through it, and so does every step of a plugin tool.
func (s *Server) runCall(ctx context.Context, c *Call, ex executor.Executor) (*Result, error) {
	c.rec = s.startRecord(c)
	began := time.Now()
	r, err := s.gatedCall(ctx, c, ex)
	if errors.Is(err, executor.ErrPageMoved) {
		// Decided on the URL the backend last heard of, the page was
		// elsewhere, and nothing ran: decide on the URL read from the
		// browser, and run.
		c.noPeek, c.peeked, c.before = true, false, nil
		r, err = s.gatedCall(ctx, c, ex)
	}
	if err == nil {
		s.addChanges(ctx, c, ex, r, began)
		s.sawOf(c, r)
	}
	if c.rec != nil {
		s.endRecord(ctx, c, ex, r, err)
	}
	return r, err
}

// gatedCall is runCall without the record.
func (s *Server) gatedCall(ctx context.Context, c *Call, ex executor.Executor) (*Result, error) {
	t := c.Tool
	c.ex = ex
	c.Page = c.pageFunc(ex)
	if len(points(c)) > 0 && ex != nil {
		c.Points = c.pointsFunc(ex)
	}
	switch {
	case t.PageItem:
		c.PageTool = c.pageItemFunc()
	case t.Action == ActionPageTool && t.Name != "page_tools_list":
		c.PageTool = c.pageToolFunc(ex)
	}
	if err := s.secretRefs(c); err != nil {
		return nil, err
	}
	if err := s.before(ctx, c); err != nil {
		if c.before != nil && s.outside(ctx, c, documentURL(*c.before)) {
			// The tab shows a page outside the policy (it navigated
			// itself there, or a page opened it): nothing of it is
			// said, and it is sent away from it.
			return nil, outsideErr(c, err, s.blankOutside(ctx, c, ex, c.before.ID))
		}
		return nil, err
	}
	if c.before != nil {
		s.drove(c.Session, c.before.ID)
	}
	s.acceptAlertFirst(ctx, c, ex)
	s.describeTargets(ctx, c, ex)
	s.armLanding(ctx, c, ex)
	r, err := s.handle(ctx, c)
	if err != nil && s.dismissOutside(ctx, c, ex, err) {
		// Held by a dialog of a page outside the policy, now dismissed: a
		// read runs again, once; anything else may have acted, and is the
		// model's to repeat.
		if t.ReadOnly != nil && *t.ReadOnly {
			r, err = s.handle(ctx, c)
		} else {
			err = heldOutsideErr(c)
		}
	}
	if err != nil {
		err = s.alertRaised(ctx, c, ex, err)
		if d := s.blockedLoad(c, err.Error()); d != nil {
			s.blank(ctx, ex, c.TabID())
			return nil, blockedErr(d)
		}
		return nil, err
	}
	if r == nil {
		return nil, executor.Errorf(executor.CodeInternal, "tool %s returned no result", t.Name)
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
			s.blank(ctx, ex, r.Landed.TabID)
			return nil, blockedErr(d)
		}
		if err := s.landed(ctx, c, *r.Landed); err != nil {
			s.blank(ctx, ex, r.Landed.TabID)
			return nil, err
		}
	}
	return r, nil
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
