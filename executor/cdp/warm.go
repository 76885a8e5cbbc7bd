package cdp

import (
	"context"

	"github.com/chromegate/chromegate/executor"
)

var _ executor.Warmer = (*Session)(nil)

// Warm opens the session's first tab, as the first call that needs a tab
// would (resolveTab): under load, creating a context's first page (and
// starting its renderer) is the longest part of a session's first call.
// A session that already has a tab is left as it is.
func (s *Session) Warm(ctx context.Context) error {
	_, err := await(ctx, s, "warm", func() (struct{}, error) {
		_, err := s.resolveTab("")
		return struct{}{}, err
	})
	return err
}
