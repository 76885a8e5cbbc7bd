package mcp

import (
	"container/list"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
)

// An acting call (click, type, fill, press, hover, scroll, select_option,
// set_files, drag, dialog_answer, and a navigation that stays in the
// document: a #fragment, history.pushState) returns what it changed in
// the tab's outline since the last outline the caller saw of that tab, so
// that a model needs no snapshot after each action. The caller is the MCP
// session (a REST caller: its principal) in its browser session; what it
// saw is the outline of its last snapshot of the tab, or of its last
// acting call's changes or outline.
//
// The result's JSON gains:
//
//	"changes": "+ kq12 button Save\n~ kq4 textbox \"Email\" value=\"a@b.c\"\n- \"Saving…\""
//	"outline": "…the whole outline, as snapshot prints it…"
//	"changes_note": "…why there is neither…"
//
// changes is a change as helpers.DiffOutlines writes it (+ added, - removed,
// ~ changed, a line each, by ref); outline the whole new outline, cut as the
// snapshot tool cuts it, when the tab is on another document than the
// caller saw (it navigated), when the caller saw none, or when it is
// shorter than the change; neither when nothing changed. Both are page
// content: the result is fenced, and every secret's value is redacted from
// them before they are kept or sent.
//
// Reading the outline is a read of the page, decided as one: as a snapshot
// call of the tab, through the same Gate (a policy may allow clicking on
// a host and deny reading it). A denied read leaves the action's result
// as it is, with a changes_note. A navigation's landing was decided
// before: nothing of a page the policy did not allow is ever outlined.
//
// Like with like: after a scoped or interactive-only snapshot, changes
// compare outlines with that scope and mode; a scope that is gone gives
// the whole page's outline (outline), and the mode stays.

// changesArg is the argument that turns changes on or off for one call
// (Options.Changes is the server's default).
const changesArg = "changes"

// Bounds of the changes.
const (
	// maxChangesChars bounds the outline read to compare: a page whose
	// outline is longer gets a note instead (the snapshot tool still
	// pages through it).
	maxChangesChars = 400_000
	// changesTimeout bounds reading the outline after the action.
	changesTimeout = 10 * time.Second
	// maxViewsPerCaller and maxViewChars bound what the server keeps:
	// per caller, the outlines of its most recent tabs; in all, the
	// characters of every kept outline (least recently used go first).
	maxViewsPerCaller = 16
	maxViewChars      = 64 << 20
)

// changesOut is what an acting call's JSON carries of its change.
type changesOut struct {
	Changes string `json:"changes,omitempty"`
	Outline string `json:"outline,omitempty"`
	// ChangesNote says why the result has neither (a policy that does
	// not allow reading the page, an outline too large to compare).
	ChangesNote string `json:"changes_note,omitempty"`
}

// pageChangesOut is a navigation's or dialog_answer's result with its change.
type pageChangesOut struct {
	pageOut
	changesOut
}

// viewerKey is a context key: the MCP session a call came in on.
type viewerKey struct{}

// withMCPSession returns ctx carrying the MCP session id: two MCP sessions
// of one browser session (a named context) see the page each for itself.
func withMCPSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, viewerKey{}, id)
}

// viewer names the caller whose last seen outline a call compares with.
func viewer(ctx context.Context, c *Call) string {
	id, _ := ctx.Value(viewerKey{}).(string)
	return c.Session + "\x00" + c.Principal.Name + "\x00" + id
}

// seenOutline is an outline a caller saw of a tab: the whole outline
// (redacted, uncut), and the snapshot's scope and mode it was taken with.
type seenOutline struct {
	viewer, session, tab string
	outline              string
	scope                executor.Target
	interactiveOnly      bool
}

// views keeps, per caller and tab, the outline last seen. Safe for
// concurrent use.
type views struct {
	mu    sync.Mutex
	byKey map[string]*list.Element // viewer+tab → element of lru, holding *seenOutline
	lru   list.List                // most recent first
	chars int
}

func viewKey(viewer, tab string) string { return viewer + "\x00" + tab }

// get returns what viewer last saw of tab, or nil.
func (v *views) get(viewer, tab string) *seenOutline {
	v.mu.Lock()
	defer v.mu.Unlock()
	el, ok := v.byKey[viewKey(viewer, tab)]
	if !ok {
		return nil
	}
	v.lru.MoveToFront(el)
	return el.Value.(*seenOutline)
}

