package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
	"github.com/chromegate/chromegate/mcp/statefile"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
	"github.com/google/jsonschema-go/jsonschema"
)

// Storage state: a context's cookies and storage saved to a named file of
// the caller's (state_save), restored from one (state_load), and the
// operator's file restored into every new context (serve --storage-state,
// Options.StorageState). Every origin is decided on its own (originDecider):
// saved like a read of it, restored like a navigation to it. No result,
// log line or error carries a cookie's or a storage entry's value.
//
// Saved logins are the operator's. state_save never replaces a state
// unless asked (overwrite: true), and the default policy counts a save
// that asks as a mutation, refused in safe mode: a model sent to /logout
// cannot then save the logged-out context over the login a CI run starts
// from. The file serve --storage-state restores is read-only to the
// model in every mode, whatever its name in the state directory.

// stateTimeout bounds a save or a load: a context with many origins is
// read or written one origin at a time in a page of Playwright's.
const stateTimeout = 60 * time.Second

// originDecider decides the origins of c's state: each a gate.KindOrigin
// question (policy.Input.ForStateOrigin), op policy.StateSave or
// policy.StateLoad, source policy.StateTool or policy.StateServe.
func (c *Call) originDecider(op, source string) helpers.OriginDecider {
	return func(ctx context.Context, origin string) error {
		q := c.question(gate.KindOrigin)
		q.State = &policy.StateOrigin{Op: op, Source: source, Origin: origin}
		return c.srv.gateErr(c.Tool, c.srv.allowed(ctx, q))
	}
}

type stateOut struct {
	Name string `json:"name"`
	helpers.StateReport
}

type stateListOut struct {
	States []statefile.StateInfo `json:"states"`
}

// stateStore is where the state tools keep files.
func (s *Server) stateStore() (*statefile.Store, error) {
	if s.opts.StateDir == "" {
		return nil, executor.Errorf(executor.CodeBadArgs, "this server keeps no storage states").
			WithHint("the operator runs chromegate serve with a data dir (the default has one)")
	}
	return &statefile.Store{Dir: s.opts.StateDir}, nil
}

func stateSave(ctx context.Context, c *Call, a stateSaveIn) (*Result, error) {
	store, err := c.srv.stateStore()
	if err != nil {
		return nil, err
	}
	path, err := store.Path(c.Principal.Name, a.Name)
	if err != nil {
		return nil, err
	}
	if c.srv.operatorsState(path) {
		return nil, executor.Errorf(executor.CodePolicyDenied, "state %q is the file the operator's --storage-state restores: read-only to tools", a.Name).
			WithHint("save under another name")
	}
	if _, err := os.Lstat(path); err == nil && !a.Overwrite {
		return nil, stateExists(a.Name)
	}
	for i, o := range a.Origins {
		norm := executor.OriginOf(o)
		if norm == "null" {
			return nil, badArgs("origins[%d] is not an http or https origin", i).WithHint("pass origins such as https://app.example.com")
		}
		a.Origins[i] = norm
	}
	st, rep, err := helpers.SaveState(ctx, c.Executor(), helpers.SaveOptions{
		Origins: a.Origins, IndexedDB: a.IndexedDB, Decide: c.originDecider(policy.StateSave, policy.StateTool),
	})
	if err != nil {
		return nil, err
	}
	data, err := statefile.Encode(st)
	if err != nil {
		return nil, executor.Errorf(executor.CodeInternal, "encode the state: %v", err)
	}
	write := store.Create
	if a.Overwrite {
		write = store.Write
	}
	if _, err := write(c.Principal.Name, a.Name, data); errors.Is(err, statefile.ErrExists) {
		return nil, stateExists(a.Name)
	} else if err != nil {
		return nil, err
	}
	c.srv.log.Info("storage state saved", "session", c.Session, "principal", c.Principal.Name, "name", a.Name,
		"origins", len(rep.Origins), "cookies", rep.Cookies, "skipped", len(rep.Skipped))
	return stateResult(a.Name, rep), nil
}

// stateExists is the error of a save over a saved state not asked to
// replace it.
func stateExists(name string) error {
	return executor.Errorf(executor.CodeBadArgs, "a state named %q is saved already; state_save does not replace one unless asked", name).
		WithHint("save under a new name, or pass overwrite: true (a change: it needs mutations enabled)")
}

// operatorsState reports whether path is the file serve --storage-state
// restores (Options.StorageStatePath).
func (s *Server) operatorsState(path string) bool {
	if s.opts.StorageStatePath == "" {
		return false
	}
	a, err := os.Stat(path)
	if err != nil {
		return false
	}
	b, err := os.Stat(s.opts.StorageStatePath)
	return err == nil && os.SameFile(a, b)
}

func stateLoad(ctx context.Context, c *Call, a stateLoadIn) (*Result, error) {
	store, err := c.srv.stateStore()
	if err != nil {
		return nil, err
	}
	st, err := store.Read(c.Principal.Name, a.Name)
	if err != nil {
		return nil, err
	}
	rep, err := helpers.RestoreState(ctx, c.Executor(), st, helpers.RestoreOptions{
		Decide: c.originDecider(policy.StateLoad, policy.StateTool), OpenTabs: true,
	})
	if err != nil {
		return nil, err
	}
	c.srv.log.Info("storage state loaded", "session", c.Session, "principal", c.Principal.Name, "name", a.Name,
		"origins", len(rep.Origins), "cookies", rep.Cookies, "skipped", len(rep.Skipped))
	return stateResult(a.Name, rep), nil
}

