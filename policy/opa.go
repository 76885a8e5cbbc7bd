package policy

// Policy from OPA bundles, decisions to a collector, with OPA's own
// plugins. The rules:
//
//   - The configuration is OPA's own (services, bundles, keys,
//     decision_logs, status, labels), read by OPA's plugins.Manager; the
//     bundle, decision-log and status plugins are OPA's, not copies.
//   - Every bundle must be signed: a bundle in the configuration without a
//     signing block is refused at start, so OPA never takes a bundle on
//     trust (OPA itself would accept an unsigned one when no signing block
//     asks for verification).
//   - A bundle is activated only if chromegate can decide with it: OPA's
//     activation compiles it with chromegate's capabilities (its builtins
//     in, network builtins out) and chromegate prepares its query inside the
//     same storage transaction. Anything that fails aborts the transaction,
//     so OPA keeps the last good bundle in its store, the engine keeps
//     deciding with it, and the bundle plugin's status carries the error.
//     The prepared policy is put in force when the transaction commits
//     (OPA's compiler trigger): decisions see the old bundle or the new one,
//     never a mix.
//   - Until the first bundle activates there is no policy, and every
//     decision denies, saying why (fail closed: a bundle server down at
//     start is a denial, never an allow).
//   - Every decision the decision log would write goes to OPA's
//     decision-log plugin, as the same line: no arguments, reasons
//     scrubbed, and whatever redaction the caller wraps the writer in
//     (DecisionWriter), then OPA's own mask and drop policies if the bundle
//     has them. The event carries the bundles that decided, name →
//     revision, and the configuration's labels, with labels.replica set to
//     OPAConfig.Replica, else the configuration's own, else the host name.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/logging"
	"github.com/open-policy-agent/opa/v1/metrics"
	"github.com/open-policy-agent/opa/v1/plugins"
	bundleplugin "github.com/open-policy-agent/opa/v1/plugins/bundle"
	"github.com/open-policy-agent/opa/v1/plugins/logs"
	"github.com/open-policy-agent/opa/v1/plugins/status"
	"github.com/open-policy-agent/opa/v1/server"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"
)

// DecisionPath is the path of chromegate's decisions in OPA's decision
// log events.
const DecisionPath = "chromegate/decision"

// OPAConfig is what WithOPA needs.
type OPAConfig struct {
	// Config is OPA's configuration, YAML or JSON. It must configure at
	// least one bundle (under bundles; the older single bundle key is not
	// supported), each with a signing block.
	Config []byte
	// Replica names this replica: labels.replica in every decision-log
	// event and status report, and OPA's instance id. Empty: the
	// configuration's labels.replica, else the host name.
	Replica string
	// Logger receives OPA's plugin logs (default: none).
	Logger *slog.Logger
}

// OPA is OPA's plugins for one engine: made by NewOPA, passed to WithOPA,
// started by New and stopped by Engine.Close.
type OPA struct {
	manager *plugins.Manager
	replica string
	logs    *logs.Plugin // nil without decision_logs
	met     metrics.Metrics
	log     *slog.Logger

	eng     *Engine
	pending atomic.Pointer[pendingState] // prepared in an activation, not yet committed

	mu          sync.Mutex
	bundles     map[string]*bundleplugin.Status
	activations map[string]uint64 // by result: ok, error
	logged      atomic.Uint64
	stopOnce    sync.Once

	// lines carries decision-log lines from Write to the goroutine that
	// hands them to the plugin (logLines); queueDrops counts the lines a
	// full queue refused.
	lines      chan []byte
	queueDrops atomic.Uint64
	linesDone  chan struct{} // closed: logLines drains and returns
	linesGone  chan struct{} // closed by logLines when it returns
}

// DecisionQueue bounds the decision-log lines waiting for OPA's
// decision-log plugin (about 300 bytes each). Handing a line to the plugin
// takes on the order of 100 µs (it evaluates the bundle's mask and drop
// policies and encodes the event), so it is done off the decision's path,
// by one goroutine; a decision only queues its line. A line that finds
// the queue full is dropped and counted (DecisionLogStatus.DroppedQueueFull).
const DecisionQueue = 10_000