// saw records o as what its viewer last saw of its tab.
func (v *views) saw(o *seenOutline) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.byKey == nil {
		v.byKey = map[string]*list.Element{}
	}
	k := viewKey(o.viewer, o.tab)
	if el, ok := v.byKey[k]; ok {
		v.removeLocked(k, el)
	}
	v.byKey[k] = v.lru.PushFront(o)
	v.chars += len(o.outline)
	// The caller's oldest tabs beyond its share, then anyone's oldest
	// beyond the total.
	n := 0
	for el := v.lru.Front(); el != nil; {
		next := el.Next()
		if s := el.Value.(*seenOutline); s.viewer == o.viewer {
			if n++; n > maxViewsPerCaller {
				v.removeLocked(viewKey(s.viewer, s.tab), el)
			}
		}
		el = next
	}
	for v.chars > maxViewChars && v.lru.Len() > 1 {
		el := v.lru.Back()
		s := el.Value.(*seenOutline)
		v.removeLocked(viewKey(s.viewer, s.tab), el)
	}
}

func (v *views) removeLocked(k string, el *list.Element) {
	v.chars -= len(el.Value.(*seenOutline).outline)
	v.lru.Remove(el)
	delete(v.byKey, k)
}

// forget drops what every caller of a browser session saw: of one tab
// (closed), or of all of them (tab "": the session ended).
func (v *views) forget(session, tab string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for el := v.lru.Front(); el != nil; {
		next := el.Next()
		if s := el.Value.(*seenOutline); s.session == session && (tab == "" || s.tab == tab) {
			v.removeLocked(viewKey(s.viewer, s.tab), el)
		}
		el = next
	}
}

// len is how many outlines are kept (for tests).
func (v *views) len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.lru.Len()
}

// changesOn says whether c's result is to carry its change: the call's
// changes argument, else the server's default.
func (s *Server) changesOn(c *Call) bool {
	if !c.Tool.Changes || c.Tool.PageTool != nil {
		return false
	}
	if on, ok := c.Args[changesArg].(bool); ok {
		return on
	}
	return s.opts.Changes
}

// redactOutline takes every secret's value out of an outline, line by
// line: a value cut at 80 characters ends a line's quoted part.
func (s *Server) redactOutline(outline string) string {
	v := s.opts.Secrets
	if v.Len() == 0 {
		return outline
	}
	lines := strings.Split(v.Redact(outline), "\n")
	for i, l := range lines {
		lines[i] = v.RedactEdges(l)
	}
	return strings.Join(lines, "\n")
}

