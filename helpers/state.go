package helpers

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/chromegate/chromegate/executor"
)

//go:embed scripts/storage.js
var storageJS string

var storageSource = withoutComments(storageJS)

// OriginDecider decides one origin of a storage-state call (see
// policy.StateOrigin): nil allows it; an error skips it, and its message
// (the policy's reasons) says why in the report.
type OriginDecider func(ctx context.Context, origin string) error

// StateReport says what a save or a restore did, by origin, in counts:
// never a cookie's or a key's value, nor a key's name.
type StateReport struct {
	Origins        []OriginReport  `json:"origins"`
	Cookies        int             `json:"cookies"`
	LocalStorage   int             `json:"local_storage"`
	SessionStorage int             `json:"session_storage"`
	IndexedDB      int             `json:"indexed_db"`
	Skipped        []SkippedOrigin `json:"skipped,omitempty"`
}

// OriginReport counts what one origin had saved or restored. IndexedDB
// counts databases.
type OriginReport struct {
	Origin         string `json:"origin"`
	Cookies        int    `json:"cookies,omitempty"`
	LocalStorage   int    `json:"local_storage,omitempty"`
	SessionStorage int    `json:"session_storage,omitempty"`
	IndexedDB      int    `json:"indexed_db,omitempty"`
}

// SkippedOrigin is state that was not saved or restored: its origin, what
// of it (cookies, storage, session_storage, indexed_db) and why.
type SkippedOrigin struct {
	Origin string `json:"origin"`
	What   string `json:"what"`
	Reason string `json:"reason"`
}

// SaveOptions says what SaveState saves.
type SaveOptions struct {
	// Origins, if set, limits the save to these origins
	// ("scheme://host[:port]"): their storage and the cookies the browser
	// would send them.
	Origins []string
	// IndexedDB includes IndexedDB databases (backends with a
	// StateStore).
	IndexedDB bool
	// Decide decides each origin before anything of it is read; required.
	Decide OriginDecider
}

// SaveState reads the storage state of ex's context, origin by origin as
// Decide allows. With an executor.StateStore (the cdp backend) it reads
// every origin the context has storage for; otherwise (the extension,
// which drives the user's own browser) only the origins of the tabs it
// drives, or those of opts.Origins, each decided before it is read: the
// cookies the browser would send to each allowed origin, and the storage
// of its open tabs. SessionStorage comes from the open tabs on every
// backend.
func SaveState(ctx context.Context, ex executor.Executor, opts SaveOptions) (executor.StorageState, StateReport, error) {
	d := newDecisions(opts.Decide)
	var rep StateReport
	st := executor.StorageState{Cookies: []executor.StateCookie{}, Origins: []executor.OriginState{}}
	tabs, err := tabOrigins(ctx, ex)
	if err != nil {
		return st, rep, err
	}
	wanted := func(origin string) bool { return len(opts.Origins) == 0 || slices.Contains(opts.Origins, origin) }
	origins := newOriginSet()

	store, whole := ex.(executor.StateStore)
	if whole {
		all, err := store.StorageState(ctx, executor.StorageStateParams{IndexedDB: opts.IndexedDB})
		if err != nil {
			return st, rep, err
		}
		for _, c := range all.Cookies {
			if len(opts.Origins) > 0 && !slices.ContainsFunc(opts.Origins, func(o string) bool { return cookieSentTo(c, o) }) {
				continue
			}
			if !d.skip(ctx, cookieOrigin(c), "cookies") {
				st.Cookies = append(st.Cookies, c)
			}
		}
		for _, o := range all.Origins {
			if wanted(o.Origin) && !d.skip(ctx, o.Origin, "storage") {
				origins.merge(executor.OriginState{Origin: o.Origin, LocalStorage: o.LocalStorage, IndexedDB: o.IndexedDB})
			}
		}
	} else {
		// The user's own browser: only what is asked for, or what the
		// session's tabs show, and each origin decided before it is read.
		asked := opts.Origins
		if len(asked) == 0 {
			for _, t := range tabs {
				if !slices.Contains(asked, t.origin) {
					asked = append(asked, t.origin)
				}
			}
		}
		var urls []string
		for _, o := range asked {
			if !d.skip(ctx, o, "cookies") {
				urls = append(urls, o+"/")
			}
		}
		if len(urls) > 0 {
			cs, err := ex.Cookies(ctx, executor.CookiesParams{URLs: urls})
			if err != nil {
				return st, rep, err
			}
			for _, c := range cs {
				sc := stateCookie(c)
				// A cookie of a parent domain is sent to an allowed
				// origin, but is the parent's: decided on its own.
				if d.skip(ctx, cookieOrigin(sc), "cookies") {
					continue
				}
				if !slices.ContainsFunc(st.Cookies, func(x executor.StateCookie) bool { return sameCookie(x, sc) }) {
					st.Cookies = append(st.Cookies, sc)
				}
			}
		}
	}
	// Web Storage from the open tabs: localStorage where the backend has
	// no whole-context read, sessionStorage everywhere.
	for _, t := range tabs {
		if !wanted(t.origin) || d.skip(ctx, t.origin, "storage") {
			continue
		}
		got, err := readStorage(ctx, ex, t.id, !whole)
		if err != nil || got.Origin != t.origin {
			continue // the tab moved on, or closed: it is read no more
		}
		origins.merge(executor.OriginState{Origin: got.Origin, LocalStorage: got.LocalStorage, SessionStorage: got.SessionStorage})
	}
	st.Origins = origins.list()
	rep.count(st)
	var more []SkippedOrigin
	if opts.IndexedDB && !whole {
		for _, o := range st.Origins {
			more = append(more, SkippedOrigin{o.Origin, "indexed_db", "this backend does not read IndexedDB"})
		}
	}
	rep.Skipped = d.skipped(more)
	return st, rep, nil
}

