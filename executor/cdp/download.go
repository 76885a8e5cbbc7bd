package cdp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/playwright-community/playwright-go"
)

// Download fetches a URL, or the file a click on Target downloads, into the
// server's download directory (DataDir/downloads, mode 0700) under a
// sanitised, de-duplicated name, and reports its size, SHA-256 and type.
//
// A URL is fetched by Go's HTTP client with the session's cookies (read
// from, and written back to, the browser context) and the browser's
// User-Agent, streaming to disk and stopping at MaxDownloadBytes; the URL
// and each redirect hop are decided by p.DecideHop, and each connection by
// the egress boundary with the browser's host mapping (executor.Fetch). A
// click's download is the browser's own: it goes through the browser's
// proxy, the egress boundary, hop by hop like any navigation.
// Playwright's APIRequest would carry the cookies too, but it buffers the
// whole body in the driver before it can be measured, so it cannot enforce
// the cap on a response that lies about (or omits) its length.
func (s *Session) Download(ctx context.Context, p executor.DownloadParams) (executor.DownloadResult, error) {
	if err := p.Validate(); err != nil {
		return executor.DownloadResult{}, err
	}
	dir := executor.TenantRoot(s.b.downloadDir(), p.Tenant)
	if err := ensureDir(dir, 0o700); err != nil {
		return executor.DownloadResult{}, executor.Errorf(executor.CodeDownloadFailed, "cannot create the download directory: %v", err).Wrap(err)
	}
	if p.URL != "" {
		return s.downloadURL(ctx, p, dir)
	}
	return s.downloadClick(ctx, p, dir)
}

func (s *Session) downloadURL(ctx context.Context, p executor.DownloadParams, dir string) (executor.DownloadResult, error) {
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return executor.DownloadResult{}, executor.Errorf(executor.CodeBadArgs, "%q is not an http(s) URL", p.URL)
	}
	if s.isDone() {
		return executor.DownloadResult{}, s.goneErr("download_file")
	}
	return executor.Fetch(ctx, executor.FetchParams{URL: p.URL, Filename: p.Filename, Dir: dir,
		Limit: s.b.opts.MaxDownloadBytes, Jar: &browserJar{s: s, ctx: ctx}, UserAgent: s.userAgent(ctx),
		Dial: s.b.opts.Egress.Dialer(s.name, "cdp", s.b.resolver), DecideHop: p.DecideHop})
}

func (s *Session) downloadClick(ctx context.Context, p executor.DownloadParams, dir string) (executor.DownloadResult, error) {
	limit := s.b.opts.MaxDownloadBytes
	var res executor.DownloadResult
	_, err := s.onTab(ctx, p.TabID, "download_file", func(c *call) error {
		var loc playwright.Locator
		if p.Target.Ref == "" {
			var err error
			if loc, err = c.locate(p.Target, "download_file"); err != nil {
				return err
			}
		}
		var clickErr error
		dl, err := c.page.ExpectDownload(func() error {
			if loc == nil {
				clickErr = c.refClick(p.Target.Ref, nil, 1)
			} else {
				clickErr = loc.Click(playwright.LocatorClickOptions{Timeout: c.to()})
			}
			return clickErr
		}, playwright.PageExpectDownloadOptions{Timeout: c.to()})
		if err != nil {
			if clickErr != nil && loc == nil {
				return c.s.mapErr("download_file", clickErr)
			}
			if clickErr != nil {
				return c.targetErr(loc, p.Target, "download_file", clickErr)
			}
			if errors.Is(err, playwright.ErrTimeout) {
				return executor.Errorf(executor.CodeDownloadFailed, "clicking %s started no download within %s",
					p.Target, time.Since(c.start).Round(time.Millisecond)).
					WithHint("check that the element starts a download; for a link, download_file its URL").Wrap(err)
			}
			return err
		}
		name := executor.PickName(p.Filename, dl.SuggestedFilename(), executor.URLBaseName(dl.URL()))
		tmp := filepath.Join(dir, fmt.Sprintf(".part-%d-%s", time.Now().UnixNano(), executor.NewSessionID()))
		if err := dl.SaveAs(tmp); err != nil {
			_ = os.Remove(tmp)
			if c.s.isDone() || connectionGone(err) {
				return err
			}
			return executor.Errorf(executor.CodeDownloadFailed, "the download from %s failed: %s", dl.URL(), firstLine(err)).Wrap(err)
		}
		_ = dl.Delete() // Playwright's own copy
		if c.ctx.Err() != nil {
			_ = os.Remove(tmp)
			return c.ctx.Err()
		}
		size, sum, err := hashFile(tmp)
		if err != nil {
			_ = os.Remove(tmp)
			return executor.Errorf(executor.CodeDownloadFailed, "cannot read the download: %v", err).Wrap(err)
		}
		if size > limit {
			_ = os.Remove(tmp)
			return executor.TooBig(dl.URL(), size, limit)
		}
		final, err := executor.PlaceFile(tmp, dir, name)
		if err != nil {
			_ = os.Remove(tmp)
			return executor.Errorf(executor.CodeDownloadFailed, "cannot store the download: %v", err).Wrap(err)
		}
		res = executor.DownloadResult{Path: final, Filename: filepath.Base(final), Size: size,
			MIMEType: executor.MimeByExt(final), SHA256: sum, URL: dl.URL()}
		return nil
	})
	if err != nil {
		return executor.DownloadResult{}, err
	}
	return res, nil
}

