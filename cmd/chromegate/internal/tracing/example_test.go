package tracing_test

import (
	"context"
	"log"

	"github.com/chromegate/chromegate/cmd/chromegate/internal/tracing"
	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/policy/gate/gatetest"
)

// A server whose calls are traced to a collector on this machine: the
// Tracer makes the calls' spans and, wrapping the gate, their decisions'.
func Example() {
	ctx := context.Background()
	t, err := tracing.New(ctx, tracing.Options{Endpoint: "http://127.0.0.1:4318", SampleRatio: 0.25, Version: "example"})
	if err != nil {
		log.Fatal(err)
	}
	defer t.Shutdown(ctx) // exports what is queued
	mgr := executor.NewManager(executor.ManagerOptions{})
	defer mgr.Close()
	_, err = mcp.NewServer(mcp.Options{Manager: mgr, Gate: t.Decider(gatetest.AllowAll), Tracer: t})
	if err != nil {
		log.Fatal(err)
	}
}
