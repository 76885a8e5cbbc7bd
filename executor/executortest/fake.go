// Package executortest provides an in-memory executor.Executor and
// executor.Backend for tests that need no browser: tabs with history, cookies
// and a clipboard kept in memory, every call recorded with its parameters,
// errors and results scriptable per method, and a Done channel a test can
// close to simulate a browser that died.
package executortest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"slices"
	"strconv"
	"sync"

	"github.com/chromegate/chromegate/executor"
)

// Call is one recorded primitive call: the Executor method name (for example
// "Click") and the params value it received (for example
// executor.ClickParams; the tab id string for SelectTab, TabInfo and
// CloseTab; nil for Tabs and Status).
type Call struct {
	Method string
	Params any
}

// Handler replaces the built-in behaviour of one method. It receives the
// method's params (as recorded in Call) and returns the method's result type
// (for example executor.ActionResult for "Click"; nil for methods that return
// only an error). A Handler may block on ctx to simulate a slow page.
type Handler func(ctx context.Context, params any) (any, error)

// Fake is an in-memory Executor. It starts with one selected about:blank tab.
// Fake is safe for concurrent use; Handle, Fail and Kill may be called while
// calls are in flight.
type Fake struct {
	ids executor.TabIDs

	mu        sync.Mutex
	tabs      []*tab
	selected  string // raw id
	next      int
	calls     []Call
	handlers  map[string]Handler
	cookies   []executor.Cookie
	clipboard string
	done      chan struct{}
	killOnce  sync.Once
	pageTools map[string][]executor.PageTool // by public tab id
	toolSubs  map[int]func(executor.PageToolsEvent)
	nextSub   int
	emulation executor.Emulation // (emulate.go)
	peek      func(tabID string) (executor.Tab, bool)
}

// SetPeek makes the fake an executor.TabPeeker answering with peek (nil:
// it cannot say, the default, and the Gate reads TabInfo).
func (f *Fake) SetPeek(peek func(tabID string) (executor.Tab, bool)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.peek = peek
}

// PeekTab implements executor.TabPeeker (see SetPeek).
func (f *Fake) PeekTab(tabID string) (executor.Tab, bool) {
	f.mu.Lock()
	peek := f.peek
	f.mu.Unlock()
	if peek == nil {
		return executor.Tab{}, false
	}
	return peek(tabID)
}

type tab struct {
	raw     string
	history []string
	pos     int
	navs    int       // main-frame navigations, for the network log
	net     []fakeReq // the network log, oldest first, at most MaxNetworkEntries
	nextReq int
	console *executor.ConsoleRing // made on first use
	dialog  *executor.Dialog      // open (OpenDialog) until AnswerDialog
}

// fakeReq is a logged request and its response body.
type fakeReq struct {
	r    executor.NetworkRequest
	body []byte
}

func (t *tab) url() string { return t.history[t.pos] }

var _ executor.Executor = (*Fake)(nil)

// New returns a Fake for backend whose tab ids are stamped with session.
func New(backend, session string) *Fake {
	f := &Fake{
		ids:      executor.TabIDs{Backend: backend, Session: session},
		handlers: map[string]Handler{},
		done:     make(chan struct{}),
	}
	f.selected = f.addTab("about:blank").raw
	return f
}

func (f *Fake) addTab(url string) *tab {
	f.next++
	t := &tab{raw: strconv.Itoa(f.next), history: []string{url}}
	f.tabs = append(f.tabs, t)
	return t
}

// TabID returns the public id of the i-th open tab (0-based).
func (f *Fake) TabID(i int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ids.Stamp(f.tabs[i].raw)
}

// Handle makes every later call of method run h instead of the built-in
// behaviour. A nil h restores the built-in behaviour.
func (f *Fake) Handle(method string, h Handler) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h == nil {
		delete(f.handlers, method)
		return
	}
	f.handlers[method] = h
}

// Fail makes every later call of method return err.
func (f *Fake) Fail(method string, err error) {
	f.Handle(method, func(context.Context, any) (any, error) { return nil, err })
}

// Kill simulates the browser going away: Done closes, Ping fails and every
// later call fails with TARGET_GONE. Kill may be called more than once.
func (f *Fake) Kill() { f.killOnce.Do(func() { close(f.done) }) }