func hashFile(p string) (int64, string, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	var h hash.Hash = sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// userAgent is the browser's User-Agent, read once per session from an open
// tab ("" when there is none: Go's default is sent then).
func (s *Session) userAgent(ctx context.Context) string {
	s.mu.Lock()
	ua := s.ua
	s.mu.Unlock()
	if ua != "" {
		return ua
	}
	// Any open tab will do; opening one just for this is not worth it.
	t := s.selectedTab()
	if t == nil {
		return ""
	}
	ua, err := await(ctx, s, "user agent", func() (string, error) {
		v, err := t.page.Evaluate("navigator.userAgent")
		ua, _ := v.(string)
		return ua, err
	})
	if err != nil {
		return ""
	}
	s.mu.Lock()
	s.ua = ua
	s.mu.Unlock()
	return ua
}

// browserJar lends the browser context's cookies to Go's HTTP client, and
// stores the cookies responses set back into the context.
type browserJar struct {
	s   *Session
	ctx context.Context
}

func (j *browserJar) Cookies(u *url.URL) []*http.Cookie {
	cs, err := await(j.ctx, j.s, "read cookies", func() ([]playwright.Cookie, error) {
		return j.s.bctx.Cookies(u.String())
	})
	if err != nil {
		return nil
	}
	out := make([]*http.Cookie, 0, len(cs))
	for _, c := range cs {
		out = append(out, &http.Cookie{Name: c.Name, Value: c.Value})
	}
	return out
}

func (j *browserJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	var in []playwright.OptionalCookie
	for _, c := range cookies {
		if c.MaxAge < 0 {
			continue // deletions are left to the browser
		}
		oc := playwright.OptionalCookie{Name: c.Name, Value: c.Value}
		p := c.Path
		if p == "" {
			p = "/"
		}
		if c.Domain != "" {
			oc.Domain, oc.Path = playwright.String(c.Domain), playwright.String(p)
		} else {
			oc.URL = playwright.String(u.Scheme + "://" + u.Host + p)
		}
		switch {
		case c.MaxAge > 0:
			oc.Expires = playwright.Float(float64(time.Now().Add(time.Duration(c.MaxAge) * time.Second).Unix()))
		case !c.Expires.IsZero():
			oc.Expires = playwright.Float(float64(c.Expires.Unix()))
		}
		if c.HttpOnly {
			oc.HttpOnly = playwright.Bool(true)
		}
		if c.Secure {
			oc.Secure = playwright.Bool(true)
		}
		switch c.SameSite {
		case http.SameSiteStrictMode:
			oc.SameSite = playwright.SameSiteAttributeStrict
		case http.SameSiteLaxMode:
			oc.SameSite = playwright.SameSiteAttributeLax
		case http.SameSiteNoneMode:
			oc.SameSite = playwright.SameSiteAttributeNone
		}
		in = append(in, oc)
	}
	if len(in) == 0 {
		return
	}
	_, err := await(j.ctx, j.s, "store cookies", func() (struct{}, error) {
		return struct{}{}, j.s.bctx.AddCookies(in)
	})
	if err != nil {
		j.s.log.Debug("storing cookies from a download", "err", err)
	}
}
