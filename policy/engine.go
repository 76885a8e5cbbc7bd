package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/chromegate/chromegate/policies"
)

// DecisionQuery is the one query chromegate asks a policy.
const DecisionQuery = "data.chromegate.decision"

// DefaultTimeout bounds one evaluation unless WithTimeout says otherwise.
const DefaultTimeout = 100 * time.Millisecond

// DefaultSource names the embedded default policy in Status and errors.
const DefaultSource = "policies/default"

// Decision is a policy's answer. Allow is true only when the policy said
// so, as a boolean, in time and without error, and asked for no person.
//
// A policy may answer ask: its decision object's "ask" is a list of
// reasons to ask a person before the call runs. Deny wins over ask (an
// allow of false is a denial, whatever ask says) and ask wins over allow
// (an allow of true with reasons to ask is an ask). An ask is a denial to
// every caller that does not know how to ask: Allow is false and Reasons
// are the ask's reasons; Ask holds them too, and only a caller that can
// put the question to a person (the MCP server, before a call runs) goes
// on, and only on that person's explicit yes. An "ask" that is not a list
// of strings is a policy error, so a denial.
type Decision struct {
	Allow bool `json:"allow"`
	// Reasons explain a denial in words for the model (empty when allowed).
	// A denial caused by the policy failing says "policy error: ...".
	// For an ask they are the reasons to ask.
	Reasons []string `json:"reasons"`
	// Ask, when set, are the reasons the policy gives to ask a person
	// (Allow is then false): the decision is an ask, not a denial.
	Ask []string `json:"ask,omitempty"`
	// Hints say how the operator could allow it (which flag or data key),
	// when the policy offers them (the default policy does).
	Hints []string `json:"hints,omitempty"`
	// EvalMicros is how long the decision took, in microseconds.
	EvalMicros int64 `json:"eval_us"`
}

// Status describes the policy in force, for chrome_status.
type Status struct {
	// Source is the policy directory, or "policies/default".
	Source string `json:"source"`
	// DataFile is the --data file, if any.
	DataFile string `json:"data_file,omitempty"`
	// LoadedAt is when the policy in force was loaded.
	LoadedAt time.Time `json:"loaded_at"`
	// Revision counts successful loads, starting at 1.
	Revision int `json:"revision"`
	// LastError is the error of the last failed reload (with file:line),
	// empty once a reload succeeds. While it is set the previous policy
	// stays in force.
	LastError string `json:"last_error,omitempty"`
	// AllDomains reports that data.all_domains is true.
	AllDomains bool `json:"all_domains,omitempty"`
	// RequestCache counts the request decisions answered from the cache.
	RequestCache CacheStats `json:"request_cache"`
	// Bundles are the OPA bundles in force, name → revision (WithOPA).
	Bundles map[string]string `json:"bundles,omitempty"`
	// Waiting says why no policy is in force yet, and every decision
	// denies (WithOPA, before the first bundle activates).
	Waiting string `json:"waiting,omitempty"`
	// OPA reports OPA's plugins, with WithOPA.
	OPA *OPAStatus `json:"opa,omitempty"`
}

type config struct {
	src      source
	data     map[string]any
	dataFile string
	timeout  time.Duration
	log      *slog.Logger
	dlog     io.Writer
	opa      *OPA // the policy comes from OPA bundles (opa.go)
}

// Option configures an Engine.
type Option func(*config) error

// WithDir loads the policy from dir instead of the embedded default: every
// .rego file under it (recursively; *_test.rego files are left to Test) and
// every data.json or data.yaml, placed under data at its directory's path.
func WithDir(dir string) Option {
	return func(c *config) error {
		st, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("policy dir: %w", err)
		}
		if !st.IsDir() {
			return fmt.Errorf("policy dir %s: not a directory", dir)
		}
		c.src = dirSource(dir)
		return nil
	}
}