func stateList(_ context.Context, c *Call, _ noArgs) (*Result, error) {
	store, err := c.srv.stateStore()
	if err != nil {
		return nil, err
	}
	list, err := store.List(c.Principal.Name)
	if err != nil {
		return nil, err
	}
	return &Result{Value: stateListOut{list}}, nil
}

// stateResult reports a save or a load. Origins and the policy's reasons
// for skipping one come from the pages and the file: fenced.
func stateResult(name string, rep helpers.StateReport) *Result {
	if rep.Origins == nil {
		rep.Origins = []helpers.OriginReport{}
	}
	return &Result{Value: stateOut{name, rep}, Untrusted: len(rep.Origins) > 0 || len(rep.Skipped) > 0}
}

// startState restores the operator's storage state (Options.StorageState)
// into ex once, before the first call that runs on it: every new context —
// stdio's, each HTTP session's, each named session's, and the one a
// relaunched browser gives a session — starts from it. Each origin is
// decided as state_load's, for the principal of that first call. A
// failure is logged and the call goes on, in a context without the state.
func (s *Server) startState(ctx context.Context, session string, p Principal, ex executor.Executor) {
	if s.opts.StorageState == nil || ex == nil {
		return
	}
	s.started.once(ex).Do(func() {
		e, ok := s.toolFor(UseRestore)
		if !ok {
			return
		}
		c := &Call{Tool: e.tool, Args: map[string]any{"name": "--storage-state"}, Session: session, Principal: p, srv: s, ex: ex}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stateTimeout)
		defer cancel()
		rep, err := helpers.RestoreState(rctx, ex, *s.opts.StorageState, helpers.RestoreOptions{
			Decide: c.originDecider(policy.StateLoad, policy.StateServe), OpenTabs: true,
		})
		if err != nil {
			s.log.Error("--storage-state could not be restored into a new context", "session", session, "err", err)
			return
		}
		skipped := make([]string, len(rep.Skipped))
		for i, k := range rep.Skipped {
			skipped[i] = fmt.Sprintf("%s (%s)", k.Origin, k.What)
		}
		s.log.Info("--storage-state restored", "session", session, "principal", p.Name, "origins", len(rep.Origins),
			"cookies", rep.Cookies, "local_storage", rep.LocalStorage, "indexed_db", rep.IndexedDB, "skipped", skipped)
	})
}

// Storage state: save and restore a session's cookies and storage. Each
// tool is one constructor: its declaration, its class, the facts the call
// path needs; the handlers
// live with the feature (state.go).

// groupStorage is the README row of these tools.
var groupStorage = &ToolGroup{Name: "storage state", Note: "[log in once](#log-in-once-storage-state)"}

func stateSaveTool() *Tool {
	return newTool(Tool{
		Name: "state_save", Title: "Save storage state",
		Group:       groupStorage,
		Output:      &Output{Value: stateOut{}},
		Description: "Save the session's logins (cookies, storage) as name; state_load restores. Also: origins, indexed_db, overwrite.",
		Rare:        []string{"origins", "indexed_db", "overwrite"},
		ReadOnly:    no(), Destructive: yes(), Action: ActionRead, PerOrigin: true,
		Timeout:    stateTimeout,
		TimeoutArg: true,
		Use:        UseCheckpoint,
	}, stateSave)
}

// stateSaveIn is state_save's input.
type stateSaveIn struct {
	Name      string   `json:"name"`
	Origins   []string `json:"origins,omitempty"`
	IndexedDB bool     `json:"indexed_db,omitempty"`
	Overwrite bool     `json:"overwrite,omitempty"`
}

func (stateSaveIn) shape(s *jsonschema.Schema) {
	setDefault(s, "indexed_db", true)
	setDefault(s, "overwrite", false)
}

func stateLoadTool() *Tool {
	return newTool(Tool{
		Name: "state_load", Title: "Load storage state",
		Group:       groupStorage,
		Output:      &Output{Value: stateOut{}},
		Description: "Restore a saved state: logged in without the password.",
		ReadOnly:    no(), Destructive: yes(), Idempotent: true, Action: ActionInteract, Mutating: true, PerOrigin: true,
		Timeout: stateTimeout,
		Use:     UseRestore, TimeoutArg: true,
	}, stateLoad)
}

// stateLoadIn is state_load's input.
type stateLoadIn struct {
	Name string `json:"name"`
}

func stateListTool() *Tool {
	return newTool(Tool{
		Name: "state_list", Title: "List saved states",
		Group:       groupStorage,
		Output:      &Output{Value: stateListOut{}},
		Description: "Names of saved states.",
		ReadOnly:    yes(), Idempotent: true, OpenWorld: no(), Action: ActionRead, PerOrigin: true,
		NoBrowser: true,
	}, stateList)
}
