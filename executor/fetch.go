package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// FetchParams is one download a backend hands to Fetch.
type FetchParams struct {
	URL      string
	Filename string // suggested; always sanitised
	Dir      string // the download directory (exists, 0700)
	Limit    int64  // bytes; the body is cut and refused past it
	// Jar lends the browser session's cookies to the request and takes
	// back the cookies the response sets.
	Jar       http.CookieJar
	UserAgent string
	// Dial, if set, makes the connections (every redirect hop's too): the
	// egress boundary's dialer, which decides each on the address it dials.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// DecideHop, if set, decides URL and every redirect hop before the
	// request is sent (see HopFunc).
	DecideHop HopFunc
}

// Fetch streams an http(s) URL into Dir under a sanitised, de-duplicated
// name, stopping at Limit, and reports its size, SHA-256 and type. Every
// backend downloads through it, so a response that lies about (or omits)
// its length is still cut at the limit.
//
// Every fetch the server makes for the model is decided per hop, as a
// navigation's landing is: DecideHop is asked about the URL and about each
// redirect before it is followed, and Dial (the egress boundary's dialer,
// resolving as the browser does) about each connection's address. A
// refused hop stops the fetch before its request is sent, and nothing is
// stored.
func Fetch(ctx context.Context, p FetchParams) (DownloadResult, error) {
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return DownloadResult{}, Errorf(CodeBadArgs, "%q is not an http(s) URL", p.URL)
	}
	if p.DecideHop != nil {
		if err := p.DecideHop(ctx, u.String()); err != nil {
			return DownloadResult{}, err
		}
	}
	client := &http.Client{
		Jar: p.Jar,
		// The environment's proxy settings never apply: the policy decided
		// this URL for a direct fetch.
		Transport: &http.Transport{Proxy: nil, DialContext: p.Dial, ForceAttemptHTTP2: true, TLSHandshakeTimeout: 15 * time.Second},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("more than 10 redirects")
			}
			if p.DecideHop != nil {
				return p.DecideHop(req.Context(), req.URL.String())
			}
			return nil
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return DownloadResult{}, Errorf(CodeBadArgs, "bad URL %q: %v", p.URL, err)
	}
	if p.UserAgent != "" {
		req.Header.Set("User-Agent", p.UserAgent)
	}
	req.Header.Set("Accept", "*/*")
	resp, err := client.Do(req)
	if err != nil {
		return DownloadResult{}, fetchErr(ctx, p.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return DownloadResult{}, Errorf(CodeDownloadFailed, "download of %s failed: the server answered %s", p.URL, resp.Status).
			WithHint("check the URL, and that the session is logged in if the file needs it")
	}
	if resp.ContentLength > p.Limit {
		return DownloadResult{}, TooBig(p.URL, resp.ContentLength, p.Limit)
	}
	name := PickName(p.Filename, contentDispositionName(resp.Header.Get("Content-Disposition")), urlBaseName(resp.Request.URL))

	tmp, err := os.CreateTemp(p.Dir, ".part-")
	if err != nil {
		return DownloadResult{}, Errorf(CodeDownloadFailed, "cannot write to the download directory: %v", err).Wrap(err)
	}
	h := sha256.New()
	n, cerr := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, p.Limit+1))
	if err := errors.Join(cerr, tmp.Close()); err != nil {
		_ = os.Remove(tmp.Name())
		return DownloadResult{}, fetchErr(ctx, p.URL, err)
	}
	if n > p.Limit {
		_ = os.Remove(tmp.Name())
		return DownloadResult{}, TooBig(p.URL, -1, p.Limit)
	}
	final, err := PlaceFile(tmp.Name(), p.Dir, name)
	if err != nil {
		_ = os.Remove(tmp.Name())
		return DownloadResult{}, Errorf(CodeDownloadFailed, "cannot store the download: %v", err).Wrap(err)
	}
	mimeType := ""
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil {
		mimeType = mt
	} else {
		mimeType = MimeByExt(final)
	}
	return DownloadResult{Path: final, Filename: filepath.Base(final), Size: n, MIMEType: mimeType,
		SHA256: hex.EncodeToString(h.Sum(nil)), URL: resp.Request.URL.String()}, nil
}

func fetchErr(ctx context.Context, u string, err error) error {
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return Errorf(CodeTimeout, "download of %s was cancelled", u).Wrap(ctx.Err())
		}
		return Errorf(CodeTimeout, "download of %s did not finish in time", u).
			WithHint(DefaultHint(CodeTimeout)).Wrap(ctx.Err())
	}
	var hop *Error
	if errors.As(err, &hop) && hop.Code == CodePolicyDenied {
		return hop // a hop DecideHop refused, reported as its decider wrote it
	}
	var denied interface{ PolicyDenied() bool }
	if errors.As(err, &denied) && denied.PolicyDenied() {
		// A redirect hop, or a name that resolved inward: the egress
		// boundary refused the connection.
		return Errorf(CodePolicyDenied, "download of %s was blocked: %v", u, denied).
			WithHint("download only from allowed hosts; a redirect or the host's address led outside the policy").Wrap(err)
	}
	return Errorf(CodeDownloadFailed, "download of %s failed: %v", u, err).
		WithHint("check the URL; is the server up?").Wrap(err)
}

// TooBig is the error for a download over the size limit; size < 0 when
// the body ran past the limit without announcing its length.
func TooBig(u string, size, limit int64) *Error {
	what := "more than"
	if size >= 0 {
		what = fmt.Sprintf("%d bytes,", size)
	}
	return Errorf(CodeDownloadFailed, "download of %s is %s over the limit of %d bytes", u, what, limit).
		WithHint("the operator can raise the download size limit")
}

// PickName is the first non-empty candidate, sanitised.
func PickName(candidates ...string) string {
	for _, c := range candidates {
		if strings.TrimSpace(c) != "" {
			return SanitizeFilename(c)
		}
	}
	return SanitizeFilename("")
}

func contentDispositionName(cd string) string {
	if cd == "" {
		return ""
	}
	_, params, err := mime.ParseMediaType(cd) // decodes RFC 5987 filename* too
	if err != nil {
		return ""
	}
	return params["filename"]
}

func urlBaseName(u *url.URL) string {
	if u == nil {
		return ""
	}
	b := path.Base(u.Path)
	if b == "/" || b == "." {
		return ""
	}
	return b
}

// URLBaseName is the last path element of a URL ("" for none).
func URLBaseName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return urlBaseName(u)
}

// MimeByExt guesses a media type from a file name.
func MimeByExt(name string) string {
	mt, _, _ := mime.ParseMediaType(mime.TypeByExtension(filepath.Ext(name)))
	return mt
}

// PlaceFile moves tmp into dir as name, or "name (1).ext", "name (2).ext",
// … when taken. A name is claimed with O_EXCL first, so two downloads never
// take the same one.
func PlaceFile(tmp, dir, name string) (string, error) {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 0; i < 10000; i++ {
		cand := name
		if i > 0 {
			cand = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		p := filepath.Join(dir, cand)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_ = f.Close()
		if err := os.Rename(tmp, p); err != nil {
			_ = os.Remove(p)
			return "", err
		}
		return p, nil
	}
	return "", fmt.Errorf("too many files named like %q", name)
}