// Calls returns the recorded primitive calls in order. Ping, Done, Backend
// and Close are not recorded.
func (f *Fake) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// Methods returns the method names of the recorded calls in order.
func (f *Fake) Methods() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.calls))
	for i, c := range f.calls {
		out[i] = c.Method
	}
	return out
}

// Last returns the most recent recorded call, or the zero Call.
func (f *Fake) Last() Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return Call{}
	}
	return f.calls[len(f.calls)-1]
}

// ResetCalls forgets the recorded calls.
func (f *Fake) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

// Clipboard returns the text last written with ClipboardWrite.
func (f *Fake) Clipboard() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clipboard
}

func (f *Fake) dead() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

var errGone = executor.Errorf(executor.CodeTargetGone, "the fake browser was killed")

// begin records a call and reports a scripted handler, if any. It fails when
// the fake is dead or ctx is done.
func (f *Fake) begin(ctx context.Context, method string, params any) (Handler, error) {
	f.mu.Lock()
	f.calls = append(f.calls, Call{Method: method, Params: params})
	h := f.handlers[method]
	f.mu.Unlock()
	if f.dead() {
		return nil, errGone
	}
	if err := ctx.Err(); err != nil {
		return nil, executor.AsError(err)
	}
	return h, nil
}

// run is the shape of every primitive: record, then either the scripted
// handler or the built-in behaviour.
func run[T any](f *Fake, ctx context.Context, method string, params any, builtin func() (T, error)) (_ T, err error) {
	ctx, end := executor.StartPrimitive(ctx, f.Backend(), method)
	defer func() { end(err) }()
	var zero T
	h, err := f.begin(ctx, method, params)
	if err != nil {
		return zero, err
	}
	if h == nil {
		return builtin()
	}
	v, err := h(ctx, params)
	if err != nil {
		return zero, err
	}
	if v == nil {
		return zero, nil
	}
	out, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("executortest: handler for %s returned %T, want %T", method, v, zero)
	}
	return out, nil
}

// find resolves a public tab id ("" = selected). f.mu must be held.
func (f *Fake) find(id string) (*tab, error) {
	raw, err := f.ids.Raw(id)
	if err != nil {
		return nil, err
	}
	if raw == "" {
		raw = f.selected
	}
	for _, t := range f.tabs {
		if t.raw == raw {
			return t, nil
		}
	}
	return nil, executor.Errorf(executor.CodeTabNotFound, "no tab %q", id)
}

func title(url string) string {
	if url == "about:blank" {
		return ""
	}
	return "Title of " + url
}

// state reports a tab's page. f.mu must be held.
func (f *Fake) state(t *tab) executor.PageState {
	return executor.PageState{TabID: f.ids.Stamp(t.raw), URL: t.url(), Title: title(t.url())}
}

func (f *Fake) tabOf(t *tab) executor.Tab {
	return executor.Tab{ID: f.ids.Stamp(t.raw), URL: t.url(), Title: title(t.url()), Selected: t.raw == f.selected, Dialog: t.dialog}
}

// OpenDialog makes tab id's page hold d open (Action "open"), as if the
// page had opened it: TabInfo names it until AnswerDialog answers it.
// Other methods are not held by it; script them (Fail, Handle) to be.
func (f *Fake) OpenDialog(id string, d executor.Dialog) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.find(id)
	if err != nil {
		return err
	}
	d.Action = executor.DialogOpen
	t.dialog = &d
	return nil
}

// AnswerDialog implements executor.Executor: the tab's open dialog is
// answered and reported in the result; with none open it is BAD_ARGS.
func (f *Fake) AnswerDialog(ctx context.Context, p executor.DialogParams) (executor.PageState, error) {
	return run(f, ctx, "AnswerDialog", p, func() (executor.PageState, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		t, err := f.find(p.TabID)
		if err != nil {
			return executor.PageState{}, err
		}
		if t.dialog == nil {
			return executor.PageState{}, executor.Errorf(executor.CodeBadArgs, "no dialog is open on this tab")
		}
		d := *t.dialog
		t.dialog = nil
		d.Action = executor.DialogDismissed
		if p.Accept {
			d.Action = executor.DialogAccepted
			if d.Type == "prompt" {
				d.Answer = d.Default
				if p.PromptText != nil {
					d.Answer = *p.PromptText
				}
			}
		}
		st := f.state(t)
		st.Dialogs = []executor.Dialog{d}
		return st, nil
	})
}

