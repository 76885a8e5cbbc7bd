package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/chromegate/chromegate/mcp/vault"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// policyFlags only feed the policy's data (or replace the policy): no flag
// allows anything by itself.
type policyFlags struct {
	allowDomains    hostList
	enableMutations bool
	enableEval      bool
	enableDownloads bool
	allDomains      bool
	strictEgress    bool
	assetDomains    hostList
	dir             string
	dataFile        string
	decisionLog     string
	decisionLogMB   int
	decisionLogKeep int
	timeout         time.Duration
	// opaConfig is OPA's configuration file (serve --opa-config): the
	// policy comes from its bundles, decisions go to its decision_logs.
	opaConfig string
	// replica names this replica in OPA's labels (serve's --replica).
	replica string
	// opa is OPA's plugins once gate started them, for status and metrics.
	opa *policy.OPA
	// vault holds the declared secrets: their origins are data, and the
	// decision log is written through its redaction.
	vault *vault.Vault
}

func (p *policyFlags) register(fs *flag.FlagSet) {
	fs.Var(&p.allowDomains, "allow-domain", "allow a host for navigation and reads; *.example.com = any depth of subdomain (repeatable; one value may list several, separated by commas or spaces)")
	fs.BoolVar(&p.enableMutations, "enable-mutations", false, "allow tools that change pages: click, type, fill, press, select_option, set_files, drag, cookies_set, clipboard_write, tab_close")
	fs.BoolVar(&p.enableEval, "unsafe-enable-eval", false, "allow eval (arbitrary JavaScript in allowed pages)")
	fs.BoolVar(&p.enableDownloads, "enable-downloads", false, "allow download_file from allowed hosts")
	fs.BoolVar(&p.allDomains, "unsafe-all-domains", false, "allow every public host (never loopback, private or link-local addresses, never dangerous schemes)")
	fs.BoolVar(&p.strictEgress, "strict-egress", false, "let pages' own requests reach only --allow-domain and --asset-domain hosts (default: any public host)")
	fs.Var(&p.assetDomains, "asset-domain", "with --strict-egress, a host pages may load from (a CDN, fonts) without it being a navigation target; *.example.com = any depth of subdomain (repeatable)")
	fs.StringVar(&p.dir, "policy", "", "directory with your own Rego policy; it replaces the default")
	fs.StringVar(&p.dataFile, "data", "", "JSON or YAML file laid over the policy's data")
	fs.StringVar(&p.decisionLog, "decision-log", "", "append one JSON line per decision to this file (mode 0600, no secrets; a page's repeated request denials are one line with a count per 10 s)")
	fs.IntVar(&p.decisionLogMB, "decision-log-max-mb", policy.DefaultDecisionLogMaxBytes>>20, "rotate the decision log when it reaches this many MB (0: never)")
	fs.IntVar(&p.decisionLogKeep, "decision-log-keep", policy.DefaultDecisionLogKeep, "old decision logs to keep (FILE.1 is the newest)")
	// A decision takes tens of microseconds; the deadline is for a policy
	// that loops. It is wall time, so it is generous enough that a loaded
	// machine does not turn slow decisions into denials.
	fs.DurationVar(&p.timeout, "policy-timeout", time.Second, "deadline of one policy decision; a decision that runs out of time denies")
}

// registerOPA registers serve's OPA flag (not policy eval's: it decides
// with what is on disk).
func (p *policyFlags) registerOPA(fs *flag.FlagSet) {
	fs.StringVar(&p.opaConfig, "opa-config", "", "OPA configuration file (YAML or JSON: services, bundles, keys, decision_logs, status, labels): take the policy from its signed bundles through OPA's bundle plugin, and send every decision to its decision_logs service; labels.replica is --replica (default: the host name). Decisions deny until the first bundle activates")
}

// data is what the flags tell the policy: only what the user set, so a data
// file's true is not undone by a flag's default.
func (p *policyFlags) data() map[string]any {
	d := map[string]any{}
	if len(p.allowDomains) > 0 {
		d["allow_domains"] = []string(p.allowDomains)
	}
	if p.enableMutations {
		d["enable_mutations"] = true
	}
	if p.enableEval {
		d["enable_eval"] = true
	}
	if p.enableDownloads {
		d["enable_downloads"] = true
	}
	if p.allDomains {
		d["all_domains"] = true
	}
	if p.strictEgress {
		d["strict_egress"] = true
	}
	if len(p.assetDomains) > 0 {
		d["asset_domains"] = []string(p.assetDomains)
	}
	if p.vault.Len() > 0 {
		d["secret_origins"] = p.vault.Origins()
	}
	return d
}

// gate loads the policy and returns the gate every decision passes: the
// server's calls and the egress boundary's requests alike. The engine
// reloads a policy directory or data file when it changes, until ctx ends.
func (p *policyFlags) gate(ctx context.Context, log *slog.Logger) (*gate.Gate, func(), error) {
	opts := []policy.Option{policy.WithLogger(log), policy.WithData(p.data()), policy.WithTimeout(p.timeout)}
	if p.dir != "" {
		opts = append(opts, policy.WithDir(p.dir))
	}
	if p.dataFile != "" {
		opts = append(opts, policy.WithDataFile(p.dataFile))
	}
	var sinks []io.Writer // the decision log's: the file, OPA's plugin
	var dlog io.WriteCloser
	if p.decisionLog != "" {
		w, err := policy.OpenRotatingDecisionLog(p.decisionLog, int64(p.decisionLogMB)<<20, p.decisionLogKeep)
		if err != nil {
			return nil, nil, err
		}
		dlog = w
		sinks = append(sinks, w)
	}
	if p.opaConfig != "" {
		o, err := p.openOPA(log)
		if err != nil {
			if dlog != nil {
				dlog.Close()
			}
			return nil, nil, err
		}
		p.opa = o
		opts = append(opts, policy.WithOPA(o))
		if w := o.DecisionWriter(); w != nil {
			sinks = append(sinks, w)
		}
	}
	if len(sinks) > 0 {
		// The same redaction for every sink: what leaves is what the file gets.
		opts = append(opts, policy.WithDecisionLog(p.vault.Writer(io.MultiWriter(sinks...))))
	}
	eng, err := policy.New(ctx, opts...)
	if err != nil {
		if dlog != nil {
			dlog.Close()
		}
		return nil, nil, fmt.Errorf("load policy: %w", err)
	}
	if p.allDomains {
		log.Warn("--unsafe-all-domains: every public host may be navigated to and read")
	}
	if p.enableEval {
		log.Warn("--unsafe-enable-eval: the model may run any JavaScript on allowed pages")
	}
	wctx, stop := context.WithCancel(ctx)
	if p.dir != "" || p.dataFile != "" {
		go eng.Watch(wctx, 2*time.Second)
	}
	return gate.New(eng, log), func() {
		stop()
		eng.Close()
		if dlog != nil {
			dlog.Close()
		}
	}, nil
}

// openOPA reads --opa-config and builds OPA's plugins.
func (p *policyFlags) openOPA(log *slog.Logger) (*policy.OPA, error) {
	if p.dir != "" {
		return nil, errors.New("--policy and --opa-config both name the policy: give one")
	}
	raw, err := os.ReadFile(p.opaConfig)
	if err != nil {
		return nil, fmt.Errorf("--opa-config: %w", err)
	}
	o, err := policy.NewOPA(policy.OPAConfig{Config: raw, Replica: p.replica, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--opa-config %s: %w", p.opaConfig, err)
	}
	return o, nil
}