// originSet gathers the storage of each origin from several reads (the
// whole context's, then each open tab's), in the order first seen; the
// first non-empty read of each kind wins.
type originSet struct {
	order []string
	by    map[string]*executor.OriginState
}

func newOriginSet() *originSet { return &originSet{by: map[string]*executor.OriginState{}} }

func (s *originSet) merge(o executor.OriginState) {
	prev, ok := s.by[o.Origin]
	if !ok {
		s.order = append(s.order, o.Origin)
		s.by[o.Origin] = &o
		return
	}
	if len(prev.LocalStorage) == 0 {
		prev.LocalStorage = o.LocalStorage
	}
	if len(prev.SessionStorage) == 0 {
		prev.SessionStorage = o.SessionStorage
	}
	if len(prev.IndexedDB) == 0 {
		prev.IndexedDB = o.IndexedDB
	}
}

// list is the origins that hold anything, localStorage never null (as
// Playwright writes it).
func (s *originSet) list() []executor.OriginState {
	out := []executor.OriginState{}
	for _, name := range s.order {
		o := *s.by[name]
		if len(o.LocalStorage) == 0 && len(o.SessionStorage) == 0 && databases(o.IndexedDB) == 0 {
			continue
		}
		o.LocalStorage = nonNil(o.LocalStorage)
		out = append(out, o)
	}
	return out
}

// RestoreOptions says how RestoreState restores.
type RestoreOptions struct {
	// Decide decides each origin before anything of it is restored;
	// required.
	Decide OriginDecider
	// OpenTabs lets a backend without an executor.StateStore write an
	// origin's localStorage through a tab of its own, opened on the
	// origin's root and closed again (the page loads once, as a
	// navigation there would), where no open tab shows the origin. The
	// selected tab is selected again afterwards.
	OpenTabs bool
}

