package testkit

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Redis is a real redis-server (Debian's) on a loopback port, with a
// password and its data in an append-only file in a temporary dir, living
// as long as the test. Stop and Start take it down and up again on the
// same port with the same data, as a restarted Redis of a fleet would be.
type Redis struct {
	t        testing.TB
	Port     int
	Password string
	dir      string
	cmd      *exec.Cmd
}

// RedisServer is the path of redis-server; the tests that need it fail
// when it is missing and CI=true (make deps installs it), and skip
// otherwise.
const RedisServer = "/usr/bin/redis-server"

// StartRedis starts a redis-server for t.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	if _, err := os.Stat(RedisServer); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is missing (%v): run make fleet-deps", err)
		}
		t.Skipf("redis-server is missing (%v): run make fleet-deps", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &Redis{t: t, Port: port, Password: "pw-" + strings.ReplaceAll(t.Name(), "/", "-"), dir: t.TempDir()}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// URL is the redis:// URL of the server, password included.
func (r *Redis) URL() string {
	return fmt.Sprintf("redis://:%s@127.0.0.1:%d/0", r.Password, r.Port)
}

// Start starts the server (again) and waits until it answers.
func (r *Redis) Start() {
	r.t.Helper()
	if r.cmd != nil {
		return
	}
	cmd := exec.Command(RedisServer, "--port", fmt.Sprint(r.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--requirepass", r.Password, "--dir", r.dir,
		"--logfile", filepath.Join(r.dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		r.t.Fatalf("redis-server: %v", err)
	}
	r.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for {
		if r.ping() {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			r.t.Fatalf("redis-server did not answer on %d:\n%s", r.Port, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *Redis) ping() bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", r.Port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(c, "AUTH %s\r\nPING\r\n", r.Password)
	br := bufio.NewReader(c)
	a, _ := br.ReadString('\n')
	b, _ := br.ReadString('\n')
	return strings.HasPrefix(a, "+OK") && strings.HasPrefix(b, "+PONG")
}

// Stop stops the server (its data stays in its dir).
func (r *Redis) Stop() {
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(os.Interrupt)
	_ = r.cmd.Wait()
	r.cmd = nil
}