// pendingState is a policy prepared in the transaction txn.
type pendingState struct {
	txn uint64
	st  *state
}

// NewOPA parses cfg and builds OPA's plugin manager with the bundle
// plugin, and the decision-log and status plugins when the configuration
// has them. Nothing runs until New starts it.
func NewOPA(cfg OPAConfig) (*OPA, error) {
	raw, replica, err := opaConfig(cfg.Config, cfg.Replica)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	registerActivator()
	l := opaLogger{log: log.With("component", "opa")}
	m, err := plugins.New(raw, replica, inmem.New(),
		plugins.Logger(l), plugins.ConsoleLogger(l),
		plugins.WithParserOptions(ast.ParserOptions{RegoVersion: ast.RegoV1, Capabilities: capabilities()}),
		plugins.WithEnableVersionCheck(false), plugins.WithEnableTelemetry(false))
	if err != nil {
		return nil, fmt.Errorf("opa config: %w", err)
	}
	o := &OPA{manager: m, replica: replica, met: metrics.New(), log: log,
		activations: map[string]uint64{}, bundles: map[string]*bundleplugin.Status{},
		lines: make(chan []byte, DecisionQueue), linesDone: make(chan struct{}), linesGone: make(chan struct{})}
	bcfg, err := bundleplugin.NewConfigBuilder().WithBytes(m.Config.Bundles).
		WithServices(m.Services()).WithKeyConfigs(m.PublicKeys()).Parse()
	if err != nil {
		return nil, fmt.Errorf("opa config: bundles: %w", err)
	}
	bp := bundleplugin.New(bcfg, m)
	bp.RegisterBulkListener(o, o.bundleStatus)
	m.Register(bundleplugin.Name, bp)
	if len(m.Config.DecisionLogs) > 0 {
		lcfg, err := logs.NewConfigBuilder().WithBytes(m.Config.DecisionLogs).
			WithServices(m.Services()).WithPlugins(m.Plugins()).Parse()
		if err != nil {
			return nil, fmt.Errorf("opa config: decision_logs: %w", err)
		}
		o.logs = logs.New(lcfg, m).WithMetrics(o.met)
		m.Register(logs.Name, o.logs)
	}
	if len(m.Config.Status) > 0 {
		scfg, err := status.NewConfigBuilder().WithBytes(m.Config.Status).
			WithServices(m.Services()).WithPlugins(m.Plugins()).Parse()
		if err != nil {
			return nil, fmt.Errorf("opa config: status: %w", err)
		}
		sp := status.New(scfg, m).WithMetrics(o.met)
		m.Register(status.Name, sp)
		bp.RegisterBulkListener(status.Name, sp.BulkUpdateBundleStatus) // as OPA's runtime does
	}
	m.RegisterCompilerTrigger(o.committed)
	return o, nil
}

// opaConfig checks OPA's configuration and sets labels.replica; it
// returns the configuration as JSON and the replica's name.
func opaConfig(raw []byte, replica string) ([]byte, string, error) {
	var doc map[string]any
	if err := util.Unmarshal(raw, &doc); err != nil {
		return nil, "", fmt.Errorf("opa config: %w", err)
	}
	if doc == nil {
		return nil, "", errors.New("opa config: empty")
	}
	if _, ok := doc["bundle"]; ok {
		return nil, "", errors.New("opa config: the single `bundle` key is not supported; name it under `bundles`")
	}
	bundles, _ := doc["bundles"].(map[string]any)
	if len(bundles) == 0 {
		return nil, "", errors.New("opa config: no bundles: chromegate takes its policy from them")
	}
	for name, b := range bundles {
		src, _ := b.(map[string]any)
		if sig, _ := src["signing"].(map[string]any); len(sig) == 0 {
			return nil, "", fmt.Errorf("opa config: bundle %q has no signing block: chromegate activates only signed bundles (signing: {keyid: KEY} and the key under keys)", name)
		}
	}
	labels, _ := doc["labels"].(map[string]any)
	if labels == nil {
		labels = map[string]any{}
	}
	if replica == "" {
		replica, _ = labels["replica"].(string)
	}
	if replica == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, "", fmt.Errorf("opa config: no labels.replica and no host name: %w", err)
		}
		replica = h
	}
	labels["replica"] = replica
	doc["labels"] = labels
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, "", fmt.Errorf("opa config: %w", err)
	}
	return out, replica, nil
}

