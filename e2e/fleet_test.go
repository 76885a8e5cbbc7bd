package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp/client"
	"github.com/chromegate/chromegate/mcp/fleet"
)

// fleetRig is a fleet on loopback: replicas of `chromegate serve --http`
// sharing a real Redis, behind a real HAProxy running the shipped config.
type fleetRig struct {
	t        testing.TB
	redis    *testkit.Redis
	env      []string
	replicas []*httpServer
	metrics  []string // each replica's --metrics-addr
	lb       string   // http://host:port of HAProxy
	dir      *fleet.Store
}

// haproxyBin is Debian's HAProxy; make fleet-deps installs it.
const haproxyBin = "/usr/sbin/haproxy"

func startFleet(t testing.TB, n int) *fleetRig {
	t.Helper()
	return startFleetWith(t, n, true, permissive...)
}

// startFleetWith is startFleet with the replicas' flags; without shared,
// the replicas share nothing (no Redis): one such replica is a server
// alone behind the balancer, the baseline of the fleet's cost.
func startFleetWith(t testing.TB, n int, shared bool, flags ...string) *fleetRig {
	t.Helper()
	needBrowser(t)
	for _, bin := range []string{haproxyBin, testkit.RedisServer} {
		if _, err := os.Stat(bin); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing: run make fleet-deps", bin)
			}
			t.Skipf("%s is missing: run make fleet-deps", bin)
		}
	}
	f := &fleetRig{t: t, redis: testkit.StartRedis(t)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bind := ln.Addr().String()
	ln.Close()
	// The replicas take requests whose Host is the balancer's, as a
	// fleet behind a load balancer is told with --http-host.
	flags = append([]string{"--http-host=" + bind}, flags...)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if shared {
		f.env = []string{"CHROMEGATE_REDIS_URL=" + f.redis.URL(), "CHROMEGATE_CHECKPOINT_KEY=" + base64.StdEncoding.EncodeToString(key)}
	}
	var wg sync.WaitGroup
	f.replicas = make([]*httpServer, n)
	for range n {
		f.metrics = append(f.metrics, freeLoopback(t))
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := append(append([]string{}, f.env...), fmt.Sprintf("CHROMEGATE_REPLICA=r%d", i+1))
			mark := fmt.Sprintf("e2e-fleet-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), i)
			args := append([]string{"--metrics-addr=" + f.metrics[i]}, flags...)
			f.replicas[i] = startHTTPEnv(t, t.TempDir(), mark, env, args...)
		}()
	}
	wg.Wait()
	f.lb = f.startHAProxy(bind)
	if f.dir, err = fleet.Open(fleet.Options{URL: f.redis.URL(), Replica: "test"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.dir.Close() })
	return f
}

