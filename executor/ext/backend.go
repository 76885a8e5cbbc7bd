package ext

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/executor/ext/bridge"
	"github.com/chromegate/chromegate/executor/ext/wire"
)

// BackendName is the extension backend's name in tab ids and chrome_status.
const BackendName = "ext"

// BackendOptions configures the extension Backend.
type BackendOptions struct {
	// DataDir is where downloads land (DataDir/downloads, 0700).
	DataDir string
	// UploadDirs confine set_files, as on the CDP backend.
	UploadDirs       []string
	MaxDownloadBytes int64
	// Boundary decides every request of the tabs the extension drives
	// (the extension asks with decide frames). nil is a disabled boundary:
	// every request is allowed.
	Boundary *egress.Boundary
	// Resolver maps names for the server's own fetches (download_file) as
	// the browser does: the --host-resolver-rules of a browser chromegate
	// launched with the extension. nil resolves with the system's resolver,
	// as the user's own Chrome does.
	Resolver *egress.Resolver
}

// Backend serves the user's own Chrome through the paired extension. It
// has an Executor only while an authenticated extension is connected, and
// only for the local (default) session: the real browser profile is the
// user's, never shared with other HTTP sessions.
type Backend struct {
	b    *bridge.Bridge
	opts BackendOptions

	mu    sync.Mutex
	ids   map[*bridge.Conn]executor.TabIDs
	tools *extTools // page tools of the current connection (webmcp.go)
}

var _ executor.Backend = (*Backend)(nil)

// NewBackend returns the extension backend over a bridge.
func NewBackend(b *bridge.Bridge, opts BackendOptions) *Backend {
	if opts.MaxDownloadBytes <= 0 {
		opts.MaxDownloadBytes = 512 << 20
	}
	b.SetDecider(decider{b: opts.Boundary})
	return &Backend{b: b, opts: opts, ids: map[*bridge.Conn]executor.TabIDs{}}
}

// Name is "ext".
func (be *Backend) Name() string { return BackendName }

// Open returns the Executor of the connected extension, or NO_BACKEND at
// once when none is connected, so the Manager falls back without waiting.
func (be *Backend) Open(ctx context.Context, session string) (executor.Executor, error) {
	if session != executor.DefaultSession {
		return nil, executor.Errorf(executor.CodeNoBackend, "the extension serves only the local session, not %q", session).
			WithHint("HTTP sessions run on the CDP backend; enable it")
	}
	c := be.b.Conn()
	if c == nil {
		return nil, executor.Errorf(executor.CodeNoBackend, "no chromegate extension is connected").
			WithHint("open Chrome with the chromegate extension loaded and paired (`chromegate pair install`, or a code from `chromegate pair code`)")
	}
	be.mu.Lock()
	ids, ok := be.ids[c]
	if !ok {
		// Chrome's tab ids live as long as the browser; a new connection
		// may be a new browser, so ids from an earlier one are stale.
		ids = executor.NewTabIDs(BackendName)
		be.ids = map[*bridge.Conn]executor.TabIDs{c: ids}
	}
	be.mu.Unlock()
	return &Executor{c: c, be: be, ids: ids}, nil
}

// StampTabs turns the current connection's raw Chrome tab ids (as the
// bridge's Status reports them) into the tab ids calls use.
func (be *Backend) StampTabs(raw []string) []string {
	c := be.b.Conn()
	if c == nil {
		return raw
	}
	be.mu.Lock()
	ids, ok := be.ids[c]
	be.mu.Unlock()
	if !ok {
		return raw // no call made yet: no ids handed out either
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		out[i] = ids.Stamp(r)
	}
	return out
}

// Executor proxies every primitive to the extension as a command frame.
// Tab ids are stamped "ext:<session>:<chrome tab id>".
type Executor struct {
	c   *bridge.Conn
	be  *Backend
	ids executor.TabIDs
}

var _ executor.Executor = (*Executor)(nil)

// Backend is "ext".
func (e *Executor) Backend() string { return BackendName }

// Done is closed when the extension's connection is gone.
func (e *Executor) Done() <-chan struct{} { return e.c.Done() }

