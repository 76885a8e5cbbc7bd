// Package webmcp tracks the tools web pages register through WebMCP in one
// tab, over that tab's DevTools protocol, for any backend that can send CDP
// commands to a tab and deliver its WebMCP events: the CDP backend through
// a Playwright CDP session, the extension through chrome.debugger. It
// speaks the WebMCP domain (toolsAdded, toolsRemoved, invokeTool →
// toolResponded, cancelInvocation) and runs executor.PageToolsScript in
// the page's main world for polyfills and @mcp-b/global.
//
// A document is known by its main frame's loaderId (Page.getFrameTree, the
// browser's word, not the page's): when it changes, every tool of the old
// document is dropped, calls in flight fail with "interrupted by
// navigation", and the domain is re-enabled so the new document's tools
// are replayed.
//
// Nothing a page sends can stop the server. Every structure a page
// controls is bounded before it is decoded or walked: the in-page script
// answers with one JSON text whose length it checks last (a property of a
// primitive string, which no page script can change), results are cut to
// the call's MaxOutputChars in the page, lists stop at a budget, schemas
// over 32 KiB are dropped. What arrives is checked again here
// (executor.NormalizePageTool, executor.CheckSchema, executor.BoundOutput),
// without recursion a page can deepen. A bad tool is refused (Unusable,
// or left out of the list), and the rest keeps working. The one read not
// bounded before it is decoded is the CDP backend's WebMCP.toolResponded
// event, which Playwright decodes whole: its output is cut right after.
package webmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/internal/devtools"
)

// Link is a tab's DevTools protocol, as a backend provides it.
type Link interface {
	// Open sets up the tab's protocol session, once (it is called again
	// after a failure), and from then on delivers the tab's WebMCP.*
	// events to Tab.Event and its main-frame navigations to
	// Tab.Navigated. It must not block on ctx's end.
	Open(ctx context.Context) error
	// Send runs one command and returns its result (a JSON object). The
	// params of WebMCP.invokeTool carry MaxOutputParam, the call's bound on
	// its result: a link that can bound the toolResponded event by it
	// before the server reads it does (the extension); none sends it to
	// the browser.
	Send(ctx context.Context, method string, params map[string]any) (json.RawMessage, error)
	// URL is the tab's current main-frame URL, as the browser reports it.
	URL() string
	// Closed reports whether the tab is gone.
	Closed() bool
}

// MaxOutputParam is the param of WebMCP.invokeTool that carries the call's
// bound on its result, for the Link (see Link.Send).
const MaxOutputParam = "chromegate.maxOutput"

// ErrTabClosed fails what was asked of a tab that closed.
var ErrTabClosed = errors.New("the tab was closed")

const (
	// waitPollMs is how long one long poll of the in-page script lasts.
	waitPollMs = 20_000
	// setupTimeout bounds opening a tab's session and enabling the domain.
	setupTimeout = 10 * time.Second
	// earlyKeep bounds answers that arrive before their invokeTool reply.
	earlyKeep = 64
)

// Tab is one tab's page tools. It is safe for concurrent use.
type Tab struct {
	hub  *Hub
	link Link
	id   string // the public tab id
	log  *slog.Logger

	setupMu  sync.Mutex  // serialises ensure
	opened   bool        // guarded by mu
	work     chan func() // one goroutine applies changes in order
	workOnce sync.Once

	mu       sync.Mutex
	loader   string // the main frame's loaderId: the current document
	mainID   string
	frames   map[string]string // frame id → URL
	native   map[string]executor.PageTool
	inpage   []executor.PageTool
	res      int
	pending  map[string]chan toolAnswer
	early    map[string]toolAnswer
	navWake  chan struct{} // closed and replaced on every new document
	shown    []executor.PageTool
	looping  bool
	polled   bool // the long poll has listed the current document's in-page tools
	closed   bool
	closedCh chan struct{}
}

