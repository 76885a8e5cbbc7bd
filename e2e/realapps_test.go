package e2e

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/e2e/realapps"
	"github.com/chromegate/chromegate/internal/testkit"
)

// TestRealApps drives real applications from Debian packages (MediaWiki on
// SQLite, DokuWiki on files, WordPress on MariaDB) with a scripted agent
// that sees only the outline, finds controls by role and name and acts by
// ref; each task's outcome is checked in the application's database or
// files. CI runs the short set (MediaWiki: log in, create a page from
// search; DokuWiki: log in, create a page; WordPress: log in, change the
// site title) with changes on; CHROMEGATE_REALAPPS=full (make realapps) runs every
// task, with changes and on the snapshot fallback.
func TestRealApps(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	if missing := realapps.Missing(); len(missing) > 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real applications missing: %s (make realapps-deps installs them)", strings.Join(missing, ", "))
		}
		t.Skipf("real applications missing: %s (make realapps-deps installs them)", strings.Join(missing, ", "))
	}
	short := os.Getenv("CHROMEGATE_REALAPPS") != "full"
	for _, start := range []struct {
		name string
		fn   func(context.Context, string) (*realapps.App, error)
	}{
		{"mediawiki", realapps.StartMediaWiki},
		{"dokuwiki", realapps.StartDokuWiki},
		{"wordpress", realapps.StartWordPress},
	} {
		// The short set runs in the changes mode (the default: the agent
		// reads acting calls' changes and outlines, as the bench does);
		// make realapps adds the snapshot fallback (a snapshot after
		// every act).
		modes := []bool{true}
		if !short {
			modes = append(modes, false)
		}
		for _, deltas := range modes {
			mode := "snapshot"
			if deltas {
				mode = "changes"
			}
			t.Run(start.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
				defer cancel()
				app, err := start.fn(ctx, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				defer app.Close()
				s := startServer(t, "--allow-domain=127.0.0.1", "--enable-mutations")
				// snapshot: a snapshot call after every act (the fallback);
				// changes: the acting results' changes and outlines.
				res := realapps.Run(ctx, app, realapps.NewChromegate(s.session, deltas), short)
				for _, err := range res.Failed {
					t.Error(err)
				}
				if t.Failed() {
					t.Logf("%s server log:\n%s", app.Name, tail(app.Log(), 4000))
					if d := os.Getenv("CHROMEGATE_REALAPPS_LOGDIR"); d != "" {
						_ = os.WriteFile(d+"/"+start.name+".log", []byte(app.Log()), 0o644)
					}
				}
				t.Logf("%s (%s): %d/%d tasks, %d calls, %d chars, %v", app.Name, mode, res.Done, res.Tasks, res.Stats.Calls, res.Stats.Chars, res.Stats.Wall.Round(time.Millisecond))
			})
		}
	}
}
