// Package fleet is the state that several chromegate replicas share, in
// Redis: the keys document and its revocations, rate limits that hold
// across replicas, the directory of sessions (which replica holds a
// session's browser context, for which principal, used when) and the
// sessions' encrypted checkpoints, from which another replica restores a
// session whose replica died.
//
// The rules it keeps:
//
//   - Nothing here is needed by a single process: a Store exists only when
//     the operator gives serve a Redis URL.
//   - Redis unreachable is an error wrapping ErrUnavailable, never a silent
//     default: a caller that needs the shared state fails closed with it (a
//     key whose revocation cannot be ruled out, a rate limit that cannot be
//     charged), a caller that does not goes on. Reconnecting is go-redis's
//     own; Redis coming back needs no restart.
//   - A shared document (Doc) is confirmed against Redis every
//     DocPollInterval; one not confirmed for MaxStale is not trusted, so a
//     change made on one replica (a revoked key) holds on every replica
//     within a second, or the replica refuses.
//   - Session keys never appear in Redis in clear: the directory and the
//     checkpoints are stored under their SHA-256, so Redis's own monitoring
//     (MONITOR, SLOWLOG) shows no handle.
//   - A checkpoint is sealed with AES-256-GCM under the operator's key,
//     bound (as additional data) to its session, so a checkpoint copied to
//     another session's entry does not open. The key is never logged.
//
// A Store is safe for concurrent use.
package fleet

import (
	"cmp"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// ErrUnavailable is wrapped by every error of an operation Redis did not
// answer.
var ErrUnavailable = errors.New("the shared state (Redis) is unavailable")

const (
	// DocPollInterval is how often a shared document is confirmed.
	DocPollInterval = 250 * time.Millisecond
	// MaxStale is how long a shared document is trusted without being
	// confirmed.
	MaxStale = time.Second
	// opTimeout bounds one Redis operation on a call's path.
	opTimeout = 2 * time.Second
)

// Options configures a Store.
type Options struct {
	// URL is the Redis URL (redis://[:password@]host:port[/db], rediss://
	// for TLS). It may hold a password: it is never logged.
	URL string
	// Replica names this process among the fleet's (default: the host
	// name); it is what the session directory calls a session's owner.
	Replica string
	// CheckpointKey is the AES-256 key sealing checkpoints (32 bytes);
	// nil keeps no checkpoints.
	CheckpointKey []byte
	// Prefix starts every Redis key this store writes (default
	// "chromegate:"), so a Redis can be shared with other uses, or by two
	// fleets.
	Prefix string
	Logger *slog.Logger
}

// Store is a connection to the fleet's shared state.
type Store struct {
	rdb     *redis.Client
	limiter *redis_rate.Limiter
	replica string
	prefix  string
	aead    cipher.AEAD // nil: no checkpoints
	log     *slog.Logger

	up        atomic.Bool
	stats     counters
	stop      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup

	docsMu sync.Mutex
	docs   map[string]*Doc
}

// Open connects to Redis. It does not wait for Redis to answer: a fleet
// starts while its Redis does, and the callers that need the shared state
// refuse until it is there. A URL that does not parse, or a checkpoint key
// that is not 32 bytes, is an error.
func Open(opts Options) (*Store, error) {
	ro, err := redis.ParseURL(opts.URL)
	if err != nil {
		// go-redis quotes the URL in some of its errors: say only what is
		// wrong, never the URL, which may hold a password.
		return nil, errors.New("the Redis URL does not parse: want redis://[:password@]host:port[/db] or rediss://")
	}
	if opts.Replica == "" {
		return nil, errors.New("fleet: Options.Replica is required")
	}
	ro.DialTimeout = cmp.Or(ro.DialTimeout, time.Second)
	ro.ReadTimeout = cmp.Or(ro.ReadTimeout, time.Second)
	ro.WriteTimeout = cmp.Or(ro.WriteTimeout, time.Second)
	ro.MaxRetries = 1
	s := &Store{
		replica: opts.Replica,
		prefix:  cmp.Or(opts.Prefix, "chromegate:"),
		log:     opts.Logger,
		stop:    make(chan struct{}),
		docs:    map[string]*Doc{},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if opts.CheckpointKey != nil {
		if len(opts.CheckpointKey) != 32 {
			return nil, fmt.Errorf("the checkpoint key is %d bytes, want 32 (AES-256)", len(opts.CheckpointKey))
		}
		block, err := aes.NewCipher(opts.CheckpointKey)
		if err != nil {
			return nil, err
		}
		if s.aead, err = cipher.NewGCM(block); err != nil {
			return nil, err
		}
	}
	quietOnce.Do(func() { redis.SetLogger(quiet{s.log}) })
	s.rdb = redis.NewClient(ro)
	s.limiter = redis_rate.NewLimiter(s.rdb)
	s.wg.Add(1)
	go s.watch()
	return s, nil
}

// Replica is this process's name in the fleet.
func (s *Store) Replica() string { return s.replica }

// Up reports whether Redis answered the last health check (every
// DocPollInterval).
func (s *Store) Up() bool { return s.up.Load() }

// Checkpoints reports whether the store keeps checkpoints (it has a key).
func (s *Store) Checkpoints() bool { return s.aead != nil }

// Close stops the store's loops and closes its connections. Close may be
// called more than once.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		close(s.stop)
		s.wg.Wait()
		err = s.rdb.Close()
	})
	return err
}