// WithFS loads the policy from a file system, named name in Status and
// errors (like WithDir, without a disk).
func WithFS(name string, fsys fs.FS) Option {
	return func(c *config) error {
		c.src = source{name: name, fsys: fsys}
		return nil
	}
}

// WithData lays data over the policy's own data (see mergeOver: objects
// merge, arrays join, other values replace). It is how flags reach the
// policy: allow_domains ([]string), enable_mutations, enable_eval,
// enable_downloads, all_domains (bool). Pass only the flags the user set,
// so that a data file's true is not undone by a flag's default false.
// Several WithData options merge in order.
func WithData(data map[string]any) Option {
	return func(c *config) error {
		d, err := jsonData(data)
		if err != nil {
			return err
		}
		if c.data == nil {
			c.data = map[string]any{}
		}
		mergeOver(c.data, d)
		return nil
	}
}

// WithDataFile lays a JSON or YAML file over the policy's data, before the
// WithData values. It is re-read on Reload.
func WithDataFile(path string) Option {
	return func(c *config) error {
		c.dataFile = path
		return nil
	}
}

// WithTimeout sets the deadline of one evaluation (default 100ms). A
// decision that runs out of time is a denial.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return errors.New("policy timeout must be positive")
		}
		c.timeout = d
		return nil
	}
}

// WithLogger sets where load errors and warnings go (default: nowhere).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		c.log = l
		return nil
	}
}

// WithDecisionLog writes one JSON line per decision to w (see
// OpenDecisionLog, OpenRotatingDecisionLog), repeated request denials
// counted into one line a window (denials.go; Engine.Close writes the
// last counts). Writes are serialised; w needs no locking of its own.
func WithDecisionLog(w io.Writer) Option {
	return func(c *config) error {
		c.dlog = w
		return nil
	}
}

// Engine evaluates the policy. It is safe for concurrent use: Decide may
// run on any number of goroutines while Reload swaps the policy; each
// decision sees one whole policy, old or new.
type Engine struct {
	cfg   config
	cur   atomic.Pointer[state]
	dlog  *decisionLog
	slots chan struct{} // evaluations running; see Decide

	cache cacheCounters // request decisions; see DecideRequest

	reloadMu sync.Mutex // one Reload at a time
	lastErr  atomic.Pointer[string]
	watchFP  atomic.Pointer[string]
	revs     atomic.Int64 // the last revision built

	opa *OPA // OPA's bundle and decision-log plugins, with WithOPA
}

// state is one loaded policy, immutable once built.
type state struct {
	pq         rego.PreparedEvalQuery
	loadedAt   time.Time
	revision   int
	allDomains bool
	requests   *requestCache
	lists      *requestCache // DecideList's, keyed by the input's JSON
	calls      *requestCache // Decide's and Screen's, keyed by the input's JSON
	// deterministic: the policy calls no nondeterministic builtin, so a
	// decision is a function of the input (see decideCached).
	deterministic bool
	// bundles are the OPA bundles the policy came from, name → revision
	// (WithOPA); nil for a directory or the embedded default.
	bundles map[string]string
	// waiting, when set, is why there is no policy yet (WithOPA before
	// the first bundle activates): every decision denies with it.
	waiting string
}

// loaded is a policy as read from its source.
type loaded struct {
	modules map[string]*ast.Module
	data    map[string]any
	bundles map[string]string // OPA bundles, name → revision
}

// loader reads a policy's modules and data.
type loader func(ctx context.Context) (loaded, error)

// waitingState is the policy in force before there is one: it denies
// everything, saying why.
func waitingState(why string) *state {
	return &state{loadedAt: time.Now(), waiting: why, requests: newRequestCache(false),
		lists: newRequestCache(false), calls: newRequestCache(false)}
}

