package cdp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/internal/devtools"
	"github.com/playwright-community/playwright-go"
)

// A tab's console, attributed to the document that logged it. Playwright's
// console and pageerror events name the page only, and their location is
// the script's URL, which a page writes itself (//# sourceURL=, eval):
// neither says which frame's document logged. So the console is read
// from CDP sessions of chromegate's own, one on the page's target and one
// on each out-of-process frame's, with the Runtime domain on: every
// message carries its execution context, and the context's creation event
// its frame id and security origin (an about:srcdoc frame's is its
// parent's). A message of a context the session never saw has no Source,
// and the server withholds it. Runtime.enable replays the messages a
// target logged before the session came, so a frame that logs at once is
// not missed. The handlers run on playwright-go's dispatch goroutine and
// make no round trip.

// consoleRelease is after how many messages a session lets go of the
// remote objects its console events hold in the renderer.
const consoleRelease = 200

// execCtx is what a session knows of an execution context.
type execCtx struct {
	frameID   string
	origin    string
	isDefault bool
}

// srcWatch is a tab's console sessions.
type srcWatch struct {
	t *tab

	mu       sync.Mutex
	targets  map[string]bool // targets watched, by id
	mainID   string          // the page's main frame id
	sessions []*watched      // the sessions reading the tab's console
}

// watched is one session of a srcWatch and the execution contexts it saw.
type watched struct {
	w    *srcWatch
	p    playwright.Page
	sess playwright.CDPSession
	mu   sync.Mutex
	ctxs map[int]execCtx
	n    int // messages recorded
}

// documents lists the documents of the frames whose main-world context
// the session holds.
func (x *watched) documents() []executor.Source {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []executor.Source
	for id, c := range x.ctxs {
		if c.isDefault {
			out = append(out, *x.source(id, c))
		}
	}
	return out
}

// source is the document of the context c (id). x.mu is held.
func (x *watched) source(id int, c execCtx) *executor.Source {
	x.w.mu.Lock()
	main := c.frameID != "" && c.frameID == x.w.mainID
	x.w.mu.Unlock()
	if main {
		return &executor.Source{URL: executor.RedactURL(x.p.URL()), Origin: c.origin, Main: true}
	}
	return &executor.Source{Origin: c.origin}
}

func newSrcWatch(t *tab) *srcWatch {
	return &srcWatch{t: t, targets: map[string]bool{}}
}

// watchConsole starts reading p's console into t: the page's own
// target now, and each out-of-process frame as it appears or navigates.
func (t *tab) watchConsole(p playwright.Page) {
	w := t.src
	go w.attachPage(p)
	onFrame := func(f playwright.Frame) {
		if f.ParentFrame() != nil {
			go w.attachFrame(p, f)
		}
	}
	p.OnFrameAttached(onFrame)
	p.OnFrameNavigated(onFrame)
}

func (w *srcWatch) attachPage(p playwright.Page) {
	sess, err := p.Context().NewCDPSession(p)
	if err != nil {
		return // the page is gone
	}
	tree, err := sess.Send("Page.getFrameTree", nil)
	if err != nil {
		_ = sess.Detach()
		return
	}
	id, _ := devtools.Dig(tree, "frameTree", "frame", "id").(string)
	w.mu.Lock()
	w.mainID = id
	w.mu.Unlock()
	w.attach(p, sess)
}

// attachFrame watches f's target when f is out of process and its target
// is not watched yet (a frame that moved to another renderer has a new
// one).
func (w *srcWatch) attachFrame(p playwright.Page, f playwright.Frame) {
	if f.IsDetached() {
		return
	}
	sess, err := p.Context().NewCDPSession(f)
	if err != nil {
		return // in its parent's renderer: the parent's session hears it
	}
	info, err := sess.Send("Target.getTargetInfo", nil)
	id, _ := devtools.Dig(info, "targetInfo", "targetId").(string)
	w.mu.Lock()
	dup := err != nil || id == "" || w.targets[id]
	if !dup {
		w.targets[id] = true
	}
	w.mu.Unlock()
	if dup {
		_ = sess.Detach()
		return
	}
	sess.OnClose(func(playwright.CDPSession) {
		w.mu.Lock()
		delete(w.targets, id)
		w.mu.Unlock()
	})
	w.attach(p, sess)
}

