package cdp

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/internal/devtools"
	"github.com/chromegate/chromegate/executor/webmcp"
	"github.com/playwright-community/playwright-go"
)

// Session is the Executor of one session: one browser context and the tabs
// in it. Tabs are the context's pages, numbered in the order they appear
// (popups and windows the page opens included).
//
// Session is safe for concurrent use. No lock is ever held across a
// Playwright call: playwright-go runs event handlers on the goroutine that
// delivers replies, so a handler waiting on such a lock would deadlock.
type Session struct {
	b    *Backend
	in   *instance
	log  *slog.Logger
	name string
	bctx playwright.BrowserContext
	// ownsCtx: Close closes bctx (a context chromegate created).
	ownsCtx bool
	ids     executor.TabIDs

	done     chan struct{}
	doneOnce sync.Once

	// The context listeners, kept so a session that leaves a context alive
	// (an attached browser's) can remove them.
	onPageFn   func(playwright.Page)
	onDialogFn func(playwright.Dialog)
	onCloseFn  func(playwright.BrowserContext)

	mu       sync.Mutex
	tabs     map[string]*tab
	byPage   map[playwright.Page]*tab
	order    []*tab
	selected *tab
	nextRaw  int
	selSeq   int64
	granted  map[string]bool // origins with clipboard permissions
	dsig     chan struct{}   // closed when a dialog opens (dialog.go)
	ua       string

	hub *webmcp.Hub // page-tool watchers (webmcp.go)
	emu emuState    // the session's emulation (emulate.go)

	newTabMu  sync.Mutex // one implicit tab at a time
	closeOnce sync.Once
	closeErr  error
}

var _ executor.Executor = (*Session)(nil)

// tab is one page of the session.
type tab struct {
	raw     string
	n       int // raw as a number
	page    playwright.Page
	created bool  // chromegate opened it (an attached browser keeps the others)
	lastSel int64 // selection order, for picking the next tab after a close

	dmu     sync.Mutex
	dialogs []executor.Dialog // reported by the tab's next result
	open    *pendingDialog    // the dialog the page waits on (dialog.go)
	leaving int               // navigations under LeaveDialog in flight
	title   string            // the last title read, for TabInfo (guarded by dmu)

	w   world                 // chromegate's isolated world in the main frame
	fd  frameDocs             // its worlds in frames of other origins (frames.go)
	pt  *webmcp.Tab           // the page's WebMCP tools (webmcp.go)
	net *netLog               // the page's requests (netlog.go)
	emu tabEmu                // the tab's emulation session (emulate.go)
	con *executor.ConsoleRing // the page's console (console.go)
	src *srcWatch             // its console sessions (sourcewatch.go)

	// crashed ends when the page's renderer crashes: calls on the tab in
	// flight then fail at once (a crashed page answers nothing, so they
	// would wait out their deadlines).
	crashed context.Context
	crash   context.CancelFunc
}

// seenTitle remembers title as the tab's latest and returns it.
func (t *tab) seenTitle(title string) string {
	t.dmu.Lock()
	t.title = title
	t.dmu.Unlock()
	return title
}

// readTitle reads a tab's title, or, while a dialog may block its page
// (its own, or another tab's, which may share its renderer), the last one
// read: a title is never a reason to wait.
func (s *Session) readTitle(ctx context.Context, t *tab) string {
	if t.dialog() != nil {
		return t.lastTitle()
	}
	if o, _ := s.dialogElsewhere(t); o != nil {
		return t.lastTitle()
	}
	return t.seenTitle(boundedTitle(ctx, t.page))
}

func (t *tab) lastTitle() string {
	t.dmu.Lock()
	defer t.dmu.Unlock()
	return t.title
}

// maxDialogs bounds the dialogs remembered per tab between two calls.
const maxDialogs = 50

func (t *tab) addDialog(d executor.Dialog) {
	t.dmu.Lock()
	if len(t.dialogs) >= maxDialogs {
		t.dialogs = t.dialogs[1:]
	}
	t.dialogs = append(t.dialogs, d)
	t.dmu.Unlock()
}