// addChanges adds to r, the result of c, the change of the tab's outline
// since the caller last saw it (see the comment at the top), and keeps
// the new outline as seen once the caller is given it (r.seen, committed
// by changesStage). It never fails the call: what goes wrong is a note.
func (s *Server) addChanges(ctx context.Context, c *Call, ex executor.Executor, r *Result, began time.Time) {
	if r == nil || r.Page == nil || ex == nil || !s.changesOn(c) {
		return
	}
	ps := *r.Page
	for _, d := range ps.Dialogs {
		if d.Action == executor.DialogOpen {
			return // the page waits on a dialog: the result says so
		}
	}
	tab := ps.TabID
	who := viewer(ctx, c)
	last := s.views.get(who, tab)
	if c.Tool.Action == ActionNavigate && !s.sameDocNav(c, last, ps) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, changesTimeout)
	defer cancel()
	// An action that loads a new document (a click on a link, Enter in a
	// form) returns before the document replaces the old one: what is
	// read then is the old document, whose change would tell the caller
	// nothing happened and whose refs are about to expire. The browser
	// says whether one is coming (landing.go).
	navigating := c.Tool.Action != ActionNavigate && mayLoad(c) && s.landingAsked(ctx, c, ex, tab, began)
	old := oldDocs(c, last)
	if navigating {
		// Read once, the new document as loaded, rather than the old one
		// or a half-loaded one first. A load that does not end in time
		// (or a request that ended in no new document) is read as the
		// tab is then.
		s.awaitNewDocument(ctx, ex, tab, old)
	}
	p := helpers.SnapshotParams{TabID: tab, MaxChars: maxChangesChars}
	if last != nil {
		p.Scope, p.InteractiveOnly = last.scope, last.interactiveOnly
	}
	note := func(n string) { setChanges(r, changesOut{ChangesNote: n}) }
	decided, rc, err := s.readAllowed(ctx, c, ex, tab, p.Scope)
	if err != nil {
		if executor.CodeOf(err) == executor.CodePolicyDenied {
			note("not shown: the policy does not allow reading this page; call snapshot if it should")
		} else {
			note("not read: " + string(executor.CodeOf(err)))
		}
		return
	}
	// Frames of other origins are decided as the read's, each on its
	// own document.
	p.DecideFrame = rc.FrameDecider()
	sr, err := helpers.Snapshot(ctx, ex, p)
	if err != nil && !p.Scope.IsZero() {
		// The scope is gone: the whole page, as an outline.
		p.Scope, last = executor.Target{}, nil
		sr, err = helpers.Snapshot(ctx, ex, p)
	}
	if err != nil {
		if executor.CodeOf(err) != executor.CodeDialogOpen {
			note("not read (" + string(executor.CodeOf(err)) + "); call snapshot")
		}
		return
	}
	if sr.URL != decided && navigating {
		// The action loaded another page than the read was decided on:
		// decide the read again, on the new document, and read it again.
		if decided, rc, err = s.readAllowed(ctx, c, ex, tab, p.Scope); err != nil {
			if executor.CodeOf(err) == executor.CodePolicyDenied {
				note("not shown: the policy does not allow reading this page; call snapshot if it should")
			} else {
				note("not read: " + string(executor.CodeOf(err)))
			}
			return
		}
		p.DecideFrame = rc.FrameDecider()
		if sr, err = helpers.Snapshot(ctx, ex, p); err != nil {
			note("not read (" + string(executor.CodeOf(err)) + "); call snapshot")
			return
		}
	}
	if sr.URL != decided {
		// The page moved on between the decision and the read: what
		// was read is not what the policy decided on.
		note("not read: the page changed while it was read; call snapshot")
		return
	}
	if sr.Next > 0 {
		note(fmt.Sprintf("not compared: the outline is over %d characters; call snapshot", maxChangesChars))
		return
	}
	now := s.redactOutline(sr.Text)
	seen := &seenOutline{viewer: who, session: c.Session, tab: tab, outline: now, scope: p.Scope, interactiveOnly: p.InteractiveOnly}
	r.seen = seen
	whole := cutOutline(now, helpers.DefaultSnapshotChars, p.Scope)
	if last == nil || !helpers.SameDocument(last.outline, now) {
		setChanges(r, changesOut{Outline: whole})
		return
	}
	ch, ok := helpers.DiffOutlines(last.outline, now, helpers.DefaultMaxEdits)
	switch {
	case !ok || len(ch.Text) > len(whole):
		setChanges(r, changesOut{Outline: whole})
	case ch.Text != "":
		setChanges(r, changesOut{Changes: ch.Text})
	}
}

// landingPoll is how often awaitLanding and awaitNewDocument look again.
const landingPoll = 25 * time.Millisecond

// mayLoad says whether c's action may start loading a new document by
// itself (Tool.MayLoad, Tool.MayLoadIf). Filling, hovering and scrolling
// do not.
func mayLoad(c *Call) bool {
	if c.Tool.MayLoadIf != "" {
		on, _ := c.Args[c.Tool.MayLoadIf].(bool)
		return on
	}
	return c.Tool.MayLoad
}

// awaitLanding says whether the tab's top frame began loading a new
// document since began (the action's start), by its network log, looking
// again until the time until while none is seen, and waits until that load has
// its response (or failed). A backend without a network log, or a log
// that cannot be read, is taken as no load.
func (s *Server) awaitLanding(ctx context.Context, ex executor.Executor, tab string, began, until time.Time) bool {
	since := began.Add(-5 * time.Millisecond).UnixMilli()
	for {
		log, err := ex.Network(ctx, executor.NetworkParams{TabID: tab, Navigations: 1})
		if err != nil {
			return false
		}
		var doc *executor.NetworkRequest
		for i := range log.Requests {
			q := &log.Requests[i]
			if q.Navigation && q.Nav == log.Nav && q.StartMs >= since {
				doc = q
				break
			}
		}
		if doc == nil && !time.Now().Before(until) {
			return false
		}
		if doc == nil {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(landingPoll):
			}
			continue
		}
		if doc.DurationMs >= 0 || doc.Outcome != executor.OutcomePending {
			return doc.Status != 204 && doc.Status != 205 && doc.Error == ""
		}
		select {
		case <-ctx.Done():
			return true
		case <-time.After(landingPoll):
		}
	}
}

