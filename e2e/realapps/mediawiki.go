package realapps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MediaWiki's throw-away accounts.
const (
	mwAdmin     = "Admin"
	mwAdminPass = "Realapps-admin-pass-1"
	mwUser      = "Alice"
	mwUserPass  = "Realapps-alice-pass-1"
	mwPage      = "Realapps Tide Table"
)

// StartMediaWiki installs Debian's MediaWiki (1.39) on SQLite in dir, with
// an administrator and a second user, and serves it with PHP's built-in
// server. The configuration lives in dir too (MW_CONFIG_FILE).
func StartMediaWiki(ctx context.Context, dir string) (*App, error) {
	app := &App{Name: "MediaWiki", Dir: dir}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	const root = "/usr/share/mediawiki"
	conf := filepath.Join(dir, "LocalSettings.php")
	if _, err := run(ctx, root, PHP, "maintenance/install.php", "--dbtype", "sqlite", "--dbpath", filepath.Join(dir, "db"),
		"--dbname", "wiki", "--confpath", dir, "--server", fmt.Sprintf("http://127.0.0.1:%d", port), "--scriptpath", "",
		"--pass", mwAdminPass, "--lang", "en", "Realapps Wiki", mwAdmin); err != nil {
		return nil, err
	}
	// Jobs and deferred updates run within the request, so the database
	// holds an outcome when the page that reports it has loaded.
	extra := "\n$wgJobRunRate = 1;\n$wgEnableUploads = false;\n$wgRateLimits = [];\n"
	f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = f.WriteString(extra)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	cmd := []string{"maintenance/createAndPromote.php", mwUser, mwUserPass}
	if _, err := runEnv(ctx, root, []string{"MW_CONFIG_FILE=" + conf}, PHP, cmd...); err != nil {
		return nil, err
	}
	if err := app.serve(ctx, port, root, "", "/index.php?title=Main_Page", "MW_CONFIG_FILE="+conf); err != nil {
		app.Close()
		return nil, err
	}
	app.Tasks = mediaWikiTasks()
	return app, nil
}

func (app *App) mwDB(ctx context.Context, query string) (string, error) {
	return sqlite(ctx, filepath.Join(app.Dir, "db", "wiki.sqlite"), query)
}

// mwText is the wikitext of a page's latest revision.
func (app *App) mwText(ctx context.Context, title string) (string, error) {
	return app.mwDB(ctx, fmt.Sprintf(`SELECT old_text FROM page JOIN slots ON slot_revision_id = page_latest
		JOIN content ON content_id = slot_content_id JOIN text ON 'tt:' || old_id = content_address
		WHERE page_namespace = 0 AND page_title = '%s'`, strings.ReplaceAll(title, " ", "_")))
}