// New loads and prepares the policy: the embedded default unless WithDir
// or WithFS says otherwise. A policy that does not parse or compile, calls
// a removed builtin or defines no data.chromegate.decision is an error
// (*LoadError, with file:line).
func New(ctx context.Context, opts ...Option) (*Engine, error) {
	cfg := config{
		src:     source{name: DefaultSource, fsys: policies.Default},
		timeout: DefaultTimeout,
		log:     slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	e := &Engine{cfg: cfg, slots: make(chan struct{}, runtime.GOMAXPROCS(0))}
	if cfg.dlog != nil {
		e.dlog = &decisionLog{w: cfg.dlog, denials: denials{window: DenialWindow},
			onErr: func(err error) { cfg.log.Error("policy: decision log write failed", "err", err) }}
	}
	fp := e.fingerprint()
	e.watchFP.Store(&fp)
	if cfg.opa != nil {
		if err := e.startOPA(ctx); err != nil {
			return nil, err
		}
		return e, nil
	}
	st, err := e.build(ctx, e.load)
	if err != nil {
		return nil, err
	}
	st.revision = int(e.revs.Add(1))
	e.cur.Store(st)
	return e, nil
}

// load reads the policy's source: its directory or the embedded default,
// or the bundles OPA activated (WithOPA).
func (e *Engine) load(ctx context.Context) (loaded, error) {
	if e.opa != nil {
		return e.opa.load(ctx)
	}
	modules, data, err := loadSource(e.cfg.src, false)
	return loaded{modules: modules, data: data}, err
}

// build loads the policy with load, lays the data file and the flags'
// data over its data, and prepares the query, as the next revision.
func (e *Engine) build(ctx context.Context, load loader) (*state, error) {
	l, err := load(ctx)
	if err != nil {
		return nil, err
	}
	modules, data := l.modules, l.data
	if e.cfg.dataFile != "" {
		extra, err := readDataFile(e.cfg.dataFile)
		if err != nil {
			return nil, err
		}
		mergeOver(data, extra)
	}
	if e.cfg.data != nil {
		overlay, err := jsonData(e.cfg.data) // a copy: mergeOver keeps references
		if err != nil {
			return nil, err
		}
		mergeOver(data, overlay)
	}
	if !definesDecision(modules) {
		return nil, &LoadError{Source: e.cfg.src.name, Problems: []Problem{{
			Message: "no rule defines " + DecisionQuery + " (write `package chromegate` and a `decision` rule)"}}}
	}
	pq, err := prepare(ctx, modules, data)
	if err != nil {
		return nil, &LoadError{Source: e.cfg.src.name, Problems: problemsOf(err, "")}
	}
	st := &state{pq: pq, loadedAt: time.Now(), allDomains: data["all_domains"] == true,
		requests: newRequestCache(readsRequestURL(modules)), lists: newRequestCache(false), calls: newRequestCache(false),
		deterministic: !usesNondeterministic(modules), bundles: l.bundles}
	// Probe: a policy that fails on the simplest input is broken. (One
	// that has no decision for it may mean to: it is left to Decide.) The
	// probe's deadline is generous so that a busy machine does not fail a
	// load; only a policy that runs away fails it.
	probe := Input{Version: InputVersion, Phase: PhaseList, Tool: "chrome_status", Action: ActionStatus, ReadOnly: true}
	if _, err := st.evaluate(ctx, probe, max(e.cfg.timeout, probeTimeout)); err != nil && !errors.Is(err, errUndefined) {
		return nil, &LoadError{Source: e.cfg.src.name, Problems: []Problem{{Message: "evaluating a chrome_status listing: " + err.Error()}}}
	}
	if st.allDomains {
		e.cfg.log.Warn("policy: all_domains is on: every public host is allowed (local and private addresses still need listing)",
			"source", e.cfg.src.name)
	}
	return st, nil
}

func firstReason(d Decision) string {
	if len(d.Reasons) == 0 {
		return ""
	}
	return d.Reasons[0]
}

var decisionRef = ast.MustParseRef(DecisionQuery)

func definesDecision(modules map[string]*ast.Module) bool {
	for _, m := range modules {
		for _, r := range m.Rules {
			if full := r.Ref(); full.HasPrefix(decisionRef) || decisionRef.HasPrefix(full) {
				return true
			}
		}
	}
	return false
}

func prepare(ctx context.Context, modules map[string]*ast.Module, data map[string]any) (rego.PreparedEvalQuery, error) {
	opts := []func(*rego.Rego){
		rego.Query(DecisionQuery),
		rego.Store(inmem.NewFromObjectWithOpts(data, inmem.OptRoundTripOnWrite(false))),
		rego.Capabilities(capabilities()),
		rego.StrictBuiltinErrors(true),
		rego.SetRegoVersion(ast.RegoV1),
	}
	for _, m := range modules {
		opts = append(opts, rego.ParsedModule(m))
	}
	opts = append(opts, regoFunctions()...)
	return rego.New(opts...).PrepareForEval(ctx)
}

const policyErrorPrefix = "policy error: "

// probeTimeout bounds the trial evaluation of a policy being loaded.
const probeTimeout = 5 * time.Second

func denyError(format string, args ...any) Decision {
	return Decision{Reasons: []string{policyErrorPrefix + fmt.Sprintf(format, args...)}}
}

// Decide evaluates the policy for in. It never fails: any error, an
// undefined or malformed decision, running out of time or ctx ending is a
// denial whose reason starts with "policy error: ". A nil Engine denies
// everything. At most GOMAXPROCS evaluations run at once; the deadline
// (WithTimeout) starts when this one does, and ctx bounds the wait. When a
// decision log is set, Decide writes the decision to it. An input decided
// before under the same policy revision is answered from its cache when
// the policy is a function of its input (decideCached): an agent asks the
// same thing of the same page often (a snapshot, a wait, a repeated eval).
func (e *Engine) Decide(ctx context.Context, in Input) Decision {
	if e == nil {
		return denyError("no policy engine")
	}
	start := time.Now()
	st := e.cur.Load()
	return e.logged(st, start, in, e.decideCached(ctx, st, st.calls, in))
}

// Screen decides whether the model may be shown a page it did not ask
// about: a tab in a listing, or the tab a call found itself on. It is
// Decide's decision, but only a denial is logged: an allowed screen is not
// a call, and logging it would put an "allow" beside every denied call in
// the decision log.
func (e *Engine) Screen(ctx context.Context, in Input) Decision {
	if e == nil {
		return denyError("no policy engine")
	}
	start := time.Now()
	st := e.cur.Load()
	d := e.decideCached(ctx, st, st.calls, in)
	if !d.Allow && len(d.Ask) == 0 {
		// A screen a person could allow shows the page (policy/gate):
		// not a denial either.
		e.logged(st, start, in, d)
	}
	return d
}

// decide evaluates in on st, waiting for a slot. It fails closed.
func (e *Engine) decide(ctx context.Context, st *state, in Input) Decision {
	// Evaluation is CPU-bound: at most GOMAXPROCS run at once, so that the
	// deadline measures evaluating rather than waiting for a CPU behind a
	// hundred other calls. Waiting is bounded by ctx.
	select {
	case e.slots <- struct{}{}:
	default:
		select {
		case e.slots <- struct{}{}:
		case <-ctx.Done():
			return denyError("evaluation cancelled while waiting: %v", ctx.Err())
		}
	}
	start := time.Now()
	d := st.decide(ctx, in, e.cfg.timeout)
	<-e.slots
	d.EvalMicros = time.Since(start).Microseconds()
	return d
}

// DecideDocument evaluates the policy with doc, any JSON-shaped value, as
// the input, exactly as given: for `chromegate policy eval --input FILE`,
// where the document may be hand-written or older than this version. It
// fails closed like Decide and writes no decision log.
func (e *Engine) DecideDocument(ctx context.Context, doc any) Decision {
	if e == nil {
		return denyError("no policy engine")
	}
	start := time.Now()
	v, err := ast.InterfaceToValue(doc)
	if err != nil {
		return denyError("input: %v", err)
	}
	d, err := e.cur.Load().evaluateValue(ctx, v, e.cfg.timeout)
	if err != nil {
		d = Decision{Reasons: []string{policyErrorPrefix + err.Error()}}
	}
	d.EvalMicros = time.Since(start).Microseconds()
	return d
}

// Close writes what the decision log holds back (the counts of repeated
// request denials, see denials.go); denials after it are a line each. It
// does not close the log's writer. Close may be called more than once.
func (e *Engine) Close() {
	if e == nil {
		return
	}
	if e.dlog != nil {
		e.dlog.close()
	}
	if e.opa != nil {
		e.opa.stop()
	}
}

// logged writes d, decided by st, to the decision log.
func (e *Engine) logged(st *state, start time.Time, in Input, d Decision) Decision {
	if e.dlog != nil {
		if err := e.dlog.write(start, in, d, st.bundles); err != nil {
			e.cfg.log.Error("policy: decision log write failed", "err", err)
		}
	}
	return d
}

func (st *state) decide(ctx context.Context, in Input, timeout time.Duration) Decision {
	d, err := st.evaluate(ctx, in, timeout)
	if err != nil {
		return Decision{Reasons: []string{policyErrorPrefix + err.Error()}}
	}
	return d
}

// errUndefined is a policy that has no decision for an input.
var errUndefined = errors.New(DecisionQuery + " is undefined for this input")

// evaluate returns the policy's decision, or why there is none.
func (st *state) evaluate(ctx context.Context, in Input, timeout time.Duration) (Decision, error) {
	v, err := in.astValue()
	if err != nil {
		return Decision{}, fmt.Errorf("input: %w", err)
	}
	return st.evaluateValue(ctx, v, timeout)
}

func (st *state) evaluateValue(ctx context.Context, v ast.Value, timeout time.Duration) (d Decision, err error) {
	if st.waiting != "" {
		return Decision{}, errors.New(st.waiting)
	}
	defer func() {
		if r := recover(); r != nil {
			d, err = Decision{}, fmt.Errorf("evaluation panicked: %v", r)
		}
	}()
	if err := ctx.Err(); err != nil {
		return Decision{}, fmt.Errorf("evaluation cancelled: %w", err)
	}
	// The deadline cancels through a timer rather than a context: rego
	// would otherwise start a goroutine per evaluation to watch ctx.
	cancel := topdown.NewCancel()
	var timedOut atomic.Bool
	timer := time.AfterFunc(timeout, func() {
		timedOut.Store(true)
		cancel.Cancel()
	})
	defer timer.Stop()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, cancel.Cancel)
		defer stop()
	}
	rs, err := st.pq.Eval(ctx, rego.EvalParsedInput(v), rego.EvalExternalCancel(cancel))
	if err != nil {
		switch {
		case timedOut.Load():
			return Decision{}, fmt.Errorf("evaluation ran out of time (%v)", timeout)
		case ctx.Err() != nil:
			return Decision{}, fmt.Errorf("evaluation cancelled: %w", ctx.Err())
		}
		return Decision{}, err
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return Decision{}, errUndefined
	}
	if len(rs) > 1 || len(rs[0].Expressions) > 1 {
		return Decision{}, errors.New(DecisionQuery + " has more than one value")
	}
	obj, ok := rs[0].Expressions[0].Value.(map[string]any)
	if !ok {
		return Decision{}, errors.New(DecisionQuery + " is not an object")
	}
	allow, ok := obj["allow"].(bool)
	if !ok {
		return Decision{}, errors.New(DecisionQuery + ".allow is not a boolean")
	}
	reasons, err := stringList(obj["reasons"])
	if err != nil {
		return Decision{}, fmt.Errorf("%s.reasons %w", DecisionQuery, err)
	}
	hints, err := stringList(obj["hints"])
	if err != nil {
		return Decision{}, fmt.Errorf("%s.hints %w", DecisionQuery, err)
	}
	ask, err := stringList(obj["ask"])
	if err != nil {
		return Decision{}, fmt.Errorf("%s.ask %w", DecisionQuery, err)
	}
	if allow && len(ask) > 0 {
		// Ask wins over allow; deny (allow false) wins over ask.
		return Decision{Reasons: ask, Ask: ask, Hints: hints}, nil
	}
	if !allow && len(reasons) == 0 {
		reasons = []string{"denied by policy"}
	}
	return Decision{Allow: allow, Reasons: reasons, Hints: hints}, nil
}

