package realapps

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

//go:embed testdata/dokuwiki-router.php
var dokuRouter []byte

// DokuWiki's throw-away accounts and page.
const (
	dwAdmin     = "admin"
	dwAdminPass = "Realapps-admin-pass-1"
	dwPage      = "tides:saint-malo"
	// dwSearch names the search box as each server does: by its
	// placeholder (chromegate), or by its title, "[F]", its access key
	// (Playwright MCP: the title comes first in its name computation).
	dwSearch = `^(Search|\[F\])$`
)

// StartDokuWiki sets up Debian's DokuWiki (2022-07-31) with its
// configuration, users, ACL and pages in dir, and serves it with PHP's
// built-in server through a router that points DokuWiki at dir.
func StartDokuWiki(ctx context.Context, dir string) (*App, error) {
	app := &App{Name: "DokuWiki", Dir: dir}
	conf := filepath.Join(dir, "conf")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		return nil, err
	}
	for _, sub := range []string{"pages", "attic", "meta", "media", "media_attic", "media_meta", "cache", "index", "locks", "tmp", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, "data", sub), 0o755); err != nil {
			return nil, err
		}
	}
	// Debian's defaults for what this run does not set.
	for _, f := range []string{"plugins.php", "plugins.required.php", "mime.conf", "license.php"} {
		b, err := os.ReadFile(filepath.Join("/etc/dokuwiki", f))
		if err != nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(conf, f), b, 0o644); err != nil {
			return nil, err
		}
	}
	hash, err := run(ctx, dir, PHP, "-r", `echo password_hash($argv[1], PASSWORD_BCRYPT);`, dwAdminPass)
	if err != nil {
		return nil, err
	}
	files := map[string]string{
		"local.php": fmt.Sprintf(`<?php
$conf['title'] = 'Realapps DokuWiki';
$conf['lang'] = 'en';
$conf['savedir'] = %q;
$conf['useacl'] = 1;
$conf['superuser'] = '@admin';
$conf['authtype'] = 'authplain';
$conf['passcrypt'] = 'bcrypt';
$conf['userewrite'] = 0;
$conf['updatecheck'] = 0;
$conf['send404'] = 0;
$conf['breadcrumbs'] = 0;
`, filepath.Join(dir, "data")),
		"users.auth.php": "# login:passwordhash:Real Name:email:groups\n" +
			dwAdmin + ":" + strings.TrimSpace(hash) + ":Ada Admin:admin@example.org:admin,user\n",
		"acl.auth.php": "*\t@ALL\t1\n*\t@user\t8\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(conf, name), []byte(body), 0o644); err != nil {
			return nil, err
		}
	}
	router := filepath.Join(dir, "router.php")
	if err := os.WriteFile(router, dokuRouter, 0o644); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	if err := app.serve(ctx, port, "/usr/share/dokuwiki", router, "/doku.php"); err != nil {
		app.Close()
		return nil, err
	}
	app.Tasks = dokuWikiTasks()
	return app, nil
}

// dwFile reads a file under DokuWiki's data or conf directory.
func (app *App) dwFile(rel string) (string, error) {
	b, err := os.ReadFile(filepath.Join(app.Dir, rel))
	if err != nil {
		return "", fmt.Errorf("%w: %v", errOutcome, err)
	}
	return string(b), nil
}

