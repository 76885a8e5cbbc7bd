package mcp

import (
	"context"
	"fmt"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
	"github.com/chromegate/chromegate/policy"
)

// Frames of other origins are decided like pages: before a frame's
// document is outlined (helpers.Snapshot's DecideFrame) and before a call
// by ref touches an element of one (PolicyGate.Before), on the URL and
// security origin the frame's document itself reports, as the page of
// the call's own decision. What goes wrong on the way denies.

// FrameGate is a Gate that decides a frame's document for a call.
type FrameGate interface {
	// Frame decides c as if it touched the document at rawURL of the
	// given security origin. Nil allows it.
	Frame(ctx context.Context, c *Call, rawURL, origin string) error
}

var _ FrameGate = (*PolicyGate)(nil)

// Frame decides c on a frame's document. A denial names the frame's host
// only inside the page fence: the host is the frame's choice.
func (g *PolicyGate) Frame(ctx context.Context, c *Call, rawURL, origin string) error {
	in, err := g.callInput(c)
	if err != nil {
		return err
	}
	in.Page = policy.NewDocumentPage(rawURL, origin)
	d := g.Engine.Decide(ctx, in)
	if d.Allow {
		return nil
	}
	e := policy.DeniedError(d, in)
	host := "an unknown page"
	if in.Page != nil {
		host = where(&in.Page.Target)
	}
	return executor.Errorf(executor.CodePolicyDenied, "%s: the frame's document is on a page the policy does not allow; nothing of it was read or touched", c.Tool.Name).
		WithHint("act on the page's own elements, or on frames the snapshot shows").
		WithPage(fmt.Sprintf("frame on %s: %s", host, e.Message))
}

// FrameDecider is the helpers.FrameDecider of c: each frame is the
// Gate's to decide (FrameGate). A Gate that cannot decide frames allows
// them only if it allows everything (AllowAll, for tests).
func (c *Call) FrameDecider() helpers.FrameDecider {
	g, ok := c.srv.opts.Gate.(FrameGate)
	return func(ctx context.Context, rawURL, origin string) error {
		if !ok {
			if c.srv.opts.Gate == AllowAll {
				return nil
			}
			return executor.Errorf(executor.CodePolicyDenied, "the policy cannot decide frames")
		}
		err := c.srv.gateErr(c.Tool, g.Frame(ctx, c, rawURL, origin))
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