// pageOf reports the page of tab id after an action on it.
func (f *Fake) pageOf(id string) (executor.PageState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.find(id)
	if err != nil {
		return executor.PageState{}, err
	}
	return f.state(t), nil
}

// Backend implements executor.Executor.
func (f *Fake) Backend() string { return f.ids.Backend }

// Tabs implements executor.Executor.
func (f *Fake) Tabs(ctx context.Context) ([]executor.Tab, error) {
	return run(f, ctx, "Tabs", nil, func() ([]executor.Tab, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		out := make([]executor.Tab, len(f.tabs))
		for i, t := range f.tabs {
			out[i] = f.tabOf(t)
		}
		return out, nil
	})
}

// TabInfo implements executor.Executor.
func (f *Fake) TabInfo(ctx context.Context, id string) (executor.Tab, error) {
	return run(f, ctx, "TabInfo", id, func() (executor.Tab, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		t, err := f.find(id)
		if err != nil {
			return executor.Tab{}, err
		}
		return f.tabOf(t), nil
	})
}

// SelectTab implements executor.Executor.
func (f *Fake) SelectTab(ctx context.Context, id string) (executor.Tab, error) {
	return run(f, ctx, "SelectTab", id, func() (executor.Tab, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		t, err := f.find(id)
		if err != nil {
			return executor.Tab{}, err
		}
		f.selected = t.raw
		return f.tabOf(t), nil
	})
}

// NewTab implements executor.Executor.
func (f *Fake) NewTab(ctx context.Context, p executor.NewTabParams) (executor.Tab, error) {
	return run(f, ctx, "NewTab", p, func() (executor.Tab, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		t := f.addTab(cmp.Or(p.URL, "about:blank"))
		f.selected = t.raw
		return f.tabOf(t), nil
	})
}

// CloseTab implements executor.Executor.
func (f *Fake) CloseTab(ctx context.Context, id string) error {
	_, err := run(f, ctx, "CloseTab", id, func() (struct{}, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		t, err := f.find(id)
		if err != nil {
			return struct{}{}, err
		}
		f.tabs = slices.DeleteFunc(f.tabs, func(x *tab) bool { return x == t })
		if f.selected == t.raw {
			f.selected = ""
			if len(f.tabs) > 0 {
				f.selected = f.tabs[len(f.tabs)-1].raw
			}
		}
		return struct{}{}, nil
	})
	return err
}

func (f *Fake) nav(id string, move func(t *tab) error) (executor.NavResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.find(id)
	if err != nil {
		return executor.NavResult{}, err
	}
	if err := move(t); err != nil {
		return executor.NavResult{}, err
	}
	t.navs++
	status := 200
	if t.url() == "about:blank" {
		status = 0
	}
	return executor.NavResult{PageState: f.state(t), Status: status}, nil
}

// Navigate implements executor.Executor.
func (f *Fake) Navigate(ctx context.Context, p executor.NavigateParams) (executor.NavResult, error) {
	return run(f, ctx, "Navigate", p, func() (executor.NavResult, error) {
		return f.nav(p.TabID, func(t *tab) error {
			t.history = append(t.history[:t.pos+1], p.URL)
			t.pos++
			return nil
		})
	})
}

// Back implements executor.Executor.
func (f *Fake) Back(ctx context.Context, p executor.HistoryParams) (executor.NavResult, error) {
	return run(f, ctx, "Back", p, func() (executor.NavResult, error) {
		return f.nav(p.TabID, func(t *tab) error {
			if t.pos > 0 {
				t.pos--
			}
			return nil
		})
	})
}

// Forward implements executor.Executor.
func (f *Fake) Forward(ctx context.Context, p executor.HistoryParams) (executor.NavResult, error) {
	return run(f, ctx, "Forward", p, func() (executor.NavResult, error) {
		return f.nav(p.TabID, func(t *tab) error {
			if t.pos < len(t.history)-1 {
				t.pos++
			}
			return nil
		})
	})
}

