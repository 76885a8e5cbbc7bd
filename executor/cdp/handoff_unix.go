//go:build linux || darwin

package cdp

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The driver takes and gives storage state only as files (playwright-go's
// storageState with a path is the only way to get IndexedDB back;
// setStorageState reads a path). A named pipe in the server's scratch
// directory is such a path that keeps the state off the disk: the state
// passes through the kernel's pipe buffer, never a file's blocks, so the
// origins the policy then refuses are never written anywhere.

// takeFromDriver runs produce with the path of a pipe the driver writes
// one JSON value to, and returns that value.
func takeFromDriver(dir string, produce func(path string) error) ([]byte, error) {
	path, cleanup, err := makeFIFO(dir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	// Opened read-write, the pipe always has a writer (us), so neither
	// this open nor the driver's blocks; the value is read to its end by
	// a decoder, not to an EOF that would never come.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	type result struct {
		raw json.RawMessage
		err error
	}
	got := make(chan result, 1)
	go func() {
		var raw json.RawMessage
		err := json.NewDecoder(io.LimitReader(f, maxHandoff)).Decode(&raw)
		got <- result{raw, err}
	}()
	if err := produce(path); err != nil {
		f.Close() // ends the reader
		<-got
		return nil, err
	}
	r := <-got
	f.Close()
	return r.raw, r.err
}

// giveToDriver runs consume with the path of a pipe from which the driver
// reads data, whole, to its end.
func giveToDriver(dir string, data []byte, consume func(path string) error) error {
	path, cleanup, err := makeFIFO(dir)
	if err != nil {
		return err
	}
	defer cleanup()
	wrote := make(chan error, 1)
	go func() {
		// Blocks until the driver opens the pipe to read it.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			wrote <- err
			return
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		wrote <- err
	}()
	cerr := consume(path)
	if cerr == nil {
		// The driver read the pipe to its end: the writer is done.
		return <-wrote
	}
	// The driver failed, perhaps before it opened the pipe: be its reader
	// until the writer gives up (a writer that opens after a reader left
	// finds none and fails).
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-wrote:
			return cerr
		default:
		}
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			_, _ = io.Copy(io.Discard, r)
			r.Close()
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cerr
}

func makeFIFO(dir string) (string, func(), error) {
	tmp, err := os.MkdirTemp(dir, "handoff-")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(tmp, "state.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	return path, func() { os.RemoveAll(tmp) }, nil
}
