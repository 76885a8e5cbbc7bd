package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The session directory: for each session that outlives an MCP session (a
// minted handle, a named context), which replica holds its browser
// context, which principal it belongs to and when it was last used. An
// entry expires after its idle time without use, as the session does.
// Minted handles are also counted per principal, across replicas, for the
// principal's session limit.

// Entry is a session's line in the directory.
type Entry struct {
	Owner     string    // the replica holding its browser context
	Principal string    // whose it is
	Last      time.Time // last used
}

func (s *Store) sessKey(session string) string {
	sum := sha256.Sum256([]byte(session))
	return s.prefix + "sess:" + hex.EncodeToString(sum[:16])
}

func (s *Store) handlesKey(principal string) string {
	return s.prefix + "handles:" + principal
}

func sessMember(session string) string {
	sum := sha256.Sum256([]byte(session))
	return hex.EncodeToString(sum[:16])
}

// mintScript adds a handle for a principal unless the principal has max
// live handles already: KEYS[1] the principal's handle set, KEYS[2] the
// session's entry; ARGV: member, now ms, idle ms, max, owner, principal.
// It returns the count of live handles before the mint, and 1 if minted.
var mintScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[2]) - tonumber(ARGV[3]))
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[4]) then return {n, 0} end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('HSET', KEYS[2], 'owner', ARGV[5], 'principal', ARGV[6], 'last', ARGV[2], 'handle', '1')
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return {n, 1}
`)

// Mint records a new handle session for principal, owned by this replica,
// unless principal has max live handles across the fleet (less the
// others, such as its MCP sessions on this replica, already counted in
// max by the caller). It returns the live handles counted.
func (s *Store) Mint(ctx context.Context, session, principal string, max int, idle time.Duration) (int, bool, error) {
	ctx, cancel := opCtx(ctx)
	defer cancel()
	now := time.Now().UnixMilli()
	res, err := mintScript.Run(ctx, s.rdb, []string{s.handlesKey(principal), s.sessKey(session)},
		sessMember(session), now, idle.Milliseconds(), max, s.replica, principal).Int64Slice()
	if err != nil {
		return 0, false, s.unavailable("mint a session", err)
	}
	s.answered()
	return int(res[0]), res[1] == 1, nil
}

// visitScript marks a session used and returns its entry (another
// principal's is returned untouched): KEYS[1] the
// entry, KEYS[2] its principal's handle set; ARGV: now ms, idle ms,
// member, owner to set when there is no entry ("" to set none). It
// returns {owner, principal, created} or an empty list.
var visitScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[4] == '' then return {} end
  redis.call('HSET', KEYS[1], 'owner', ARGV[4], 'principal', ARGV[5], 'last', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {ARGV[4], ARGV[5], '1'}
end
local e = redis.call('HMGET', KEYS[1], 'owner', 'principal', 'handle')
if e[2] ~= ARGV[5] then return {e[1], e[2], '0'} end
redis.call('HSET', KEYS[1], 'last', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if e[3] == '1' then
  redis.call('ZADD', KEYS[2], 'XX', ARGV[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return {e[1], e[2], '0'}
`)

// Visit marks session used now and returns its entry. When it has none,
// and create names a principal, an entry owned by this replica is made
// for it (a named context, which any replica may start); otherwise Visit
// reports false.
func (s *Store) Visit(ctx context.Context, session, principal string, idle time.Duration, create bool) (Entry, bool, error) {
	ctx, cancel := opCtx(ctx)
	defer cancel()
	owner := ""
	if create {
		owner = s.replica
	}
	now := time.Now()
	res, err := visitScript.Run(ctx, s.rdb, []string{s.sessKey(session), s.handlesKey(principal)},
		now.UnixMilli(), idle.Milliseconds(), sessMember(session), owner, principal).StringSlice()
	if err != nil {
		return Entry{}, false, s.unavailable("visit a session", err)
	}
	s.answered()
	if len(res) < 2 {
		return Entry{}, false, nil
	}
	return Entry{Owner: res[0], Principal: res[1], Last: now}, true, nil
}

// Adopt makes this replica the owner of session: the replica that held it
// is gone, or the load balancer sent its calls here.
func (s *Store) Adopt(ctx context.Context, session string) error {
	ctx, cancel := opCtx(ctx)
	defer cancel()
	if err := s.rdb.HSet(ctx, s.sessKey(session), "owner", s.replica).Err(); err != nil {
		return s.unavailable("adopt a session", err)
	}
	s.answered()
	s.stats.takeovers.Add(1)
	return nil
}

// Forget removes session from the directory, its principal's handles and
// its checkpoint: it was closed.
func (s *Store) Forget(ctx context.Context, session, principal string) error {
	ctx, cancel := opCtx(ctx)
	defer cancel()
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, s.sessKey(session), s.checkpointKey(session))
		p.ZRem(ctx, s.handlesKey(principal), sessMember(session))
		return nil
	})
	if err != nil {
		return s.unavailable("forget a session", err)
	}
	s.answered()
	return nil
}

// Lookup is session's entry, if it has one, without marking it used.
func (s *Store) Lookup(ctx context.Context, session string) (Entry, bool, error) {
	ctx, cancel := opCtx(ctx)
	defer cancel()
	m, err := s.rdb.HGetAll(ctx, s.sessKey(session)).Result()
	if errors.Is(err, redis.Nil) || err == nil && len(m) == 0 {
		return Entry{}, false, nil
	}
	if err != nil {
		return Entry{}, false, s.unavailable("look a session up", err)
	}
	var ms int64
	if _, err := fmt.Sscan(m["last"], &ms); err != nil {
		ms = 0
	}
	return Entry{Owner: m["owner"], Principal: m["principal"], Last: time.UnixMilli(ms)}, true, nil
}