// NewTab tracks the page tools of the tab with public id id.
func NewTab(h *Hub, id string, link Link) *Tab {
	return &Tab{
		hub: h, link: link, id: id, log: h.log,
		work:     make(chan func(), 256),
		frames:   map[string]string{},
		native:   map[string]executor.PageTool{},
		pending:  map[string]chan toolAnswer{},
		early:    map[string]toolAnswer{},
		navWake:  make(chan struct{}),
		closedCh: make(chan struct{}),
	}
}

// send is a command on the tab's session.
func (pt *Tab) send(method string, params map[string]any) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return pt.sendCtx(ctx, method, params)
}

func (pt *Tab) sendCtx(ctx context.Context, method string, params map[string]any) (any, error) {
	raw, err := pt.link.Send(ctx, method, params)
	if err != nil {
		return nil, err
	}
	var v any
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
	}
	return v, nil
}

func (pt *Tab) isClosed() bool {
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.closed
}

// enqueue hands fn to the worker without ever blocking an event handler.
func (pt *Tab) enqueue(fn func()) {
	select {
	case pt.work <- fn:
	default:
		go func() {
			select {
			case pt.work <- fn:
			case <-pt.closedCh:
			}
		}()
	}
}

func (pt *Tab) worker() {
	for {
		select {
		case fn := <-pt.work:
			fn()
		case <-pt.closedCh:
			return
		}
	}
}

// readFrames reads the frame tree: the frames' URLs and the main frame's
// loaderId. When the loaderId is new, the tab shows a new document: the old
// one's tools are dropped (and reported gone), its calls are woken to fail
// with "interrupted by navigation", and the domain is re-enabled, because
// the new document's tools may have been reported before its navigation was
// seen, and were dropped with the old ones. Whoever notices the change
// first does all of it, once.
func (pt *Tab) readFrames() error {
	tree, err := pt.send("Page.getFrameTree", nil)
	if err != nil {
		return err
	}
	frames := map[string]string{}
	var walk func(n any)
	walk = func(n any) {
		id, _ := devtools.Dig(n, "frame", "id").(string)
		u, _ := devtools.Dig(n, "frame", "url").(string)
		if id != "" {
			frames[id] = u
		}
		kids, _ := devtools.Dig(n, "childFrames").([]any)
		for _, k := range kids {
			walk(k)
		}
	}
	root := devtools.Dig(tree, "frameTree")
	walk(root)
	loader, _ := devtools.Dig(root, "frame", "loaderId").(string)
	mainID, _ := devtools.Dig(root, "frame", "id").(string)
	pt.mu.Lock()
	changed := pt.loader != "" && loader != pt.loader
	pt.loader, pt.mainID, pt.frames = loader, mainID, frames
	if changed {
		pt.native = map[string]executor.PageTool{}
		pt.inpage = nil
		pt.polled = false
		pt.res = -1 // the new document's page MCP server, if any, counts anew
		close(pt.navWake)
		pt.navWake = make(chan struct{})
	}
	pt.mu.Unlock()
	if changed {
		pt.publishChange()
		pt.hub.publish(executor.PageToolsEvent{TabID: pt.id, Resources: true})
		_, _ = pt.send("WebMCP.disable", nil)
		_, _ = pt.send("WebMCP.enable", nil)
	}
	return nil
}

// checkDocument runs after a main-frame navigation (a same-document one
// keeps the loaderId, and the tools).
func (pt *Tab) checkDocument() { _ = pt.readFrames() }

