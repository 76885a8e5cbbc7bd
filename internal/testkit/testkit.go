// Package testkit is the test support every package's tests share: golden
// files rewritten on purpose by one variable (UPDATE_GOLDEN=1), a buffer many
// goroutines may write, and servers on a loopback port that live as long as
// the test.
//
// It imports nothing of chromegate (only the MCP Go SDK's types), so any package's tests, including a
// package's own internal tests, can use it without an import cycle.
package testkit

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// UpdateVar is the environment variable that, set to 1, makes Golden write
// the golden files instead of comparing with them.
const UpdateVar = "UPDATE_GOLDEN"

// retired are the names the update variable had before; setting one fails
// the test rather than silently comparing.
var retired = []string{"UPDATE_SNAPSHOTS"}

// Updating reports whether this run rewrites golden files (UPDATE_GOLDEN=1).
// A retired name of the variable fails the test: a run meant to rewrite the
// files must not pass by comparing them.
func Updating(t testing.TB) bool {
	t.Helper()
	for _, old := range retired {
		if os.Getenv(old) != "" {
			t.Fatalf("%s is retired: rewrite golden files with %s=1", old, UpdateVar)
		}
	}
	return os.Getenv(UpdateVar) == "1"
}

// Golden compares got with the golden file at path, or with UPDATE_GOLDEN=1
// writes got there (making its directory). A missing or different file is a
// test error naming the file and the way to rewrite it; the test goes on, so
// a loop over golden files reports every one that differs.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if Updating(t) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("no golden file (run with %s=1 to write it): %v", UpdateVar, err)
		return
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("differs from %s (-golden +now); if intended, rerun with %s=1:\n%s", path, UpdateVar, diff)
	}
}

// Buffer is a bytes.Buffer that many goroutines may write and read: a
// process's stderr and the test reading it, a logger shared by handlers.
// The zero value is ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Listen listens on a free port of 127.0.0.1 until the test ends: tests
// talk only to loopback.
func Listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}

// Run runs serve in a goroutine until the test ends; then it cancels serve's
// context and waits for it to return, so nothing it started outlives the
// test. An error serve returns fails the test.
func Run(t testing.TB, serve func(ctx context.Context) error) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
}

// Serve serves h on a free port of 127.0.0.1 until the test ends and returns
// its base URL ("http://127.0.0.1:port"). Unlike httptest.Server it is a
// plain http.Server with a header timeout, closed without waiting for
// connections a browser may keep open.
func Serve(t testing.TB, h http.Handler) string {
	t.Helper()
	ln := Listen(t)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// TextOf joins the text contents of an MCP tool result, one per line.
func TextOf(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ReadFile returns a fixture file's contents; it panics when the file is
// missing, which every test of the package then reports.
func ReadFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		panic("testkit: " + err.Error())
	}
	return string(b)
}
