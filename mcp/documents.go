package mcp

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
	"github.com/chromegate/chromegate/policy/gate"
)

// Every surface is decided on the document that produced what it shows:
// a network-log entry and its body, a console message, a dialog. The
// backend names that document (executor.Source) by the browser's own
// identifiers; here it is decided like a read of that document with the
// same decision that outlines a denied frame as a placeholder (a
// gate.KindDocument question: the gate.KindFrame decision, failing closed
// on a document of unknown origin), and what a denied document produced
// is withheld and counted, its words never shown. A record whose
// document the backend could not name is withheld too.

// DocumentDenied reports whether what the document at rawURL, of the
// given security origin ("" when the URL's own origin stands), produced
// must be withheld from c's caller: the frame decision, failing closed.
// A URL that does not carry its origin (about:srcdoc, about:blank,
// data:, blob:) with no origin from the browser is denied.
func (c *Call) DocumentDenied(ctx context.Context, rawURL, origin string) bool {
	q := c.question(gate.KindDocument)
	q.Document = &gate.Document{URL: rawURL, Origin: origin}
	return !c.srv.ask(ctx, q).Allow
}

// sourceScreen decides, for one call, the documents its records came
// from, each once.
type sourceScreen struct {
	c    *Call
	seen map[executor.Source]bool
}

func (c *Call) sourceScreen() *sourceScreen {
	return &sourceScreen{c: c, seen: map[executor.Source]bool{}}
}

// denied reports whether the record of src is to be withheld.
func (s *sourceScreen) denied(ctx context.Context, src *executor.Source) bool {
	if !src.Known() {
		// Named by nothing: denied by the gate's rule, asked all the same.
		return s.c.DocumentDenied(ctx, "", "")
	}
	v, ok := s.seen[*src]
	if !ok {
		v = s.c.DocumentDenied(ctx, src.URL, src.Origin)
		s.seen[*src] = v
	}
	return v
}

// Frames of other origins are decided like pages: before a frame's
// document is outlined (helpers.Snapshot's DecideFrame: a gate.KindFrame
// question) and before a call by ref touches an element of one (the
// call's gate.KindCall question reads the frames of its refs), on the URL
// and security origin the frame's document itself reports, as the page of
// the call's own decision. What goes wrong on the way denies.

// FrameDecider is the helpers.FrameDecider of c: each frame is a
// gate.KindFrame question.
func (c *Call) FrameDecider() helpers.FrameDecider {
	return func(ctx context.Context, rawURL, origin string) error {
		q := c.question(gate.KindFrame)
		q.Document = &gate.Document{URL: rawURL, Origin: origin}
		err := c.srv.gateErr(c.Tool, c.srv.allowed(ctx, q))
		if e := executor.AsError(err); e != nil && e.Code != executor.CodePolicyDenied && e.Code != executor.CodeTimeout {
			return executor.Errorf(executor.CodePolicyDenied, "a frame could not be decided").Wrap(err)
		}
		return err
	}
}

// refDocs lists, for each ref c names, the frame document the ref
// belongs to when it is one (the main document's refs are decided with
// the page), as it is now. A ref of a frame whose document is gone fails
// as the backend says (REF_EXPIRED).
func refDocs(ctx context.Context, c *Call) ([]executor.FrameDoc, error) {
	fr, ok := c.Executor().(executor.FrameReader)
	if !ok {
		return nil, nil
	}
	var docs []executor.FrameDoc
	for _, ref := range callRefs(c) {
		doc, err := fr.RefDocument(ctx, executor.FrameParams{TabID: c.TabID(), Ref: ref})
		if err != nil {
			return nil, err
		}
		if !doc.Main {
			docs = append(docs, doc)
		}
	}
	return docs, nil
}

// callRefs lists the well-formed refs among c's targets.
func callRefs(c *Call) []string {
	var refs []string
	for _, ta := range c.Tool.Targets {
		if ref := argString(c.Args, ta.Prefix+"ref"); executor.ValidRef(ref) {
			refs = append(refs, ref)
		}
	}
	return refs
}