func (t *tab) drainDialogs() []executor.Dialog {
	t.dialog() // names the documents of the open one
	t.dmu.Lock()
	d := t.dialogs
	t.dialogs = nil
	t.dmu.Unlock()
	return d
}

func newSession(in *instance, name string, bctx playwright.BrowserContext, owns bool) *Session {
	s := &Session{
		b:       in.b,
		in:      in,
		log:     in.log.With("session", name),
		name:    name,
		bctx:    bctx,
		ownsCtx: owns,
		ids:     executor.NewTabIDs("cdp"),
		done:    make(chan struct{}),
		tabs:    map[string]*tab{},
		byPage:  map[playwright.Page]*tab{},
		granted: map[string]bool{},
		dsig:    make(chan struct{}),
		hub:     webmcp.NewHub(in.log),
	}
	s.onPageFn = s.onPage
	s.onDialogFn = s.onDialog
	s.onCloseFn = func(playwright.BrowserContext) { s.markDone() }
	bctx.OnPage(s.onPageFn)
	bctx.OnDialog(s.onDialogFn)
	bctx.OnClose(s.onCloseFn)
	for _, p := range bctx.Pages() {
		s.register(p, false)
	}
	if bctx.IsClosed() {
		s.markDone()
	}
	return s
}

// retire makes a session that lost a race to be stored inert.
func (s *Session) retire() {
	s.detach()
	s.markDone()
}

// detach removes the session's listeners from a context that outlives it.
func (s *Session) detach() {
	s.bctx.RemoveListener("page", s.onPageFn)
	s.bctx.RemoveListener("dialog", s.onDialogFn)
	s.bctx.RemoveListener("close", s.onCloseFn)
}

func (s *Session) markDone() { s.doneOnce.Do(func() { close(s.done) }) }

func (s *Session) isDone() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Backend is "cdp".
func (s *Session) Backend() string { return "cdp" }

// Done is closed when the browser, the driver or this session's context is
// gone, or after Close.
func (s *Session) Done() <-chan struct{} { return s.done }

// onPage tracks a page that appeared in the context: a tab chromegate
// opened, a popup, a window.open.
func (s *Session) onPage(p playwright.Page) {
	t := s.register(p, false)
	s.mu.Lock()
	if s.selected == nil {
		s.selectLocked(t)
	}
	s.mu.Unlock()
}

// register adds p as a tab, once.
func (s *Session) register(p playwright.Page, created bool) *tab {
	s.mu.Lock()
	if t := s.byPage[p]; t != nil {
		if created {
			t.created = true
		}
		s.mu.Unlock()
		return t
	}
	s.nextRaw++
	t := &tab{raw: strconv.Itoa(s.nextRaw), n: s.nextRaw, page: p, created: created}
	t.crashed, t.crash = context.WithCancel(context.Background())
	t.pt = newPageTools(s, t)
	t.net = newNetLog(executor.MaxNetworkEntries)
	t.con = executor.NewConsoleRing(executor.MaxConsoleEntries)
	t.src = newSrcWatch(t)
	s.tabs[t.raw] = t
	s.byPage[p] = t
	s.order = append(s.order, t)
	if s.selected == nil {
		s.selectLocked(t)
	}
	s.mu.Unlock()
	t.net.watch(p)
	t.watchConsole(p)
	p.OnClose(func(playwright.Page) { s.unregister(t) })
	p.OnCrash(func(playwright.Page) {
		s.log.Warn("a page crashed", "tab", t.raw)
		t.crash()
	})
	if p.IsClosed() {
		s.unregister(t)
	} else if s.hub.Watched() {
		t.pt.Watch()
	}
	if !created {
		// A popup: this may run in a Playwright event handler, which must
		// not wait on the browser.
		go s.emulateNew(t)
	}
	return t
}

func (s *Session) unregister(t *tab) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tabs[t.raw] != t {
		return
	}
	delete(s.tabs, t.raw)
	delete(s.byPage, t.page)
	t.w.cur.Store(nil)
	t.pt.Close()
	s.order = slices.DeleteFunc(s.order, func(o *tab) bool { return o == t })
	if s.selected == t {
		s.selected = nil
		if next := s.pickLocked(); next != nil {
			s.selectLocked(next)
		}
	}
}