func stringList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("is not an array")
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, errors.New("holds a non-string")
		}
		out = append(out, s)
	}
	return out, nil
}

// Reload re-reads the policy (and the data file) and swaps it in. A policy
// that fails to load leaves the one in force untouched; the error (with
// file:line) is returned, logged and kept in Status().LastError until a
// reload succeeds. Decisions never wait for a reload and never see a
// half-loaded policy.
func (e *Engine) Reload(ctx context.Context) error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	fp := e.fingerprint()
	st, err := e.build(ctx, e.load)
	e.watchFP.Store(&fp)
	if err != nil {
		e.failed(err)
		return err
	}
	e.install(st)
	return nil
}

// failed keeps a reload's error for Status; the policy in force stays.
func (e *Engine) failed(err error) {
	msg := err.Error()
	e.lastErr.Store(&msg)
	e.cfg.log.Error("policy: reload failed; the previous policy stays in force", "source", e.cfg.src.name, "err", msg)
}

// install puts st in force: decisions that start after it see st.
func (e *Engine) install(st *state) {
	st.revision = int(e.revs.Add(1))
	e.cur.Store(st)
	e.lastErr.Store(nil)
	e.cfg.log.Info("policy: reloaded", "source", e.cfg.src.name, "revision", st.revision, "bundles", st.bundles)
}

