package testkit

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestGoldenWritesThenCompares(t *testing.T) {
	t.Setenv("UPDATE_SNAPSHOTS", "")
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	t.Setenv(UpdateVar, "1")
	Golden(t, path, []byte("one\n"))
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\n" {
		t.Fatalf("written %q, %v", b, err)
	}
	t.Setenv(UpdateVar, "")
	Golden(t, path, []byte("one\n"))
}

func TestBufferIsSafeForGoroutines(t *testing.T) {
	t.Parallel()
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { _, _ = b.Write([]byte("x")); _ = b.String() })
	}
	wg.Wait()
	if b.String() != strings.Repeat("x", 8) {
		t.Errorf("got %q", b.String())
	}
}

func TestServe(t *testing.T) {
	t.Parallel()
	base := Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }))
	res, err := http.Get(base + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if b, _ := io.ReadAll(res.Body); string(b) != "/hello" {
		t.Errorf("got %q", b)
	}
}

func TestRunStopsAtCleanup(t *testing.T) {
	t.Parallel()
	stopped := make(chan struct{})
	t.Run("inner", func(t *testing.T) {
		Run(t, func(ctx context.Context) error {
			<-ctx.Done()
			close(stopped)
			return nil
		})
	})
	select {
	case <-stopped:
	default:
		t.Error("serve still running after the test ended")
	}
}