func mediaWikiTasks() []Task {
	return []Task{
		{
			Name: "log in", Short: true,
			Run: func(ctx context.Context, a *Agent, app *App) error {
				if err := a.B.Navigate(ctx, app.URL+"/index.php?title=Main_Page"); err != nil {
					return err
				}
				return steps(
					func() error { return a.Click(ctx, "link", `^Log in$`) },
					func() error { return a.Fill(ctx, "textbox", `^Username`, mwAdmin) },
					func() error { return a.Fill(ctx, "textbox", `^Password`, mwAdminPass) },
					func() error { return a.Click(ctx, "button", `^Log in$`) },
					func() error { _, err := a.Find(ctx, "link", `^`+mwAdmin+`$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				// A login leaves a session in the wiki's object cache
				// (SQLite, compressed PHP serialization) naming the user and
				// the authentication that made it.
				out, err := run(ctx, app.Dir, PHP, "-r", `$db = new SQLite3($argv[1], SQLITE3_OPEN_READONLY);
$db->busyTimeout(10000);
$r = $db->query("SELECT value FROM objectcache WHERE keyname LIKE '%:MWSession:%'");
while ($row = $r->fetchArray()) { $v = @gzinflate($row[0]); echo ($v === false ? $row[0] : $v), "\n"; }`,
					filepath.Join(app.Dir, "db", "wikicache.sqlite"))
				if err != nil {
					return err
				}
				return want("sessions", out, `s:22:"AuthManager:lastAuthId";i:1;`, `s:10:"wsUserName";s:5:"`+mwAdmin+`";`)
			},
		},
		{
			Name: "create a page from search", Short: true,
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return a.Submit(ctx, "searchbox|combobox|textbox", `^Search`, mwPage) },
					func() error { return a.Click(ctx, "link", `^`+mwPage+`$`) },
					func() error {
						return a.Fill(ctx, "textbox", `.`, "The '''tide table''' for Saint-Malo: high water 09:00, springs 13.3 m.")
					},
					func() error { return a.Fill(ctx, "textbox|combobox", `^Summary`, "first tides") },
					func() error { return a.Click(ctx, "button", `^Save page$`) },
					func() error { _, err := a.Find(ctx, "link", `^Edit$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.mwText(ctx, mwPage)
				if err != nil {
					return err
				}
				return want("page text", got, "'''tide table''' for Saint-Malo")
			},
		},
		{
			Name: "edit the page",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return a.Click(ctx, "link", `^Edit$`) },
					func() error {
						return a.Fill(ctx, "textbox", `.`, "The '''tide table''' for Saint-Malo: high water 09:00, springs 13.3 m, neaps 6.1 m.\n\n[[Category:Tides]]")
					},
					func() error { return a.Fill(ctx, "textbox|combobox", `^Summary`, "neaps") },
					func() error { return a.Click(ctx, "checkbox", `(?i)minor`) },
					func() error { return a.Click(ctx, "button", `^Save changes$`) },
					func() error { _, err := a.Find(ctx, "link", `^Tides$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.mwText(ctx, mwPage)
				if err != nil {
					return err
				}
				if err := want("page text", got, "neaps 6.1 m", "[[Category:Tides]]"); err != nil {
					return err
				}
				got, err = app.mwDB(ctx, `SELECT rev_minor_edit || ':' || comment_text FROM revision JOIN revision_comment_temp ON revcomment_rev = rev_id
					JOIN comment ON comment_id = revcomment_comment_id JOIN page ON page_id = rev_page WHERE page_title = '`+strings.ReplaceAll(mwPage, " ", "_")+`' ORDER BY rev_id`)
				if err != nil {
					return err
				}
				return want("revisions", got, "0:first tides\n1:neaps")
			},
		},
		{
			Name: "search for the text",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return a.Submit(ctx, "searchbox|combobox|textbox", `^Search`, "neaps") },
					func() error { return a.Click(ctx, "link", `^`+mwPage+`$`) },
					func() error { _, err := a.Find(ctx, "link", `^Tides$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.mwDB(ctx, `SELECT si_text FROM searchindex WHERE rowid = (SELECT page_id FROM page WHERE page_title = '`+strings.ReplaceAll(mwPage, " ", "_")+`')`)
				if err != nil {
					return err
				}
				return want("search index", got, "neaps")
			},
		},
		{
			Name: "grant a group (user rights)",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				if err := a.B.Navigate(ctx, app.URL+"/index.php?title=Special:UserRights"); err != nil {
					return err
				}
				return steps(
					func() error { return a.Submit(ctx, "textbox|combobox", `username`, mwUser) },
					func() error { return a.Click(ctx, "checkbox", `(?i)^interface`) },
					func() error { return a.Fill(ctx, "textbox|combobox", `^Reason`, "edits the site's CSS") },
					func() error { return a.Click(ctx, "button", `^Save user groups$`) },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.mwDB(ctx, `SELECT ug_group FROM user_groups JOIN user ON user_id = ug_user WHERE user_name = '`+mwUser+`'`)
				if err != nil {
					return err
				}
				return want("Alice's groups", got, "interface-admin")
			},
		},
		{
			Name: "delete the page (confirmation form)",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return a.Submit(ctx, "searchbox|combobox|textbox", `^Search`, mwPage) },
					func() error {
						// Enter on a page's exact title may go to the page
						// itself (its Edit tab), or to the results.
						c, err := a.Find(ctx, "link", `^(`+mwPage+`|Edit)$`)
						if err != nil || c.Name == "Edit" {
							return err
						}
						return a.B.Click(ctx, c.Ref)
					},
					func() error { return a.Click(ctx, "button", `^More$`) },
					func() error { return a.Click(ctx, "link", `^Delete$`) },
					func() error {
						return a.Fill(ctx, "textbox", `(?i)other|reason`, "tides moved to the almanac")
					},
					func() error { return a.Click(ctx, "button", `^Delete page$`) },
					func() error { _, err := a.Find(ctx, "link|heading|clickable", `Deletion log|deletion log`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.mwDB(ctx, `SELECT count(*) FROM page WHERE page_title = '`+strings.ReplaceAll(mwPage, " ", "_")+`'`)
				if err != nil {
					return err
				}
				if got != "0" {
					return fmt.Errorf("%w: the page is still in the page table", errOutcome)
				}
				got, err = app.mwDB(ctx, `SELECT ar_title FROM archive`)
				if err != nil {
					return err
				}
				return want("archive", got, strings.ReplaceAll(mwPage, " ", "_"))
			},
		},
	}
}

// steps runs steps until one fails.
func steps(fs ...func() error) error {
	for i, f := range fs {
		if err := f(); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	}
	return nil
}
