package realapps

import (
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

//go:embed testdata/wordpress-router.php
var wpRouter []byte

// WordPress's throw-away accounts and the words its tasks write.
const (
	wpRoot      = "/usr/share/wordpress"
	wpAdmin     = "admin"
	wpAdminPass = "Realapps-admin-pass-1"
	wpDBPass    = "Realapps-db-pass-1"
	wpTitle     = "Saint-Malo Tides"
	wpTagline   = "High and low water, every day"
	wpCategory  = "Spring tides"
	wpDraft     = "Neaps next week"
	wpUser      = "bosun"
	wpComment   = "High water came at 09:00 as the table said."
)

// StartWordPress serves Debian's WordPress (6.1) on a throw-away MariaDB
// (10.11) from dir: the database server's data, socket and log, and a tree
// of links to Debian's WordPress with this run's wp-config.php in place of
// Debian's (which reads /etc/wordpress). WordPress is installed with
// wp_install (an administrator, the sample post and its comment) and
// served by PHP's built-in server; nothing reaches the internet (external
// HTTP blocked, no updater, no cron by HTTP).
func StartWordPress(ctx context.Context, dir string) (_ *App, err error) {
	app := &App{Name: "WordPress", Dir: dir}
	defer func() {
		if err != nil {
			app.Close()
		}
	}()
	if app.db, err = app.startMariaDB(ctx); err != nil {
		return nil, err
	}
	if _, err := app.db.query(ctx, "", `CREATE DATABASE wordpress CHARACTER SET utf8mb4;
		CREATE USER 'wordpress'@'127.0.0.1' IDENTIFIED BY '`+wpDBPass+`';
		GRANT ALL ON wordpress.* TO 'wordpress'@'127.0.0.1'`); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	tree := filepath.Join(dir, "wp")
	if err := wpTree(tree, app.db.port, fmt.Sprintf("http://127.0.0.1:%d", port)); err != nil {
		return nil, err
	}
	// The installer as Debian ships it, without its e-mail to the
	// administrator.
	if _, err := run(ctx, dir, PHP, "-r", `define('WP_INSTALLING', true);
define('ABSPATH', $argv[1]);
function wp_new_blog_notification() {}
require ABSPATH . 'wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
$r = wp_install('Realapps WordPress', $argv[2], $argv[2] . '@example.org', false, '', $argv[3]);
if (empty($r['user_id'])) { fwrite(STDERR, "wp_install failed\n"); exit(1); }`, tree+"/", wpAdmin, wpAdminPass); err != nil {
		return nil, err
	}
	router := filepath.Join(dir, "router.php")
	if err := os.WriteFile(router, wpRouter, 0o644); err != nil {
		return nil, err
	}
	if err := app.serve(ctx, port, tree, router, "/wp-login.php"); err != nil {
		return nil, err
	}
	app.Tasks = wordPressTasks()
	return app, nil
}

// wpTree makes tree: a link to each of Debian's WordPress files but
// wp-config.php, which is this run's (its database, its address, its
// keys), and wp-content, a directory of the run's.
func wpTree(tree string, dbPort int, url string) error {
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(wpRoot)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Name() == "wp-config.php" || e.Name() == "wp-content" {
			continue
		}
		if err := os.Symlink(filepath.Join(wpRoot, e.Name()), filepath.Join(tree, e.Name())); err != nil {
			return err
		}
	}
	// wp-content is the run's too (WordPress writes its uploads there),
	// with Debian's themes and plugins.
	content := filepath.Join(tree, "wp-content")
	if err := os.MkdirAll(filepath.Join(content, "uploads"), 0o755); err != nil {
		return err
	}
	for _, sub := range []string{"themes", "plugins"} {
		if err := os.Symlink(filepath.Join(wpRoot, "wp-content", sub), filepath.Join(content, sub)); err != nil {
			return err
		}
	}
	var keys strings.Builder
	for _, k := range []string{"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"} {
		fmt.Fprintf(&keys, "define('%s', '%s');\n", k, rand.Text())
	}
	conf := fmt.Sprintf(`<?php
// This run's WordPress: its database on the throw-away MariaDB, its
// address, and nothing that reaches the internet.
define('DB_NAME', 'wordpress');
define('DB_USER', 'wordpress');
define('DB_PASSWORD', '%s');
define('DB_HOST', '127.0.0.1:%d');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
define('WP_HOME', '%s');
define('WP_SITEURL', '%s');
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_AUTO_UPDATE_CORE', false);
define('DISABLE_WP_CRON', true);
define('DISALLOW_FILE_MODS', true);
%s$table_prefix = 'wp_';
require_once ABSPATH . 'wp-settings.php';
`, wpDBPass, dbPort, url, url, keys.String())
	return os.WriteFile(filepath.Join(tree, "wp-config.php"), []byte(conf), 0o644)
}