// WithOPA takes the policy from the bundles o's configuration names,
// through OPA's bundle plugin, instead of a directory or the embedded
// default (see the rules at the top of opa.go). New starts the plugins
// and returns at once: until the first bundle activates, every decision
// denies. WithData and WithDataFile still lay their data over the
// bundles'. Send the decision log to o.DecisionWriter() to have OPA's
// decision-log plugin upload it.
func WithOPA(o *OPA) Option {
	return func(c *config) error {
		if o == nil {
			return errors.New("WithOPA: nil")
		}
		c.opa = o
		c.src = source{name: "opa bundles " + o.bundleNames()}
		return nil
	}
}

func (o *OPA) bundleNames() string {
	cfg := bundleplugin.Lookup(o.manager).Config()
	names := make([]string, 0, len(cfg.Bundles))
	for n := range cfg.Bundles {
		names = append(names, n)
	}
	sort.Strings(names)
	b, _ := json.Marshal(names)
	return string(b)
}

// startOPA starts o's plugins for e; the policy waits for a bundle.
func (e *Engine) startOPA(ctx context.Context) error {
	o := e.cfg.opa
	o.eng = e
	e.opa = o
	e.cur.Store(waitingState("no policy bundle has been activated yet: " + o.bundleNames()))
	activators.Store(o.manager.Store, o)
	if err := o.manager.Init(ctx); err != nil {
		activators.Delete(o.manager.Store)
		return fmt.Errorf("opa: %w", err)
	}
	if err := o.manager.Start(ctx); err != nil {
		o.manager.Stop(ctx)
		activators.Delete(o.manager.Store)
		return fmt.Errorf("opa: %w", err)
	}
	if o.logs != nil {
		go o.logLines()
	} else {
		close(o.linesGone)
	}
	return nil
}

// logLines hands queued decision-log lines to the plugin until stop, then
// what is still queued.
func (o *OPA) logLines() {
	defer close(o.linesGone)
	for {
		select {
		case line := <-o.lines:
			o.logLine(line)
		case <-o.linesDone:
			for {
				select {
				case line := <-o.lines:
					o.logLine(line)
				default:
					return
				}
			}
		}
	}
}

// stop stops the plugins, giving the decision-log plugin a few seconds to
// upload what it holds. It may be called more than once.
func (o *OPA) stop() {
	o.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		close(o.linesDone)
		select {
		case <-o.linesGone:
		case <-ctx.Done():
		}
		o.manager.Stop(ctx)
		activators.Delete(o.manager.Store)
	})
}

// The activator: OPA's bundle plugin activates through the process's
// default bundle activator, which chromegate sets once to its own (OPA
// offers no other way in before a bundle's transaction commits). For a
// store that belongs to an OPA value it compiles with chromegate's
// capabilities and prepares chromegate's query before the transaction
// commits; for any other store it is OPA's default. Setting it makes OPA
// read bundles lazily and take a rego.New's default store from
// RegisterStoreFunc, so that is set to OPA's own default, an in-memory
// store: nothing else in the process changes.

const activatorID = "chromegate"

var (
	activators        sync.Map // storage.Store → *OPA
	registerActivator = sync.OnceFunc(func() {
		bundle.RegisterStoreFunc(func() storage.Store { return inmem.New() })
		bundle.RegisterActivator(activatorID, activator{})
		bundle.RegisterDefaultBundleActivator(activatorID)
	})
)

type activator struct{}

var _ bundle.Activator = activator{}

func (activator) Activate(opts *bundle.ActivateOpts) error {
	if o, ok := activators.Load(opts.Store); ok {
		return o.(*OPA).activate(opts)
	}
	return (&bundle.DefaultActivator{}).Activate(opts)
}