// RestoreState restores st into ex's context, origin by origin as Decide
// allows; what is denied is skipped and named in the report. With an
// executor.StateStore (the cdp backend) the allowed cookies and every
// allowed origin's localStorage and IndexedDB become the context's state,
// without a request or a visible tab; otherwise the cookies are added and
// each origin's localStorage is written into an open tab of that origin
// (an origin without one is skipped, and said). SessionStorage goes into
// the open tabs of its origin on every backend.
func RestoreState(ctx context.Context, ex executor.Executor, st executor.StorageState, opts RestoreOptions) (StateReport, error) {
	d := newDecisions(opts.Decide)
	var rep StateReport
	var allowed executor.StorageState
	allowed.Cookies = []executor.StateCookie{}
	allowed.Origins = []executor.OriginState{}
	for _, c := range st.Cookies {
		if !d.skip(ctx, cookieOrigin(c), "cookies") {
			allowed.Cookies = append(allowed.Cookies, c)
		}
	}
	for _, o := range st.Origins {
		if !d.skip(ctx, o.Origin, "storage") {
			allowed.Origins = append(allowed.Origins, o)
		}
	}
	tabs, err := tabOrigins(ctx, ex)
	if err != nil {
		return rep, err
	}
	done := executor.StorageState{Cookies: allowed.Cookies, Origins: []executor.OriginState{}}
	if store, ok := ex.(executor.StateStore); ok {
		whole := executor.StorageState{Cookies: allowed.Cookies, Origins: make([]executor.OriginState, 0, len(allowed.Origins))}
		for _, o := range allowed.Origins {
			whole.Origins = append(whole.Origins, executor.OriginState{Origin: o.Origin, LocalStorage: nonNil(o.LocalStorage), IndexedDB: o.IndexedDB})
		}
		if err := store.SetStorageState(ctx, whole); err != nil {
			return rep, err
		}
		for _, o := range allowed.Origins {
			ss := o.SessionStorage
			o.SessionStorage = nil
			if len(ss) > 0 && writeStorage(ctx, ex, tabs, executor.OriginState{Origin: o.Origin, SessionStorage: ss}) {
				o.SessionStorage = ss
			} else if len(ss) > 0 {
				rep.Skipped = append(rep.Skipped, SkippedOrigin{o.Origin, "session_storage", "no open tab of this origin: sessionStorage belongs to a tab"})
			}
			done.Origins = append(done.Origins, o)
		}
	} else {
		if len(allowed.Cookies) > 0 {
			p := executor.SetCookiesParams{Cookies: make([]executor.Cookie, len(allowed.Cookies))}
			for i, c := range allowed.Cookies {
				p.Cookies[i] = executorCookie(c)
			}
			if err := ex.SetCookies(ctx, p); err != nil {
				return rep, err
			}
		}
		for _, o := range allowed.Origins {
			if databases(o.IndexedDB) > 0 {
				rep.Skipped = append(rep.Skipped, SkippedOrigin{o.Origin, "indexed_db", "this backend does not restore IndexedDB"})
				o.IndexedDB = nil
			}
			if len(o.LocalStorage) == 0 && len(o.SessionStorage) == 0 {
				if o.IndexedDB != nil {
					done.Origins = append(done.Origins, o)
				}
				continue
			}
			if !writeStorage(ctx, ex, tabs, o) {
				if !opts.OpenTabs || len(o.LocalStorage) == 0 {
					rep.Skipped = append(rep.Skipped, SkippedOrigin{o.Origin, "storage", "no open tab of this origin: this backend writes storage only into tabs it drives; open one, then load again"})
					continue
				}
				if !writeInNewTab(ctx, ex, o) {
					rep.Skipped = append(rep.Skipped, SkippedOrigin{o.Origin, "storage", "a tab opened on this origin did not stay on it, or could not be written: navigate to a page of the origin, then load again"})
					continue
				}
				o.SessionStorage = nil // it went with the tab
			}
			done.Origins = append(done.Origins, o)
		}
	}
	rep.count(done)
	rep.Skipped = d.skipped(rep.Skipped)
	return rep, nil
}

// decisions caches one decision per origin for a call, and collects the
// origins it skipped.
type decisions struct {
	decide OriginDecider
	seen   map[string]error
	order  []string
	what   map[string][]string
}

func newDecisions(decide OriginDecider) *decisions {
	return &decisions{decide: decide, seen: map[string]error{}, what: map[string][]string{}}
}