// awaitNewDocument waits until the tab holds another document than old
// and it has loaded, or half the changes' time is up, and says whether it
// saw that. It waits in the page, on the document's own events
// (helpers.AwaitDocState), so it answers as the load ends, not at the next
// look.
func (s *Server) awaitNewDocument(ctx context.Context, ex executor.Executor, tab string, old map[string]bool) bool {
	deadline := time.Now().Add(changesTimeout / 2)
	pause := betweenDocs
	for {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return false
		}
		st, err := helpers.AwaitDocState(ctx, ex, tab, old, min(left, docStateWait))
		switch code := executor.CodeOf(err); {
		case err == nil && st.Doc == "":
			return false // the backend cannot tell one document from another
		case err == nil && !old[st.Doc] && st.Loaded:
			return true
		case code == executor.CodeDialogOpen, code == executor.CodeTargetGone, code == executor.CodeTabNotFound:
			return false
		case err != nil:
			// Between documents (the old one's world went with it): the
			// next read tells. A document no script runs in (an error
			// page) is read less and less often.
			select {
			case <-ctx.Done():
				return false
			case <-time.After(pause):
			}
			pause = min(2*pause, landingPoll)
		}
	}
}

// docStateWait bounds one wait in the page for a new document; betweenDocs
// is the first pause before reading again when there was no document to
// read (doubling up to landingPoll).
const (
	docStateWait = time.Second
	betweenDocs  = 5 * time.Millisecond
)

// sameDocNav says whether a navigation stayed in the document the caller
// last saw, and so reports changes: navigate only to another #fragment
// of the same URL (anything else loads a document, and navigate's result
// is the page, not its outline); back and forward when the caller saw
// the tab, which the outline's refs then tell.
func (s *Server) sameDocNav(c *Call, last *seenOutline, ps executor.PageState) bool {
	if last == nil {
		return false
	}
	if c.Tool.URLArg == "" {
		return true // back or forward: no URL of the caller's
	}
	if c.before == nil {
		return false
	}
	before, _, _ := strings.Cut(c.before.URL, "#")
	after, _, _ := strings.Cut(ps.URL, "#")
	return before == after && c.before.URL != ps.URL
}

// readAllowed decides reading tab's outline for c's caller as the snapshot
// call it is: the caller's tool ACL and list filter, then the Gate, on
// the tab's document as it is now. It returns the URL it decided on
// and the snapshot call it decided, whose Gate decides the frames too.
func (s *Server) readAllowed(ctx context.Context, c *Call, ex executor.Executor, tab string, scope executor.Target) (string, *Call, error) {
	e, ok := s.toolFor(UseOutline)
	if !ok {
		return "", nil, executor.Errorf(executor.CodePolicyDenied, "no snapshot tool")
	}
	visible := s.visible(ctx, e.tool, c.Principal)
	if c.Plugin != nil {
		visible = s.visibleStep(ctx, e.tool, c.Principal, c.Plugin)
	}
	if !visible {
		return "", nil, executor.Errorf(executor.CodePolicyDenied, "snapshot is not available to %s", c.Principal.Name)
	}
	args := map[string]any{"tab_id": tab}
	if scope.Ref != "" {
		args["ref"] = scope.Ref
	}
	if scope.Selector != "" {
		args["selector"] = scope.Selector
	}
	rc := &Call{Tool: e.tool, Args: args, Session: c.Session, Principal: c.Principal, Plugin: c.Plugin, srv: s, ex: ex, mark: c.mark}
	rc.Page = rc.pageFunc(ex)
	if err := s.before(ctx, rc); err != nil {
		return "", nil, err
	}
	// The gate read the page it decided on; one that did not (a test
	// double) is asked here, so the read can be held to it.
	t, err := rc.Page(ctx)
	if err != nil {
		return "", nil, err
	}
	return t.URL, rc, nil
}

// setChanges puts ch into r's JSON value and marks r as page content.
func setChanges(r *Result, ch changesOut) {
	switch v := r.Value.(type) {
	case actionOut:
		v.changesOut = ch
		r.Value = v
	case pointOut: // an action at a point (coords.go)
		v.changesOut = ch
		r.Value = v
	case pageOut:
		r.Value = pageChangesOut{v, ch}
	default:
		return
	}
	// The model reads them as lines after the head, not as a JSON
	// string (lean.go).
	r.Tail = ch.Changes + ch.Outline
	if r.Tail != "" {
		r.Untrusted = true
	}
}