// Reload implements executor.Executor.
func (f *Fake) Reload(ctx context.Context, p executor.HistoryParams) (executor.NavResult, error) {
	return run(f, ctx, "Reload", p, func() (executor.NavResult, error) {
		return f.nav(p.TabID, func(*tab) error { return nil })
	})
}

func (f *Fake) action(ctx context.Context, method, tabID string, params any) (executor.ActionResult, error) {
	return run(f, ctx, method, params, func() (executor.ActionResult, error) {
		ps, err := f.pageOf(tabID)
		return executor.ActionResult{PageState: ps}, err
	})
}

// Click implements executor.Executor.
func (f *Fake) Click(ctx context.Context, p executor.ClickParams) (executor.ActionResult, error) {
	return f.action(ctx, "Click", p.TabID, p)
}

// Type implements executor.Executor.
func (f *Fake) Type(ctx context.Context, p executor.TypeParams) (executor.ActionResult, error) {
	return f.action(ctx, "Type", p.TabID, p)
}

// Fill implements executor.Executor.
func (f *Fake) Fill(ctx context.Context, p executor.FillParams) (executor.ActionResult, error) {
	return f.action(ctx, "Fill", p.TabID, p)
}

// Press implements executor.Executor.
func (f *Fake) Press(ctx context.Context, p executor.PressParams) (executor.ActionResult, error) {
	return f.action(ctx, "Press", p.TabID, p)
}

// Hover implements executor.Executor.
func (f *Fake) Hover(ctx context.Context, p executor.TargetParams) (executor.ActionResult, error) {
	return f.action(ctx, "Hover", p.TabID, p)
}

// Scroll implements executor.Executor.
func (f *Fake) Scroll(ctx context.Context, p executor.ScrollParams) (executor.ActionResult, error) {
	return f.action(ctx, "Scroll", p.TabID, p)
}

// SelectOption implements executor.Executor. The built-in behaviour reports
// the requested values as selected.
func (f *Fake) SelectOption(ctx context.Context, p executor.SelectParams) (executor.ActionResult, error) {
	return run(f, ctx, "SelectOption", p, func() (executor.ActionResult, error) {
		ps, err := f.pageOf(p.TabID)
		return executor.ActionResult{PageState: ps, Selected: p.Values}, err
	})
}

// SetFiles implements executor.Executor.
func (f *Fake) SetFiles(ctx context.Context, p executor.SetFilesParams) (executor.ActionResult, error) {
	return f.action(ctx, "SetFiles", p.TabID, p)
}

// Drag implements executor.Executor.
func (f *Fake) Drag(ctx context.Context, p executor.DragParams) (executor.ActionResult, error) {
	return f.action(ctx, "Drag", p.TabID, p)
}

// Text implements executor.Executor. The built-in text is "text of <target>"
// or "text of <url>" for the whole page.
func (f *Fake) Text(ctx context.Context, p executor.TextParams) (executor.TextResult, error) {
	return run(f, ctx, "Text", p, func() (executor.TextResult, error) {
		ps, err := f.pageOf(p.TabID)
		what := ps.URL
		if !p.Target.IsZero() {
			what = p.Target.String()
		}
		return executor.TextResult{PageState: ps, Text: "text of " + what}, err
	})
}

// HTML implements executor.Executor.
func (f *Fake) HTML(ctx context.Context, p executor.HTMLParams) (executor.TextResult, error) {
	return run(f, ctx, "HTML", p, func() (executor.TextResult, error) {
		ps, err := f.pageOf(p.TabID)
		return executor.TextResult{PageState: ps, Text: "<p>html of " + ps.URL + "</p>"}, err
	})
}

// Screenshot implements executor.Executor. The built-in image is a 4×3 PNG
// (JPEG is not encoded; the bytes are still PNG, with the JPEG MIME type).
func (f *Fake) Screenshot(ctx context.Context, p executor.ScreenshotParams) (executor.Screenshot, error) {
	return run(f, ctx, "Screenshot", p, func() (executor.Screenshot, error) {
		ps, err := f.pageOf(p.TabID)
		if err != nil {
			return executor.Screenshot{}, err
		}
		mime := "image/png"
		if p.Format == executor.FormatJPEG {
			mime = "image/jpeg"
		}
		return executor.Screenshot{PageState: ps, Data: PNG(4, 3), MIMEType: mime, Width: 4, Height: 3}, nil
	})
}

