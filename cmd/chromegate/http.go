package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/chromegate/chromegate/cmd/chromegate/internal/metrics"
	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/fleet"
	"github.com/chromegate/chromegate/mcp/httpapi"
)

// httpFlags configure `serve --http`.
type httpFlags struct {
	addr             addrFlag
	hosts            listFlag
	origins          listFlag
	allowRemote      bool
	noMCP            bool
	noREST           bool
	maxBody          int64
	sessionTimeout   time.Duration
	namedSessionIdle time.Duration
	shutdownTimeout  time.Duration
	maxSessions      int
	load             loadFlags
	oauth            oauthFlags
	fleet            fleetFlags
}

func (h *httpFlags) register(fs *flag.FlagSet) {
	fs.Var(&h.addr, "http", "serve Streamable HTTP MCP at /mcp and REST at /api/v1/ on this address instead of stdio; --http alone means "+httpapi.DefaultAddr)
	fs.Var(&h.hosts, "http-host", "a further name the Host header may carry (name or name:port; repeatable); localhost, 127.0.0.1, [::1] and the bound address are always allowed")
	fs.Var(&h.origins, "allow-origin", "a browser origin (scheme://host[:port]) allowed to call the HTTP server (repeatable); any other Origin header is refused")
	fs.BoolVar(&h.allowRemote, "allow-remote", false, "allow --http on a non-loopback address (needs at least one key)")
	fs.BoolVar(&h.noMCP, "no-mcp-http", false, "with --http: do not serve MCP at /mcp")
	fs.BoolVar(&h.noREST, "no-rest", false, "with --http: do not serve the REST API at /api/v1/")
	fs.Int64Var(&h.maxBody, "max-body-bytes", httpapi.DefaultMaxBodyBytes, "with --http: largest request body; larger ones get 413")
	fs.DurationVar(&h.sessionTimeout, "session-timeout", httpapi.DefaultSessionTimeout, "with --http: an MCP session idle this long is closed, with its browser context")
	fs.DurationVar(&h.namedSessionIdle, "named-session-idle", httpapi.DefaultNamedSessionIdle, "with --http: a named browser context ("+httpapi.SessionHeader+", REST session) idle this long is closed")
	fs.IntVar(&h.maxSessions, "max-sessions-per-key", httpapi.DefaultMaxSessionsPerKey, "with --http: open MCP sessions (each a browser context) one key may have")
	h.load.register(fs)
	h.oauth.register(fs)
	h.fleet.register(fs)
	fs.DurationVar(&h.shutdownTimeout, "shutdown-timeout", httpapi.DefaultShutdownTimeout, "with --http: on SIGINT/SIGTERM, how long calls in flight may take to finish")
}

// addrFlag is --http: a boolean-looking flag that also takes an address, so
// `--http`, `--http=ADDR` and `--http ADDR` all work (see fixHTTPArg).
type addrFlag struct{ v string }

func (a *addrFlag) String() string   { return a.v }
func (a *addrFlag) IsBoolFlag() bool { return true }
func (a *addrFlag) Set(v string) error {
	switch v {
	case "true":
		a.v = httpapi.DefaultAddr
	case "false", "":
		a.v = ""
	default:
		if _, _, err := net.SplitHostPort(v); err != nil {
			return fmt.Errorf("want host:port, e.g. %s", httpapi.DefaultAddr)
		}
		a.v = v
	}
	return nil
}

// joinHTTPArg turns `--http ADDR` into `--http=ADDR` before parsing: the
// flag package would take --http alone (it is boolean-looking) and stop at
// ADDR, leaving every later flag unparsed.
func joinHTTPArg(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if (a == "--http" || a == "-http") && i+1 < len(args) {
			if _, _, err := net.SplitHostPort(args[i+1]); err == nil && !strings.HasPrefix(args[i+1], "-") {
				out = append(out, a+"="+args[i+1])
				i++
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// serveHTTP listens on the --http address and serves srv until ctx ends.
func serveHTTP(ctx context.Context, cfg serveConfig, log *slog.Logger, srv *mcp.Server, mx *metrics.Metrics) error {
	hf := cfg.http
	if hf.noMCP && hf.noREST {
		return errors.New("--no-mcp-http and --no-rest together leave nothing to serve")
	}
	dataDir := cfg.browser.dataDir
	if dataDir == "" {
		dataDir = cdp.DefaultDataDir()
	}
	shared, err := hf.fleet.open(log)
	if err != nil {
		return err
	}
	if shared != nil {
		defer shared.Close()
		if mx != nil {
			mx.Fleet(shared)
		}
	}
	keys, err := openKeys(ctx, shared, dataDir, true)
	if err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(hf.addr.v)
	if err != nil {
		return fmt.Errorf("--http %q: %w", hf.addr.v, err)
	}
	local := httpapi.IsLoopback(host)
	if !local {
		if !hf.allowRemote {
			return fmt.Errorf("--http %s is not a loopback address: pass --allow-remote as well (and create a key first)", hf.addr.v)
		}
		if keys.Empty() && hf.oauth.issuer == "" {
			return fmt.Errorf("--http %s with --allow-remote needs at least one key (or --oauth-issuer): chromegate keys create NAME --data-dir %s", hf.addr.v, dataDir)
		}
	}
	ln, err := net.Listen("tcp", hf.addr.v)
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	hopts := httpapi.Options{
		Addr:              ln.Addr().String(),
		Hosts:             hf.hosts,
		Origins:           hf.origins,
		Keys:              keys,
		NoMCP:             hf.noMCP,
		NoREST:            hf.noREST,
		MaxBodyBytes:      hf.maxBody,
		SessionTimeout:    hf.sessionTimeout,
		NamedSessionIdle:  hf.namedSessionIdle,
		MaxSessionsPerKey: hf.maxSessions,
		Fleet:             shared,
		Logger:            log,
	}
	hf.load.http(&hopts)
	var rates mcp.RateStore // an interface nil unless shared is set
	if shared != nil {
		rates = shared
	}
	if hopts.OAuth, err = hf.oauth.build(hopts.Addr, rates); err != nil {
		ln.Close()
		return err
	}
	h, err := httpapi.New(srv, hopts)
	if err != nil {
		ln.Close()
		return err
	}
	if !local {
		log.Warn("serving on a non-loopback address: anyone who can reach it and holds a key can drive the browser", "addr", ln.Addr().String())
	}
	if keys.Empty() && hopts.OAuth == nil {
		log.Warn("no keys: any local program can use this server without one; create a key to require keys (chromegate keys create NAME)", "keys", keys.Path())
	}
	log.Info("chromegate serving over HTTP", "version", chromegateVersion(), "addr", ln.Addr().String(),
		"mcp", !hf.noMCP, "rest", !hf.noREST, "keys", keys.Path(), "oauth_issuer", hf.oauth.issuer, "fleet_replica", replicaOf(shared))
	return h.Serve(ctx, ln, hf.shutdownTimeout)
}

// openKeys opens the keys: the fleet's when shared is set (with seed,
// seeded from the data dir's keys file when the fleet has none), else the
// data dir's.
func openKeys(ctx context.Context, shared *fleet.Store, dataDir string, seed bool) (*httpapi.KeyStore, error) {
	if shared != nil {
		from := ""
		if seed {
			from = httpapi.KeysPath(dataDir)
		}
		return httpapi.OpenSharedKeyStore(ctx, shared, from)
	}
	return httpapi.OpenKeyStore(httpapi.KeysPath(dataDir))
}

func replicaOf(shared *fleet.Store) string {
	if shared == nil {
		return ""
	}
	return shared.Replica()
}