func (d *decisions) denied(ctx context.Context, origin string) bool {
	err, ok := d.seen[origin]
	if !ok {
		err = d.decide(ctx, origin)
		d.seen[origin] = err
		if err != nil {
			d.order = append(d.order, origin)
		}
	}
	return err != nil
}

// skip reports whether origin is denied, noting what of it was skipped.
func (d *decisions) skip(ctx context.Context, origin, what string) bool {
	if !d.denied(ctx, origin) {
		return false
	}
	if !slices.Contains(d.what[origin], what) {
		d.what[origin] = append(d.what[origin], what)
	}
	return true
}

func (d *decisions) skipped(more []SkippedOrigin) []SkippedOrigin {
	var out []SkippedOrigin
	for _, o := range d.order {
		if len(d.what[o]) == 0 {
			continue
		}
		out = append(out, SkippedOrigin{Origin: o, What: strings.Join(d.what[o], ","), Reason: reasonOf(d.seen[o])})
	}
	return append(out, more...)
}

func reasonOf(err error) string {
	if e := executor.AsError(err); e != nil && e.Message != "" {
		return e.Message
	}
	return "denied"
}

func (r *StateReport) count(st executor.StorageState) {
	at := map[string]*OriginReport{}
	var order []string
	get := func(origin string) *OriginReport {
		if o, ok := at[origin]; ok {
			return o
		}
		at[origin] = &OriginReport{Origin: origin}
		order = append(order, origin)
		return at[origin]
	}
	for _, o := range st.Origins {
		or := get(o.Origin)
		or.LocalStorage += len(o.LocalStorage)
		or.SessionStorage += len(o.SessionStorage)
		or.IndexedDB += databases(o.IndexedDB)
	}
	for _, c := range st.Cookies {
		// A cookie is counted with the first origin it is sent to, or
		// with its own domain's.
		home := cookieOrigin(c)
		for _, o := range st.Origins {
			if cookieSentTo(c, o.Origin) {
				home = o.Origin
				break
			}
		}
		get(home).Cookies++
	}
	r.Origins = make([]OriginReport, 0, len(order))
	for _, o := range order {
		x := at[o]
		r.Origins = append(r.Origins, *x)
		r.Cookies += x.Cookies
		r.LocalStorage += x.LocalStorage
		r.SessionStorage += x.SessionStorage
		r.IndexedDB += x.IndexedDB
	}
}

// databases counts the IndexedDB databases of Playwright's encoding.
func databases(raw json.RawMessage) int {
	if len(raw) == 0 {
		return 0
	}
	var dbs []json.RawMessage
	if json.Unmarshal(raw, &dbs) != nil {
		return 0
	}
	return len(dbs)
}

// CookieOrigin is the origin a cookie is decided on: the host of its
// domain (a leading dot dropped), https for a Secure cookie, else http.
func CookieOrigin(c executor.StateCookie) string { return cookieOrigin(c) }

func cookieOrigin(c executor.StateCookie) string {
	scheme := "http://"
	if c.Secure {
		scheme = "https://"
	}
	return scheme + strings.ToLower(strings.TrimPrefix(c.Domain, "."))
}

// cookieSentTo reports whether the browser would send c to origin, by
// domain as browsers match it (RFC 6265 5.1.3; a leading dot or a
// host-only cookie's exact host), and Secure cookies only to https.
func cookieSentTo(c executor.StateCookie, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Hostname() == "" {
		return false
	}
	if c.Secure && u.Scheme != "https" && u.Hostname() != "localhost" {
		return false
	}
	host := strings.ToLower(u.Hostname())
	dom := strings.ToLower(c.Domain)
	if strings.HasPrefix(dom, ".") {
		return host == dom[1:] || strings.HasSuffix(host, dom)
	}
	return host == dom
}

func sameCookie(a, b executor.StateCookie) bool {
	return a.Name == b.Name && a.Domain == b.Domain && a.Path == b.Path
}

