package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// Defaults of a rotating decision log: 100 MB a file and five old files
// kept, so the log of a server that runs for months takes at most 600 MB.
const (
	DefaultDecisionLogMaxBytes = 100 << 20
	DefaultDecisionLogKeep     = 5
)

// RotatingLog is a decision log that rotates at a size: when a line would
// take the file past maxBytes, the file becomes path.1 (path.1 becomes
// path.2, and so on; path.keep is the oldest and is overwritten) and a new
// file is opened at path, with the same checks as OpenDecisionLog. A line
// is never split across files. It is safe for concurrent use; Close may
// be called more than once.
type RotatingLog struct {
	mu       sync.Mutex
	path     string
	maxBytes int64
	keep     int
	f        *os.File
	size     int64
}

// OpenRotatingDecisionLog opens path as OpenDecisionLog does, rotating it
// at maxBytes and keeping keep old files (zero keeps none: the log starts
// over). A maxBytes of zero or less never rotates.
func OpenRotatingDecisionLog(path string, maxBytes int64, keep int) (*RotatingLog, error) {
	if keep < 0 {
		return nil, fmt.Errorf("decision log: keep %d must not be negative", keep)
	}
	f, size, err := openDecisionFile(path)
	if err != nil {
		return nil, err
	}
	return &RotatingLog{path: path, maxBytes: maxBytes, keep: keep, f: f, size: size}, nil
}

// Write appends p, rotating first when p would take the file past the size.
func (r *RotatingLog) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, fs.ErrClosed
	}
	if r.maxBytes > 0 && r.size > 0 && r.size+int64(len(p)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// rotate shifts the old files up by one and opens a new file at path.
func (r *RotatingLog) rotate() error {
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("decision log: %w", err)
	}
	r.f = nil
	for i := r.keep - 1; i >= 1; i-- {
		if err := os.Rename(r.old(i), r.old(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("decision log: rotate: %w", err)
		}
	}
	var err error
	if r.keep > 0 {
		err = os.Rename(r.path, r.old(1))
	} else {
		err = os.Remove(r.path)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("decision log: rotate: %w", err)
	}
	f, size, err := openDecisionFile(r.path)
	if err != nil {
		return err
	}
	r.f, r.size = f, size
	return nil
}

func (r *RotatingLog) old(i int) string { return fmt.Sprintf("%s.%d", r.path, i) }

// Close closes the file.
func (r *RotatingLog) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
