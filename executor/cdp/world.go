package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/internal/devtools"
	"github.com/playwright-community/playwright-go"
)

// worldName is the isolated world chromegate's own scripts run in. Page
// scripts run in the main world and cannot reach its globals.
const worldName = "chromegate"

// world is a tab's link to chromegate's isolated world in its main frame:
// a CDP session of its own and the execution context of the current
// document, created on first use and again after the tab navigates.
type world struct {
	// mu serialises setting up the session and the context (two contexts
	// for one document would split the ref registry). No event handler
	// takes it, so holding it across a CDP call cannot deadlock.
	mu      sync.Mutex
	sess    playwright.CDPSession
	frameID string
	cur     atomic.Pointer[worldCtx] // nil: none for the current document
}

// worldCtx is one document's execution context in the isolated world, and
// the document token offered to scripts run in it (see
// executor.ScriptParams).
type worldCtx struct {
	id  int
	doc string
}

// docTokens hands out document tokens: lowercase letters, unique within a
// process, from a random start (docTokenStart) so tokens of an earlier run
// seldom repeat.
var (
	docTokenStart = rand.Uint64N(26 * 26)
	docTokens     = func() *atomic.Uint64 {
		var n atomic.Uint64
		n.Store(docTokenStart)
		return &n
	}()
)

// issuedToken reports whether tok is a document token this process has
// handed out: a ref carrying one comes from an earlier document, while
// any other was never issued at all.
func issuedToken(tok string) bool {
	if len(tok) < 2 || len(tok) > 12 {
		return false
	}
	var n uint64
	for _, r := range tok {
		if r < 'a' || r > 'z' {
			return false
		}
		n = n*26 + uint64(r-'a')
	}
	return n > docTokenStart && n <= docTokens.Load()
}

