package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// DecisionLogMode is the only file mode a decision log may have.
const DecisionLogMode os.FileMode = 0o600

// OpenDecisionLog opens path for appending decisions, creating it with mode
// 0600. An existing file must be a regular file with exactly mode 0600, or
// it is refused (fail closed: the log may reveal which sites were visited).
func OpenDecisionLog(path string) (io.WriteCloser, error) {
	f, _, err := openDecisionFile(path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// openDecisionFile is OpenDecisionLog's open and checks; it returns the
// file's size too.
func openDecisionFile(path string) (*os.File, int64, error) {
	if info, err := os.Lstat(path); err == nil && info.Mode()&os.ModeSymlink != 0 {
		return nil, 0, fmt.Errorf("decision log %s: is a symbolic link", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, DecisionLogMode)
	if err != nil {
		return nil, 0, fmt.Errorf("decision log: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("decision log: %w", err)
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("decision log %s: not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm != DecisionLogMode {
		f.Close()
		return nil, 0, fmt.Errorf("decision log %s: mode is %04o, want %04o (chmod 600 %s)", path, perm, DecisionLogMode, path)
	}
	return f, info.Size(), nil
}

// LogEntry is one line of the decision log. It never holds arguments: no
// cookie values, typed text or eval source can reach it.
type LogEntry struct {
	Time       time.Time `json:"time"`
	Phase      string    `json:"phase"`
	Principal  string    `json:"principal"`
	Transport  string    `json:"transport,omitempty"`
	Tool       string    `json:"tool"`
	Action     string    `json:"action"`
	TargetHost string    `json:"target_host"`
	PageHost   string    `json:"page_host"`
	Allow      bool      `json:"allow"`
	Reasons    []string  `json:"reasons"`
	EvalMicros int64     `json:"eval_us"`
	// Session is the executor session, when not the default one.
	Session string `json:"session,omitempty"`
	// Secrets names the operator's secrets the call referred to (names
	// only: the values never reach the policy).
	Secrets []string `json:"secrets,omitempty"`
	// Flow is input.flow: origins, the value's place and lengths, never
	// the text.
	Flow []Flow `json:"flow,omitempty"`
	// Request-phase entries (only denials are logged) say which hook saw
	// the request, what it was, and the address it would have gone to.
	Via          string `json:"via,omitempty"`
	ResourceType string `json:"resource_type,omitempty"`
	Address      string `json:"address,omitempty"`
	// Count, on a request denial's line, is how many denials like it
	// (same principal, session, page host, target host, hook and
	// reasons) the line stands for, from Time to Until: repeats within a
	// window are one line (see denials.go). Absent means one.
	Count int        `json:"count,omitempty"`
	Until *time.Time `json:"until,omitempty"`
	// Bundles, when the policy came from OPA bundles (WithOPA), are the
	// bundles that decided, name → revision.
	Bundles map[string]string `json:"bundles,omitempty"`
}

// decisionLog serialises lines from concurrent decisions, one Write each,
// and aggregates repeated request denials (denials.go).
type decisionLog struct {
	mu      sync.Mutex
	w       io.Writer
	denials denials
	onErr   func(error) // a line a window's end could not write
}

func (l *decisionLog) write(at time.Time, in Input, d Decision, bundles map[string]string) error {
	e := LogEntry{
		Time:       at.UTC(),
		Phase:      in.Phase,
		Principal:  in.Principal.Name,
		Transport:  in.Principal.Transport,
		Tool:       in.Tool,
		Action:     in.Action,
		Allow:      d.Allow,
		Reasons:    scrubReasons(d.Reasons, in.Args),
		EvalMicros: d.EvalMicros,
		Bundles:    bundles,
	}
	if e.Reasons == nil {
		e.Reasons = []string{}
	}
	if in.Target != nil {
		e.TargetHost = in.Target.Host
	}
	if in.Page != nil {
		e.PageHost = in.Page.Host
	}
	e.Session = in.Session
	e.Secrets = in.Secrets
	e.Flow = in.Flow
	if r := in.Request; r != nil {
		e.Via, e.ResourceType, e.Address = r.Via, r.ResourceType, r.Address
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if in.Phase == PhaseRequest && !d.Allow && !l.denials.note(l, e) {
		return nil
	}
	return l.emit(e)
}

// emit writes e as one line; l.mu is held.
func (l *decisionLog) emit(e LogEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	n, err := l.w.Write(b)
	if err == nil && n != len(b) {
		err = errors.New("short write")
	}
	return err
}

// scrubReasons keeps argument values out of the log even when a policy
// quotes them in a reason (a custom policy may sprintf an eval source into
// one): every string argument of eight bytes or more is replaced by its
// hash wherever it appears.
func scrubReasons(reasons []string, args map[string]any) []string {
	if len(reasons) == 0 || len(args) == 0 {
		return reasons
	}
	var secrets []string
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case string:
			if len(x) >= 8 && x != Redacted {
				secrets = append(secrets, x)
			}
		case map[string]any:
			for _, e := range x {
				collect(e)
			}
		case []any:
			for _, e := range x {
				collect(e)
			}
		}
	}
	collect(args)
	if len(secrets) == 0 {
		return reasons
	}
	out := make([]string, len(reasons))
	for i, r := range reasons {
		for _, s := range secrets {
			if strings.Contains(r, s) {
				r = strings.ReplaceAll(r, s, HashSecret(s))
			}
		}
		out[i] = r
	}
	return out
}