func (s *Session) selectLocked(t *tab) {
	s.selSeq++
	t.lastSel = s.selSeq
	s.selected = t
}

// pickLocked chooses the tab to select after the selected one went away:
// the most recently selected, else the most recently opened.
func (s *Session) pickLocked() *tab {
	var best *tab
	for _, t := range s.order {
		if t.page.IsClosed() {
			continue
		}
		if best == nil || t.lastSel > best.lastSel || (t.lastSel == best.lastSel && t.n > best.n) {
			best = t
		}
	}
	return best
}

// resolveTab returns the tab for a public id ("" = the selected tab,
// opening one when none is left).
func (s *Session) resolveTab(id string) (*tab, error) {
	raw, err := s.ids.Raw(id)
	if err != nil {
		return nil, err
	}
	if raw != "" {
		s.mu.Lock()
		t := s.tabs[raw]
		s.mu.Unlock()
		if t == nil || t.page.IsClosed() {
			return nil, executor.Errorf(executor.CodeTabNotFound, "there is no open tab %q (closed, or never opened)", id).
				WithHint("call tabs_list to see the open tabs")
		}
		return t, nil
	}
	if t := s.selectedTab(); t != nil {
		return t, nil
	}
	s.newTabMu.Lock()
	defer s.newTabMu.Unlock()
	if t := s.selectedTab(); t != nil {
		return t, nil
	}
	p, err := s.bctx.NewPage()
	if err != nil {
		return nil, s.mapErr("open a tab", err)
	}
	t := s.register(p, true)
	s.mu.Lock()
	s.selectLocked(t)
	s.mu.Unlock()
	return t, nil
}

// selectedTab returns the selected open tab, moving the selection when the
// selected tab has closed.
func (s *Session) selectedTab() *tab {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.selected != nil && !s.selected.page.IsClosed() {
		return s.selected
	}
	s.selected = nil
	if t := s.pickLocked(); t != nil {
		s.selectLocked(t)
		return t
	}
	return nil
}

// PeekTab is executor.TabPeeker: the tab as the driver's events last told
// it, with no round trip (see TabInfo for why that may lag).
func (s *Session) PeekTab(tabID string) (executor.Tab, bool) {
	raw, err := s.ids.Raw(tabID)
	if err != nil {
		return executor.Tab{}, false
	}
	var t *tab
	if raw != "" {
		s.mu.Lock()
		t = s.tabs[raw]
		s.mu.Unlock()
	} else {
		t = s.selectedTab()
	}
	if t == nil || t.page.IsClosed() || t.dialog() != nil {
		return executor.Tab{}, false
	}
	if o, _ := s.dialogElsewhere(t); o != nil {
		return executor.Tab{}, false
	}
	info := s.tabInfo(t, t.lastTitle())
	if executor.OriginHidden(info.URL) {
		return executor.Tab{}, false
	}
	return info, true
}

func (s *Session) tabInfo(t *tab, title string) executor.Tab {
	s.mu.Lock()
	sel := s.selected == t
	s.mu.Unlock()
	return executor.Tab{ID: s.ids.Stamp(t.raw), URL: t.page.URL(), Title: title, Selected: sel, Dialog: t.dialog()}
}

// Tabs lists the open tabs in the order they appeared.
func (s *Session) Tabs(ctx context.Context) ([]executor.Tab, error) {
	return await(ctx, s, "tabs_list", func() ([]executor.Tab, error) {
		s.mu.Lock()
		order := slices.Clone(s.order)
		s.mu.Unlock()
		titles := make([]string, len(order))
		var wg sync.WaitGroup
		for i, t := range order {
			wg.Add(1)
			go func() {
				defer wg.Done()
				titles[i] = s.readTitle(ctx, t)
			}()
		}
		wg.Wait()
		out := make([]executor.Tab, 0, len(order))
		for i, t := range order {
			if !t.page.IsClosed() {
				out = append(out, s.tabInfo(t, titles[i]))
			}
		}
		return out, nil
	})
}

