package cdp

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// The storage state passes between the server and the driver through a
// path that is not a file: what the driver writes there (as playwright-go
// does, os.Create and one JSON value) comes back whole, what the server
// gives is read whole, nothing is left in the directory, and a driver
// that fails before touching the path blocks nothing.
func TestHandoff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := strings.Repeat("v", 1<<20) // more than a pipe's buffer
	raw, err := takeFromDriver(dir, func(path string) error {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := json.NewEncoder(f).Encode(map[string]string{"big": big}); err != nil {
			return err
		}
		return f.Close()
	})
	var got map[string]string
	if err != nil || json.Unmarshal(raw, &got) != nil || got["big"] != big {
		t.Fatalf("take: %v (%d bytes)", err, len(raw))
	}
	boom := errors.New("driver failed")
	done := make(chan error, 1)
	go func() {
		_, err := takeFromDriver(dir, func(string) error { return boom })
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Errorf("take after a failure: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("take blocked after the driver failed")
	}

	data := []byte(`{"cookies":[],"big":"` + big + `"}`)
	var read []byte
	if err := giveToDriver(dir, data, func(path string) error {
		var err error
		read, err = os.ReadFile(path)
		return err
	}); err != nil || string(read) != string(data) {
		t.Fatalf("give: %v (%d bytes read)", err, len(read))
	}
	go func() { done <- giveToDriver(dir, data, func(string) error { return boom }) }()
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Errorf("give after a failure: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("give blocked after the driver failed")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left in the scratch dir: %v", ents)
	}
}
