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

// StorageState reads the context's storage state through Playwright's own
// storageState: cookies, and the localStorage (and IndexedDB when asked)
// of every origin the context visited, read from its open pages or, for
// origins no page shows, from a page of Playwright's that it routes to a
// blank document (no request leaves the browser) and closes.
//
// playwright-go decodes the state into structs without IndexedDB; with a
// path it writes the driver's reply as it came. So the reply goes to a
// file of the session's own, in a directory only the server can read, and
// is read back and removed at once.
func (s *Session) StorageState(ctx context.Context, p executor.StorageStateParams) (executor.StorageState, error) {
	return await(ctx, s, "state_save", func() (executor.StorageState, error) {
		var st executor.StorageState
		dir, err := s.b.scratchDir()
		if err != nil {
			return st, executor.Errorf(executor.CodeInternal, "storage state: %v", err)
		}
		f, err := os.CreateTemp(dir, "state-*.json")
		if err != nil {
			return st, executor.Errorf(executor.CodeInternal, "storage state: %v", err)
		}
		path := f.Name()
		f.Close()
		defer os.Remove(path)
		if _, err := s.bctx.StorageState(playwright.BrowserContextStorageStateOptions{
			IndexedDB: playwright.Bool(p.IndexedDB), Path: playwright.String(path),
		}); err != nil {
			return st, s.mapErr("state_save", err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return st, executor.Errorf(executor.CodeInternal, "storage state: %v", err)
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return st, executor.Errorf(executor.CodeInternal, "storage state from the driver: %v", err)
		}
		return st, nil
	})
}

// SetStorageState makes st the context's state with Playwright's
// setStorageState, which takes a file: st (already decided by the caller)
// is written to one in the server's scratch directory and removed once the
// driver has read it. Playwright clears the context's cookies, adds st's,
// and for each origin (st's and those the context visited) restores the
// origin's storage in a page of its own that it routes to a blank document
// and closes: no tab of the caller's moves and no request is sent.
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
		f, err := os.CreateTemp(dir, "state-*.json")
		if err != nil {
			return struct{}{}, executor.Errorf(executor.CodeInternal, "storage state: %v", err)
		}
		path := f.Name()
		defer os.Remove(path)
		_, werr := f.Write(raw)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return struct{}{}, executor.Errorf(executor.CodeInternal, "storage state: %v", werr)
		}
		if err := s.bctx.SetStorageState(path); err != nil {
			return struct{}{}, s.mapErr("state_load", err)
		}
		return struct{}{}, nil
	})
	return err
}

// scratchDir is a directory of the data dir that only this user can open,
// for files the driver must read or write (storage state in flight).
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