// Status reports the policy in force and the last reload error.
func (e *Engine) Status() Status {
	st := e.cur.Load()
	s := Status{
		Source:       e.cfg.src.name,
		DataFile:     e.cfg.dataFile,
		LoadedAt:     st.loadedAt,
		Revision:     st.revision,
		AllDomains:   st.allDomains,
		RequestCache: e.CacheStats(),
		Bundles:      st.bundles,
		Waiting:      st.waiting,
	}
	if p := e.lastErr.Load(); p != nil {
		s.LastError = *p
	}
	if e.opa != nil {
		s.OPA = e.opa.Status()
	}
	return s
}

// Watch polls the policy directory and the data file every interval and
// calls Reload when a file appears, disappears or changes size or mtime. It
// returns when ctx is done. The embedded default never changes, so with
// neither a directory nor a data file Watch only waits for ctx.
func (e *Engine) Watch(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = 2 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		fp := e.fingerprint()
		if old := e.watchFP.Load(); old != nil && *old == fp {
			continue
		}
		_ = e.Reload(ctx) // logged and kept in Status
	}
}

// fingerprint summarises the names, sizes and mtimes of the policy files.
func (e *Engine) fingerprint() string {
	var b strings.Builder
	if e.cfg.src.fsys != nil {
		_ = fs.WalkDir(e.cfg.src.fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if strings.HasSuffix(p, ".rego") || isDataFile(p) {
				if info, err := d.Info(); err == nil {
					fmt.Fprintf(&b, "%s\x00%d\x00%d\n", p, info.Size(), info.ModTime().UnixNano())
				}
			}
			return nil
		})
	}
	if e.cfg.dataFile != "" {
		if info, err := os.Stat(e.cfg.dataFile); err == nil {
			fmt.Fprintf(&b, "%s\x00%d\x00%d\n", filepath.Clean(e.cfg.dataFile), info.Size(), info.ModTime().UnixNano())
		} else {
			fmt.Fprintf(&b, "%s\x00missing\n", e.cfg.dataFile)
		}
	}
	return b.String()
}
