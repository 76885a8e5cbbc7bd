package mcp

import (
	"context"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
	"github.com/chromegate/chromegate/policy/gate"
)

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
