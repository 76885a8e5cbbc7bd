package fleet

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNoCheckpoints is returned by the checkpoint methods of a Store
// without a checkpoint key.
var ErrNoCheckpoints = errors.New("this fleet keeps no checkpoints: serve has no checkpoint key")

func (s *Store) checkpointKey(session string) string {
	return s.prefix + "ckpt:" + sessMember(session)
}

// SaveCheckpoint seals plain (a session's state) and stores it as
// session's checkpoint, kept for idle after its last save.
func (s *Store) SaveCheckpoint(ctx context.Context, session string, plain []byte, idle time.Duration) error {
	if s.aead == nil {
		return ErrNoCheckpoints
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read does not fail
	sealed := s.aead.Seal(nonce, nonce, plain, []byte(session))
	ctx, cancel := opCtx(ctx)
	defer cancel()
	if err := s.rdb.Set(ctx, s.checkpointKey(session), sealed, idle).Err(); err != nil {
		s.stats.ckErrors.Add(1)
		return s.unavailable("save a checkpoint", err)
	}
	s.answered()
	s.stats.saved.Add(1)
	return nil
}

// LoadCheckpoint opens session's checkpoint, if it has one. A checkpoint
// that does not open under this store's key, or for this session, is an
// error (not found is false, nil).
func (s *Store) LoadCheckpoint(ctx context.Context, session string) ([]byte, bool, error) {
	if s.aead == nil {
		return nil, false, ErrNoCheckpoints
	}
	ctx, cancel := opCtx(ctx)
	defer cancel()
	sealed, err := s.rdb.Get(ctx, s.checkpointKey(session)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		s.stats.ckErrors.Add(1)
		return nil, false, s.unavailable("load a checkpoint", err)
	}
	s.answered()
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		s.stats.ckErrors.Add(1)
		return nil, false, errors.New("the checkpoint is too short to be one")
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(session))
	if err != nil {
		s.stats.ckErrors.Add(1)
		return nil, false, fmt.Errorf("the checkpoint does not open with this replica's key (another key, or not this session's): %w", err)
	}
	s.stats.restored.Add(1)
	return plain, true, nil
}