// PNG encodes a w×h opaque white PNG.
func PNG(w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.White)
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // writing to a bytes.Buffer cannot fail
	return b.Bytes()
}

// Eval implements executor.Executor. The built-in result is the expression
// itself as a JSON string; with ExpectURL, ErrPageMoved when the tab is
// elsewhere.
func (f *Fake) Eval(ctx context.Context, p executor.EvalParams) (executor.EvalResult, error) {
	return run(f, ctx, "Eval", p, func() (executor.EvalResult, error) {
		ps, err := f.pageOf(p.TabID)
		if err == nil && p.ExpectURL != "" && ps.URL != p.ExpectURL {
			return executor.EvalResult{}, executor.ErrPageMoved
		}
		v, _ := json.Marshal(p.Expression) // a string always marshals
		return executor.EvalResult{PageState: ps, OK: true, Value: v}, err
	})
}

// WaitFor implements executor.Executor. The built-in wait succeeds at once.
func (f *Fake) WaitFor(ctx context.Context, p executor.WaitParams) (executor.WaitResult, error) {
	return run(f, ctx, "WaitFor", p, func() (executor.WaitResult, error) {
		ps, err := f.pageOf(p.TabID)
		return executor.WaitResult{PageState: ps}, err
	})
}

// RunScript implements executor.Executor. The built-in script runs nothing
// and returns null; script a result with Handle("RunScript", ...).
func (f *Fake) RunScript(ctx context.Context, p executor.ScriptParams) (executor.ScriptResult, error) {
	return run(f, ctx, "RunScript", p, func() (executor.ScriptResult, error) {
		ps, err := f.pageOf(p.TabID)
		return executor.ScriptResult{PageState: ps, Value: json.RawMessage("null")}, err
	})
}

// Cookies implements executor.Executor. URL filtering is not modelled: every
// cookie is returned.
func (f *Fake) Cookies(ctx context.Context, p executor.CookiesParams) ([]executor.Cookie, error) {
	return run(f, ctx, "Cookies", p, func() ([]executor.Cookie, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		return slices.Clone(f.cookies), nil
	})
}

// SetCookies implements executor.Executor.
func (f *Fake) SetCookies(ctx context.Context, p executor.SetCookiesParams) error {
	_, err := run(f, ctx, "SetCookies", p, func() (struct{}, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.cookies = append(f.cookies, p.Cookies...)
		return struct{}{}, nil
	})
	return err
}

// ClipboardWrite implements executor.Executor.
func (f *Fake) ClipboardWrite(ctx context.Context, p executor.ClipboardParams) error {
	_, err := run(f, ctx, "ClipboardWrite", p, func() (struct{}, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.clipboard = p.Text
		return struct{}{}, nil
	})
	return err
}

// Download implements executor.Executor. Nothing is written to disk.
func (f *Fake) Download(ctx context.Context, p executor.DownloadParams) (executor.DownloadResult, error) {
	return run(f, ctx, "Download", p, func() (executor.DownloadResult, error) {
		name := executor.SanitizeFilename(cmp.Or(p.Filename, "download.bin"))
		return executor.DownloadResult{
			Path: "/downloads/" + name, Filename: name, Size: 3,
			SHA256: "039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81", // sha256("abc")
			URL:    cmp.Or(p.URL, "https://example.test/file"),
		}, nil
	})
}

// Status implements executor.Executor.
func (f *Fake) Status(ctx context.Context) (executor.Status, error) {
	return run(f, ctx, "Status", nil, func() (executor.Status, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		return executor.Status{
			Backend: f.ids.Backend, Session: f.ids.Session, Browser: "fake",
			Headless: true, Tabs: len(f.tabs), SelectedTab: f.ids.Stamp(f.selected),
		}, nil
	})
}

// Ping implements executor.Executor; it fails once the fake is killed.
func (f *Fake) Ping(ctx context.Context) error {
	if f.dead() {
		return errGone
	}
	return ctx.Err()
}

// Done implements executor.Executor.
func (f *Fake) Done() <-chan struct{} { return f.done }

// Close implements executor.Executor; it kills the fake.
func (f *Fake) Close() error {
	f.Kill()
	return nil
}