// attach reads the console of sess's target into the tab's ring.
func (w *srcWatch) attach(p playwright.Page, sess playwright.CDPSession) {
	x := &watched{w: w, p: p, sess: sess, ctxs: map[int]execCtx{}}
	record := func(m executor.ConsoleMessage, ctxID int) {
		x.mu.Lock()
		if c, ok := x.ctxs[ctxID]; ok {
			m.Doc = x.source(ctxID, c)
			m.Page = cmp.Or(m.Doc.URL, m.Doc.Origin)
		}
		x.n++
		release := x.n%consoleRelease == 0
		x.mu.Unlock()
		m.TimeMs, m.Nav = time.Now().UnixMilli(), w.t.net.generation()
		w.t.con.Add(m)
		if release {
			go func() { _, _ = sess.Send("Runtime.releaseObjectGroup", map[string]any{"objectGroup": "console"}) }()
		}
	}
	sess.On("Runtime.executionContextCreated", func(ev map[string]any) {
		c, _ := ev["context"].(map[string]any)
		id, _ := c["id"].(float64)
		origin, _ := c["origin"].(string)
		frameID, _ := devtools.Dig(c, "auxData", "frameId").(string)
		def, _ := devtools.Dig(c, "auxData", "isDefault").(bool)
		if origin == "" || origin == "://" {
			origin = executor.OpaqueOrigin
		}
		x.mu.Lock()
		x.ctxs[int(id)] = execCtx{frameID: frameID, origin: origin, isDefault: def}
		x.mu.Unlock()
	})
	sess.On("Runtime.executionContextDestroyed", func(ev map[string]any) {
		id, _ := ev["executionContextId"].(float64)
		x.mu.Lock()
		delete(x.ctxs, int(id))
		x.mu.Unlock()
	})
	sess.On("Runtime.executionContextsCleared", func(map[string]any) {
		x.mu.Lock()
		clear(x.ctxs)
		x.mu.Unlock()
	})
	sess.On("Runtime.consoleAPICalled", func(ev map[string]any) {
		id, _ := ev["executionContextId"].(float64)
		record(consoleAPIMessage(ev), int(id))
	})
	sess.On("Runtime.exceptionThrown", func(ev map[string]any) {
		d, _ := ev["exceptionDetails"].(map[string]any)
		id, _ := d["executionContextId"].(float64)
		record(exceptionMessage(d), int(id))
	})
	w.mu.Lock()
	w.sessions = append(w.sessions, x)
	w.mu.Unlock()
	sess.OnClose(func(playwright.CDPSession) {
		w.mu.Lock()
		w.sessions = slices.DeleteFunc(w.sessions, func(y *watched) bool { return y == x })
		w.mu.Unlock()
	})
	if _, err := sess.Send("Runtime.enable", nil); err != nil {
		_ = sess.Detach()
	}
}

// probeWait is how long a session may take to evaluate nothing before
// its renderer is taken for one a dialog blocks.
const probeWait = 200 * time.Millisecond

// dialogDocs names the documents that may have opened the dialog open on
// the tab. Neither Playwright's dialog event nor anything short of the
// Page domain (which chromegate does not enable on a session of its own:
// a download then stops the driver) says which frame opened it, but a
// dialog blocks its renderer: every document of a session that does not
// answer a probe may have. Nil when no session is blocked (the dialog is
// gone, or no session watched its renderer).
func (w *srcWatch) dialogDocs() []executor.Source {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	ws := slices.Clone(w.sessions)
	w.mu.Unlock()
	answered := make(chan *watched, len(ws))
	for _, x := range ws {
		go func() {
			if _, err := x.sess.Send("Runtime.evaluate", map[string]any{"expression": "0", "returnByValue": true}); err == nil {
				answered <- x
			}
		}()
	}
	alive := map[*watched]bool{}
	timer := time.NewTimer(probeWait)
	defer timer.Stop()
wait:
	for len(alive) < len(ws) {
		select {
		case x := <-answered:
			alive[x] = true
		case <-timer.C:
			break wait
		}
	}
	var docs []executor.Source
	for _, x := range ws {
		if !alive[x] {
			docs = append(docs, x.documents()...)
		}
	}
	return docs
}

// withDocs names the documents of the dialogs in ds that have none.
func (w *srcWatch) withDocs(ds []executor.Dialog) []executor.Dialog {
	var docs []executor.Source
	probed := false
	for i := range ds {
		if ds[i].Docs != nil || ds[i].Action != executor.DialogOpen {
			continue
		}
		if !probed {
			docs, probed = w.dialogDocs(), true
		}
		ds[i].Docs = docs
	}
	return ds
}

// maxConsoleArgs bounds the arguments of a console call read.
const maxConsoleArgs = 32

