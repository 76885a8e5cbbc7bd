package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

var _ executor.StateStore = (*Session)(nil)

// maxHandoff bounds the state read from the driver: larger than any state
// file chromegate keeps (statefile.MaxSize), so a state too large to keep
// is refused there, by size, not cut here.
const maxHandoff = 64 << 20

// StorageState reads the context's storage state through Playwright's own
// storageState: cookies, and the localStorage (and IndexedDB when asked)
// of every origin the context visited, read from its open pages or, for
// origins no page shows, from a page of Playwright's that it routes to a
// blank document (no request leaves the browser) and closes.
//
// playwright-go decodes the state into structs without IndexedDB; with a
// path it writes the driver's reply as it came, so the reply goes to a
// path of the server's (takeFromDriver: a named pipe, not a file).
func (s *Session) StorageState(ctx context.Context, p executor.StorageStateParams) (executor.StorageState, error) {
	return await(ctx, s, "state_save", func() (executor.StorageState, error) {
		var st executor.StorageState
		dir, err := s.b.scratchDir()
		if err != nil {
			return st, executor.Errorf(executor.CodeInternal, "storage state: %v", err)
		}
		var pwErr error
		raw, err := takeFromDriver(dir, func(path string) error {
			_, pwErr = s.bctx.StorageState(playwright.BrowserContextStorageStateOptions{
				IndexedDB: playwright.Bool(p.IndexedDB), Path: playwright.String(path),
			})
			return pwErr
		})
		if pwErr != nil {
			return st, s.mapErr("state_save", pwErr)
		}
		if err != nil {
			return st, executor.Errorf(executor.CodeInternal, "storage state from the driver: %v", err)
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return st, executor.Errorf(executor.CodeInternal, "storage state from the driver: %v", err)
		}
		return st, nil
	})
}

// SetStorageState makes st the context's state with Playwright's
// setStorageState, which reads a path: st (already decided by the caller)
// is handed over through a named pipe (giveToDriver). Playwright clears
// the context's cookies, adds st's, and for each origin (st's and those the
// context visited) restores the origin's storage in a page of its own that
// it routes to a blank document and closes: no tab of the caller's moves
// and no request is sent.
func (s *Session) SetStorageState(ctx context.Context, st executor.StorageState) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return executor.Errorf(executor.CodeInternal, "storage state: %v", err)
	}
	_, err = await(ctx, s, "state_load", func() (struct{}, error) {
		dir, err := s.b.scratchDir()
		if err != nil {
			return struct{}{}, executor.Errorf(executor.CodeInternal, "storage state: %v", err)
		}
		var pwErr error
		err = giveToDriver(dir, raw, func(path string) error {
			pwErr = s.bctx.SetStorageState(path)
			return pwErr
		})
		if pwErr != nil {
			return struct{}{}, s.mapErr("state_load", pwErr)
		}
		if err != nil {
			return struct{}{}, executor.Errorf(executor.CodeInternal, "storage state to the driver: %v", err)
		}
		return struct{}{}, nil
	})
	return err
}

// scratchDir is a directory of the data dir that only this user can open,
// for the paths the driver reads and writes storage state through.
func (b *Backend) scratchDir() (string, error) {
	dir := filepath.Join(b.opts.DataDir, "scratch")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", fmt.Errorf("scratch dir %s is open to others: %w", dir, err)
		}
	}
	return dir, nil
}