var _ executor.PageTooler = (*Fake)(nil)

// SetPageTools replaces the page tools of the tab with public id tabID (each
// tool's TabID is set to it) and tells the watchers what changed.
func (f *Fake) SetPageTools(tabID string, tools []executor.PageTool) {
	f.mu.Lock()
	if f.pageTools == nil {
		f.pageTools = map[string][]executor.PageTool{}
	}
	tools = slices.Clone(tools)
	for i := range tools {
		tools[i].TabID = tabID
	}
	added, removed := executor.DiffPageTools(f.pageTools[tabID], tools)
	f.pageTools[tabID] = tools
	subs := make([]func(executor.PageToolsEvent), 0, len(f.toolSubs))
	for _, fn := range f.toolSubs {
		subs = append(subs, fn)
	}
	f.mu.Unlock()
	if len(added)+len(removed) == 0 {
		return
	}
	ev := executor.PageToolsEvent{TabID: tabID, Added: added, Removed: removed}
	for _, fn := range subs {
		fn(ev)
	}
}

// PageTools implements executor.PageTooler with the tools SetPageTools set.
func (f *Fake) PageTools(ctx context.Context, tabID string) ([]executor.PageTool, error) {
	return run(f, ctx, "PageTools", tabID, func() ([]executor.PageTool, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		out := []executor.PageTool{}
		for _, t := range f.tabs {
			id := f.ids.Stamp(t.raw)
			if tabID == "" || tabID == id {
				out = append(out, f.pageTools[id]...)
			}
		}
		return out, nil
	})
}

// CallPageTool implements executor.PageTooler. The built-in tool returns
// its input as its output.
func (f *Fake) CallPageTool(ctx context.Context, p executor.PageToolCallParams) (executor.PageToolResult, error) {
	return run(f, ctx, "CallPageTool", p, func() (executor.PageToolResult, error) {
		ps, err := f.pageOf(p.TabID)
		return executor.PageToolResult{PageState: ps, Surface: cmp.Or(p.Surface, executor.SurfaceWebMCP), Output: p.Input}, err
	})
}

// WatchPageTools implements executor.PageTooler: fn hears the tools set so
// far, then every SetPageTools change, on the caller's goroutine.
func (f *Fake) WatchPageTools(fn func(executor.PageToolsEvent)) (stop func()) {
	f.mu.Lock()
	f.nextSub++
	id := f.nextSub
	if f.toolSubs == nil {
		f.toolSubs = map[int]func(executor.PageToolsEvent){}
	}
	f.toolSubs[id] = fn
	var now []executor.PageToolsEvent
	for tab, tools := range f.pageTools {
		if len(tools) > 0 {
			now = append(now, executor.PageToolsEvent{TabID: tab, Added: slices.Clone(tools)})
		}
	}
	f.mu.Unlock()
	for _, ev := range now {
		fn(ev)
	}
	return func() {
		f.mu.Lock()
		delete(f.toolSubs, id)
		f.mu.Unlock()
	}
}

// AddRequest logs a request in a tab's network log ("" = the selected
// tab), as a backend would have seen it, with its response body. The fake
// sets ID (when empty), Nav and, when nil, Doc (the tab's document); an
// empty Outcome is allowed. It returns
// the entry's ID.
func (f *Fake) AddRequest(tabID string, r executor.NetworkRequest, body []byte) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.find(tabID)
	if err != nil {
		return "", err
	}
	t.nextReq++
	if r.ID == "" {
		r.ID = "r" + t.raw + "." + strconv.Itoa(t.nextReq)
	}
	r.Nav = t.navs
	r.Outcome = cmp.Or(r.Outcome, executor.OutcomeAllowed)
	if r.Doc == nil { // made by the tab's document, as a backend would say
		r.Doc = &executor.Source{URL: t.url(), Main: true}
	}
	if len(t.net) >= executor.MaxNetworkEntries {
		t.net = t.net[1:]
	}
	t.net = append(t.net, fakeReq{r: r, body: body})
	return r.ID, nil
}

