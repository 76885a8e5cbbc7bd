package cdp

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// Cookies returns the session's cookies, filtered by the URLs they would be
// sent to (all cookies when URLs is empty).
func (s *Session) Cookies(ctx context.Context, p executor.CookiesParams) ([]executor.Cookie, error) {
	for _, u := range p.URLs {
		pu, err := url.Parse(u)
		if err != nil || pu.Scheme == "" || pu.Host == "" {
			return nil, executor.Errorf(executor.CodeBadArgs, "%q is not an absolute URL", u)
		}
	}
	return await(ctx, s, "cookies_get", func() ([]executor.Cookie, error) {
		cs, err := s.bctx.Cookies(p.URLs...)
		if err != nil {
			return nil, s.mapErr("cookies_get", err)
		}
		out := make([]executor.Cookie, 0, len(cs))
		for _, c := range cs {
			ec := executor.Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
				Expires: c.Expires, HTTPOnly: c.HttpOnly, Secure: c.Secure}
			if c.SameSite != nil {
				ec.SameSite = string(*c.SameSite)
			}
			out = append(out, ec)
		}
		return out, nil
	})
}

// SetCookies adds cookies to the session. Each needs a URL, or a Domain and
// a Path.
func (s *Session) SetCookies(ctx context.Context, p executor.SetCookiesParams) error {
	if len(p.Cookies) == 0 {
		return executor.Errorf(executor.CodeBadArgs, "cookies is empty")
	}
	in := make([]playwright.OptionalCookie, 0, len(p.Cookies))
	for i, c := range p.Cookies {
		oc, err := toOptionalCookie(c)
		if err != nil {
			e := executor.AsError(err)
			return executor.Errorf(executor.CodeBadArgs, "cookie %d (%q): %s", i, c.Name, e.Message).WithHint(e.Hint)
		}
		in = append(in, oc)
	}
	_, err := await(ctx, s, "cookies_set", func() (struct{}, error) {
		return struct{}{}, s.mapErr("cookies_set", s.bctx.AddCookies(in))
	})
	return err
}

func toOptionalCookie(c executor.Cookie) (playwright.OptionalCookie, error) {
	oc := playwright.OptionalCookie{Name: c.Name, Value: c.Value}
	if c.Name == "" {
		return oc, executor.Errorf(executor.CodeBadArgs, "the name is empty")
	}
	switch {
	case c.URL != "" && (c.Domain != "" || c.Path != ""):
		return oc, executor.Errorf(executor.CodeBadArgs, "url and domain/path exclude each other").
			WithHint("scope the cookie by url, or by domain and path")
	case c.URL != "":
		u, err := url.Parse(c.URL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return oc, executor.Errorf(executor.CodeBadArgs, "url %q is not an absolute URL", c.URL)
		}
		oc.URL = playwright.String(c.URL)
	case c.Domain != "" && c.Path != "":
		oc.Domain, oc.Path = playwright.String(c.Domain), playwright.String(c.Path)
	default:
		return oc, executor.Errorf(executor.CodeBadArgs, "it needs a url, or a domain and a path").
			WithHint(`for example {"name":"a","value":"1","url":"https://example.com/"}`)
	}
	if c.Expires > 0 {
		oc.Expires = playwright.Float(c.Expires)
	}
	if c.HTTPOnly {
		oc.HttpOnly = playwright.Bool(true)
	}
	if c.Secure {
		oc.Secure = playwright.Bool(true)
	}
	switch strings.ToLower(c.SameSite) {
	case "":
	case "strict":
		oc.SameSite = playwright.SameSiteAttributeStrict
	case "lax":
		oc.SameSite = playwright.SameSiteAttributeLax
	case "none":
		oc.SameSite = playwright.SameSiteAttributeNone
	default:
		return oc, executor.Errorf(executor.CodeBadArgs, "sameSite %q is not Strict, Lax or None", c.SameSite)
	}
	return oc, nil
}

// ClipboardWrite writes text to the clipboard through the page: it grants
// the page's origin the clipboard permissions (not on an attached browser,
// whose permissions are the user's) and uses navigator.clipboard, falling
// back to execCommand('copy').
func (s *Session) ClipboardWrite(ctx context.Context, p executor.ClipboardParams) error {
	_, err := s.onTab(ctx, p.TabID, "clipboard_write", func(c *call) error {
		if origin := originOf(c.page.URL()); origin != "" && !s.in.attached && !s.hasGrant(origin) {
			err := s.bctx.GrantPermissions([]string{"clipboard-read", "clipboard-write"},
				playwright.BrowserContextGrantPermissionsOptions{Origin: playwright.String(origin)})
			if err != nil {
				s.log.Debug("granting clipboard permissions", "origin", origin, "err", err)
			} else {
				s.setGrant(origin)
			}
		}
		_, err := c.page.Evaluate(executor.ClipboardScript, p.Text)
		if err != nil && !s.isDone() && !connectionGone(err) {
			return executor.Errorf(executor.CodeEvalFailed, "clipboard_write: %s", pageErrorMessage(err)).
				WithHint("focus the page (click it) and retry").Wrap(err)
		}
		return err
	})
	return err
}

func (s *Session) hasGrant(origin string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.granted[origin]
}

func (s *Session) setGrant(origin string) {
	s.mu.Lock()
	s.granted[origin] = true
	s.mu.Unlock()
}

// originOf returns scheme://host[:port] of an http(s) URL, else "".
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return fmt.Sprintf("%s://%s", u.Scheme, u.Host)
}
