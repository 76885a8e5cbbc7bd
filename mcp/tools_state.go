package mcp

import (
	"context"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
)

// Browser state: cookies, the clipboard, downloads. Each tool is one
// constructor: its declaration, its class, the facts the call path needs,
// its handler.

// groupState is the README row of these tools.
var groupState = &ToolGroup{Name: "state"}

func cookiesGetTool() *Tool {
	return newTool(Tool{
		Name: "cookies_get", Title: "Get cookies",
		Group:       groupState,
		Output:      &Output{Value: cookiesOut{}},
		Description: "Cookies of the session, or those sent to urls." + pageTextDoc,
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
	}, cookiesGet)
}

func cookiesSetTool() *Tool {
	return newTool(Tool{
		Name: "cookies_set", Title: "Set cookies",
		Group:       groupState,
		Output:      &Output{Value: setOut{}},
		Description: "Add cookies; each needs url, or domain and path. Also: expires, http_only, secure, same_site.",
		Rare:        []string{"cookies[].domain", "cookies[].path", "cookies[].expires", "cookies[].http_only", "cookies[].secure", "cookies[].same_site"},
		ReadOnly:    no(), Idempotent: true, Action: ActionInteract, Mutating: true, Secrets: []string{"cookies"},
		Check: checkCookies,
	}, cookiesSet)
}

func clipboardWriteTool() *Tool {
	return newTool(Tool{
		Name: "clipboard_write", Title: "Write clipboard",
		Group:       groupState,
		Output:      &Output{Value: writtenOut{}},
		Description: "Put text on the clipboard; paste with press Control+V.",
		ReadOnly:    no(), Destructive: no(), Idempotent: true, Action: ActionInteract, Mutating: true, Secrets: []string{"text"},
	}, clipboardWrite)
}

func downloadFileTool() *Tool {
	return newTool(Tool{
		Name: "download_file", Title: "Download file",
		Group:       groupState,
		Output:      &Output{Value: downloadOut{}},
		Description: "Download url, or what clicking the target downloads, to the server.",
		ReadOnly:    no(), Destructive: no(), Action: ActionDownload, URLArg: "url", // not Mutating: downloads have their own switch
		Targets:    []TargetArg{{}},
		Check:      checkDownload,
		TimeoutArg: true,
	}, download)
}

// cookie is a cookie as tools see it, in and out.
type cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	URL      string  `json:"url,omitempty"`
	Domain   string  `json:"domain,omitempty"`
	Path     string  `json:"path,omitempty"`
	Expires  float64 `json:"expires,omitempty"`
	HTTPOnly bool    `json:"http_only,omitempty"`
	Secure   bool    `json:"secure,omitempty"`
	SameSite string  `json:"same_site,omitempty"`
}

// cookiesGetIn is cookies_get's input: the URLs whose cookies, or none
// for all.
type cookiesGetIn struct {
	URLs []string `json:"urls,omitempty"`
}

func cookiesGet(ctx context.Context, c *Call, a cookiesGetIn) (*Result, error) {
	cs, err := c.Executor().Cookies(ctx, executor.CookiesParams{URLs: a.URLs})
	if err != nil {
		return nil, err
	}
	out := make([]cookie, len(cs))
	for i, k := range cs {
		out[i] = cookie{k.Name, k.Value, k.URL, k.Domain, k.Path, k.Expires, k.HTTPOnly, k.Secure, k.SameSite}
	}
	// Pages set cookies: their names and values are the page's words.
	return &Result{Value: cookiesOut{out}, Untrusted: len(out) > 0}, nil
}

func checkCookies(args map[string]any) error {
	list, _ := args["cookies"].([]any)
	for i, v := range list {
		m, _ := v.(map[string]any)
		if argString(m, "url") == "" && (argString(m, "domain") == "" || argString(m, "path") == "") {
			return badArgs("cookies[%d] has neither url nor domain and path", i).WithHint("give each cookie a url, or a domain and a path")
		}
	}
	return nil
}

// cookiesSetIn is cookies_set's input.
type cookiesSetIn struct {
	Cookies []cookie `json:"cookies"`
}

func (cookiesSetIn) shape(s *jsonschema.Schema) {
	setEnum(propOf(s, "cookies").Items, "same_site", "Strict", "Lax", "None")
}

func cookiesSet(ctx context.Context, c *Call, a cookiesSetIn) (*Result, error) {
	p := executor.SetCookiesParams{Cookies: make([]executor.Cookie, len(a.Cookies))}
	for i, k := range a.Cookies {
		p.Cookies[i] = executor.Cookie{Name: k.Name, Value: k.Value, URL: k.URL, Domain: k.Domain, Path: k.Path,
			Expires: k.Expires, HTTPOnly: k.HTTPOnly, Secure: k.Secure, SameSite: k.SameSite}
	}
	if err := c.Executor().SetCookies(ctx, p); err != nil {
		return nil, err
	}
	return &Result{Value: setOut{len(p.Cookies)}}, nil
}

// clipboardWriteIn is clipboard_write's input.
type clipboardWriteIn struct {
	Text string `json:"text"`
	tabIn
}

func clipboardWrite(ctx context.Context, c *Call, a clipboardWriteIn) (*Result, error) {
	text := a.Text
	if err := c.Executor().ClipboardWrite(ctx, executor.ClipboardParams{TabID: a.TabID, Text: text}); err != nil {
		return nil, err
	}
	return &Result{Value: writtenOut{utf8.RuneCountInString(text)}}, nil
}

func checkDownload(args map[string]any) error {
	url := argString(args, "url") != ""
	switch target := !targetOf(args, "").IsZero(); {
	case url && target:
		return badArgs("both url and a target are set").WithHint("pass url to fetch it, or a selector or ref to click, not both")
	case !url && !target:
		return badArgs("nothing to download").WithHint("pass url, or a selector or ref of a download link")
	}
	return nil
}

// downloadIn is download_file's input: a URL, or a target to click.
type downloadIn struct {
	URL string `json:"url,omitempty"`
	targetIn
	Filename string `json:"filename,omitempty"`
	tabIn
}

func download(ctx context.Context, c *Call, a downloadIn) (*Result, error) {
	d, err := c.Executor().Download(ctx, executor.DownloadParams{TabID: a.TabID, URL: a.URL, Target: a.target(), Filename: a.Filename, Tenant: c.Principal.Tenant(),
		DecideHop: c.decideHop()})
	if err != nil {
		if executor.CodeOf(err) == executor.CodeDownloadFailed && a.URL == "" {
			if denied := c.srv.opts.Egress.Since(c.Session, c.mark); len(denied) > 0 {
				// The click's download went through the browser, whose
				// request (or a redirect hop of it) the boundary refused:
				// the browser saw only a failed load. The hosts are in the
				// call's blocked-requests note. A link's refused load may
				// have left the tab on the browser's error page.
				if tab, outside := c.outsideNow(ctx); outside {
					c.srv.blankOutside(ctx, c, c.Executor(), tab.ID)
				}
				return nil, executor.Errorf(executor.CodePolicyDenied, "download_file: the download the click started was blocked; a request it made was outside the policy and nothing was stored").
					WithHint("download only from allowed hosts; the note after this result lists what was blocked").Wrap(err)
			}
		}
		return nil, err
	}
	// The file's name (and so its path) is the server's cleaned form of
	// the name the page or its server chose.
	return &Result{Value: downloadOut{d.Path, d.Filename, d.Size, d.MIMEType, d.SHA256, d.URL}, Untrusted: true}, nil
}