// Network implements executor.Executor: the tab's log since its last
// navigation (or the last p.Navigations), headers left out.
func (f *Fake) Network(ctx context.Context, p executor.NetworkParams) (executor.NetworkLog, error) {
	return run(f, ctx, "Network", p, func() (executor.NetworkLog, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		t, err := f.find(p.TabID)
		if err != nil {
			return executor.NetworkLog{}, err
		}
		from := t.navs - max(1, min(p.Navigations, executor.MaxNetworkNavigations)) + 1
		out := executor.NetworkLog{PageState: f.state(t), Requests: []executor.NetworkRequest{}, Nav: t.navs}
		for _, q := range t.net {
			if q.r.Nav >= from {
				r := q.r
				r.RequestHeaders, r.ResponseHeaders = nil, nil
				out.Requests = append(out.Requests, r)
			}
		}
		return out, nil
	})
}

// NetworkEntry implements executor.Executor, with the same rules as the
// real backends: headers redacted, a body only for an allowed request.
func (f *Fake) NetworkEntry(ctx context.Context, p executor.NetworkEntryParams) (executor.NetworkEntry, error) {
	return run(f, ctx, "NetworkEntry", p, func() (executor.NetworkEntry, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		t, err := f.find(p.TabID)
		if err != nil {
			return executor.NetworkEntry{}, err
		}
		for _, q := range t.net {
			if q.r.ID != p.ID {
				continue
			}
			r := q.r
			r.RequestHeaders = executor.RedactHeaders(r.RequestHeaders)
			r.ResponseHeaders = executor.RedactHeaders(r.ResponseHeaders)
			out := executor.NetworkEntry{PageState: f.state(t), Request: r}
			if p.Body {
				if r.Outcome != executor.OutcomeAllowed {
					out.BodyNote = "no body: the request was " + r.Outcome
				} else {
					out.BodySize = int64(len(q.body))
					out.Body, out.BodyTruncated, out.BodyNote, _ = executor.TextBody(r.MIMEType, q.body, p.MaxBody)
				}
			}
			return out, nil
		}
		return executor.NetworkEntry{}, executor.Errorf(executor.CodeBadArgs, "no request %q in the tab's network log", p.ID).
			WithHint("call network_requests for the ids; the log starts again at each navigation")
	})
}

// AddConsole logs a console message in a tab's console log ("" = the
// selected tab), as a backend would have seen it; the fake sets its ID,
// Nav and, when empty, Page (the tab's URL) and Level (log).
func (f *Fake) AddConsole(tabID string, m executor.ConsoleMessage) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.find(tabID)
	if err != nil {
		return err
	}
	if t.console == nil {
		t.console = executor.NewConsoleRing(0)
	}
	m.Nav = t.navs
	m.Page = cmp.Or(m.Page, t.url())
	m.Level = cmp.Or(m.Level, executor.LevelLog)
	if m.Doc == nil { // logged by the document Page names
		m.Doc = &executor.Source{URL: m.Page, Main: m.Page == t.url()}
	}
	t.console.Add(m)
	return nil
}

// Console implements executor.Executor.
func (f *Fake) Console(ctx context.Context, p executor.ConsoleParams) (executor.ConsoleLog, error) {
	return run(f, ctx, "Console", p, func() (executor.ConsoleLog, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		t, err := f.find(p.TabID)
		if err != nil {
			return executor.ConsoleLog{}, err
		}
		out := executor.ConsoleLog{PageState: f.state(t), Messages: []executor.ConsoleMessage{}, Nav: t.navs}
		if t.console != nil {
			out.Messages, out.Dropped = t.console.List(t.navs, p.Navigations)
		}
		return out, nil
	})
}

// PDF implements executor.Executor. Nothing is written to disk.
func (f *Fake) PDF(ctx context.Context, p executor.PDFParams) (executor.PDFResult, error) {
	return run(f, ctx, "PDF", p, func() (executor.PDFResult, error) {
		if _, err := p.PrintParams(); err != nil {
			return executor.PDFResult{}, err
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		t, err := f.find(p.TabID)
		if err != nil {
			return executor.PDFResult{}, err
		}
		name := executor.SanitizeFilename(cmp.Or(p.Filename, "page.pdf"))
		return executor.PDFResult{PageState: f.state(t), Path: "/downloads/" + name, Filename: name, Size: 3, Pages: 1,
			SHA256: "039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81"}, nil
	})
}
