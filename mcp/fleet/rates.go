package fleet

import (
	"context"
	"math"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// Take charges one call to the rate limit id, of perMin calls a minute
// with a burst of burst: the generic cell rate algorithm of redis_rate,
// run in Redis by one script, so every replica charges the same bucket
// and the clock that counts is Redis's own (the replicas' clocks may
// differ). It returns how long until the next call is allowed when this
// one is not, and an error wrapping ErrUnavailable when Redis does not
// answer: the caller refuses the call then.
//
// The limit holds across replicas exactly: each charge is one atomic
// script, so N replicas together allow burst calls at once and perMin a
// minute after that, as one process would.
func (s *Store) Take(ctx context.Context, id string, perMin float64, burst int) (time.Duration, bool, error) {
	ctx, cancel := opCtx(ctx)
	defer cancel()
	// Every rate a key can have (N/s, N/min, N/h) is a whole number an
	// hour.
	perHour := max(1, int(math.Round(perMin*60)))
	res, err := s.limiter.Allow(ctx, s.prefix+id, redis_rate.Limit{Rate: perHour, Period: time.Hour, Burst: max(1, burst)})
	if err != nil {
		return 0, false, s.unavailable("rate limit", err)
	}
	s.answered()
	if res.Allowed == 0 {
		return max(res.RetryAfter, time.Millisecond), false, nil
	}
	return 0, true, nil
}