// EndCause is why the connection ended (EXTENSION_DISCONNECTED with its
// reason), nil while it lives.
func (e *Executor) EndCause() *executor.Error { return e.c.EndCause() }

var _ executor.Ender = (*Executor)(nil)

// Close does nothing to the user's browser; the connection stays for the
// next call.
func (e *Executor) Close() error { return nil }

// Ping asks the extension for a pong.
func (e *Executor) Ping(ctx context.Context) error { return e.c.Ping(ctx) }

// do runs one command: the public tab id in *tab is swapped for Chrome's,
// and the tab ids in the result are stamped on the way back.
//
// Every primitive of this backend passes here: its span starts here when
// the call is traced (executor.StartPrimitive), named by the wire method.
func do[R any](ctx context.Context, e *Executor, method string, tab *string, params any) (_ R, err error) {
	ctx, end := executor.StartPrimitive(ctx, BackendName, method)
	defer func() { end(err) }()
	var out R
	raw := ""
	if tab != nil {
		var err error
		if raw, err = e.ids.Raw(*tab); err != nil {
			return out, err
		}
		*tab = raw
	}
	if err := e.c.Call(ctx, method, raw, params, &out); err != nil {
		return out, e.stampErr(err)
	}
	e.stamp(&out)
	return out, nil
}

// tabRef is how the extension names raw tab N in a DIALOG_OPEN error's
// words (extension/dialogs.js tabRef).
var tabRef = regexp.MustCompile(`\{tab:([0-9]+)\}`)

// stampErr stamps the raw tab ids a DIALOG_OPEN error names (the tab
// whose dialog to answer) with this session's.
func (e *Executor) stampErr(err error) error {
	var xe *executor.Error
	if !errors.As(err, &xe) || xe.Code != executor.CodeDialogOpen {
		return err
	}
	stamp := func(s string) string {
		return tabRef.ReplaceAllStringFunc(s, func(m string) string { return e.ids.Stamp(tabRef.FindStringSubmatch(m)[1]) })
	}
	c := *xe
	c.Message, c.Hint = stamp(c.Message), stamp(c.Hint)
	return &c
}

// AnswerDialog accepts or dismisses the dialog open on a tab.
func (e *Executor) AnswerDialog(ctx context.Context, p executor.DialogParams) (executor.PageState, error) {
	return do[executor.PageState](ctx, e, wire.MethodAnswerDialog, &p.TabID, &p)
}

var _ executor.Emulator = (*Executor)(nil)

var (
	_ executor.FrameReader  = (*Executor)(nil)
	_ executor.FrameLocator = (*Executor)(nil)
)

// Emulate replaces (p.Set) or reports the emulation of every tab the
// extension drives (extension/emulate.js). The user's permissions are
// not changed: a position is emulated where Chrome lets the page ask.
func (e *Executor) Emulate(ctx context.Context, p executor.EmulateParams) (executor.Emulation, error) {
	if p.Set != nil {
		if err := p.Set.Validate(); err != nil {
			return executor.Emulation{}, err
		}
		p.Origin = ""
	}
	return do[executor.Emulation](ctx, e, wire.MethodEmulate, &p.TabID, &p)
}

func (e *Executor) stampID(id *string) {
	if *id != "" {
		*id = e.ids.Stamp(*id)
	}
}

func (e *Executor) stamp(v any) {
	switch r := v.(type) {
	case *executor.Tab:
		e.stampID(&r.ID)
	case *[]executor.Tab:
		for i := range *r {
			e.stampID(&(*r)[i].ID)
		}
	case *executor.PageState:
		e.stampID(&r.TabID)
	case *executor.NavResult:
		e.stampID(&r.TabID)
	case *executor.ActionResult:
		e.stampID(&r.TabID)
	case *executor.TextResult:
		e.stampID(&r.TabID)
	case *executor.Screenshot:
		e.stampID(&r.TabID)
	case *executor.EvalResult:
		e.stampID(&r.TabID)
	case *executor.ScriptResult:
		e.stampID(&r.TabID)
	case *executor.WaitResult:
		e.stampID(&r.TabID)
	case *executor.Status:
		e.stampID(&r.SelectedTab)
	case *executor.NetworkLog:
		e.stampID(&r.TabID)
	case *executor.NetworkEntry:
		e.stampID(&r.TabID)
	case *executor.ConsoleLog:
		e.stampID(&r.TabID)
	case *pdfReply:
		e.stampID(&r.TabID)
	}
}

