package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDebugAddrLoopbackOnly: the pprof endpoint shows the server's memory,
// so --debug-addr refuses anything but loopback.
func TestDebugAddrLoopbackOnly(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"serve", "--debug-addr", "0.0.0.0:0", "--lazy", "--isolated", "--data-dir", t.TempDir()}, nil, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "only a loopback address") {
		t.Fatalf("--debug-addr 0.0.0.0:0: code %d %q", code, errb.String())
	}
}

// TestDebugHandlerRefusesRebindingAndCrossOrigin: a web page that rebinds
// its name to 127.0.0.1, or calls from another origin, reads nothing.
func TestDebugHandlerRefusesRebindingAndCrossOrigin(t *testing.T) {
	h := loopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }))
	cases := []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:6060", "", http.StatusOK},
		{"localhost:6060", "", http.StatusOK},
		{"[::1]:6060", "", http.StatusOK},
		{"evil.example:6060", "", http.StatusForbidden},
		{"127.0.0.1:6060", "http://evil.example", http.StatusForbidden},
	}
	for _, c := range cases {
		req := httptest.NewRequest(http.MethodGet, "/debug/pprof/goroutine", nil)
		req.Host = c.host
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("Host %s Origin %q: %d, want %d", c.host, c.origin, rec.Code, c.want)
		}
	}
}
