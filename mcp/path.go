package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The call path: every tool call, from any transport (MCP over stdio or
// HTTP, REST), runs the stages of callPath in this order; every step of a
// plugin tool re-enters at gatedPath, its second half. A stage does its work,
// calls next for the stages after it, and may look at or change what they
// returned, as the go-sdk's middleware and caddy's handlers do: the stages
// listed first see the call first and its outcome last.
//
// Read the two lists to know the whole path. Each stage's function sits with
// the state it owns (the record in recording.go, the secrets in secrets.go,
// dialogs in dialogs.go, …) and says in its doc comment what it does before
// and after next. The dispatcher (dispatch) does nothing but build the Call
// and run the path; nothing else decides, renders or records a call.
var callPath = append([]stage{
	{"secrets out", (*Server).secretsOutStage}, // last on every way out: no reply carries a secret's value
	{"recover", (*Server).recoverStage},        // a panic is an INTERNAL reply, its stack goes to the log
	{"trace", (*Server).traceStage},            // the call's span in the operator's traces, its parent the caller's (tracing.go)
	{"observe", (*Server).observeStage},        // the operator's metrics learn how the call ended (callobserver.go)
	{"envelope", (*Server).envelopeStage},      // the outcome rendered as the MCP reply, and logged
	{"acl", (*Server).aclStage},                // a tool the key or the policy's list hides is refused by name
	{"rate", (*Server).rateStage},              // the key's budget of calls
	{"decode", (*Server).decodeStage},          // arguments checked against the tool's schema and rules
	{"deadline", (*Server).deadlineStage},      // timeout_ms or the tool's default
	{"egress note", (*Server).egressNoteStage}, // the browser's requests the policy refused during the call
	{"browser", (*Server).browserStage},        // the session's executor, started on first use (a fleet's session restored)
	{"checkpoint", (*Server).checkpointStage},  // a fleet's session saved after an acting call (checkpoint.go)
}, gatedPath...)

// gatedPath is the gated half of callPath, run for every call and every
// plugin step on the executor the call holds (Call.ex).
var gatedPath = []stage{
	{"record", (*Server).recordStage},        // the call's line in the session record (serve --record)
	{"changes", (*Server).changesStage},      // what the call changed in the page, for an acting tool
	{"page moved", (*Server).pageMovedStage}, // decided on a peeked URL the page had left: decide again
	{"resolve", (*Server).resolveStage},      // the page, points and page tool the call is about, read once when asked
	{"secrets in", (*Server).secretsInStage}, // which operator secrets the arguments name
	{"gate", (*Server).gateStage},            // the policy decides the call
	{"landed", (*Server).landedStage},        // where the call left the tab, decided again
	{"blocked", (*Server).blockedStage},      // a load the egress boundary refused, said as such
	{"dialogs", (*Server).dialogsStage},      // alerts accepted before, dialogs of denied pages dismissed after
	{"describe", (*Server).describeStage},    // the target element described for the record
	{"watch", (*Server).watchStage},          // navigations the call starts, watched from before it acts
	{"trace run", (*Server).traceRunStage},   // the handler's run on the backend, a span of its own (tracing.go)
	{"run", (*Server).runStage},              // the tool's handler, with the secrets' values the gate allowed
}

// A step runs the rest of the path for a call.
type step func(ctx context.Context, c *Call) (*Result, error)

// A stage is one named step of the path: given next, the stages after it,
// it returns the step that does its work around them.
type stage struct {
	name string
	wrap func(s *Server, next step) step
}

// compose builds the path of stages, once, when the server is built.
func (s *Server) compose(stages []stage) step {
	var next step = func(context.Context, *Call) (*Result, error) {
		return nil, errors.New("the call path ended without running the tool")
	}
	for i := len(stages) - 1; i >= 0; i-- {
		next = stages[i].wrap(s, next)
	}
	return next
}

// dispatch runs one tool call through callPath and returns its MCP reply.
// It never panics and never returns a Go error for anything the caller can
// fix: those are isError replies. The only error it returns is a JSON-RPC
// invalid-params error for arguments that are not a JSON object (the
// client, not the model, got the protocol wrong).
func (s *Server) dispatch(ctx context.Context, e *entry, session string, p Principal, raw json.RawMessage) (*sdk.CallToolResult, error) {
	c := &Call{Tool: e.tool, Session: session, Principal: p, srv: s, entry: e, raw: raw}
	_, err := s.path(ctx, c)
	if rpc := (*jsonrpc.Error)(nil); errors.As(err, &rpc) {
		return nil, rpc
	}
	return c.reply, nil
}