// activate writes the bundle into the store (OPA's own activation, with
// chromegate's capabilities) and prepares the engine's policy from what
// the store then holds; an error aborts the transaction.
func (o *OPA) activate(opts *bundle.ActivateOpts) error {
	opts.Compiler = opts.Compiler.WithCapabilities(capabilities())
	err := (&bundle.DefaultActivator{}).Activate(opts)
	if len(opts.Bundles) == 0 {
		return err // the manager's Init, with no bundle yet
	}
	e := o.eng
	if err != nil {
		// OPA's compile errors, with file:line and removed builtins
		// explained, as a directory's are.
		if _, ok := errors.AsType[ast.Errors](err); ok {
			err = &LoadError{Source: e.cfg.src.name, Problems: problemsOf(err, "")}
		}
		e.failed(err)
	} else {
		e.reloadMu.Lock()
		var st *state
		st, err = e.build(opts.Ctx, func(ctx context.Context) (loaded, error) {
			return readStore(ctx, opts.Store, opts.Txn)
		})
		e.reloadMu.Unlock()
		if err == nil {
			o.pending.Store(&pendingState{txn: opts.Txn.ID(), st: st})
		} else {
			e.failed(err)
		}
	}
	o.count(err)
	return err
}

// committed is OPA's compiler trigger: a transaction that activated a
// bundle has committed, so its policy goes in force. (A policy prepared in
// a transaction that did not commit never does.)
func (o *OPA) committed(txn storage.Transaction) {
	if p := o.pending.Swap(nil); p != nil && p.txn == txn.ID() {
		o.eng.install(p.st)
	}
}

func (o *OPA) count(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil {
		o.activations["error"]++
	} else {
		o.activations["ok"]++
	}
}

// load reads the policy OPA holds now (Reload, for a changed data file).
func (o *OPA) load(ctx context.Context) (loaded, error) {
	txn, err := o.manager.Store.NewTransaction(ctx)
	if err != nil {
		return loaded{}, err
	}
	defer o.manager.Store.Abort(ctx, txn)
	l, err := readStore(ctx, o.manager.Store, txn)
	if err == nil && len(l.bundles) == 0 {
		err = errors.New("no policy bundle has been activated yet")
	}
	return l, err
}

// readStore reads the modules, data and bundle revisions a store holds.
func readStore(ctx context.Context, store storage.Store, txn storage.Transaction) (loaded, error) {
	ids, err := store.ListPolicies(ctx, txn)
	if err != nil {
		return loaded{}, err
	}
	l := loaded{modules: map[string]*ast.Module{}, bundles: map[string]string{}}
	popts := ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true, Capabilities: capabilities()}
	var problems []Problem
	for _, id := range ids {
		src, err := store.GetPolicy(ctx, txn, id)
		if err != nil {
			return loaded{}, err
		}
		m, err := ast.ParseModuleWithOpts(id, string(src), popts)
		if err != nil {
			problems = append(problems, problemsOf(err, id)...)
			continue
		}
		if m != nil {
			l.modules[id] = m
		}
	}
	if len(problems) > 0 {
		return loaded{}, &LoadError{Source: "opa bundles", Problems: problems}
	}
	v, err := store.Read(ctx, txn, storage.Path{})
	if err != nil {
		return loaded{}, err
	}
	data, ok := v.(map[string]any)
	if !ok {
		return loaded{}, fmt.Errorf("opa store: data is %T, not an object", v)
	}
	if l.data, err = jsonData(data); err != nil { // a copy: the overlays merge into it
		return loaded{}, err
	}
	if sys, ok := l.data["system"].(map[string]any); ok {
		delete(sys, "bundles") // OPA's manifests, not policy data
		if len(sys) == 0 {
			delete(l.data, "system")
		}
	}
	names, err := bundle.ReadBundleNamesFromStore(ctx, store, txn)
	if err != nil && !storage.IsNotFound(err) {
		return loaded{}, err
	}
	for _, n := range names {
		rev, err := bundle.ReadBundleRevisionFromStore(ctx, store, txn, n)
		if err != nil && !storage.IsNotFound(err) {
			return loaded{}, err
		}
		l.bundles[n] = rev
	}
	return l, nil
}

