package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/fleet"
)

// fleetEnvs are replicas over fake backends sharing one real Redis.
func fleetEnvs(t testing.TB, r *testkit.Redis, n int) []*httpEnv {
	t.Helper()
	envs := make([]*httpEnv, n)
	for i := range envs {
		store, err := fleet.Open(fleet.Options{URL: r.URL(), Replica: "r" + string(rune('1'+i)), CheckpointKey: make([]byte, 32)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
		keys, err := OpenSharedKeyStore(t.Context(), store, "")
		if err != nil {
			t.Fatal(err)
		}
		envs[i] = newHTTPEnv(t, func(o *Options) { o.Keys, o.Fleet = keys, store })
		envs[i].keys = keys
	}
	return envs
}

func restCall(e *httpEnv, key, command, session string) (int, string) {
	body, _ := json.Marshal(map[string]any{"command": command, "params": map[string]any{}, "session": session})
	status, _, out := e.do("POST", "/api/v1/command", key, string(body), nil)
	return status, out
}

// A key made on one replica works on all; revoked on one, it is refused
// by every replica within a second.
func TestFleetKeysRevokedEverywhere(t *testing.T) {
	r := testkit.StartRedis(t)
	envs := fleetEnvs(t, r, 3)
	k := envs[0].key(NewKey{Name: "agent"})
	for i, e := range envs {
		eventually(t, "the key on replica "+string(rune('1'+i)), func() bool {
			status, _, _ := e.do("GET", "/api/v1/status", k, "", nil)
			return status == 200
		})
	}
	if err := envs[1].keys.Revoke("agent"); err != nil {
		t.Fatal(err)
	}
	// The bound, by construction: once MaxStale has passed, no replica
	// serves the key (it read the revocation, or it refuses every key).
	time.Sleep(fleet.MaxStale)
	for i, e := range envs {
		if status, _, body := e.do("GET", "/api/v1/status", k, "", nil); status != 401 && status != 503 {
			t.Fatalf("a revoked key works on replica %d a second after the revocation: %d %s", i+1, status, body)
		}
	}
}

// One key's rate limit is the fleet's: calls spread over three replicas
// get its budget once, not three times.
func TestFleetRateLimitShared(t *testing.T) {
	r := testkit.StartRedis(t)
	envs := fleetEnvs(t, r, 3)
	k := envs[0].key(NewKey{Name: "agent", Rate: "6/min"})
	time.Sleep(2 * fleet.DocPollInterval)
	allowed, limited := 0, 0
	for i := range 12 {
		status, body := restCall(envs[i%3], k, "tabs_list", "")
		switch {
		case status == 200:
			allowed++
		case strings.Contains(body, string(mcp.CodeRateLimited)):
			limited++
		default:
			t.Fatalf("call %d: %d %s", i, status, body)
		}
	}
	if allowed != 6 || limited != 6 {
		t.Fatalf("6/min over three replicas: %d allowed, %d limited", allowed, limited)
	}
}

// A handle minted on one replica is served by another, which takes the
// session over; another principal presenting it is refused as for an
// unknown handle; closed on one replica, it is gone on all.
func TestFleetHandleMovesBetweenReplicas(t *testing.T) {
	r := testkit.StartRedis(t)
	envs := fleetEnvs(t, r, 2)
	a, b := envs[0], envs[1]
	alice := a.key(NewKey{Name: "alice"})
	mallory := a.key(NewKey{Name: "mallory"})
	time.Sleep(2 * fleet.DocPollInterval)
	status, hdr, body := a.do("POST", "/api/v1/sessions", alice, "", nil)
	handle := hdr.Get(SessionHeader)
	if status != 201 || !strings.HasPrefix(handle, handlePrefix) {
		t.Fatalf("mint: %d %s", status, body)
	}
	if status, body := restCall(b, alice, "tabs_list", handle); status != 200 {
		t.Fatalf("the handle on the other replica: %d %s", status, body)
	}
	if _, ok := b.manager.Current("handle:" + handle); !ok {
		t.Fatal("the replica that took the session over holds no context for it")
	}
	entry, _, _ := b.handler.opts.Fleet.Lookup(t.Context(), "handle:"+handle)
	if entry.Owner != "r2" {
		t.Fatalf("the directory's owner: %q", entry.Owner)
	}
	// Back on the first replica: it drops its stale copy and takes the
	// session back.
	if status, body := restCall(a, alice, "tabs_list", handle); status != 200 {
		t.Fatalf("back on the first replica: %d %s", status, body)
	}
	statusM, bodyM := restCall(b, mallory, "tabs_list", handle)
	statusU, bodyU := restCall(b, mallory, "tabs_list", handlePrefix+"NOSUCHHANDLE0000000000000")
	if statusM == 200 || statusM != statusU || strings.ReplaceAll(bodyM, handle, "") != strings.ReplaceAll(bodyU, handlePrefix+"NOSUCHHANDLE0000000000000", "") {
		t.Fatalf("another principal's handle: %d %s\nan unknown one: %d %s", statusM, bodyM, statusU, bodyU)
	}
	if status, _, body := b.do("DELETE", "/api/v1/sessions/"+handle, alice, "", nil); status != 204 {
		t.Fatalf("delete on the other replica: %d %s", status, body)
	}
	if status, _ := restCall(a, alice, "tabs_list", handle); status == 200 {
		t.Fatal("a handle closed on one replica still works on another")
	}
}

// The principal's session limit counts its handles across the fleet.
func TestFleetSessionLimitAcrossReplicas(t *testing.T) {
	r := testkit.StartRedis(t)
	envs := fleetEnvs(t, r, 2)
	for _, e := range envs {
		e.handler.opts.MaxSessionsPerKey = 3
	}
	k := envs[0].key(NewKey{Name: "agent"})
	time.Sleep(2 * fleet.DocPollInterval)
	for i := range 3 {
		if status, _, body := envs[i%2].do("POST", "/api/v1/sessions", k, "", nil); status != 201 {
			t.Fatalf("mint %d: %d %s", i, status, body)
		}
	}
	if status, _, body := envs[1].do("POST", "/api/v1/sessions", k, "", nil); status != 429 {
		t.Fatalf("a fourth handle across the fleet: %d %s", status, body)
	}
}

// Redis down: keys cannot be confirmed and every keyed request is refused,
// 503 SHARED_STATE_UNAVAILABLE (never let through); the health of the
// server is unchanged; Redis back: the same key works, no restart.
func TestFleetRedisDownFailsClosed(t *testing.T) {
	r := testkit.StartRedis(t)
	e := fleetEnvs(t, r, 1)[0]
	k := e.key(NewKey{Name: "agent"})
	if status, body := restCall(e, k, "tabs_list", ""); status != 200 {
		t.Fatalf("before: %d %s", status, body)
	}
	r.Stop()
	eventually(t, "keyed calls refused with Redis down", func() bool {
		status, hdr, body := e.do("GET", "/api/v1/status", k, "", nil)
		return status == 503 && hdr.Get("Retry-After") != "" && strings.Contains(body, string(mcp.CodeSharedState))
	})
	if strings.Contains(e.log.String(), r.Password) {
		t.Fatal("the log names the Redis password")
	}
	r.Start()
	eventually(t, "the key working again once Redis is back", func() bool {
		status, _ := restCall(e, k, "tabs_list", "")
		return status == 200
	})
}
