package realapps

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MariaDBD is Debian's MariaDB server (10.11).
const MariaDBD = "/usr/sbin/mariadbd"

// mariaDB is a throw-away MariaDB server: its data directory, socket and
// port are the run's (nothing of /etc/mysql is read, no system service is
// started, nothing listens on the default port). Its root has no password
// and is reached through the socket only; applications connect over TCP
// on 127.0.0.1 as their own user.
type mariaDB struct {
	sock string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// mariaDBArgs are the server's settings, for the data directory's
// creation and for the server: small, for a throw-away database of a few
// megabytes, and no host names looked up.
var mariaDBArgs = []string{"--skip-name-resolve", "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=8M"}

// startMariaDB creates a data directory in the application's, starts a
// server on it (logging to the application's log, stopped by its Close),
// and waits until it answers.
func (app *App) startMariaDB(ctx context.Context) (*mariaDB, error) {
	dir := app.Dir
	data := filepath.Join(dir, "mariadb")
	m := &mariaDB{sock: filepath.Join(dir, "mariadb.sock"), done: make(chan struct{})}
	// A Unix socket's path is at most 107 bytes.
	if len(m.sock) > 100 {
		return nil, fmt.Errorf("mariadb: socket path %s is too long", m.sock)
	}
	var user []string
	if os.Geteuid() == 0 {
		// mariadbd refuses to run as root unless told to.
		user = []string{"--user=root"}
	}
	install := append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"}, user...)
	if _, err := run(ctx, dir, "/usr/bin/mariadb-install-db", append(install, mariaDBArgs...)...); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	m.port = port
	args := append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + m.sock, "--port=" + strconv.Itoa(port),
		"--bind-address=127.0.0.1", "--pid-file=" + filepath.Join(dir, "mariadb.pid"), "--tmpdir=" + dir,
		// Commits written at once, flushed to disk every second: a crash
		// of a throw-away database loses nothing anyone keeps.
		"--innodb-flush-log-at-trx-commit=2"}, user...)
	m.cmd = exec.Command(MariaDBD, append(args, mariaDBArgs...)...)
	m.cmd.Dir = dir
	m.cmd.Stdout, m.cmd.Stderr = &app.log, &app.log
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := m.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", MariaDBD, err)
	}
	go func() { _ = m.cmd.Wait(); close(m.done) }()
	app.stops = append(app.stops, m.stop)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := m.query(ctx, "", "SELECT 1")
		if err == nil {
			return m, nil
		}
		select {
		case <-m.done:
			return nil, fmt.Errorf("mariadbd exited: %v", err)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("mariadbd did not answer on %s: %v", m.sock, err)
		}
	}
}

// query runs SQL as root in database db (none if empty) with Debian's
// mariadb client and returns its rows, one a line, columns joined by tabs.
func (m *mariaDB) query(ctx context.Context, db, sql string) (string, error) {
	args := []string{"--no-defaults", "--socket=" + m.sock, "--user=root", "--batch", "--skip-column-names", "--raw", "--execute=" + sql}
	if db != "" {
		args = append(args, db)
	}
	out, err := run(ctx, filepath.Dir(m.sock), "/usr/bin/mariadb", args...)
	return strings.TrimSpace(out), err
}

// stop shuts the server down (SIGTERM: it flushes and exits), or kills
// it after 20 seconds.
func (m *mariaDB) stop() {
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(20 * time.Second):
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-m.done
	}
}
