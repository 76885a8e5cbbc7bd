package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/internal/devtools"
	"github.com/playwright-community/playwright-go"
)

var (
	_ executor.FrameReader  = (*Session)(nil)
	_ executor.FrameLocator = (*Session)(nil)
)

// Frames of other origins. The main frame's isolated world reaches only
// same-origin frames; a frame of another origin gets a world of its own,
// created in its frame (Page.createIsolatedWorld with its frame id, on
// the page's session for a frame in the page's renderer, on the frame's
// own target for an out-of-process one), and a document token of its
// own. frameDoc binds that token to that one execution context: when the
// frame navigates the context is gone, and so is every ref of it
// (REF_EXPIRED), never carried over to the frame's next document.

// maxFrameDocs bounds a tab's frame documents; past it the oldest are
// forgotten (their refs then read as the main document's, which refuses
// them).
const maxFrameDocs = 256

// frameDoc is one frame document chromegate reached.
type frameDoc struct {
	tok     string
	sess    playwright.CDPSession
	ctxID   int
	frameID string
	owner   string // the ref of its frame element in the parent document
}

// frameDocs is a tab's frame documents, by token and by frame id, and
// the sessions of its out-of-process frames.
type frameDocs struct {
	mu      sync.Mutex
	byTok   map[string]*frameDoc
	byFrame map[string]*frameDoc
	order   []string
	oopif   map[string]playwright.CDPSession // frame id → its target's session
}

func (d *frameDocs) get(tok string) *frameDoc {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byTok[tok]
}

func (d *frameDocs) forFrame(id string) *frameDoc {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.byFrame[id]
}

func (d *frameDocs) add(fd *frameDoc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byTok == nil {
		d.byTok, d.byFrame = map[string]*frameDoc{}, map[string]*frameDoc{}
	}
	d.byTok[fd.tok], d.byFrame[fd.frameID] = fd, fd
	d.order = append(d.order, fd.tok)
	for len(d.order) > maxFrameDocs {
		if old := d.byTok[d.order[0]]; old != nil {
			delete(d.byTok, old.tok)
			if d.byFrame[old.frameID] == old {
				delete(d.byFrame, old.frameID)
			}
		}
		d.order = d.order[1:]
	}
}

// drop forgets a frame document whose context is gone.
func (d *frameDocs) drop(fd *frameDoc) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byTok[fd.tok] == fd {
		delete(d.byTok, fd.tok)
	}
	if d.byFrame[fd.frameID] == fd {
		delete(d.byFrame, fd.frameID)
	}
}

// frameGone is the error of a ref (or token) of a frame document that
// no longer is.
func frameGone(ref string) *executor.Error {
	return executor.Errorf(executor.CodeRefExpired, "ref %s is of a frame whose document is gone: the frame navigated or was removed since it was issued", ref).
		WithHint("take a new snapshot and use a current ref")
}

// sessionGone recognises a failure of a frame's own session: its target
// went away (the frame was removed, or moved to another renderer).
func sessionGone(err error) bool {
	s := err.Error()
	return devtools.ContextGone(err) || strings.Contains(s, "Target closed") || strings.Contains(s, "Session closed") ||
		strings.Contains(s, "No frame") || strings.Contains(s, "closed")
}

