package cdp

import (
	"encoding/json"
	"fmt"
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
	frameID string
	origin  string
}

// srcWatch is a tab's console sessions.
type srcWatch struct {
	t *tab

	mu      sync.Mutex
	targets map[string]bool // targets watched, by id
	mainID  string          // the page's main frame id
}

// watchConsole starts reading p's console into t: the page's own
// target now, and each out-of-process frame as it appears or navigates.
func (t *tab) watchConsole(p playwright.Page) {
	w := &srcWatch{t: t, targets: map[string]bool{}}
	t.src = w
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
	var mu sync.Mutex
	ctxs := map[int]execCtx{}
	n := 0
	source := func(id int) *executor.Source {
		mu.Lock()
		c, ok := ctxs[id]
		mu.Unlock()
		if !ok {
			return nil
		}
		w.mu.Lock()
		main := c.frameID != "" && c.frameID == w.mainID
		w.mu.Unlock()
		if main {
			return &executor.Source{URL: executor.RedactURL(p.URL()), Origin: c.origin, Main: true}
		}
		return &executor.Source{Origin: c.origin}
	}
	record := func(m executor.ConsoleMessage, ctxID int) {
		m.Doc = source(ctxID)
		if m.Doc != nil {
			m.Page = m.Doc.URL
			if m.Page == "" {
				m.Page = m.Doc.Origin
			}
		}
		m.TimeMs, m.Nav = time.Now().UnixMilli(), w.t.net.generation()
		w.t.con.Add(m)
		mu.Lock()
		n++
		release := n%consoleRelease == 0
		mu.Unlock()
		if release {
			go func() { _, _ = sess.Send("Runtime.releaseObjectGroup", map[string]any{"objectGroup": "console"}) }()
		}
	}
	sess.On("Runtime.executionContextCreated", func(ev map[string]any) {
		c, _ := ev["context"].(map[string]any)
		id, _ := c["id"].(float64)
		origin, _ := c["origin"].(string)
		frameID, _ := devtools.Dig(c, "auxData", "frameId").(string)
		if origin == "" || origin == "://" {
			origin = executor.OpaqueOrigin
		}
		mu.Lock()
		ctxs[int(id)] = execCtx{frameID: frameID, origin: origin}
		mu.Unlock()
	})
	sess.On("Runtime.executionContextDestroyed", func(ev map[string]any) {
		id, _ := ev["executionContextId"].(float64)
		mu.Lock()
		delete(ctxs, int(id))
		mu.Unlock()
	})
	sess.On("Runtime.executionContextsCleared", func(map[string]any) {
		mu.Lock()
		clear(ctxs)
		mu.Unlock()
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
	if _, err := sess.Send("Runtime.enable", nil); err != nil {
		_ = sess.Detach()
	}
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