type tabParams struct {
	TabID string `json:"tabId"`
}

type empty struct{}

func (e *Executor) Tabs(ctx context.Context) ([]executor.Tab, error) {
	return do[[]executor.Tab](ctx, e, wire.MethodTabs, nil, empty{})
}

func (e *Executor) TabInfo(ctx context.Context, tabID string) (executor.Tab, error) {
	p := tabParams{TabID: tabID}
	return do[executor.Tab](ctx, e, wire.MethodTabInfo, &p.TabID, &p)
}

func (e *Executor) SelectTab(ctx context.Context, tabID string) (executor.Tab, error) {
	p := tabParams{TabID: tabID}
	return do[executor.Tab](ctx, e, wire.MethodSelectTab, &p.TabID, &p)
}

func (e *Executor) NewTab(ctx context.Context, p executor.NewTabParams) (executor.Tab, error) {
	return do[executor.Tab](ctx, e, wire.MethodNewTab, nil, &p)
}

func (e *Executor) CloseTab(ctx context.Context, tabID string) error {
	p := tabParams{TabID: tabID}
	_, err := do[empty](ctx, e, wire.MethodCloseTab, &p.TabID, &p)
	return err
}

func (e *Executor) Navigate(ctx context.Context, p executor.NavigateParams) (executor.NavResult, error) {
	return do[executor.NavResult](ctx, e, wire.MethodNavigate, &p.TabID, &p)
}

func (e *Executor) Back(ctx context.Context, p executor.HistoryParams) (executor.NavResult, error) {
	return do[executor.NavResult](ctx, e, wire.MethodBack, &p.TabID, &p)
}

func (e *Executor) Forward(ctx context.Context, p executor.HistoryParams) (executor.NavResult, error) {
	return do[executor.NavResult](ctx, e, wire.MethodForward, &p.TabID, &p)
}

func (e *Executor) Reload(ctx context.Context, p executor.HistoryParams) (executor.NavResult, error) {
	return do[executor.NavResult](ctx, e, wire.MethodReload, &p.TabID, &p)
}

func (e *Executor) Click(ctx context.Context, p executor.ClickParams) (executor.ActionResult, error) {
	return do[executor.ActionResult](ctx, e, wire.MethodClick, &p.TabID, &p)
}

func (e *Executor) Type(ctx context.Context, p executor.TypeParams) (executor.ActionResult, error) {
	return do[executor.ActionResult](ctx, e, wire.MethodType, &p.TabID, &p)
}

func (e *Executor) Fill(ctx context.Context, p executor.FillParams) (executor.ActionResult, error) {
	return do[executor.ActionResult](ctx, e, wire.MethodFill, &p.TabID, &p)
}

func (e *Executor) Press(ctx context.Context, p executor.PressParams) (executor.ActionResult, error) {
	return do[executor.ActionResult](ctx, e, wire.MethodPress, &p.TabID, &p)
}

func (e *Executor) Hover(ctx context.Context, p executor.TargetParams) (executor.ActionResult, error) {
	return do[executor.ActionResult](ctx, e, wire.MethodHover, &p.TabID, &p)
}

func (e *Executor) Scroll(ctx context.Context, p executor.ScrollParams) (executor.ActionResult, error) {
	return do[executor.ActionResult](ctx, e, wire.MethodScroll, &p.TabID, &p)
}

func (e *Executor) SelectOption(ctx context.Context, p executor.SelectParams) (executor.ActionResult, error) {
	return do[executor.ActionResult](ctx, e, wire.MethodSelectOption, &p.TabID, &p)
}