// Reads are reads wherever they hide: an action at a point (click, hover,
// scroll, drag at x,y) tells what it hit, and the name of what it hit is
// the page's words (up to 100 characters of its text). The names are
// shown only to a caller that could read the page: the test that
// withholds changes from a caller that cannot snapshot (readAllowed: the
// caller's tool ACL and list filter, then the policy's decision to read
// the tab's document; a hit in a frame, the policy's decision on the
// frame's document too), made once per call. Otherwise a hit carries the
// facts that are not the page's words: its point, role, tag, ref and
// frame.

// hitReader decides, once per call, whether c's caller may read the names
// of what c's points hit on tab.
type hitReader struct {
	c    *Call
	tab  string
	page *bool            // the tab's document, once decided
	rc   *Call            // the read call the decision made
	docs map[string]error // frame documents, by origin and URL
}

// mayRead reports whether the name of h may be shown.
func (hr *hitReader) mayRead(ctx context.Context, h executor.Hit) bool {
	c := hr.c
	if c.srv == nil || c.Executor() == nil {
		return false
	}
	if hr.page == nil {
		_, rc, err := c.srv.readAllowed(ctx, c, c.Executor(), hr.tab, executor.Target{})
		ok := err == nil
		hr.page, hr.rc = &ok, rc
	}
	if !*hr.page {
		return false
	}
	if h.MainFrame {
		return true
	}
	key := h.Origin + " " + h.URL
	if hr.docs == nil {
		hr.docs = map[string]error{}
	}
	err, done := hr.docs[key]
	if !done {
		err = hr.rc.FrameDecider()(ctx, h.URL, h.Origin)
		hr.docs[key] = err
	}
	return err == nil
}

// Keys go where the focus is. A key pressed without a target reaches the
// document that holds the focus, which need not be the tab's page: a Tab
// moves the focus into a frame of another origin as readily as onto a
// button. So such a press is decided on the focused document, found by
// following the focus from the page down (document.activeElement being a
// frame element → that frame's document → …), each frame of another
// origin reached by the browser's frame identity (FrameReader) and
// decided as a call by a ref of it would be (Call.FrameDecider). It is
// refused, and nothing pressed, when that document is not allowed or
// cannot be reached.

// maxFocusDepth bounds the frames followed to the focus.
const maxFocusDepth = 8

// focusAllowed decides c, a key press without a target, on the document
// that holds the tab's focus.
func (c *Call) focusAllowed(ctx context.Context, tabID string) error {
	ex := c.Executor()
	fr, _ := ex.(executor.FrameReader)
	decide := c.FrameDecider()
	doc := ""
	for range maxFocusDepth {
		r, err := ex.RunScript(ctx, executor.ScriptParams{TabID: tabID, Source: helpers.FrameboxesSource, Doc: doc, Arg: json.RawMessage(`{"op":"focus"}`)})
		if err != nil {
			if doc != "" && ctx.Err() == nil {
				return focusDenied(c, "the focused frame could not be reached")
			}
			return err
		}
		var at struct {
			Ref   string `json:"ref"`
			Doc   bool   `json:"doc"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(r.Value, &at); err != nil || at.Error != "" {
			return focusDenied(c, "the focus could not be followed")
		}
		if at.Ref == "" {
			return nil
		}
		if fr == nil {
			return focusDenied(c, "the focus is in a frame of another origin")
		}
		d, err := fr.FrameDocument(ctx, executor.FrameParams{TabID: tabID, Ref: at.Ref})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return focusDenied(c, "the focused frame could not be reached")
		}
		if strings.HasPrefix(d.URL, "chrome-error:") {
			return focusDenied(c, "the focus is in a frame that did not load")
		}
		if err := decide(ctx, d.URL, d.Origin); err != nil {
			if e := executor.AsError(err); e != nil {
				return e.WithHint("the focus is in a frame the policy does not allow: press with a target (a ref or selector of the page), or click an element of the page first")
			}
			return err
		}
		doc = d.Doc
	}
	return focusDenied(c, "the focus is in frames nested too deep")
}

func focusDenied(c *Call, why string) error {
	return executor.Errorf(executor.CodePolicyDenied, "%s without a target: %s; nothing was pressed", c.Tool.Name, why).
		WithHint("press with a target (a ref or selector of the page), or click an element of the page first")
}