// cutOutline cuts an outline of scope as the snapshot tool does by
// default: at a line, with the note that says where to continue.
func cutOutline(outline string, max int, scope executor.Target) string {
	if utf8.RuneCountInString(outline) <= max {
		return outline
	}
	lines := strings.Split(outline, "\n")
	used, end := 0, 0
	for end < len(lines) {
		n := utf8.RuneCountInString(lines[end]) + 1
		if used+n > max && end > 0 {
			break
		}
		used += n
		end++
	}
	with := ""
	switch {
	case scope.Ref != "":
		with = "the same ref and "
	case scope.Selector != "":
		with = "the same selector and "
	}
	return strings.Join(lines[:end], "\n") +
		fmt.Sprintf("\n[cut at line %d of %d: call snapshot with %soffset=%d for the rest]", end, len(lines), with, end)
}

// sawSnapshot keeps a snapshot call's outline as what its caller saw of
// the tab: the whole outline, so a later change is complete even when the
// snapshot shown was cut or paged.
func (s *Server) sawSnapshot(ctx context.Context, c *Call, r *Result, sr helpers.SnapshotResult, p helpers.SnapshotParams) {
	text := sr.Text
	if sr.Next > 0 || sr.Offset > 0 {
		if !s.opts.Changes {
			return
		}
		p.MaxChars, p.Offset = maxChangesChars, 0
		whole, err := helpers.Snapshot(ctx, c.Executor(), p)
		if err != nil || whole.Next > 0 {
			return
		}
		text = whole.Text
	}
	r.seen = &seenOutline{viewer: viewer(ctx, c), session: c.Session, tab: sr.TabID,
		outline: s.redactOutline(text), scope: p.Scope, interactiveOnly: p.InteractiveOnly}
}

// sawOf keeps what c's result shows its caller of the tab as seen, and
// forgets the outlines of a tab c closed. A plugin's step shows its
// caller nothing by itself: the plugin's result carries what it shows.
func (s *Server) sawOf(c *Call, r *Result) {
	if r == nil {
		return
	}
	if v, ok := r.Value.(tabCloseOut); ok {
		s.views.forget(c.Session, v.Closed)
	}
	if r.seen != nil && c.Plugin == nil {
		s.views.saw(r.seen)
	}
}

// baseline reads, for an acting call whose caller has seen no outline of
// its tab, the outline as it is before the call acts, and keeps it as
// what the caller saw: the call then answers with what it changed (a
// field's new value), not with the whole page (lean.go). It is a read of
// the page, decided as a snapshot is (readAllowed); anything that goes
// wrong leaves the call as it was: its answer is then the whole outline.
func (s *Server) baseline(ctx context.Context, c *Call) {
	ex := c.ex
	if ex == nil || c.Plugin != nil || c.Tool.Action == ActionNavigate || !s.changesOn(c) {
		return
	}
	tab := c.TabID()
	if tab == "" {
		if pk, ok := ex.(executor.TabPeeker); ok {
			if t, ok := pk.PeekTab(""); ok {
				tab = t.ID
			}
		}
	}
	if tab == "" {
		t, err := ex.TabInfo(ctx, "")
		if err != nil {
			return
		}
		tab = t.ID
	}
	who := viewer(ctx, c)
	if s.views.get(who, tab) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, changesTimeout)
	defer cancel()
	decided, rc, err := s.readAllowed(ctx, c, ex, tab, executor.Target{})
	if err != nil {
		return
	}
	sr, err := helpers.Snapshot(ctx, ex, helpers.SnapshotParams{TabID: tab, MaxChars: maxChangesChars, DecideFrame: rc.FrameDecider()})
	if err != nil || sr.URL != decided || sr.Next > 0 || sr.TabID != tab {
		return
	}
	s.views.saw(&seenOutline{viewer: who, session: c.Session, tab: tab, outline: s.redactOutline(sr.Text)})
}

// changesStage adds to a successful call's result what it changed in the
// page, and keeps the outline the result shows as what the caller last
// saw. An acting call on a tab whose outline its caller never saw reads
// the outline first (baseline), to answer with the change alone.
func (s *Server) changesStage(next step) step {
	return func(ctx context.Context, c *Call) (*Result, error) {
		began := time.Now()
		if c.Tool.Changes {
			s.baseline(ctx, c)
		}
		r, err := next(ctx, c)
		if err == nil {
			s.addChanges(ctx, c, c.ex, r, began)
			s.sawOf(c, r)
		}
		return r, err
	}
}