// consoleAPIMessage is a Runtime.consoleAPICalled event as a message:
// its arguments joined as DevTools prints them (extension/consolelog.js
// does the same), with the first stack frame as its source.
func consoleAPIMessage(ev map[string]any) executor.ConsoleMessage {
	typ, _ := ev["type"].(string)
	m := executor.ConsoleMessage{Level: executor.ConsoleLevel(typ)}
	args, _ := ev["args"].([]any)
	var b strings.Builder
	total := 0
	for i, a := range args {
		if i == maxConsoleArgs {
			break
		}
		s := argText(a)
		if i > 0 {
			total++
			if b.Len() <= executor.MaxConsoleText {
				b.WriteByte(' ')
			}
		}
		total += len(s)
		if b.Len() <= executor.MaxConsoleText {
			b.WriteString(s[:min(len(s), executor.MaxConsoleText+1-b.Len())])
		}
	}
	m.Text = b.String()
	if total > executor.MaxConsoleText {
		m.TextBytes = total
	}
	st, _ := ev["stackTrace"].(map[string]any)
	m.URL, m.Line, m.Column = firstCallFrame(st)
	if m.Level == executor.LevelError || typ == "trace" || typ == "assert" {
		m.Stack = stackText(st)
	}
	return m
}

// exceptionMessage is a Runtime.exceptionThrown's details as a message.
func exceptionMessage(d map[string]any) executor.ConsoleMessage {
	m := executor.ConsoleMessage{Level: executor.LevelError, Exception: true}
	desc, _ := devtools.Dig(d, "exception", "description").(string)
	if desc == "" {
		if ex, ok := d["exception"].(map[string]any); ok {
			desc = argText(ex)
		} else {
			desc, _ = d["text"].(string)
		}
	}
	head, _, multi := strings.Cut(desc, "\n")
	prefix := strings.TrimRight(fmt.Sprint(d["text"]), " ")
	if _, ok := d["text"].(string); !ok {
		prefix = "Uncaught"
	}
	m.Text = head
	if !strings.HasPrefix(head, "Uncaught") {
		m.Text = prefix + " " + head
	}
	st, _ := d["stackTrace"].(map[string]any)
	if m.Stack = stackText(st); m.Stack == "" && multi {
		m.Stack = desc
	}
	m.URL, m.Line, m.Column = firstCallFrame(st)
	if m.URL == "" {
		if u, _ := d["url"].(string); u != "" {
			l, _ := d["lineNumber"].(float64)
			c, _ := d["columnNumber"].(float64)
			m.URL, m.Line, m.Column = u, int(l)+1, int(c)+1
		}
	}
	return m
}

// argText is how DevTools prints one argument of a console call.
func argText(v any) string {
	a, ok := v.(map[string]any)
	if !ok {
		return fmt.Sprint(v)
	}
	typ, _ := a["type"].(string)
	if u, ok := a["unserializableValue"]; ok {
		return fmt.Sprint(u)
	}
	if val, ok := a["value"]; ok {
		switch x := val.(type) {
		case string:
			return x
		case nil:
			return "null"
		case map[string]any, []any:
			b, _ := json.Marshal(x)
			return string(b)
		case float64:
			return strings.TrimSuffix(fmt.Sprintf("%v", x), ".0")
		default:
			return fmt.Sprint(x)
		}
	}
	if typ == "undefined" {
		return "undefined"
	}
	for _, k := range []string{"description", "className", "type"} {
		if s, _ := a[k].(string); s != "" {
			return s
		}
	}
	return ""
}

func callFrames(st map[string]any) []map[string]any {
	fs, _ := st["callFrames"].([]any)
	out := make([]map[string]any, 0, min(len(fs), 50))
	for _, f := range fs {
		if m, ok := f.(map[string]any); ok && len(out) < 50 {
			out = append(out, m)
		}
	}
	return out
}

func firstCallFrame(st map[string]any) (url string, line, col int) {
	fs := callFrames(st)
	if len(fs) == 0 {
		return "", 0, 0
	}
	url, _ = fs[0]["url"].(string)
	l, _ := fs[0]["lineNumber"].(float64)
	c, _ := fs[0]["columnNumber"].(float64)
	return url, int(l) + 1, int(c) + 1
}

func stackText(st map[string]any) string {
	var lines []string
	for _, f := range callFrames(st) {
		name, _ := f["functionName"].(string)
		if name == "" {
			name = "<anonymous>"
		}
		url, _ := f["url"].(string)
		l, _ := f["lineNumber"].(float64)
		c, _ := f["columnNumber"].(float64)
		lines = append(lines, fmt.Sprintf("    at %s (%s:%d:%d)", name, url, int(l)+1, int(c)+1))
	}
	return strings.Join(lines, "\n")
}