// bundleStatus is the bundle plugin's listener: it keeps the last status
// of each bundle and, while no bundle is in force, puts the reason in the
// denials.
func (o *OPA) bundleStatus(s map[string]*bundleplugin.Status) {
	o.mu.Lock()
	for n, st := range s {
		cp := *st
		o.bundles[n] = &cp
	}
	o.mu.Unlock()
	e := o.eng
	if e == nil || e.cur.Load().waiting == "" {
		return
	}
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("no policy bundle has been activated yet")
	for _, n := range names {
		if st := s[n]; st.Message != "" {
			fmt.Fprintf(&b, "; bundle %s: %s", n, st.Message)
		}
	}
	if cur := e.cur.Load(); cur.waiting != "" && cur.waiting != b.String() {
		e.cur.CompareAndSwap(cur, waitingState(b.String()))
	}
}

// OPAStatus reports OPA's plugins, for Status and metrics.
type OPAStatus struct {
	// Replica is labels.replica.
	Replica string `json:"replica"`
	// Bundles is the bundle plugin's last status of each bundle.
	Bundles map[string]BundleStatus `json:"bundles"`
	// Activations counts bundle activations by result, "ok" or "error"
	// (an error keeps the last good bundle in force). A download that
	// fails, or a bundle whose signature does not verify, never reaches
	// activation: see Bundles[name].Code.
	Activations map[string]uint64 `json:"activations"`
	// DecisionLogs is the decision-log plugin's state; nil without it.
	DecisionLogs *DecisionLogStatus `json:"decision_logs,omitempty"`
}

// BundleStatus is one bundle's state, from OPA's bundle plugin.
type BundleStatus struct {
	ActiveRevision           string    `json:"active_revision,omitempty"`
	LastSuccessfulActivation time.Time `json:"last_successful_activation"`
	LastSuccessfulDownload   time.Time `json:"last_successful_download"`
	LastRequest              time.Time `json:"last_request"`
	Code                     string    `json:"code,omitempty"`
	Message                  string    `json:"message,omitempty"`
}

// DecisionLogStatus is the decision-log plugin's state.
type DecisionLogStatus struct {
	// Logged counts the events handed to the plugin.
	Logged uint64 `json:"logged"`
	// BufferBytes is what waits to be uploaded (compressed).
	BufferBytes int64 `json:"buffer_bytes"`
	// DroppedBufferFull counts the times the buffer, full, dropped its
	// oldest chunks (OPA's decision_logs_dropped_buffer_size_limit_bytes_exceeded:
	// a count of drops, each of one or more chunks of events).
	DroppedBufferFull uint64 `json:"dropped_buffer_full"`
	// DroppedRateLimit counts the events dropped by
	// reporting.max_decisions_per_second.
	DroppedRateLimit uint64 `json:"dropped_rate_limit"`
	// DroppedQueueFull counts the decisions dropped before the plugin
	// because DecisionQueue lines were already waiting for it.
	DroppedQueueFull uint64 `json:"dropped_queue_full"`
	// Queued is how many decisions wait for the plugin.
	Queued int `json:"queued"`
}

// Status reports the plugins: bundles, activations, the decision log.
func (o *OPA) Status() *OPAStatus {
	s := &OPAStatus{Replica: o.replica, Bundles: map[string]BundleStatus{}}
	o.mu.Lock()
	s.Activations = maps.Clone(o.activations)
	for n, b := range o.bundles {
		s.Bundles[n] = BundleStatus{ActiveRevision: b.ActiveRevision, LastSuccessfulActivation: b.LastSuccessfulActivation,
			LastSuccessfulDownload: b.LastSuccessfulDownload, LastRequest: b.LastRequest, Code: b.Code, Message: b.Message}
	}
	o.mu.Unlock()
	if o.logs != nil {
		_, size := o.logs.BufferSize()
		s.DecisionLogs = &DecisionLogStatus{
			Logged:            o.logged.Load(),
			BufferBytes:       size,
			DroppedBufferFull: counter(o.met, "decision_logs_dropped_buffer_size_limit_bytes_exceeded"),
			DroppedRateLimit:  counter(o.met, "decision_logs_dropped_rate_limit_exceeded"),
			DroppedQueueFull:  o.queueDrops.Load(),
			Queued:            len(o.lines),
		}
	}
	return s
}