// TabInfo reports one tab ("" = the selected one).
func (s *Session) TabInfo(ctx context.Context, tabID string) (executor.Tab, error) {
	return await(ctx, s, "tab_info", func() (executor.Tab, error) {
		t, err := s.resolveTab(tabID)
		if err != nil {
			return executor.Tab{}, err
		}
		// page.URL() is tracked from the driver's navigation events, which
		// may still be on their way: a page that navigated itself a moment
		// ago would be reported at its old URL, and the policy would decide
		// on a page the tab has left. One round trip (the title) first
		// delivers every navigation the browser committed before it.
		info := s.tabInfo(t, s.readTitle(ctx, t))
		if info.Dialog = t.dialog(); info.Dialog != nil {
			// The page answers nothing until the dialog is: decided as
			// opaque where the URL does not carry the origin.
			if executor.OriginHidden(info.URL) {
				info.Origin = executor.OpaqueOrigin
			}
			return info, nil
		}
		if executor.OriginHidden(info.URL) {
			if info.Origin, err = s.newCall(ctx, t).documentOrigin(); err != nil {
				return executor.Tab{}, s.mapErr("tab_info", err)
			}
		}
		return info, nil
	})
}

// originScript reads the document's security origin from chromegate's
// isolated world, where no page script can replace self.origin.
const originScript = "() => self.origin"

// documentOrigin is executor.Tab.Origin for a tab whose URL does not carry
// its document's origin: the origin the browser gave the document; for an
// opaque one, OpaqueOrigin if a page could have written into it (the tab
// has an opener, even one closed since), else "" (a tab only chromegate
// opened: about:blank as the browser made it).
func (c *call) documentOrigin() (string, error) {
	raw, err := c.runValue(originScript, nil)
	if err != nil {
		return "", err
	}
	var origin string
	if err := json.Unmarshal(raw, &origin); err != nil || origin == "" {
		return executor.OpaqueOrigin, nil
	}
	if origin != executor.OpaqueOrigin {
		return origin, nil
	}
	_, sess, err := c.t.w.context(c)
	if err != nil {
		return "", err
	}
	info, err := sess.Send("Target.getTargetInfo", nil)
	if err != nil {
		return "", err
	}
	if opener, _ := devtools.Dig(info, "targetInfo", "openerId").(string); opener != "" {
		return executor.OpaqueOrigin, nil
	}
	return "", nil
}

// SelectTab makes a tab the one calls without a tab id act on, and brings
// it to the front.
func (s *Session) SelectTab(ctx context.Context, tabID string) (executor.Tab, error) {
	return await(ctx, s, "tab_select", func() (executor.Tab, error) {
		t, err := s.resolveTab(tabID)
		if err != nil {
			return executor.Tab{}, err
		}
		s.mu.Lock()
		s.selectLocked(t)
		s.mu.Unlock()
		if err := t.page.BringToFront(); err != nil {
			return executor.Tab{}, s.mapErr("tab_select", err)
		}
		return s.tabInfo(t, s.readTitle(ctx, t)), nil
	})
}

// NewTab opens a tab, selects it and optionally navigates it. When the
// navigation fails the tab stays open and selected.
func (s *Session) NewTab(ctx context.Context, p executor.NewTabParams) (executor.Tab, error) {
	if !p.WaitUntil.Valid() {
		return executor.Tab{}, badWaitUntil(p.WaitUntil)
	}
	if p.URL != "" {
		if err := checkURL(p.URL); err != nil {
			return executor.Tab{}, err
		}
	}
	return await(ctx, s, "tab_new", func() (executor.Tab, error) {
		page, err := s.bctx.NewPage()
		if err != nil {
			return executor.Tab{}, s.mapErr("tab_new", err)
		}
		t := s.register(page, true)
		s.mu.Lock()
		s.selectLocked(t)
		s.mu.Unlock()
		s.emulateNew(t)
		if p.URL != "" {
			// A page that opens a dialog as it loads holds its load: the
			// tab is reported with the dialog open.
			c := s.newCall(ctx, t)
			if err := c.run(actCall, "tab_new", func(c *call) error {
				_, err := c.gotoURL(p.URL, p.WaitUntil)
				return err
			}); err != nil {
				return executor.Tab{}, err
			}
		}
		info := s.tabInfo(t, s.readTitle(ctx, t))
		info.Dialog = t.dialog()
		return info, nil
	})
}