// inDoc calls fn in the isolated world of the frame document fd, as
// inWorld does in the main document's; what stands for the ref or token
// the caller named, for the error when the document is gone.
func (c *call) inDoc(fd *frameDoc, what, fn string, byValue bool, args ...any) (map[string]any, error) {
	callArgs := make([]map[string]any, 0, len(args)+1)
	for _, a := range args {
		callArgs = append(callArgs, map[string]any{"value": a})
	}
	callArgs = append(callArgs, map[string]any{"value": map[string]any{"doc": fd.tok}})
	res, err := fd.sess.Send("Runtime.callFunctionOn", map[string]any{
		"functionDeclaration": fn,
		"executionContextId":  fd.ctxID,
		"arguments":           callArgs,
		"returnByValue":       byValue,
		"awaitPromise":        true,
	})
	if err != nil {
		if c.page.IsClosed() {
			return nil, playwright.ErrTargetClosed
		}
		if sessionGone(err) {
			c.t.fd.drop(fd)
			return nil, frameGone(what)
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

// inRef calls fn in the document ref belongs to: a frame document's when
// its token is one, else the main document's.
func (c *call) inRef(ref, fn string, byValue bool, args ...any) (map[string]any, error) {
	if fd := c.t.fd.get(executor.RefToken(ref)); fd != nil {
		return c.inDoc(fd, ref, fn, byValue, args...)
	}
	return c.inWorld(fn, byValue, args...)
}

// valueOf turns a by-value result into JSON.
func valueOf(r map[string]any) (json.RawMessage, error) {
	v, ok := r["value"]
	if !ok {
		return json.RawMessage("null"), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, executor.Errorf(executor.CodeEvalFailed, "a chromegate page script returned no JSON: %v", err)
	}
	return b, nil
}

// runRef runs a script source in the document of ref and returns its
// JSON result.
func (c *call) runRef(ref, source string, arg any) (json.RawMessage, error) {
	r, err := c.inRef(ref, scriptFunction(source), true, arg)
	if err != nil {
		return nil, err
	}
	return valueOf(r)
}

// sessionOf is the CDP session of the document a ref belongs to.
func (c *call) sessionOf(ref string) (playwright.CDPSession, error) {
	if fd := c.t.fd.get(executor.RefToken(ref)); fd != nil {
		return fd.sess, nil
	}
	_, sess, err := c.t.w.context(c)
	return sess, err
}

// where reads a frame document's location and origin, in the document.
func (c *call) where(fd *frameDoc) (executor.FrameDoc, error) {
	r, err := c.inDoc(fd, fd.tok, scriptFunction(executor.FrameScript), true, map[string]any{"op": "where"})
	if err != nil {
		return executor.FrameDoc{}, err
	}
	raw, err := valueOf(r)
	if err != nil {
		return executor.FrameDoc{}, err
	}
	var w struct{ URL, Origin string }
	if err := json.Unmarshal(raw, &w); err != nil || w.URL == "" {
		return executor.FrameDoc{}, executor.Errorf(executor.CodeInternal, "a frame's document could not say where it is: %s", raw)
	}
	return executor.FrameDoc{Doc: fd.tok, URL: w.URL, Origin: w.Origin}, nil
}

// frameOf reaches the document of the frame whose element is ref,
// creating its isolated world on first use.
func (c *call) frameOf(ref string) (*frameDoc, error) {
	fd, _, err := c.frameWhere(ref)
	return fd, err
}

// frameWhere is frameOf, with where the document is when frameOf had to
// ask to know its world is still there (a known frame; else a zero
// FrameDoc), so that a caller who wants both asks once.
func (c *call) frameWhere(ref string) (*frameDoc, executor.FrameDoc, error) {
	var none executor.FrameDoc
	if !executor.ValidRef(ref) {
		return nil, none, executor.RefError(ref, "malformed", "")
	}
	r, err := c.inRef(ref, scriptFunction(executor.ElementScript), false, map[string]any{"op": "element", "ref": ref})
	if err != nil {
		return nil, none, err
	}
	objectID, _ := r["objectId"].(string)
	if r["subtype"] != "node" || objectID == "" {
		return nil, none, c.refOp("frame", ref, "state", nil, nil)
	}
	sess, err := c.sessionOf(ref)
	if err != nil {
		return nil, none, err
	}
	desc, err := sess.Send("DOM.describeNode", map[string]any{"objectId": objectID})
	_, _ = sess.Send("Runtime.releaseObject", map[string]any{"objectId": objectID})
	if err != nil {
		return nil, none, fmt.Errorf("DOM.describeNode: %w", err)
	}
	frameID, _ := devtools.Dig(desc, "node", "frameId").(string)
	if frameID == "" {
		return nil, none, executor.Errorf(executor.CodeBadArgs, "ref %s is not a frame", ref)
	}
	if fd := c.t.fd.forFrame(frameID); fd != nil {
		if d, err := c.where(fd); err == nil {
			return fd, d, nil
		}
		c.t.fd.drop(fd)
	}
	fsess := c.oopifSession(frameID)
	if fsess == nil {
		fsess = sess
	}
	res, err := fsess.Send("Page.createIsolatedWorld", map[string]any{"frameId": frameID, "worldName": worldName})
	if err != nil && fsess != sess {
		// the frame moved back into its parent's renderer
		c.t.fd.forgetSession(frameID)
		fsess = sess
		res, err = fsess.Send("Page.createIsolatedWorld", map[string]any{"frameId": frameID, "worldName": worldName})
	}
	if err != nil {
		return nil, none, frameGone(ref)
	}
	id, ok := devtools.Dig(res, "executionContextId").(float64)
	if !ok {
		return nil, none, fmt.Errorf("Page.createIsolatedWorld gave no context: %v", res)
	}
	fd := &frameDoc{tok: docToken(docTokens.Add(1)), sess: fsess, ctxID: int(id), frameID: frameID, owner: ref}
	c.t.fd.add(fd)
	return fd, none, nil
}

func (d *frameDocs) forgetSession(frameID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.oopif, frameID)
}

// oopifSession is the session of the out-of-process frame frameID's own
// target, nil when the frame is in its parent's renderer. Playwright
// gives a session only for such a frame: the others are looked up once
// each time an unknown frame is asked for.
func (c *call) oopifSession(frameID string) playwright.CDPSession {
	d := &c.t.fd
	d.mu.Lock()
	if s, ok := d.oopif[frameID]; ok {
		d.mu.Unlock()
		return s
	}
	d.mu.Unlock()
	known := map[playwright.CDPSession]bool{}
	d.mu.Lock()
	for _, s := range d.oopif {
		known[s] = true
	}
	d.mu.Unlock()
	main := c.page.MainFrame()
	for _, f := range c.page.Frames() {
		if f == main || f.IsDetached() {
			continue
		}
		sess, err := c.page.Context().NewCDPSession(f)
		if err != nil {
			continue // in its parent's renderer
		}
		tree, err := sess.Send("Page.getFrameTree", nil)
		id, _ := devtools.Dig(tree, "frameTree", "frame", "id").(string)
		if err != nil || id == "" {
			_ = sess.Detach()
			continue
		}
		d.mu.Lock()
		if d.oopif == nil {
			d.oopif = map[string]playwright.CDPSession{}
		}
		if _, ok := d.oopif[id]; ok {
			_ = sess.Detach()
		} else {
			d.oopif[id] = sess
			sess.OnClose(func(playwright.CDPSession) { d.forgetSession(id) })
		}
		d.mu.Unlock()
		if id == frameID {
			break
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.oopif[frameID]
}

// toPage turns a point of fd's viewport into the top frame's viewport,
// through each frame element around it. hit requires each frame element
// to be the topmost thing at the point in its own document (nothing of
// the page around covers it there); reveal scrolls each into view first.
func (c *call) toPage(fd *frameDoc, x, y float64, hit, reveal bool) (point, executor.Box, error) {
	var box executor.Box
	for depth := 0; ; depth++ {
		if depth > 32 {
			return point{}, box, executor.Errorf(executor.CodeInternal, "frames nested too deep")
		}
		raw, err := c.runRef(fd.owner, executor.FrameScript, map[string]any{"op": "owner", "ref": fd.owner, "x": x, "y": y, "hit": hit, "reveal": reveal})
		if err != nil {
			return point{}, box, err
		}
		var r struct {
			Error, Why    string
			X, Y          float64
			Width, Height float64
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return point{}, box, executor.Errorf(executor.CodeInternal, "frame owner: unexpected result %s", raw)
		}
		switch r.Error {
		case "":
		case "covered":
			return point{}, box, executor.Errorf(executor.CodeTimeout, "the frame of that element is covered by the page around it (%s)", r.Why).
				WithHint("close what covers the frame, or scroll to it")
		case "expired", "unknown", "malformed":
			return point{}, box, frameGone(fd.owner)
		default:
			return point{}, box, executor.Errorf(executor.CodeInternal, "frame owner: %s %s", r.Error, r.Why)
		}
		if depth == 0 {
			box = executor.Box{X: r.X - x, Y: r.Y - y, Width: r.Width, Height: r.Height}
		} else {
			box.X, box.Y = box.X+(r.X-x), box.Y+(r.Y-y)
		}
		x, y = r.X, r.Y
		parent := c.t.fd.get(executor.RefToken(fd.owner))
		if parent == nil {
			return point{x, y}, box, nil
		}
		fd = parent
	}
}

// FrameDocument reaches the document of the frame whose element is p.Ref.
func (s *Session) FrameDocument(ctx context.Context, p executor.FrameParams) (executor.FrameDoc, error) {
	var out executor.FrameDoc
	_, err := s.onTab(ctx, p.TabID, "frame", func(c *call) error {
		fd, known, err := c.frameWhere(p.Ref)
		if err != nil || known.Doc != "" {
			out = known
			return err
		}
		out, err = c.where(fd)
		return err
	})
	return out, err
}

// RefDocument reports the document p.Ref's token names.
func (s *Session) RefDocument(ctx context.Context, p executor.FrameParams) (executor.FrameDoc, error) {
	out := executor.FrameDoc{Main: true}
	if t, err := s.resolveTab(p.TabID); err == nil && t.fd.get(executor.RefToken(p.Ref)) == nil {
		return out, nil // not a frame document's: no round trip
	}
	_, err := s.onTab(ctx, p.TabID, "ref", func(c *call) error {
		fd := c.t.fd.get(executor.RefToken(p.Ref))
		if fd == nil {
			return nil
		}
		d, err := c.where(fd)
		if err != nil {
			if e := executor.AsError(err); e != nil && e.Code == executor.CodeRefExpired {
				return frameGone(p.Ref)
			}
			return err
		}
		out = d
		return nil
	})
	return out, err
}

// FrameAt reports the document at a point of the tab's page
// (executor.FrameLocator).
func (s *Session) FrameAt(ctx context.Context, p executor.FrameAtParams) (executor.FrameDoc, error) {
	out := executor.FrameDoc{Main: true}
	x, y := p.X, p.Y
	_, err := s.onTab(ctx, p.TabID, "frame", func(c *call) error {
		var fd *frameDoc
		for depth := 0; depth < 16; depth++ {
			arg := map[string]any{"op": "at", "x": x, "y": y}
			var raw json.RawMessage
			var err error
			if fd == nil {
				raw, err = c.runValue(executor.FrameScript, arg)
			} else {
				var r map[string]any
				if r, err = c.inDoc(fd, fd.tok, scriptFunction(executor.FrameScript), true, arg); err == nil {
					raw, err = valueOf(r)
				}
			}
			if err != nil {
				return err
			}
			var at struct {
				Ref  string
				X, Y float64
			}
			if err := json.Unmarshal(raw, &at); err != nil {
				return executor.Errorf(executor.CodeInternal, "frame at a point: unexpected result %s", raw)
			}
			if at.Ref == "" {
				break
			}
			if fd, err = c.frameOf(at.Ref); err != nil {
				return err
			}
			x, y = at.X, at.Y
		}
		if fd == nil {
			return nil
		}
		var err error
		out, err = c.boxed(fd)
		return err
	})
	return out, err
}

// boxed describes frame document fd with its box in the tab's top-level
// viewport.
func (c *call) boxed(fd *frameDoc) (executor.FrameDoc, error) {
	d, err := c.where(fd)
	if err != nil {
		return d, err
	}
	_, box, err := c.toPage(fd, 0, 0, false, false)
	if err != nil {
		return d, err
	}
	d.Box = &box
	return d, nil
}

// FrameBox reports where the frame document with token doc is in the
// tab's top-level viewport (its URL, origin and box), without scrolling:
// what a caller working at page coordinates needs to know which document
// a point falls in. A token of a document that is gone is REF_EXPIRED.
func (s *Session) FrameBox(ctx context.Context, tabID, doc string) (executor.FrameDoc, error) {
	var out executor.FrameDoc
	_, err := s.onTab(ctx, tabID, "frame", func(c *call) error {
		fd := c.t.fd.get(doc)
		if fd == nil {
			return frameGone(doc)
		}
		var err error
		out, err = c.boxed(fd)
		return err
	})
	return out, err
}