// unavailable wraps a Redis error as ErrUnavailable, and notes Redis down.
func (s *Store) unavailable(op string, err error) error {
	s.stats.unavailable.Add(1)
	if s.up.Swap(false) {
		s.log.Warn("the shared state (Redis) stopped answering", "op", op, "err", err)
	}
	return fmt.Errorf("%w: %s: %v", ErrUnavailable, op, err)
}

// answered notes that Redis answered.
func (s *Store) answered() {
	if !s.up.Swap(true) {
		s.log.Info("the shared state (Redis) answers", "replica", s.replica)
	}
}

// watch checks Redis and refreshes the shared documents every
// DocPollInterval until Close.
func (s *Store) watch() {
	defer s.wg.Done()
	t := time.NewTicker(DocPollInterval)
	defer t.Stop()
	for {
		s.poll()
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
	}
}

func (s *Store) poll() {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	s.docsMu.Lock()
	docs := make([]*Doc, 0, len(s.docs))
	for _, d := range s.docs {
		docs = append(docs, d)
	}
	s.docsMu.Unlock()
	if len(docs) == 0 {
		if err := s.rdb.Ping(ctx).Err(); err != nil {
			_ = s.unavailable("ping", err)
			return
		}
		s.answered()
		return
	}
	for _, d := range docs {
		if err := d.refresh(ctx); err != nil {
			_ = s.unavailable("refresh "+d.name, err)
			return
		}
	}
	s.answered()
}

// opCtx bounds one Redis operation a call waits for.
func opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, opTimeout)
}

// quiet takes go-redis's own log lines (a failed dial, every retry) to
// slog's debug level: the Store says once, at warn, that Redis stopped
// answering, and once that it answers again.
type quiet struct{ log *slog.Logger }

func (q quiet) Printf(_ context.Context, format string, v ...any) {
	q.log.Debug("redis: " + fmt.Sprintf(format, v...))
}

var quietOnce sync.Once

// Stats are what a Store counted since it opened.
type Stats struct {
	// Takeovers are sessions this replica took over from another.
	Takeovers uint64
	// CheckpointsSaved and CheckpointsRestored count checkpoints;
	// CheckpointErrors those that could not be stored or opened.
	CheckpointsSaved, CheckpointsRestored, CheckpointErrors uint64
	// Unavailable counts operations Redis did not answer.
	Unavailable uint64
}

type counters struct {
	takeovers, saved, restored, ckErrors, unavailable atomic.Uint64
}

// Stats returns the store's counts.
func (s *Store) Stats() Stats {
	return Stats{
		Takeovers:           s.stats.takeovers.Load(),
		CheckpointsSaved:    s.stats.saved.Load(),
		CheckpointsRestored: s.stats.restored.Load(),
		CheckpointErrors:    s.stats.ckErrors.Load(),
		Unavailable:         s.stats.unavailable.Load(),
	}
}