// startHAProxy runs cmd/chromegate/deploy/haproxy/haproxy.cfg in front of
// the replicas.
func (f *fleetRig) startHAProxy(bind string) string {
	t := f.t
	cfg, err := filepath.Abs("../cmd/chromegate/deploy/haproxy/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(haproxyBin, "-db", "-f", cfg)
	cmd.Env = append(os.Environ(), "CG_BIND="+bind)
	for i := range 3 {
		addr := "127.0.0.1:9" // discard: a server line with nothing behind it, marked down
		if i < len(f.replicas) {
			addr = f.replicas[i].addr
		}
		cmd.Env = append(cmd.Env, fmt.Sprintf("CG_R%d=%s", i+1, addr))
	}
	log := &testkit.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("haproxy log:\n%s", tail(log.String(), 4000))
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := net.Dial("tcp", bind); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not listen:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The health checks mark every replica up (rise 2 × 500 ms).
	time.Sleep(1500 * time.Millisecond)
	return "http://" + bind
}

// fleetKey makes a key in the fleet's Redis with `chromegate keys create
// --redis-url`, as an operator would.
func (f *fleetRig) fleetKey(name string, flags ...string) string {
	f.t.Helper()
	cmd := exec.Command(binary, append([]string{"keys", "create", name, "--data-dir", f.t.TempDir()}, flags...)...)
	cmd.Env = append(os.Environ(), f.env...)
	out, err := cmd.Output()
	if err != nil {
		f.t.Fatalf("keys create %s --redis-url: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// agent is one scripted agent over HTTP through the load balancer.
type agent struct {
	name string
	c    *client.Client
}

func (f *fleetRig) agent(ctx context.Context, name, key, protocol string) *agent {
	f.t.Helper()
	c, err := client.ConnectHTTPWith(ctx, f.lb+"/mcp", key, client.HTTPOptions{Handle: true, Protocol: protocol})
	if err != nil {
		f.t.Fatalf("agent %s: connect at %s: %v", name, protocol, err)
	}
	f.t.Cleanup(func() { _ = c.Close() })
	return &agent{name: name, c: c}
}

// logIn has the agent's context get its own cookie on site.
func (a *agent) logIn(ctx context.Context, site string) error {
	_, err := a.c.Call(ctx, "navigate", map[string]any{"url": site + "/set?v=" + a.name})
	return err
}

// check reads who site thinks the agent is: its own cookie, and no
// other's.
func (a *agent) check(ctx context.Context, site string) error {
	if _, err := a.c.Call(ctx, "navigate", map[string]any{"url": site + "/echo"}); err != nil {
		return err
	}
	raw, err := a.c.Call(ctx, "get_text", map[string]any{})
	if err != nil {
		return err
	}
	if want := "cookies: [v=" + a.name + "]"; !strings.Contains(raw.Text, want) {
		return fmt.Errorf("agent %s reads %q, want %q", a.name, raw.Text, want)
	}
	return nil
}

// TestFleet: three replicas, Redis and HAProxy on loopback; 16 agents at
// both protocol revisions log in; the replica holding the most sessions is
// killed, and every agent's next calls succeed on the others, logged in as
// itself; a key revoked on one replica is refused by all; the shared rate
// limit holds; Redis stopped refuses keyed calls and started again serves
// them, with nothing restarted.
func TestFleet(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	f := startFleet(t, 3)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	site := cookieSite(t)
	prom, promLog := startPrometheus(t, f.metrics...)
	agentsKey := f.fleetKey("agents")
	adminKey := f.fleetKey("ops", "--role", "admin")

	agents := make([]*agent, 16)
	for i := range agents {
		protocol := "2025-11-25"
		if i%2 == 1 {
			protocol = "2026-07-28"
		}
		agents[i] = f.agent(ctx, fmt.Sprintf("agent%02d", i), agentsKey, protocol)
	}
	each := func(what string, do func(a *agent) error) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(agents))
		for i, a := range agents {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = do(a) }()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s, agent %d: %v", what, i, err)
			}
		}
	}
	each("log in", func(a *agent) error { return a.logIn(ctx, site) })
	each("check before the kill", func(a *agent) error { return a.check(ctx, site) })

	// Which replica holds whose session: the directory says.
	held := map[string][]*agent{}
	for _, a := range agents {
		e, ok, err := f.dir.Lookup(ctx, "handle:"+a.c.Handle())
		if err != nil || !ok {
			t.Fatalf("agent %s's session is not in the directory: %v", a.name, err)
		}
		held[e.Owner] = append(held[e.Owner], a)
	}
	victim := "r1"
	for r, as := range held {
		if len(as) > len(held[victim]) {
			victim = r
		}
	}
	t.Logf("sessions by replica: r1 %d, r2 %d, r3 %d; killing %s", len(held["r1"]), len(held["r2"]), len(held["r3"]), victim)
	vi := int(victim[1] - '1')
	killed := time.Now()
	_ = f.replicas[vi].cmd.Process.Kill()
	<-f.replicas[vi].exited

	// The moved agents' next calls succeed elsewhere, logged in as
	// themselves; the time to each one's first success is the failover.
	var mu sync.Mutex
	var failover []time.Duration
	each("check after the kill", func(a *agent) error {
		err := a.check(ctx, site)
		mu.Lock()
		failover = append(failover, time.Since(killed))
		mu.Unlock()
		return err
	})
	for _, a := range held[victim] {
		e, _, _ := f.dir.Lookup(ctx, "handle:"+a.c.Handle())
		if e.Owner == victim {
			t.Errorf("agent %s's session is still the dead replica's", a.name)
		}
	}
	t.Logf("failover: %d sessions moved; the slowest agent's next call succeeded %v after the kill", len(held[victim]), maxDur(failover))

	// A key revoked on one replica is refused by every replica within a
	// second.
	live := []*httpServer{}
	for i, r := range f.replicas {
		if i != vi {
			live = append(live, r)
		}
	}
	doomed := f.fleetKey("doomed")
	for _, r := range live {
		if status, _, body := r.rest("GET", "/api/v1/status", doomed, "", nil); status != 200 {
			t.Fatalf("the new key on %s: %d %s", r.addr, status, body)
		}
	}
	if status, _, body := live[0].rest("DELETE", "/api/v1/keys/doomed", adminKey, "", nil); status != 200 && status != 204 {
		t.Fatalf("revoke over REST: %d %s", status, body)
	}
	revoked := time.Now()
	var seen time.Duration // when the last replica refused it
	for _, r := range live {
		for {
			sent := time.Since(revoked)
			status, _, _ := r.rest("GET", "/api/v1/status", doomed, "", nil)
			if status == 401 || status == 503 {
				seen = max(seen, time.Since(revoked))
				break
			}
			if sent > fleet.MaxStale {
				// Sent past the bound, no replica may serve it: by
				// construction, a copy not confirmed for MaxStale
				// refuses every key.
				t.Fatalf("a key revoked on one replica still worked on %s for a request sent %v after", r.addr, sent)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("revocation held on every replica within %v", seen)

	// The shared rate limit: 10/min through the balancer and straight to
	// each replica, 10 calls allowed in all.
	limited := f.fleetKey("limited", "--rate", "10/min")
	allowed := 0
	for i := range 20 {
		r := live[i%len(live)]
		status, _, _ := r.rest("POST", "/api/v1/command", limited, `{"command":"tabs_list","params":{}}`, nil)
		if status == 200 {
			allowed++
		} else if status != 429 {
			t.Fatalf("rate-limited call %d: %d", i, status)
		}
	}
	if allowed != 10 {
		t.Fatalf("a 10/min key got %d of 20 calls across %d replicas", allowed, len(live))
	}

	// Redis stopped: keyed calls are refused (503), never let through;
	// started again: the agents go on, nothing restarted.
	f.redis.Stop()
	time.Sleep(fleet.MaxStale + 2*fleet.DocPollInterval)
	for _, r := range live {
		status, hdr, body := r.rest("GET", "/api/v1/status", agentsKey, "", nil)
		if status != 503 || hdr.Get("Retry-After") == "" || !strings.Contains(body, "SHARED_STATE_UNAVAILABLE") {
			t.Fatalf("with Redis stopped, %s answered %d %s", r.addr, status, body)
		}
	}
	f.redis.Start()
	deadline := time.Now().Add(20 * time.Second)
	for _, r := range live {
		for {
			status, _, _ := r.rest("GET", "/api/v1/status", agentsKey, "", nil)
			if status == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("Redis back, %s still answers %d", r.addr, status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	each("check after Redis came back", func(a *agent) error { return a.check(ctx, site) })
	// Prometheus, scraping the replicas, saw the takeovers, the
	// checkpoints and Redis back up on every live replica.
	for query, atLeast := range map[string]float64{
		`sum(chromegate_fleet_takeovers_total)`:            float64(len(held[victim])),
		`sum(chromegate_fleet_checkpoints_saved_total)`:    float64(len(agents)),
		`sum(chromegate_fleet_checkpoints_restored_total)`: float64(len(held[victim])),
		`sum(chromegate_fleet_redis_up)`:                   float64(len(live)),
		`sum(chromegate_fleet_redis_errors_total)`:         1,
	} {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			got, _ := strconv.ParseFloat(promQuery(t, prom, query), 64)
			if got >= atLeast {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("prometheus: %s = %v, want at least %v\n%s", query, got, atLeast, tail(promLog.String(), 3000))
			}
		}
	}
	for _, r := range live {
		if strings.Contains(r.log.String(), f.redis.Password) || strings.Contains(r.log.String(), agentsKey) {
			t.Fatal("a replica's log names the Redis password or a key")
		}
	}
}

func maxDur(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// TestFleetPolicy: three replicas take their policy from one bundle
// server and send their decisions to one collector, through OPA's own
// plugins. A new signed bundle reaches every replica (the time until the
// last decides under it is the fleet's activation time); the collector
// down, decisions are still made and kept, and once it is up again it
// receives them, each with its replica and the revision that decided.
func TestFleetPolicy(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	dir := t.TempDir()
	signKey, pub := bundleSigner(t, dir)
	served := t.TempDir()
	bundle := filepath.Join(served, "authz.tar.gz")
	buildDefaultBundle(t, signKey, "v1", []string{"127.0.0.1"}, bundle)
	bundles := httptest.NewServer(etagFiles(served))
	t.Cleanup(bundles.Close)
	col := &logCollector{}
	collector := httptest.NewServer(col)
	t.Cleanup(collector.Close)
	cfg := opaConfigFile(t, dir, bundles.URL+"/authz.tar.gz", collector.URL, pub)
	f := startFleetWith(t, 3, true, "--opa-config", cfg)
	site := cookieSite(t)
	key := f.fleetKey("agents")
	downKey := f.fleetKey("while-down")
	navigateAs := func(key string, r *httpServer, url string) bool {
		t.Helper()
		params, _ := json.Marshal(map[string]any{"command": "navigate", "params": map[string]any{"url": url}})
		code, _, body := r.rest("POST", "/api/v1/command", key, string(params), nil)
		if code != 200 && !strings.Contains(body, "POLICY_DENIED") {
			t.Fatalf("navigate on %s: %d %s", r.addr, code, body)
		}
		return code == 200
	}
	navigate := func(r *httpServer, url string) bool { t.Helper(); return navigateAs(key, r, url) }
	for _, r := range f.replicas {
		waitUntil(t, "bundle v1 on "+r.addr, func() bool { return navigate(r, site+"/echo") })
	}

	// v2 denies the site: every replica decides under it about a polling
	// interval after it is published.
	published := time.Now()
	buildDefaultBundle(t, signKey, "v2", []string{}, bundle)
	for _, r := range f.replicas {
		waitUntil(t, "bundle v2 on "+r.addr, func() bool { return !navigate(r, site+"/echo?v2") })
	}
	t.Logf("bundle v2 published → the last of 3 replicas deciding under it: %v", time.Since(published))

	// The collector goes down: calls go on, decisions are kept; up again,
	// it receives them.
	col.down.Store(true)
	for i, r := range f.replicas {
		for range 5 {
			navigateAs(downKey, r, fmt.Sprintf("%s/while-down-%d", site, i))
		}
	}
	time.Sleep(2 * time.Second) // uploads fail meanwhile (every second)
	col.down.Store(false)
	waitUntil(t, "the decisions made while the collector was down, from every replica", func() bool {
		seen := map[string]bool{}
		for _, ev := range col.events() {
			labels, _ := ev["labels"].(map[string]any)
			bundles, _ := ev["bundles"].(map[string]any)
			authz, _ := bundles["authz"].(map[string]any)
			input, _ := ev["input"].(map[string]any)
			if input["principal"] == "while-down" && authz["revision"] == "v2" {
				seen[fmt.Sprint(labels["replica"])] = true
			}
		}
		return seen["r1"] && seen["r2"] && seen["r3"]
	})
}