func stateCookie(c executor.Cookie) executor.StateCookie {
	sc := executor.StateCookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Expires: c.Expires,
		HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: c.SameSite}
	if sc.Expires <= 0 {
		sc.Expires = -1
	}
	if sc.Path == "" {
		sc.Path = "/"
	}
	if sc.SameSite == "" {
		sc.SameSite = "Lax"
	}
	return sc
}

func executorCookie(c executor.StateCookie) executor.Cookie {
	ec := executor.Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, HTTPOnly: c.HTTPOnly, Secure: c.Secure, SameSite: c.SameSite}
	if c.Expires > 0 {
		ec.Expires = c.Expires
	}
	if ec.Path == "" {
		ec.Path = "/"
	}
	return ec
}

func nonNil(v []executor.NameValue) []executor.NameValue {
	if v == nil {
		return []executor.NameValue{}
	}
	return v
}

// openTab is a tab and the origin of its URL.
type openTab struct{ id, origin string }

// tabOrigins lists the tabs that show an http(s) document, with its
// origin.
func tabOrigins(ctx context.Context, ex executor.Executor) ([]openTab, error) {
	ts, err := ex.Tabs(ctx)
	if err != nil {
		return nil, err
	}
	var out []openTab
	for _, t := range ts {
		if o := executor.OriginOf(t.URL); o != "null" {
			out = append(out, openTab{t.ID, o})
		}
	}
	return out, nil
}

type storageRead struct {
	Origin         string               `json:"origin"`
	LocalStorage   []executor.NameValue `json:"localStorage"`
	SessionStorage []executor.NameValue `json:"sessionStorage"`
}

func readStorage(ctx context.Context, ex executor.Executor, tabID string, local bool) (storageRead, error) {
	var out storageRead
	arg, _ := json.Marshal(map[string]any{"op": "read", "local": local})
	sr, err := ex.RunScript(ctx, executor.ScriptParams{TabID: tabID, Source: storageSource, Arg: arg})
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(sr.Value, &out)
	return out, err
}

// writeStorage writes o's Web Storage into every open tab of its origin
// (sessionStorage is a tab's own; localStorage is written once); false
// when no tab of the origin took it.
func writeStorage(ctx context.Context, ex executor.Executor, tabs []openTab, o executor.OriginState) bool {
	wrote := false
	for _, t := range tabs {
		if t.origin != o.Origin {
			continue
		}
		local := o.LocalStorage
		if wrote {
			local = nil
		}
		arg, _ := json.Marshal(map[string]any{"op": "write", "origin": o.Origin, "localStorage": nonNil(local), "sessionStorage": nonNil(o.SessionStorage)})
		sr, err := ex.RunScript(ctx, executor.ScriptParams{TabID: t.id, Source: storageSource, Arg: arg})
		if err != nil {
			continue
		}
		var res struct {
			Written bool `json:"written"`
		}
		if json.Unmarshal(sr.Value, &res) == nil && res.Written {
			wrote = true
		}
	}
	return wrote
}

// writeInNewTab writes o's localStorage through a tab opened on o's origin
// for the purpose and closed again, then selects the tab that was
// selected. False when the tab did not end up on the origin (the site
// sent it elsewhere) or could not be written.
func writeInNewTab(ctx context.Context, ex executor.Executor, o executor.OriginState) bool {
	ts, err := ex.Tabs(ctx)
	if err != nil {
		return false
	}
	selected := ""
	for _, t := range ts {
		if t.Selected {
			selected = t.ID
		}
	}
	tab, err := ex.NewTab(ctx, executor.NewTabParams{URL: o.Origin + "/", WaitUntil: executor.WaitDOMContentLoaded})
	if err != nil {
		return false
	}
	defer func() {
		_ = ex.CloseTab(context.WithoutCancel(ctx), tab.ID)
		if selected != "" {
			_, _ = ex.SelectTab(context.WithoutCancel(ctx), selected)
		}
	}()
	return writeStorage(ctx, ex, []openTab{{tab.ID, o.Origin}}, executor.OriginState{Origin: o.Origin, LocalStorage: o.LocalStorage})
}