func dokuWikiTasks() []Task {
	pageFile := filepath.Join("data", "pages", strings.ReplaceAll(dwPage, ":", "/")+".txt")
	return []Task{
		{
			Name: "log in", Short: true,
			Run: func(ctx context.Context, a *Agent, app *App) error {
				if err := a.B.Navigate(ctx, app.URL+"/doku.php"); err != nil {
					return err
				}
				return steps(
					func() error { return a.Click(ctx, "link", `^Log In$`) },
					func() error { return a.Fill(ctx, "textbox", `^Username`, dwAdmin) },
					func() error { return a.Fill(ctx, "textbox", `^Password`, dwAdminPass) },
					func() error { return a.Click(ctx, "button", `^Log In$`) },
					func() error { _, err := a.Find(ctx, "link", `^Log Out$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				// DokuWiki keeps the login in the PHP session, on disk.
				out, err := run(ctx, app.Dir, "/bin/sh", "-c", `cat "$(`+PHP+` -r 'echo session_save_path() ?: sys_get_temp_dir();')"/sess_* 2>/dev/null || true`)
				if err != nil {
					return err
				}
				return want("sessions", out, `"user";s:5:"`+dwAdmin+`"`)
			},
		},
		{
			Name: "create a page", Short: true,
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return a.Submit(ctx, "textbox|searchbox|combobox", dwSearch, dwPage) },
					func() error { return a.Click(ctx, "link", `^:?`+dwPage+`$`) },
					func() error {
						// The search's link to a page that does not exist opens
						// its editor for a user who may create it; another
						// version shows the page's "Create this page" first.
						if ok, err := a.Has(ctx, "link|button", `^Create this page`); !ok || err != nil {
							return err
						}
						return a.Click(ctx, "link|button", `^Create this page`)
					},
					func() error {
						return a.Fill(ctx, "textbox", `^(|.*[Ee]dit.*|wikitext)$`, "====== Saint-Malo ======\nHigh water 09:00, springs 13.3 m.\n")
					},
					func() error { return a.Fill(ctx, "textbox", `^Edit summary|^Summary`, "first tides") },
					func() error { return a.Click(ctx, "button", `^Save$`) },
					func() error { _, err := a.Find(ctx, "link|button", `^Edit this page`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.dwFile(pageFile)
				if err != nil {
					return err
				}
				return want("page file", got, "====== Saint-Malo ======", "springs 13.3 m")
			},
		},
		{
			Name: "edit the page",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return a.Click(ctx, "link|button", `^Edit this page`) },
					func() error {
						return a.Fill(ctx, "textbox", `^(|.*[Ee]dit.*|wikitext)$`, "====== Saint-Malo ======\nHigh water 09:00, springs 13.3 m, neaps 6.1 m.\n")
					},
					func() error { return a.Fill(ctx, "textbox", `^Edit summary|^Summary`, "neaps") },
					func() error { return a.Click(ctx, "checkbox", `^Minor`) },
					func() error { return a.Click(ctx, "button", `^Save$`) },
					func() error { _, err := a.Find(ctx, "link|button", `^Edit this page`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.dwFile(pageFile)
				if err != nil {
					return err
				}
				if err := want("page file", got, "neaps 6.1 m"); err != nil {
					return err
				}
				// The change log: one line per revision, the second minor (e) with its summary.
				got, err = app.dwFile(filepath.Join("data", "meta", strings.ReplaceAll(dwPage, ":", "/")+".changes"))
				if err != nil {
					return err
				}
				return want("change log", got, "\tC\t"+dwPage+"\t"+dwAdmin+"\tfirst tides", "\te\t"+dwPage+"\t"+dwAdmin+"\tneaps")
			},
		},
		{
			Name: "search for the text",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return a.Submit(ctx, "textbox|searchbox|combobox", dwSearch, "neaps") },
					func() error { return a.Click(ctx, "link", `saint-malo|Saint-Malo`) },
					func() error { _, err := a.Find(ctx, "link|button", `^Edit this page`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.dwFile(filepath.Join("data", "index", "page.idx"))
				if err != nil {
					return err
				}
				return want("search index", got, dwPage)
			},
		},
		{
			Name: "add a user (user manager)",
			Run: func(ctx context.Context, a *Agent, app *App) error {
				return steps(
					func() error { return a.Click(ctx, "link", `^Admin$`) },
					func() error { return a.Click(ctx, "link", `User Manager`) },
					func() error { return a.Fill(ctx, "textbox", `^User`, "bosun") },
					func() error { return a.Fill(ctx, "textbox", `^Password`, "Realapps-bosun-pass-1") },
					func() error {
						// Some versions ask for the password twice.
						if ok, err := a.Has(ctx, "textbox", `(?i)^once again|repeat`); !ok || err != nil {
							return err
						}
						return a.Fill(ctx, "textbox", `(?i)^once again|repeat`, "Realapps-bosun-pass-1")
					},
					func() error { return a.Fill(ctx, "textbox", `(?i)^real name`, "Bea Bosun") },
					func() error { return a.Fill(ctx, "textbox", `^Email`, "bosun@example.org") },
					func() error { return a.Fill(ctx, "textbox", `^Groups`, "user,crew") },
					func() error { return a.Click(ctx, "button", `^Add$`) },
					func() error { _, err := a.Find(ctx, "link", `^bosun$`); return err },
				)
			},
			Check: func(ctx context.Context, app *App) error {
				got, err := app.dwFile(filepath.Join("conf", "users.auth.php"))
				if err != nil {
					return err
				}
				return want("users", got, "\nbosun:$2y$", ":Bea Bosun:bosun@example.org:user,crew\n")
			},
		},
	}
}