func counter(m metrics.Metrics, name string) uint64 {
	v, _ := m.Counter(name).Value().(uint64)
	return v
}

// DecisionWriter returns the writer that hands each decision-log line to
// OPA's decision-log plugin, or nil when the configuration has no
// decision_logs. Give it to WithDecisionLog (wrapped in whatever redacts
// the file log, and beside the file if there is one). Its Write queues
// the line (DecisionQueue) and never fails or waits: an event OPA refuses
// is logged, a line the full queue refuses counted, not returned, so that
// the file log beside it is still written.
func (o *OPA) DecisionWriter() io.Writer {
	if o.logs == nil {
		return nil
	}
	return decisionWriter{o}
}

type decisionWriter struct{ o *OPA }

func (w decisionWriter) Write(p []byte) (int, error) {
	select {
	case w.o.lines <- bytes.Clone(p):
	default:
		w.o.queueDrops.Add(1)
	}
	return len(p), nil
}

// logLine turns one decision-log line (a LogEntry's JSON) into an OPA
// decision-log event and hands it to the plugin: the decision's facts as
// input, allow and reasons (and an ask, its id and answer) as result, the bundles that decided, the eval
// time and a repeat count as custom fields.
func (o *OPA) logLine(p []byte) {
	var line map[string]any
	if err := util.UnmarshalJSON(bytes.TrimSpace(p), &line); err != nil {
		o.log.Error("opa decision log: not a decision line", "err", err)
		return
	}
	info := &server.Info{DecisionID: newDecisionID(), Path: DecisionPath, Timestamp: time.Now().UTC()}
	if t, ok := line["time"].(string); ok {
		if at, err := time.Parse(time.RFC3339Nano, t); err == nil {
			info.Timestamp = at
		}
	}
	if b, ok := line["bundles"].(map[string]any); ok {
		info.Bundles = make(map[string]server.BundleInfo, len(b))
		for n, r := range b {
			rev, _ := r.(string)
			info.Bundles[n] = server.BundleInfo{Revision: rev}
		}
	}
	res := map[string]any{"allow": line["allow"], "reasons": line["reasons"]}
	for _, k := range []string{"ask", "ask_id", "answer"} { // an ask and what came of it
		if v, ok := line[k]; ok {
			res[k] = v
			delete(line, k)
		}
	}
	var result any = res
	custom := map[string]any{}
	for _, k := range []string{"eval_us", "count", "until"} {
		if v, ok := line[k]; ok {
			custom[k] = v
		}
	}
	for _, k := range []string{"time", "bundles", "allow", "reasons", "eval_us", "count", "until"} {
		delete(line, k)
	}
	var input any = line
	info.Input, info.Results, info.Custom = &input, &result, custom
	if err := o.logs.Log(context.Background(), info); err != nil {
		o.log.Error("opa decision log", "err", err)
		return
	}
	o.logged.Add(1)
}

func newDecisionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // a version 4 UUID, as OPA's own
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// opaLogger is OPA's logging.Logger on slog.
type opaLogger struct {
	log *slog.Logger
}

var _ logging.Logger = opaLogger{}

func (l opaLogger) Debug(f string, a ...any) { l.log.Debug(fmt.Sprintf(f, a...)) }
func (l opaLogger) Info(f string, a ...any)  { l.log.Info(fmt.Sprintf(f, a...)) }
func (l opaLogger) Warn(f string, a ...any)  { l.log.Warn(fmt.Sprintf(f, a...)) }
func (l opaLogger) Error(f string, a ...any) { l.log.Error(fmt.Sprintf(f, a...)) }
func (l opaLogger) WithFields(fields map[string]any) logging.Logger {
	args := make([]any, 0, 2*len(fields))
	for k, v := range fields {
		args = append(args, k, v)
	}
	return opaLogger{log: l.log.With(args...)}
}
func (opaLogger) GetLevel() logging.Level { return logging.Debug }
func (opaLogger) SetLevel(logging.Level)  {}