// mainURL is the main frame's URL: the browser's word through the link,
// else the frame tree's.
func (pt *Tab) mainURL() string {
	if u := pt.link.URL(); u != "" {
		return u
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.frames[pt.mainID]
}

func (pt *Tab) frameURL(frameID string) string {
	pt.mu.Lock()
	u, ok := pt.frames[frameID]
	main := frameID == pt.mainID
	pt.mu.Unlock()
	if !ok || main {
		if main || frameID == "" {
			return pt.mainURL()
		}
		// A frame the tree did not have yet.
		if err := pt.readFrames(); err == nil {
			pt.mu.Lock()
			u = pt.frames[frameID]
			pt.mu.Unlock()
		}
	}
	return u
}

func (pt *Tab) nativeAdded(ev map[string]any) {
	tools, _ := ev["tools"].([]any)
	var add []executor.PageTool
	for _, raw := range tools {
		m, _ := raw.(map[string]any)
		if m == nil {
			continue
		}
		tool := executor.PageTool{Surface: executor.SurfaceWebMCP}
		tool.FrameID, _ = m["frameId"].(string)
		tool.Name, _ = m["name"].(string)
		tool.Title, _ = m["title"].(string)
		tool.Description, _ = m["description"].(string)
		if s, ok := m["inputSchema"]; ok {
			if executor.BoundSize(s, executor.MaxPageToolSchema) {
				tool.InputSchema, _ = json.Marshal(s)
			} else {
				tool.Unusable = fmt.Sprintf("its input schema is larger than %d KiB", executor.MaxPageToolSchema>>10)
			}
		}
		if m["schemaTooLarge"] == true { // the extension dropped it
			tool.Unusable = fmt.Sprintf("its input schema is larger than %d KiB", executor.MaxPageToolSchema>>10)
		}
		if a, ok := m["annotations"].(map[string]any); ok {
			tool.Annotations = executor.PageToolAnnotations{
				ReadOnly: a["readOnly"] == true, UntrustedContent: a["untrustedContent"] == true,
				Consequential: a["consequential"] == true,
			}
		}
		if !executor.NormalizePageTool(&tool) {
			continue
		}
		tool.URL = pt.frameURL(tool.FrameID)
		tool.Origin = executor.OriginOf(tool.URL)
		add = append(add, tool)
	}
	pt.mu.Lock()
	for _, tool := range add {
		if len(pt.native) < executor.MaxPageTools {
			pt.native[tool.FrameID+"\x00"+tool.Name] = tool
		}
	}
	pt.mu.Unlock()
	pt.publishChange()
}

func (pt *Tab) nativeRemoved(ev map[string]any) {
	tools, _ := ev["tools"].([]any)
	pt.mu.Lock()
	for _, raw := range tools {
		m, _ := raw.(map[string]any)
		frame, _ := m["frameId"].(string)
		name, _ := m["name"].(string)
		delete(pt.native, frame+"\x00"+name)
	}
	pt.mu.Unlock()
	pt.publishChange()
}

// responded delivers an invocation's answer (an event handler: no
// Playwright call here).
func (pt *Tab) responded(ev map[string]any) {
	id, _ := ev["invocationId"].(string)
	// Taken from the event as decoded: re-encoding a page's output whole
	// would copy it again.
	var a toolAnswer
	a.Status, _ = ev["status"].(string)
	a.Output = ev["output"]
	if n, ok := ev["outputCut"].(float64); ok {
		a.OutputCut = int(n)
	}
	a.ErrorText, _ = ev["errorText"].(string)
	a.ErrorText = executor.CutPageText(a.ErrorText, 2000)
	a.Exception, _ = devtools.Dig(ev, "exception", "description").(string)
	a.Exception = executor.CutPageText(a.Exception, 2000)
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if ch, ok := pt.pending[id]; ok {
		delete(pt.pending, id)
		ch <- a
		return
	}
	if len(pt.early) >= earlyKeep {
		clear(pt.early)
	}
	pt.early[id] = a
}

// Merged is the tab's tools, one per name: the main frame's before other
// frames', then by surface preference; sorted by name.
func (pt *Tab) Merged() []executor.PageTool {
	pt.mu.Lock()
	all := make([]executor.PageTool, 0, len(pt.native)+len(pt.inpage))
	for _, t := range pt.native {
		all = append(all, t)
	}
	all = append(all, pt.inpage...)
	main := pt.mainID
	pt.mu.Unlock()
	tabID := pt.id
	best := map[string]executor.PageTool{}
	rank := func(t executor.PageTool) int {
		r := t.Surface.Rank()
		if t.FrameID != main {
			r += 10
		}
		return r
	}
	for _, t := range all {
		t.TabID = tabID
		if b, ok := best[t.Name]; !ok || rank(t) < rank(b) {
			best[t.Name] = t
		}
	}
	out := make([]executor.PageTool, 0, len(best))
	for _, t := range best {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b executor.PageTool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// find returns the tool called name, on surface if one is given.
func (pt *Tab) find(name string, surface executor.PageToolSurface) (executor.PageTool, bool) {
	if surface == "" {
		for _, t := range pt.Merged() {
			if t.Name == name {
				return t, true
			}
		}
		return executor.PageTool{}, false
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	if surface == executor.SurfaceWebMCP {
		if t, ok := pt.native[pt.mainID+"\x00"+name]; ok {
			return t, true
		}
		for _, t := range pt.native {
			if t.Name == name {
				return t, true
			}
		}
		return executor.PageTool{}, false
	}
	for _, t := range pt.inpage {
		if t.Name == name && t.Surface == surface {
			return t, true
		}
	}
	return executor.PageTool{}, false
}

// publishChange tells the watchers what changed since the last event.
func (pt *Tab) publishChange() {
	cur := pt.Merged()
	pt.mu.Lock()
	added, removed := executor.DiffPageTools(pt.shown, cur)
	pt.shown = cur
	pt.mu.Unlock()
	if len(added)+len(removed) > 0 {
		pt.hub.publish(executor.PageToolsEvent{TabID: pt.id, Added: added, Removed: removed})
	}
}

// Close ends the tab's page tools: its tools are reported gone and its
// calls fail. It may be called more than once.
func (pt *Tab) Close() {
	pt.mu.Lock()
	if pt.closed {
		pt.mu.Unlock()
		return
	}
	pt.closed = true
	close(pt.closedCh)
	shown := pt.shown
	pt.shown = nil
	pt.mu.Unlock()
	pt.hub.publish(executor.PageToolsEvent{TabID: pt.id, Removed: shown, Closed: true})
}

// inPageResult is what the in-page script's list and wait ops return.
type inPageResult struct {
	Tools []struct {
		Surface     executor.PageToolSurface     `json:"surface"`
		Name        string                       `json:"name"`
		Title       string                       `json:"title"`
		Description string                       `json:"description"`
		InputSchema json.RawMessage              `json:"inputSchema"`
		TooLarge    bool                         `json:"tooLarge"`
		Annotations executor.PageToolAnnotations `json:"annotations"`
	} `json:"tools"`
	Sig string `json:"sig"`
	Res int    `json:"res"`
}

// script runs the in-page script with arg in the main world and decodes
// its result into out.
func (pt *Tab) script(ctx context.Context, arg map[string]any, out any) error {
	arg["key"] = pt.hub.key
	arg["skipNative"] = true
	a, err := json.Marshal(arg)
	if err != nil {
		return err
	}
	type res struct {
		v   any
		err error
	}
	ch := make(chan res, 1)
	// The evaluation outlives ctx by a little, so a late answer is read
	// (and dropped) rather than left hanging.
	limit := 60 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		limit = time.Until(dl) + 2*time.Second
	}
	go func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
		defer cancel()
		v, err := pt.sendCtx(sctx, "Runtime.evaluate", map[string]any{
			"expression":    "(" + executor.PageToolsScript() + ")(" + string(a) + ")",
			"awaitPromise":  true,
			"returnByValue": true,
		})
		ch <- res{v, err}
	}()
	var r res
	select {
	case r = <-ch:
	case <-ctx.Done():
		return executor.AsError(ctx.Err())
	case <-pt.closedCh:
		return ErrTabClosed
	}
	if r.err != nil {
		return r.err
	}
	if ex, ok := devtools.Dig(r.v, "exceptionDetails").(map[string]any); ok {
		return &scriptError{devtools.ExceptionText(ex)}
	}
	// The script answers with one JSON text (see scripts/webmcp.js).
	text, ok := devtools.Dig(r.v, "result", "value").(string)
	if !ok {
		return &scriptError{"its answer is not JSON text"}
	}
	return json.Unmarshal([]byte(text), out)
}

// scriptError is an exception of the in-page script: the page broke
// something it relies on, or the document went away under it.
type scriptError struct{ msg string }

func (e *scriptError) Error() string { return "the page-tool script failed: " + e.msg }

// Tools returns the tab's tools, listing the in-page ones afresh unless the
// long poll keeps them current.
func (pt *Tab) Tools(ctx context.Context) ([]executor.PageTool, error) {
	if err := pt.ensure(ctx); err != nil {
		return nil, err
	}
	pt.mu.Lock()
	polled := pt.looping && pt.polled
	pt.mu.Unlock()
	if polled {
		// The long poll keeps the list current (it answers within a
		// quarter of a second of a change).
		return pt.Merged(), nil
	}
	// The document the list runs in: the browser's word now, not the last
	// navigation seen (its event may still be on its way).
	loader, err := pt.currentDocument()
	if err != nil {
		return pt.Merged(), nil
	}
	var r inPageResult
	if err := pt.script(ctx, map[string]any{"op": "list"}, &r); err != nil {
		if pt.isClosed() || pt.link.Closed() {
			return nil, ErrTabClosed
		}
		// The native tools stand without the page's own.
		return pt.Merged(), nil
	}
	if pt.sameDocument(loader) {
		pt.applyInPage(loader, r)
	}
	return pt.Merged(), nil
}

// currentDocument reads the frame tree and returns the main frame's
// loaderId.
func (pt *Tab) currentDocument() (string, error) {
	if err := pt.readFrames(); err != nil {
		return "", err
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.loader, nil
}

// sameDocument reports whether the tab still shows the document whose
// loaderId was loader, read after a script ran (one round trip). With the
// loaderId read before it, it pins the document the script ran in: a
// navigation can commit between the two reads, and the script's answer is
// then the new document's (or the old one's), not to be filed under either
// by guess. A tab whose tree cannot be read is taken as changed.
func (pt *Tab) sameDocument(loader string) bool {
	cur, err := pt.currentDocument()
	return err == nil && cur == loader
}

// applyInPage stores what the script listed, unless the document changed
// since the script was asked; it reports whether it did.
func (pt *Tab) applyInPage(loader string, r inPageResult) bool {
	url := pt.mainURL()
	var tools []executor.PageTool
	for _, d := range r.Tools {
		if d.Surface != executor.SurfaceInPage && d.Surface != executor.SurfaceMCPB {
			continue
		}
		t := executor.PageTool{Name: d.Name, Title: d.Title, Description: d.Description, InputSchema: d.InputSchema,
			Annotations: d.Annotations, Surface: d.Surface}
		if d.TooLarge {
			t.Unusable = fmt.Sprintf("its input schema is larger than %d KiB", executor.MaxPageToolSchema>>10)
		}
		if !executor.NormalizePageTool(&t) || len(tools) >= executor.MaxPageTools {
			continue
		}
		tools = append(tools, t)
	}
	pt.mu.Lock()
	if pt.loader != loader || pt.closed {
		pt.mu.Unlock()
		return false
	}
	for i := range tools {
		tools[i].FrameID = pt.mainID
		tools[i].URL = url
		tools[i].Origin = executor.OriginOf(url)
	}
	resChanged := r.Res != pt.res
	pt.inpage, pt.res = tools, r.Res
	pt.mu.Unlock()
	pt.publishChange()
	if resChanged {
		pt.hub.publish(executor.PageToolsEvent{TabID: pt.id, Resources: true})
	}
	return true
}

// Watch starts the tab's long poll, when someone watches and it is not
// running.
func (pt *Tab) Watch() {
	pt.mu.Lock()
	if pt.looping || pt.closed {
		pt.mu.Unlock()
		return
	}
	pt.looping = true
	pt.mu.Unlock()
	go pt.loop()
}

func (pt *Tab) loop() {
	defer func() {
		pt.mu.Lock()
		pt.looping, pt.polled = false, false
		pt.mu.Unlock()
	}()
	// sig is the list the last poll saw, in the document sigLoader: the
	// next poll waits for a change from it. Another document starts
	// afresh, even with the same tools (a reload), or its list would never
	// be taken in.
	sig, sigLoader := "", ""
	backoff := 100 * time.Millisecond
	for pt.hub.Watched() && !pt.isClosed() && !pt.link.Closed() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		err := pt.ensure(ctx)
		cancel()
		if err != nil {
			if pt.link.Closed() {
				return
			}
			pt.log.Debug("page tools: cannot follow a tab", "err", err)
			pt.pause(backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		// The document the poll will run in (a navigation may not have
		// been seen yet).
		loader, err := pt.currentDocument()
		if err != nil {
			pt.log.Debug("page tools: cannot read the frame tree", "err", err)
			pt.pause(backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		if loader != sigLoader {
			sig = ""
		}
		var r inPageResult
		ctx, cancel = context.WithTimeout(context.Background(), waitPollMs*time.Millisecond+10*time.Second)
		err = pt.script(ctx, map[string]any{"op": "wait", "sig": sig, "ms": waitPollMs}, &r)
		cancel()
		if err != nil {
			// The document went away under the poll (a navigation), or the
			// page broke the script: start over on the next document.
			pt.log.Debug("page tools: the in-page poll ended", "err", err)
			sig = ""
			pt.pause(backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		if !pt.sameDocument(loader) {
			// A navigation committed around the poll: which document
			// answered is unknown. Poll the new one.
			sig = ""
			continue
		}
		if r.Sig != sig {
			sig = ""
			if pt.applyInPage(loader, r) {
				sig, sigLoader = r.Sig, loader
				pt.mu.Lock()
				pt.polled = pt.loader == loader
				pt.mu.Unlock()
			}
		}
	}
}

func (pt *Tab) pause(d time.Duration) {
	select {
	case <-time.After(d):
	case <-pt.closedCh:
	}
}

// ensure opens the tab's session and enables the WebMCP domain, once.
func (pt *Tab) ensure(ctx context.Context) error {
	pt.setupMu.Lock()
	defer pt.setupMu.Unlock()
	pt.mu.Lock()
	opened := pt.opened
	pt.mu.Unlock()
	if opened {
		return nil
	}
	if pt.isClosed() || pt.link.Closed() {
		return ErrTabClosed
	}
	pt.startWorker()
	if err := pt.link.Open(ctx); err != nil {
		return err
	}
	if err := pt.readFrames(); err != nil {
		return err
	}
	if _, err := pt.sendCtx(ctx, "WebMCP.enable", nil); err != nil {
		return fmt.Errorf("WebMCP.enable: %w", err)
	}
	pt.mu.Lock()
	pt.opened = true
	pt.mu.Unlock()
	// A navigation that committed while the domain was being enabled was
	// not followed (Navigated waits for opened): the tools it reported
	// would be filed under the document read above.
	_ = pt.readFrames()
	// The domain replays the tools registered so far before it answers;
	// let the worker take them in before the first list.
	return pt.barrier(ctx)
}

// barrier waits until the worker has done what was queued before it.
func (pt *Tab) barrier(ctx context.Context) error {
	done := make(chan struct{})
	pt.enqueue(func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-pt.closedCh:
		return ErrTabClosed
	}
}

func (pt *Tab) startWorker() { pt.workOnce.Do(func() { go pt.worker() }) }

// Event takes one of the tab's WebMCP.* events (from the Link). It never
// blocks.
func (pt *Tab) Event(method string, params map[string]any) {
	switch method {
	case "WebMCP.toolsAdded":
		pt.startWorker()
		pt.enqueue(func() { pt.nativeAdded(params) })
	case "WebMCP.toolsRemoved":
		pt.startWorker()
		pt.enqueue(func() { pt.nativeRemoved(params) })
	case "WebMCP.toolResponded":
		pt.responded(params)
	}
}

// Navigated tells the tab its main frame navigated (a new document, or a
// same-document move that keeps the tools). It never blocks.
func (pt *Tab) Navigated() {
	pt.mu.Lock()
	opened := pt.opened
	pt.mu.Unlock()
	if opened {
		pt.startWorker()
		pt.enqueue(pt.checkDocument)
	}
}