// SetFiles confines the paths to the upload directories here, before the
// extension (which cannot see the server's policy) is asked.
func (e *Executor) SetFiles(ctx context.Context, p executor.SetFilesParams) (executor.ActionResult, error) {
	paths, err := executor.ConfinePaths(executor.TenantRoots(e.be.opts.UploadDirs, p.Tenant), p.Paths)
	if err != nil {
		return executor.ActionResult{}, err
	}
	p.Paths = paths
	return do[executor.ActionResult](ctx, e, wire.MethodSetFiles, &p.TabID, &p)
}

func (e *Executor) Drag(ctx context.Context, p executor.DragParams) (executor.ActionResult, error) {
	return do[executor.ActionResult](ctx, e, wire.MethodDrag, &p.TabID, &p)
}

func (e *Executor) Text(ctx context.Context, p executor.TextParams) (executor.TextResult, error) {
	return do[executor.TextResult](ctx, e, wire.MethodText, &p.TabID, &p)
}

func (e *Executor) HTML(ctx context.Context, p executor.HTMLParams) (executor.TextResult, error) {
	return do[executor.TextResult](ctx, e, wire.MethodHTML, &p.TabID, &p)
}

func (e *Executor) Screenshot(ctx context.Context, p executor.ScreenshotParams) (executor.Screenshot, error) {
	return do[executor.Screenshot](ctx, e, wire.MethodScreenshot, &p.TabID, &p)
}

func (e *Executor) Eval(ctx context.Context, p executor.EvalParams) (executor.EvalResult, error) {
	return do[executor.EvalResult](ctx, e, wire.MethodEval, &p.TabID, &p)
}

func (e *Executor) WaitFor(ctx context.Context, p executor.WaitParams) (executor.WaitResult, error) {
	return do[executor.WaitResult](ctx, e, wire.MethodWaitFor, &p.TabID, &p)
}

func (e *Executor) RunScript(ctx context.Context, p executor.ScriptParams) (executor.ScriptResult, error) {
	return do[executor.ScriptResult](ctx, e, wire.MethodRunScript, &p.TabID, &p)
}

// FrameDocument reaches the document of a frame of another origin
// (executor.FrameReader): extension/frames.js.
func (e *Executor) FrameDocument(ctx context.Context, p executor.FrameParams) (executor.FrameDoc, error) {
	return do[executor.FrameDoc](ctx, e, wire.MethodFrameDocument, &p.TabID, &p)
}

// RefDocument reports the document a ref's token names.
func (e *Executor) RefDocument(ctx context.Context, p executor.FrameParams) (executor.FrameDoc, error) {
	return do[executor.FrameDoc](ctx, e, wire.MethodRefDocument, &p.TabID, &p)
}

// FrameAt reports the document at a point of a tab's page
// (executor.FrameLocator): extension/frames.js.
func (e *Executor) FrameAt(ctx context.Context, p executor.FrameAtParams) (executor.FrameDoc, error) {
	return do[executor.FrameDoc](ctx, e, wire.MethodFrameAt, &p.TabID, &p)
}

func (e *Executor) Cookies(ctx context.Context, p executor.CookiesParams) ([]executor.Cookie, error) {
	return do[[]executor.Cookie](ctx, e, wire.MethodCookies, nil, &p)
}

func (e *Executor) SetCookies(ctx context.Context, p executor.SetCookiesParams) error {
	_, err := do[empty](ctx, e, wire.MethodSetCookies, nil, &p)
	return err
}

func (e *Executor) ClipboardWrite(ctx context.Context, p executor.ClipboardParams) error {
	_, err := do[empty](ctx, e, wire.MethodClipboardWrite, &p.TabID, &p)
	return err
}

