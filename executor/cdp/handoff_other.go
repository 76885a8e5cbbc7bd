//go:build !(linux || darwin)

package cdp

import (
	"io"
	"os"
)

// Without named pipes the state goes through a file of the server's
// scratch directory (mode 0600 in a 0700 directory), removed at once.

func takeFromDriver(dir string, produce func(path string) error) ([]byte, error) {
	f, err := os.CreateTemp(dir, "state-*.json")
	if err != nil {
		return nil, err
	}
	path := f.Name()
	f.Close()
	defer os.Remove(path)
	if err := produce(path); err != nil {
		return nil, err
	}
	r, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(io.LimitReader(r, maxHandoff))
}

func giveToDriver(dir string, data []byte, consume func(path string) error) error {
	f, err := os.CreateTemp(dir, "state-*.json")
	if err != nil {
		return err
	}
	path := f.Name()
	defer os.Remove(path)
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return werr
	}
	return consume(path)
}