// CloseTab closes a tab ("" = the selected one); the most recently
// selected other tab becomes selected.
func (s *Session) CloseTab(ctx context.Context, tabID string) error {
	if _, err := s.ids.Raw(tabID); err != nil {
		return err
	}
	_, err := await(ctx, s, "tab_close", func() (struct{}, error) {
		var t *tab
		if tabID == "" {
			t = s.selectedTab()
			if t == nil {
				return struct{}{}, executor.Errorf(executor.CodeTabNotFound, "there is no open tab to close")
			}
		} else {
			var err error
			if t, err = s.resolveTab(tabID); err != nil {
				return struct{}{}, err
			}
		}
		// Closed without running beforeunload (Playwright's default): the
		// caller asked for the tab to go. A dialog open on it goes with it.
		t.takeDialog()
		if err := t.page.Close(); err != nil && !t.page.IsClosed() {
			return struct{}{}, s.mapErr("tab_close", err)
		}
		s.unregister(t)
		return struct{}{}, nil
	})
	return err
}

// Status describes the browser and this session.
func (s *Session) Status(ctx context.Context) (executor.Status, error) {
	if err := ctx.Err(); err != nil {
		return executor.Status{}, executor.AsError(err)
	}
	st := executor.Status{
		Backend:     "cdp",
		Session:     s.name,
		Browser:     "chromium",
		Version:     s.in.version,
		Headless:    !s.b.opts.Headed && !s.in.attached,
		Attached:    s.in.attached,
		Profile:     s.in.profile,
		DownloadDir: s.b.downloadDir(),
	}
	s.mu.Lock()
	for _, t := range s.order {
		if !t.page.IsClosed() {
			st.Tabs++
		}
	}
	if s.selected != nil {
		st.SelectedTab = s.ids.Stamp(s.selected.raw)
	}
	s.mu.Unlock()
	if s.isDone() {
		return st, s.goneErr("chrome_status")
	}
	return st, nil
}

// Ping answers without a round trip to the browser: the session is alive
// while its browser is connected and the driver runs (both are watched).
func (s *Session) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return executor.AsError(err)
	}
	if s.isDone() {
		return s.goneErr("ping")
	}
	if s.in.browser != nil && !s.in.browser.IsConnected() {
		s.in.markDead("the browser disconnected")
		return s.goneErr("ping")
	}
	return nil
}

// Close releases what this session opened. The default session of a
// launched browser owns the browser: closing it closes the browser and the
// driver. A named session closes its context. On an attached browser only
// the tabs and contexts chromegate opened are closed. Close may be called
// more than once, concurrently.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		defer s.in.forget(s)
		if s.in.dead() {
			s.markDone()
			return
		}
		if s.name == "" && !s.in.attached {
			s.markDone()
			s.closeErr = s.in.close()
			return
		}
		s.closeOwned()
		s.markDone()
	})
	return s.closeErr
}

// closeOwned closes the context if chromegate created it, else the tabs
// chromegate opened in it. Bounded: a wedged browser does not hold Close.
func (s *Session) closeOwned() {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if s.ownsCtx {
			if err := s.bctx.Close(); err != nil {
				s.log.Debug("closing the context", "err", err)
			}
			return
		}
		s.mu.Lock()
		var mine []*tab
		for _, t := range s.order {
			if t.created {
				mine = append(mine, t)
			}
		}
		s.mu.Unlock()
		for _, t := range mine {
			_ = t.page.Close()
		}
		s.detach()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.log.Warn("closing the session's tabs timed out")
	case <-s.in.deadCh:
	}
}