// Download fetches in Go, as the CDP backend does, with the cookies the
// browser would send: a URL directly, a click's download by the URL the
// extension caught (and cancelled) in Chrome's download manager.
func (e *Executor) Download(ctx context.Context, p executor.DownloadParams) (executor.DownloadResult, error) {
	if err := p.Validate(); err != nil {
		return executor.DownloadResult{}, err
	}
	if !p.Target.IsZero() {
		type caught struct {
			URL      string `json:"url"`
			Filename string `json:"filename"`
		}
		q := struct {
			TabID  string          `json:"tabId"`
			Target executor.Target `json:"target"`
		}{p.TabID, p.Target}
		got, err := do[caught](ctx, e, wire.MethodDownloadTarget, &q.TabID, &q)
		if err != nil {
			return executor.DownloadResult{}, err
		}
		p.URL = got.URL
		if p.Filename == "" {
			p.Filename = got.Filename
		}
	}
	dir := executor.TenantRoot(filepath.Join(e.be.opts.DataDir, "downloads"), p.Tenant)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return executor.DownloadResult{}, executor.Errorf(executor.CodeDownloadFailed, "cannot create the download directory: %v", err).Wrap(err)
	}
	return executor.Fetch(ctx, executor.FetchParams{URL: p.URL, Filename: p.Filename, Dir: dir,
		Limit: e.be.opts.MaxDownloadBytes, Jar: &extJar{ctx: ctx, e: e},
		// The server fetches from its own network: the URL (the one a click
		// led to included: the page chose it) and every redirect hop are
		// decided as the call was, and each connection on the address it
		// dials, mapped as the browser maps names when chromegate knows how.
		DecideHop: p.DecideHop,
		Dial:      e.be.opts.Boundary.Dialer(executor.DefaultSession, BackendName, e.be.opts.Resolver)})
}

// extJar lends the browser's cookies for a URL to Go's HTTP client.
type extJar struct {
	ctx context.Context
	e   *Executor
}

func (j *extJar) Cookies(u *url.URL) []*http.Cookie {
	cs, err := j.e.Cookies(j.ctx, executor.CookiesParams{URLs: []string{u.String()}})
	if err != nil {
		return nil
	}
	out := make([]*http.Cookie, 0, len(cs))
	for _, c := range cs {
		out = append(out, &http.Cookie{Name: c.Name, Value: c.Value})
	}
	return out
}

// SetCookies leaves cookies a download response sets to the browser's next
// visit: the user's real profile is not written behind their back.
func (j *extJar) SetCookies(*url.URL, []*http.Cookie) {}

func (e *Executor) Status(ctx context.Context) (executor.Status, error) {
	st, err := do[executor.Status](ctx, e, wire.MethodStatus, nil, empty{})
	if err != nil {
		return st, err
	}
	st.Backend = BackendName
	st.Session = e.ids.Session
	st.Attached = true
	st.DownloadDir = filepath.Join(e.be.opts.DataDir, "downloads")
	return st, nil
}

// UserBrowser reports that the extension's tabs are the user's own: the
// server leaves a tab no call has driven as it is, even outside the policy.
func (e *Executor) UserBrowser() bool { return true }

var _ executor.Pointer = (*Executor)(nil)

// HitTest says what is under each point (extension/point.js).
func (e *Executor) HitTest(ctx context.Context, p executor.HitParams) ([]executor.Hit, error) {
	return do[[]executor.Hit](ctx, e, wire.MethodHitTest, &p.TabID, &p)
}

// Point acts at a point, checking the document under it again after the
// pointer moved there (extension/point.js).
func (e *Executor) Point(ctx context.Context, p executor.PointParams) (executor.PointResult, error) {
	r, err := do[executor.PointResult](ctx, e, wire.MethodPoint, &p.TabID, &p)
	if err == nil {
		e.stampID(&r.TabID)
	}
	return r, err
}

// Marks reads the boxes of the interactive elements in the viewport with
// the point script, as any of chromegate's page scripts.
func (e *Executor) Marks(ctx context.Context, tabID string, most int) (executor.Marks, error) {
	var m executor.Marks
	arg, _ := json.Marshal(map[string]any{"op": "marks", "max": most})
	r, err := e.RunScript(ctx, executor.ScriptParams{TabID: tabID, Source: executor.PointScript, Arg: arg})
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(r.Value, &m); err != nil {
		return m, executor.Errorf(executor.CodeInternal, "mark refs: unexpected answer: %v", err)
	}
	return m, nil
}
