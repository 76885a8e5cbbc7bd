package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
)

// Doc is a small document every replica shares (the keys): its bytes and
// a version that every change increments. Reads come from this replica's
// copy, confirmed against Redis every DocPollInterval; Current refuses a
// copy not confirmed for MaxStale. Changes are optimistic transactions on
// the version, so two replicas changing it at once both land, one after
// the other.
type Doc struct {
	s    *Store
	name string

	syncs *rate.Limiter // of Sync

	mu        sync.Mutex
	data      []byte
	ver       int64
	confirmed time.Time // zero: never read
}

// Doc is the shared document called name (one per name and Store). Its
// first read is done before Doc returns, if Redis answers.
func (s *Store) Doc(ctx context.Context, name string) *Doc {
	s.docsMu.Lock()
	d := s.docs[name]
	if d == nil {
		d = &Doc{s: s, name: name, syncs: rate.NewLimiter(syncRate, syncRate)}
		s.docs[name] = d
	}
	s.docsMu.Unlock()
	ctx, cancel := opCtx(ctx)
	defer cancel()
	if err := d.refresh(ctx); err != nil {
		_ = s.unavailable("read "+name, err)
	}
	return d
}

func (d *Doc) dataKey() string { return d.s.prefix + "doc:" + d.name }
func (d *Doc) verKey() string  { return d.s.prefix + "doc:" + d.name + ":ver" }

// refresh confirms the copy: the version, and the bytes when it moved.
func (d *Doc) refresh(ctx context.Context) error {
	ver, err := d.s.rdb.Get(ctx, d.verKey()).Int64()
	if errors.Is(err, redis.Nil) {
		ver, err = 0, nil
	}
	if err != nil {
		return err
	}
	d.mu.Lock()
	same := ver == d.ver && !d.confirmed.IsZero()
	d.mu.Unlock()
	if same {
		d.mu.Lock()
		d.confirmed = time.Now()
		d.mu.Unlock()
		return nil
	}
	// The bytes and their version, read together.
	vals, err := d.s.rdb.MGet(ctx, d.dataKey(), d.verKey()).Result()
	if err != nil {
		return err
	}
	var data []byte
	if str, ok := vals[0].(string); ok {
		data = []byte(str)
	}
	verStr, _ := vals[1].(string)
	var v int64
	if verStr != "" {
		if _, err := fmt.Sscan(verStr, &v); err != nil {
			return fmt.Errorf("the version of %s is not a number", d.name)
		}
	}
	d.mu.Lock()
	d.data, d.ver, d.confirmed = data, v, time.Now()
	d.mu.Unlock()
	return nil
}

// Sync confirms the copy now: a caller that found nothing in the copy (a
// key made a moment ago on another replica) asks Redis rather than wait
// for the next poll. At most syncRate syncs a second are made, whoever
// asks (requests with made-up keys cost Redis nothing more); past that,
// the copy stands.
func (d *Doc) Sync(ctx context.Context) error {
	if !d.syncs.Allow() {
		return nil
	}
	ctx, cancel := opCtx(ctx)
	defer cancel()
	if err := d.refresh(ctx); err != nil {
		return d.s.unavailable("sync "+d.name, err)
	}
	return nil
}

const syncRate = 50

// Current is the document and its version, as confirmed at most MaxStale
// ago; otherwise an error wrapping ErrUnavailable. An absent document is
// nil bytes at version 0.
func (d *Doc) Current() ([]byte, int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.confirmed.IsZero() || time.Since(d.confirmed) > MaxStale {
		return nil, 0, fmt.Errorf("%w: %s not confirmed for more than %s", ErrUnavailable, d.name, MaxStale)
	}
	return d.data, d.ver, nil
}

// Update changes the document: change gets its current bytes (nil when
// absent) and returns the new ones, or an error that Update returns as it
// is. Update retries when another replica changed the document meanwhile.
// The copy is refreshed before Update returns.
func (d *Doc) Update(ctx context.Context, change func(old []byte) ([]byte, error)) error {
	ctx, cancel := opCtx(ctx)
	defer cancel()
	var changeErr error
	for try := range 50 {
		err := d.s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			old, err := tx.Get(ctx, d.dataKey()).Bytes()
			if err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
			next, err := change(old)
			if err != nil {
				changeErr = err
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.Set(ctx, d.dataKey(), next, 0)
				p.Incr(ctx, d.verKey())
				return nil
			})
			return err
		}, d.dataKey(), d.verKey())
		switch {
		case changeErr != nil:
			return changeErr
		case errors.Is(err, redis.TxFailedErr):
			// Another replica changed it first: after a random pause,
			// so that writers racing each other spread out.
			time.Sleep(time.Duration(rand.Int64N(int64(time.Millisecond) << min(try, 4))))
			continue
		case err != nil:
			return d.s.unavailable("update "+d.name, err)
		}
		return d.refresh(ctx)
	}
	return fmt.Errorf("%s changed too often to update; try again", d.name)
}

// Seed writes data as the document when there is none yet, and reports
// whether it did.
func (d *Doc) Seed(ctx context.Context, data []byte) (bool, error) {
	ctx, cancel := opCtx(ctx)
	defer cancel()
	seeded := false
	err := d.Update(ctx, func(old []byte) ([]byte, error) {
		if old != nil {
			return nil, errSeeded
		}
		seeded = true
		return data, nil
	})
	if errors.Is(err, errSeeded) {
		return false, nil
	}
	return seeded, err
}

var errSeeded = errors.New("seeded already")
