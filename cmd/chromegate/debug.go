package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/chromegate/chromegate/mcp/httpapi"
)

// startDebug serves Go's pprof handlers (/debug/pprof/: goroutines, heap,
// profiles) on addr, which must be a loopback address: the load and fault
// suites count the server's goroutines through it before and after a soak.
// It stops when ctx ends. An empty addr serves nothing. A server with the
// endpoint also records the block and mutex profiles (debugprof.go).
func startDebug(ctx context.Context, addr string, log *slog.Logger) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--debug-addr %q: %w", addr, err)
	}
	if !httpapi.IsLoopback(host) {
		return fmt.Errorf("--debug-addr %s: only a loopback address is allowed (the profiles show the server's memory)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--debug-addr: %w", err)
	}
	contentionProfiles()
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	serveAside(ctx, ln, loopbackOnly(mux), "debug endpoint (pprof)", log)
	return nil
}

// serveAside serves h on ln until ctx ends: a side listener of the server
// (pprof, metrics), whose failure is logged and stops nothing else.
func serveAside(ctx context.Context, ln net.Listener, h http.Handler, what string, log *slog.Logger) {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn(what+" stopped", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	log.Info(what+" listening", "addr", ln.Addr().String())
}

// loopbackOnly refuses requests whose Host is not a loopback name, so a web
// page cannot read the profiles through DNS rebinding.
func loopbackOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !httpapi.IsLoopback(host) {
			http.Error(w, "forbidden host", http.StatusForbidden)
			return
		}
		if r.Header.Get("Origin") != "" {
			http.Error(w, "cross-origin requests are refused", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
