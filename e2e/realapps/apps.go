package realapps

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
)

// PHP is Debian's PHP command line, which serves the applications with its
// built-in web server (no Apache, no port 80, no root).
const PHP = "/usr/bin/php"

// App is one running application with throw-away data.
type App struct {
	Name string
	// URL is the application's base, http://127.0.0.1:PORT.
	URL string
	// Dir holds its data: a database, its configuration, its pages.
	Dir   string
	Tasks []Task
	srv   *exec.Cmd
	log   testkit.Buffer
	// stops stop what the application needs besides its server (a
	// database server), after the server.
	stops []func()
	// db is the application's database server, if it has one of its own.
	db *mariaDB
}

// Task is one multi-step thing a user does in the application: Run drives
// the agent, Check looks for the outcome in the application's own database
// or files.
type Task struct {
	Name string
	// Short: the task is in the short set CI runs.
	Short bool
	Run   func(ctx context.Context, a *Agent, app *App) error
	Check func(ctx context.Context, app *App) error
}

// Close stops the application's server, then what it needs (its database
// server). Dir is the caller's to remove.
func (app *App) Close() {
	if app.srv != nil && app.srv.Process != nil {
		// The server's workers are its children, in its process group:
		// stop them all, or they keep its output pipe open.
		_ = syscall.Kill(-app.srv.Process.Pid, syscall.SIGKILL)
		_ = app.srv.Wait()
	}
	for i := len(app.stops) - 1; i >= 0; i-- {
		app.stops[i]()
	}
	app.stops = nil
}

// Log is the built-in server's output, for a failing test to show.
func (app *App) Log() string { return app.log.String() }

// Missing names the Debian packages a suite needs and this machine lacks.
func Missing() []string {
	var out []string
	for pkg, path := range map[string]string{
		"php-cli":     PHP,
		"php-sqlite3": "/usr/share/php8.2-sqlite3",
		"mediawiki":   "/usr/share/mediawiki/maintenance/install.php",
		"dokuwiki":    "/usr/share/dokuwiki/doku.php",
		"sqlite3":     "/usr/bin/sqlite3",

		// WordPress, its theme, and its database: MariaDB's server and
		// client without a system service.
		"wordpress":                         "/usr/share/wordpress/wp-settings.php",
		"wordpress-theme-twentytwentythree": "/usr/share/wordpress/wp-content/themes/twentytwentythree/theme.json",
		"php-mysql":                         "/usr/share/php8.2-mysql",
		"mariadb-server-core":               MariaDBD,
		"mariadb-client-core":               "/usr/bin/mariadb",
	} {
		if _, err := os.Stat(path); err != nil {
			out = append(out, pkg)
		}
	}
	return out
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// serve starts PHP's built-in server on docroot (with router, if set) and
// waits until path answers.
func (app *App) serve(ctx context.Context, port int, docroot, router, path string, env ...string) error {
	args := []string{"-S", fmt.Sprintf("127.0.0.1:%d", port), "-t", docroot}
	if router != "" {
		args = append(args, router)
	}
	app.srv = exec.Command(PHP, args...)
	app.srv.Dir = app.Dir
	// Several workers: a page loads its scripts and styles side by side.
	app.srv.Env = append(os.Environ(), append([]string{"PHP_CLI_SERVER_WORKERS=4"}, env...)...)
	app.srv.Stdout, app.srv.Stderr = &app.log, &app.log
	app.srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	app.srv.WaitDelay = 5 * time.Second
	if err := app.srv.Start(); err != nil {
		return fmt.Errorf("start %s: %w", PHP, err)
	}
	app.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", app.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s did not answer on %s: %v\n%s", app.Name, app.URL+path, err, app.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// sqlite runs a query on a database with Debian's sqlite3 and returns its
// rows, one a line, columns joined by |.
func sqlite(ctx context.Context, db, query string) (string, error) {
	// The application may be writing: wait for its lock, and try again
	// if the lock outlasts the wait.
	var out string
	var err error
	for range 5 {
		out, err = run(ctx, filepath.Dir(db), "/usr/bin/sqlite3", "-readonly", "-cmd", ".timeout 10000", db, query)
		if err == nil || !strings.Contains(out, "locked") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return strings.TrimSpace(out), err
}

var errOutcome = errors.New("outcome not found")

// want fails unless got holds every one of the strings.
func want(what, got string, subs ...string) error {
	for _, s := range subs {
		if !strings.Contains(got, s) {
			return fmt.Errorf("%w: %s: %q lacks %q", errOutcome, what, cut(got, 400), s)
		}
	}
	return nil
}

func runEnv(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