// wpDB queries WordPress's database.
func (app *App) wpDB(ctx context.Context, sql string) (string, error) {
	return app.db.query(ctx, "wordpress", sql)
}

// wpAdminPage opens an admin screen from the admin menu: the menu's
// link, then, if given, its submenu's link. Every submenu is in the
// outline, but only the open menu's is shown (the others fly out on
// hover), and names repeat (each menu has its "Add New"): the link taken
// is the first named sub after the menu's own.
func wpAdminPage(ctx context.Context, a *Agent, menu, sub string) error {
	if err := a.Click(ctx, "link", `^`+menu+`$`); err != nil {
		return err
	}
	if sub == "" {
		return nil
	}
	if _, err := a.Find(ctx, "link", `^`+sub+`$`); err != nil {
		return err
	}
	cs, err := a.B.Controls(ctx, false)
	if err != nil {
		return err
	}
	in := false
	for _, c := range cs {
		switch {
		case c.Role != "link":
		case c.Name == menu:
			in = true
		case in && c.Name == sub:
			return a.B.Click(ctx, c.Ref)
		}
	}
	return fmt.Errorf("no link %q after the menu's %q", sub, menu)
}

func wordPressTasks() []Task {
	return []Task{
		{
			Name: "log in", Short: true,
			Run: func(ctx context.Context, a *Agent, app *App) error {
				if err := a.B.Navigate(ctx, app.URL+"/wp-login.php"); err != nil {
					return err
				}
				return steps(
					func() error { return a.Fill(ctx, "textbox", `^Username`, wpAdmin) },
					func() error { return a.Fill(ctx, "textbox", `^Password`, wpAdminPass) },
					func() error { return a.Click(ctx, "button", `^Log In$`) },
					func() error { _, err := a.Find(ctx, "link", `^Log Out$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				// A login leaves a session token in the user's meta: its
				// expiry, address, browser and time.
				got, err := app.wpDB(ctx, `SELECT meta_value FROM wp_usermeta JOIN wp_users ON ID = user_id
					WHERE user_login = '`+wpAdmin+`' AND meta_key = 'session_tokens'`)
				if err != nil {
					return err
				}
				return want("session tokens", got, `s:2:"ip";s:9:"127.0.0.1";`, `s:5:"login";i:`)
			},
		},
		{
			Name: "change the site title (Settings › General)", Short: true,
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return wpAdminPage(ctx, a, "Settings", "") },
					func() error { return a.Fill(ctx, "textbox", `^Site Title$`, wpTitle) },
					func() error { return a.Fill(ctx, "textbox", `^Tagline$`, wpTagline) },
					func() error { return a.Click(ctx, "button", `^Save Changes$`) },
					// The toolbar names the site anew (after its icon's
					// glyph, in Playwright's snapshot).
					func() error { _, err := a.Find(ctx, "link", `^\W*`+wpTitle+`$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.wpDB(ctx, `SELECT option_name, option_value FROM wp_options WHERE option_name IN ('blogname', 'blogdescription') ORDER BY option_name`)
				if err != nil {
					return err
				}
				return want("options", got, "blogdescription\t"+wpTagline+"\nblogname\t"+wpTitle)
			},
		},
		{
			Name: "add a category (Posts › Categories)",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return wpAdminPage(ctx, a, "Posts", "Categories") },
					func() error { return a.Fill(ctx, "textbox", `^Name$`, wpCategory) },
					func() error { return a.Fill(ctx, "textbox", `^Description$`, "Tides at new and full moon.") },
					func() error { return a.Click(ctx, "button", `^Add New Category$`) },
					func() error { _, err := a.Find(ctx, "link", `^Edit “`+wpCategory+`”$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.wpDB(ctx, `SELECT name, slug, description FROM wp_terms JOIN wp_term_taxonomy USING (term_id) WHERE taxonomy = 'category'`)
				if err != nil {
					return err
				}
				return want("categories", got, wpCategory+"\tspring-tides\tTides at new and full moon.")
			},
		},
		{
			Name: "write a draft (Dashboard › Quick Draft)",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return wpAdminPage(ctx, a, "Dashboard", "") },
					func() error { return a.Fill(ctx, "textbox", `^Title$`, wpDraft) },
					func() error { return a.Fill(ctx, "textbox", `^Content$|on your mind`, "Neaps of 6.1 m from Tuesday.") },
					func() error { return a.Click(ctx, "button", `^Save Draft$`) },
					// Your Recent Drafts lists it.
					func() error { _, err := a.Find(ctx, "link", `^Edit “`+wpDraft+`”$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				// Quick Draft wraps the text in a paragraph block.
				got, err := app.wpDB(ctx, `SELECT post_title, post_status, post_author, post_content FROM wp_posts WHERE post_type = 'post' AND post_title = '`+wpDraft+`'`)
				if err != nil {
					return err
				}
				return want("posts", got, wpDraft+"\tdraft\t1\t", "Neaps of 6.1 m from Tuesday.")
			},
		},
		{
			Name: "add a user (Users › Add New)",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return wpAdminPage(ctx, a, "Users", "Add New") },
					func() error { return a.Fill(ctx, "textbox", `^Username`, wpUser) },
					func() error { return a.Fill(ctx, "textbox", `^Email`, wpUser+"@example.org") },
					func() error { return a.Fill(ctx, "textbox", `^First Name`, "Bea") },
					func() error { return a.Fill(ctx, "textbox", `^Last Name`, "Bosun") },
					func() error { return a.Select(ctx, "combobox|listbox", `^Role`, "Editor") },
					// No mail leaves this machine.
					func() error { return a.Click(ctx, "checkbox", `^Send the new user an email`) },
					func() error { return a.Click(ctx, "button", `^Add New User$`) },
					func() error { _, err := a.Find(ctx, "link", `^`+wpUser+`$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.wpDB(ctx, `SELECT user_login, user_email, meta_value FROM wp_users JOIN wp_usermeta ON user_id = ID
					WHERE user_login = '`+wpUser+`' AND meta_key = 'wp_capabilities'`)
				if err != nil {
					return err
				}
				return want("users", got, wpUser+"\t"+wpUser+`@example.org`+"\t"+`a:1:{s:6:"editor";b:1;}`)
			},
		},
		{
			Name: "comment on the sample post",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				if err := a.B.Navigate(ctx, app.URL+"/"); err != nil {
					return err
				}
				return steps(
					func() error { return a.Click(ctx, "link", `^Hello world!$`) },
					func() error { return a.Fill(ctx, "textbox", `^Comment`, wpComment) },
					func() error { return a.Click(ctx, "button", `^Post Comment$`) },
					func() error { _, err := a.Find(ctx, "link", `^Reply to `+wpAdmin+`$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.wpDB(ctx, `SELECT comment_approved, user_id, comment_content FROM wp_comments WHERE comment_post_ID = 1 ORDER BY comment_ID`)
				if err != nil {
					return err
				}
				return want("comments", got, "1\t1\t"+wpComment)
			},
		},
	}
}