// docToken spells n in base 26 with letters, at least two of them.
func docToken(n uint64) string {
	var b []byte
	for n > 0 || len(b) < 2 {
		b = append(b, byte('a'+n%26))
		n /= 26
	}
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// context returns the isolated world's context for the tab's current
// document, creating the session and the world as needed.
func (w *world) context(c *call) (*worldCtx, playwright.CDPSession, error) {
	if wc := w.cur.Load(); wc != nil {
		w.mu.Lock()
		sess := w.sess
		w.mu.Unlock()
		if sess != nil {
			return wc, sess, nil
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.sessionLocked(c); err != nil {
		return nil, nil, err
	}
	if wc := w.cur.Load(); wc != nil {
		return wc, w.sess, nil
	}
	res, err := w.sess.Send("Page.createIsolatedWorld", map[string]any{"frameId": w.frameID, "worldName": worldName})
	if err != nil {
		return nil, nil, err
	}
	id, ok := devtools.Dig(res, "executionContextId").(float64)
	if !ok {
		return nil, nil, fmt.Errorf("Page.createIsolatedWorld gave no context: %v", res)
	}
	wc := &worldCtx{id: int(id), doc: docToken(docTokens.Add(1))}
	w.cur.Store(wc)
	return wc, w.sess, nil
}

// session returns the tab's CDP session, creating it (without the
// isolated world).
func (w *world) session(c *call) (playwright.CDPSession, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sessionLocked(c)
}

func (w *world) sessionLocked(c *call) (playwright.CDPSession, error) {
	if w.sess == nil {
		sess, err := c.page.Context().NewCDPSession(c.page)
		if err != nil {
			return nil, err
		}
		// A navigation of the main frame may end the document's context:
		// Playwright's own event says so, so this session needs neither
		// Runtime.enable (which pages can detect) nor Page.enable (with
		// which a download crashes the driver). After a same-document
		// navigation the world asks again and gets the same context.
		page := c.page
		page.OnFrameNavigated(func(f playwright.Frame) {
			if f == page.MainFrame() {
				w.cur.Store(nil)
			}
		})
		tree, err := sess.Send("Page.getFrameTree", nil)
		if err != nil {
			_ = sess.Detach()
			return nil, err
		}
		id, _ := devtools.Dig(tree, "frameTree", "frame", "id").(string)
		if id == "" {
			_ = sess.Detach()
			return nil, fmt.Errorf("Page.getFrameTree gave no main frame: %v", tree)
		}
		w.sess, w.frameID = sess, id
		sess.OnClose(func(playwright.CDPSession) { w.cur.Store(nil) })
	}
	return w.sess, nil
}

// forget drops the context wc, after the browser said it is gone.
func (w *world) forget(wc *worldCtx) { w.cur.CompareAndSwap(wc, nil) }

// inWorld calls fn (a JavaScript function declaration) with args in the
// isolated world of the tab's current document. byValue returns the
// result as JSON; otherwise the result is a remote object (its objectId
// is in "objectId"). The document token is appended to args. A context
// that vanished under the call (a navigation) is recreated once.
func (c *call) inWorld(fn string, byValue bool, args ...any) (map[string]any, error) {
	w := &c.t.w
	for attempt := 0; ; attempt++ {
		wc, sess, err := w.context(c)
		if err != nil {
			if attempt == 0 && c.page.IsClosed() {
				return nil, playwright.ErrTargetClosed
			}
			return nil, err
		}
		callArgs := make([]map[string]any, 0, len(args)+1)
		for _, a := range args {
			callArgs = append(callArgs, map[string]any{"value": a})
		}
		callArgs = append(callArgs, map[string]any{"value": map[string]any{"doc": wc.doc}})
		res, err := sess.Send("Runtime.callFunctionOn", map[string]any{
			"functionDeclaration": fn,
			"executionContextId":  wc.id,
			"arguments":           callArgs,
			"returnByValue":       byValue,
			"awaitPromise":        true,
		})
		if err != nil {
			if devtools.ContextGone(err) && attempt == 0 {
				w.forget(wc)
				continue
			}
			if c.page.IsClosed() {
				return nil, playwright.ErrTargetClosed
			}
			return nil, err
		}
		m, _ := res.(map[string]any)
		if ex, ok := m["exceptionDetails"].(map[string]any); ok {
			return nil, executor.Errorf(executor.CodeEvalFailed, "a chromegate page script failed: %s", devtools.ExceptionText(ex))
		}
		r, _ := m["result"].(map[string]any)
		if r == nil {
			return nil, fmt.Errorf("Runtime.callFunctionOn gave no result: %v", res)
		}
		return r, nil
	}
}

// scriptFunction wraps a script source (an expression whose value is a
// function) as a function declaration called with (arg, env).
func scriptFunction(source string) string {
	return "function (arg, env) { return (\n" + source + "\n)(arg, env); }"
}

// runValue runs a script source in the isolated world and returns its
// JSON result.
func (c *call) runValue(source string, arg any) (json.RawMessage, error) {
	r, err := c.inWorld(scriptFunction(source), true, arg)
	if err != nil {
		return nil, err
	}
	v, ok := r["value"]
	if !ok {
		// undefined, or a value that has no JSON form
		return json.RawMessage("null"), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, executor.Errorf(executor.CodeEvalFailed, "a chromegate page script returned no JSON: %v", err)
	}
	return b, nil
}

// RunScript runs one of chromegate's own scripts in the isolated world
// "chromegate" of the tab's main frame.
func (s *Session) RunScript(ctx context.Context, p executor.ScriptParams) (executor.ScriptResult, error) {
	if strings.TrimSpace(p.Source) == "" {
		return executor.ScriptResult{}, executor.Errorf(executor.CodeBadArgs, "the script source is empty")
	}
	var arg any
	if len(p.Arg) > 0 {
		if err := json.Unmarshal(p.Arg, &arg); err != nil {
			return executor.ScriptResult{}, executor.Errorf(executor.CodeBadArgs, "the script argument is not JSON: %v", err)
		}
	}
	var value json.RawMessage
	st, err := s.onTab(ctx, p.TabID, "run_script", func(c *call) error {
		var err error
		if p.Doc != "" {
			fd := c.t.fd.get(p.Doc)
			if fd == nil {
				return frameGone(p.Doc)
			}
			r, err := c.inDoc(fd, p.Doc, scriptFunction(p.Source), true, arg)
			if err != nil {
				return err
			}
			value, err = valueOf(r)
			return err
		}
		value, err = c.runValue(p.Source, arg)
		return err
	})
	if err != nil {
		return executor.ScriptResult{}, err
	}
	return executor.ScriptResult{PageState: st, Value: value}, nil
}
