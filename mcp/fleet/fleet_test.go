package fleet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp/fleet"
	"github.com/redis/go-redis/v9"
)

func open(t *testing.T, url, replica string, key []byte) *fleet.Store {
	t.Helper()
	s, err := fleet.Open(fleet.Options{URL: url, Replica: replica, CheckpointKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func key(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

// A change made through one replica is what every replica reads within
// MaxStale, and two replicas changing the document at once both land.
func TestDocSharedAcrossReplicas(t *testing.T) {
	r := testkit.StartRedis(t)
	a, b := open(t, r.URL(), "a", nil), open(t, r.URL(), "b", nil)
	da, db := a.Doc(t.Context(), "keys"), b.Doc(t.Context(), "keys")
	if data, ver, err := db.Current(); err != nil || data != nil || ver != 0 {
		t.Fatalf("empty doc: %q %d %v", data, ver, err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		d := da
		if i%2 == 1 {
			d = db
		}
		go func() {
			defer wg.Done()
			if err := d.Update(t.Context(), func(old []byte) ([]byte, error) { return append(old, 'x'), nil }); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// Once MaxStale has passed, replica b's copy is the 20 writes or is
	// refused: never an older copy (the bound holds by construction,
	// whatever the machine's load).
	time.Sleep(fleet.MaxStale)
	if data, ver, err := db.Current(); err == nil && (len(data) != 20 || ver != 20) {
		t.Fatalf("replica b serves %q v%d a second after the writes", data, ver)
	}
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if data, ver, err := db.Current(); err == nil && len(data) == 20 && ver == 20 {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("replica b never read the writes")
		}
	}
	if ok, err := da.Seed(t.Context(), []byte("seed")); err != nil || ok {
		t.Fatalf("seed over a document: %v %v", ok, err)
	}
	refuse := errors.New("refused")
	if err := da.Update(t.Context(), func([]byte) ([]byte, error) { return nil, refuse }); !errors.Is(err, refuse) {
		t.Fatalf("a change's own error: %v", err)
	}
}

// Redis down: the document is refused after MaxStale (nothing stale is
// trusted), the other operations say ErrUnavailable; Redis back: all work
// again without a new Store.
func TestRedisDownAndBack(t *testing.T) {
	r := testkit.StartRedis(t)
	s := open(t, r.URL(), "a", key(1))
	d := s.Doc(t.Context(), "keys")
	if err := d.Update(t.Context(), func([]byte) ([]byte, error) { return []byte("v1"), nil }); err != nil {
		t.Fatal(err)
	}
	r.Stop()
	time.Sleep(fleet.MaxStale + 2*fleet.DocPollInterval)
	if _, _, err := d.Current(); !errors.Is(err, fleet.ErrUnavailable) {
		t.Fatalf("a stale document: %v", err)
	}
	if s.Up() {
		t.Error("Up with Redis stopped")
	}
	if _, _, err := s.Take(t.Context(), "k", 60, 60); !errors.Is(err, fleet.ErrUnavailable) {
		t.Fatalf("rate limit with Redis stopped: %v", err)
	}
	if err := s.SaveCheckpoint(t.Context(), "s", []byte("x"), time.Minute); !errors.Is(err, fleet.ErrUnavailable) {
		t.Fatalf("checkpoint with Redis stopped: %v", err)
	}
	if strings.Contains(errText(s, t), r.Password) {
		t.Error("an error names the Redis password")
	}
	r.Start()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _, err := d.Current()
		if err == nil && string(data) == "v1" && s.Up() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Redis came back: %q %v", data, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, ok, err := s.Take(t.Context(), "k", 60, 60); err != nil || !ok {
		t.Fatalf("rate limit after Redis came back: %v %v", ok, err)
	}
}

func errText(s *fleet.Store, t *testing.T) string {
	_, _, err := s.Take(t.Context(), "k", 60, 60)
	if err == nil {
		return ""
	}
	return err.Error()
}

// Three replicas charging one key's limit together allow its burst and no
// more: the limit is the fleet's, not each replica's.
func TestRateLimitHoldsAcrossReplicas(t *testing.T) {
	r := testkit.StartRedis(t)
	stores := []*fleet.Store{open(t, r.URL(), "a", nil), open(t, r.URL(), "b", nil), open(t, r.URL(), "c", nil)}
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for i := range 90 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := stores[i%3].Take(t.Context(), "key:agent", 30, 30)
			if err != nil {
				t.Error(err)
			}
			if ok {
				allowed.Add(1)
			}
		}()
	}
	wg.Wait()
	// 30 a minute refills one call in 2 s: the 90 calls, sent within a
	// fraction of that, get the burst and at most one more.
	if n := allowed.Load(); n < 30 || n > 31 {
		t.Fatalf("%d of 90 calls allowed across three replicas, want the burst of 30", n)
	}
	wait, ok, err := stores[0].Take(t.Context(), "key:agent", 30, 30)
	if ok || err != nil || wait <= 0 || wait > 2*time.Second {
		t.Fatalf("over the limit: wait %v ok %v err %v", wait, ok, err)
	}
}

func TestDirectory(t *testing.T) {
	r := testkit.StartRedis(t)
	a, b := open(t, r.URL(), "a", nil), open(t, r.URL(), "b", nil)
	ctx := t.Context()
	for i := range 3 {
		if _, ok, err := a.Mint(ctx, "handle:h"+string(rune('0'+i)), "alice", 3, time.Minute); err != nil || !ok {
			t.Fatalf("mint %d: %v %v", i, ok, err)
		}
	}
	if n, ok, err := b.Mint(ctx, "handle:h3", "alice", 3, time.Minute); err != nil || ok || n != 3 {
		t.Fatalf("a fourth handle on another replica: n %d ok %v err %v", n, ok, err)
	}
	if _, ok, _ := b.Mint(ctx, "handle:b0", "bob", 3, time.Minute); !ok {
		t.Fatal("bob's limit is not alice's")
	}
	e, ok, err := b.Visit(ctx, "handle:h0", "alice", time.Minute, false)
	if err != nil || !ok || e.Owner != "a" || e.Principal != "alice" {
		t.Fatalf("visit: %+v %v %v", e, ok, err)
	}
	if err := b.Adopt(ctx, "handle:h0"); err != nil {
		t.Fatal(err)
	}
	if e, _, _ := a.Lookup(ctx, "handle:h0"); e.Owner != "b" {
		t.Fatalf("after adoption the owner is %q", e.Owner)
	}
	// Another principal presenting the handle learns its entry is not
	// theirs (the caller refuses), and does not keep it alive.
	before, _, _ := a.Lookup(ctx, "handle:h0")
	time.Sleep(5 * time.Millisecond)
	if e, ok, _ := b.Visit(ctx, "handle:h0", "mallory", time.Minute, true); !ok || e.Principal != "alice" {
		t.Fatalf("mallory's visit: %+v", e)
	}
	if after, _, _ := a.Lookup(ctx, "handle:h0"); !after.Last.Equal(before.Last) {
		t.Error("another principal's visit touched the session")
	}
	if _, ok, _ := a.Visit(ctx, "handle:nope", "alice", time.Minute, false); ok {
		t.Fatal("an unknown handle has an entry")
	}
	if e, ok, _ := a.Visit(ctx, "named:alice:work", "alice", time.Minute, true); !ok || e.Owner != "a" {
		t.Fatalf("a named context is created on visit: %+v", e)
	}
	if err := a.Forget(ctx, "handle:h1", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.Mint(ctx, "handle:h3", "alice", 3, time.Minute); err != nil || !ok {
		t.Fatalf("after forgetting one, a new handle: %v %v", ok, err)
	}
	// No handle is stored in clear.
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.Port), Password: r.Password})
	defer rdb.Close()
	keys, _ := rdb.Keys(context.Background(), "*").Result()
	for _, k := range keys {
		if strings.Contains(k, "h0") || strings.Contains(k, "work") {
			t.Errorf("a Redis key names a session: %s", k)
		}
	}
}

// A checkpoint opens on another replica with the fleet's key, not with
// another key, and not as another session's.
func TestCheckpointSealed(t *testing.T) {
	r := testkit.StartRedis(t)
	a, b, other := open(t, r.URL(), "a", key(7)), open(t, r.URL(), "b", key(7)), open(t, r.URL(), "c", key(8))
	ctx := t.Context()
	secret := []byte(`{"cookies":[{"name":"sid","value":"s3cr3t-cookie"}]}`)
	if err := a.SaveCheckpoint(ctx, "handle:x", secret, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, ok, err := b.LoadCheckpoint(ctx, "handle:x")
	if err != nil || !ok || !bytes.Equal(got, secret) {
		t.Fatalf("load on another replica: %q %v %v", got, ok, err)
	}
	if _, _, err := other.LoadCheckpoint(ctx, "handle:x"); err == nil {
		t.Fatal("a checkpoint opened under another key")
	}
	if _, ok, err := b.LoadCheckpoint(ctx, "handle:y"); ok || err != nil {
		t.Fatalf("no checkpoint: %v %v", ok, err)
	}
	// The bytes in Redis are not the state.
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.Port), Password: r.Password})
	defer rdb.Close()
	keys, _ := rdb.Keys(ctx, "*ckpt*").Result()
	if len(keys) != 1 {
		t.Fatalf("checkpoint keys: %v", keys)
	}
	raw, _ := rdb.Get(ctx, keys[0]).Bytes()
	if bytes.Contains(raw, []byte("s3cr3t")) {
		t.Fatal("the checkpoint is stored in clear")
	}
	// Copied to another session's entry, it does not open: it is bound
	// to its session.
	if err := b.SaveCheckpoint(ctx, "handle:y", []byte("y"), time.Minute); err != nil {
		t.Fatal(err)
	}
	ykeys, _ := rdb.Keys(ctx, "*ckpt*").Result()
	for _, k := range ykeys {
		if k != keys[0] {
			if err := rdb.Set(ctx, k, raw, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := b.LoadCheckpoint(ctx, "handle:y"); err == nil {
		t.Fatal("another session's checkpoint opened as this one's")
	}
	if _, err := fleet.Open(fleet.Options{URL: "http://nope", Replica: "a"}); err == nil || strings.Contains(err.Error(), "nope") {
		t.Fatalf("a bad URL: %v", err)
	}
	if _, err := fleet.Open(fleet.Options{URL: r.URL(), Replica: "a", CheckpointKey: []byte("short")}); err == nil {
		t.Fatal("a short checkpoint key was taken")
	}
}
