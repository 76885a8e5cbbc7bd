package executor

import (
	"context"
	_ "embed"
	"fmt"
	"net/url"
	"strings"
)

//go:embed scripts/point.js
var pointScript string

// PointScript is a function ({op, ...}) run in chromegate's isolated world
// of a tab's main frame: op "hit" says what is at a point of the viewport
// (HitInfo), op "marks" where the visible interactive elements are
// (Marks). Composed with the ref registry, so its refs are the outline's.
var PointScript = WithRefs(stripComments(pointScript))

// Pointer is the optional capability of a backend that acts at
// coordinates of a tab's viewport, for clients that work from screenshots.
// Both real backends implement it. Coordinates are CSS pixels of the
// viewport: a screenshot's pixel divided by the device scale factor.
type Pointer interface {
	// HitTest says, for each point, which document is under it and what
	// element. A point outside the viewport is BAD_ARGS naming the
	// viewport's size; a document that cannot be determined is
	// POLICY_DENIED, as the policy could not decide on it.
	HitTest(ctx context.Context, p HitParams) ([]Hit, error)
	// Point moves the mouse to the first point and, only if the document
	// under it is still Expect[0]'s (the one the policy decided on), acts
	// there: click, hover, a drag to the second point (checked the same
	// way before the button is released) or a wheel. Otherwise nothing is
	// pressed and the call fails with POLICY_DENIED.
	Point(ctx context.Context, p PointParams) (PointResult, error)
	// Marks reads the boxes of the interactive elements that show in the
	// viewport, at most most of them, with their refs.
	Marks(ctx context.Context, tabID string, most int) (Marks, error)
}

// XY is a point of the viewport in CSS pixels.
type XY struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// HitParams names the points to test in a tab.
type HitParams struct {
	TabID  string `json:"tabId,omitempty"`
	Points []XY   `json:"points"`
}

// Hit is what is under one point: the document (its frame, URL and
// origin) and the element a model would act on there (role, name and ref,
// the page's words). An element of a frame chromegate cannot read (a
// cross-origin frame) is described as the frame element of its parent,
// Frame set, while FrameID, URL and Origin are the frame's own document's.
type Hit struct {
	XY
	// FrameID is the browser's id of the frame whose document is under
	// the point; MainFrame is set when it is the tab's main frame.
	FrameID   string `json:"frameId"`
	MainFrame bool   `json:"mainFrame,omitempty"`
	URL       string `json:"url"`
	Origin    string `json:"origin"`
	Frame     bool   `json:"frame,omitempty"`
	Tag       string `json:"tag,omitempty"`
	Role      string `json:"role,omitempty"`
	Name      string `json:"name,omitempty"`
	Ref       string `json:"ref,omitempty"`
}

// Same reports whether h and o name the same document: the same frame
// showing the same URL of the same origin.
func (h Hit) Same(o Hit) bool {
	return h.FrameID == o.FrameID && h.URL == o.URL && h.Origin == o.Origin
}

// The kinds of a PointParams.
const (
	PointClick  = "click"
	PointHover  = "hover"
	PointDrag   = "drag"
	PointScroll = "scroll"
)

// PointParams acts at a point (a drag: from At to To).
type PointParams struct {
	TabID  string `json:"tabId,omitempty"`
	Kind   string `json:"kind"`
	At     XY     `json:"at"`
	To     *XY    `json:"to,omitempty"`
	Button string `json:"button,omitempty"`
	Count  int    `json:"count,omitempty"`
	DX     int    `json:"dx,omitempty"`
	DY     int    `json:"dy,omitempty"`
	// Expect are the documents the policy decided on, one per point (At,
	// then To): each is checked again just before the input that could
	// reach it.
	Expect []Hit `json:"expect"`
}

// PointResult is the page after a PointParams, and what was under the
// point when it acted.
type PointResult struct {
	ActionResult
	Hits []Hit `json:"hits"`
}

// Marks are the boxes of the interactive elements that show in a tab's
// viewport, in CSS pixels, with their refs (ViewportW x ViewportH).
type Marks struct {
	ViewportW int    `json:"vw"`
	ViewportH int    `json:"vh"`
	Marks     []Mark `json:"marks"`
	More      int    `json:"more"`
}

// Mark is one element's box.
type Mark struct {
	Ref  string `json:"ref"`
	Role string `json:"role"`
	Name string `json:"name"`
	X    int    `json:"x"`
	Y    int    `json:"y"`
	W    int    `json:"w"`
	H    int    `json:"h"`
}

// OutsideViewport is the error of a point outside the viewport.
func OutsideViewport(p XY, w, h int) *Error {
	return Errorf(CodeBadArgs, "point (%g, %g) is outside the viewport, which is %dx%d CSS pixels", p.X, p.Y, w, h).
		WithHint(fmt.Sprintf("pass x in [0, %d) and y in [0, %d): CSS pixels, a screenshot's pixels divided by the device scale factor; scroll to bring content into view", w, h))
}

// MovedErr is the error of a point whose document changed between the
// policy's decision and the input.
func MovedErr(what string, p XY) *Error {
	return Errorf(CodePolicyDenied, "%s at (%g, %g): another document came under the point after the policy decided; nothing was pressed", what, p.X, p.Y).
		WithHint("take a new screenshot and retry; a page that moves frames under the pointer cannot be acted on at a point")
}

// UnseenErr is the refusal of an action at p whose pointer move never
// reached the document the policy decided on: the browser sent it
// elsewhere (to a frame it still drew under the point) or the page stopped
// it, so a press could land in another document.
func UnseenErr(what string, p XY) *Error {
	return Errorf(CodePolicyDenied, "%s at (%g, %g): the pointer's move there never reached the document the policy decided on (the browser sent it to another document, such as a frame the page moved, or the page stopped it); nothing was pressed", what, p.X, p.Y).
		WithHint("take a new screenshot and retry, or act by ref (snapshot) instead")
}

// SendFunc sends one CDP command to a tab's main-frame session.
type SendFunc func(method string, params map[string]any) (any, error)

// FrameAt fills h's FrameID, MainFrame, URL and Origin: the document under
// h's point, as the browser hit-tests it (DOM.getNodeForLocation, which
// descends into same-process frames), and where the node there is a frame
// element whose document is elsewhere (an out-of-process frame), that
// frame's document. The URL and origin come from the frame tree. Whatever
// cannot be determined fails the call as POLICY_DENIED: the policy could
// not decide on it.
func FrameAt(send SendFunc, h *Hit) error {
	undecided := func(why string, err error) error {
		e := Errorf(CodePolicyDenied, "the document under the point (%g, %g) could not be determined (%s); nothing was done", h.X, h.Y, why).
			WithHint("act by ref (snapshot) instead, or retry after the page settles")
		if err != nil {
			return e.Wrap(err)
		}
		return e
	}
	res, err := send("DOM.getNodeForLocation", map[string]any{"x": h.X, "y": h.Y, "includeUserAgentShadowDOM": false})
	if err != nil {
		return undecided("hit test", err)
	}
	m, _ := res.(map[string]any)
	frameID, _ := m["frameId"].(string)
	backend, _ := m["backendNodeId"].(float64)
	if backend != 0 {
		d, err := send("DOM.describeNode", map[string]any{"backendNodeId": backend})
		if err != nil {
			return undecided("describe node", err)
		}
		node, _ := d.(map[string]any)
		node, _ = node["node"].(map[string]any)
		name, _ := node["nodeName"].(string)
		// A frame element whose document the hit did not enter: its
		// document is the frame's own.
		if child, _ := node["frameId"].(string); child != "" && (strings.EqualFold(name, "iframe") || strings.EqualFold(name, "frame")) {
			frameID = child
		}
	}
	if frameID == "" {
		return undecided("no frame", nil)
	}
	tree, err := send("Page.getFrameTree", nil)
	if err != nil {
		return undecided("frame tree", err)
	}
	t, _ := tree.(map[string]any)
	root, _ := t["frameTree"].(map[string]any)
	f := findFrame(root, frameID)
	if f == nil {
		// An out-of-process frame is not in its parent's frame tree: it
		// is a target of its own, whose id is the frame's.
		f, err = frameTarget(send, frameID)
		if err != nil {
			return undecided("frame target", err)
		}
		if f == nil {
			return undecided("frame "+frameID+" is in no frame tree", nil)
		}
	}
	h.FrameID = frameID
	h.URL, _ = f["url"].(string)
	if frag, _ := f["urlFragment"].(string); frag != "" {
		h.URL += frag
	}
	h.Origin, _ = f["securityOrigin"].(string)
	if top, _ := root["frame"].(map[string]any); top != nil {
		h.MainFrame = top["id"] == frameID
	}
	if h.URL == "" {
		return undecided("a frame without a URL", nil)
	}
	return nil
}

// frameTarget describes an out-of-process frame, a target of its own whose
// id is the frame's, as a frame tree's frame: its url (whose own origin
// stands: an out-of-process frame's document never inherits an origin).
func frameTarget(send SendFunc, frameID string) (map[string]any, error) {
	res, err := send("Target.getTargetInfo", map[string]any{"targetId": frameID})
	if err != nil {
		return nil, err
	}
	ti := asMap(asMap(res)["targetInfo"])
	if ti["targetId"] != frameID || ti["type"] != "iframe" {
		return nil, nil
	}
	u, _ := ti["url"].(string)
	if OriginHidden(u) {
		return nil, fmt.Errorf("out-of-process frame at %q", u)
	}
	return map[string]any{"id": frameID, "url": u}, nil
}

// findFrame finds a frame by id in a Page.getFrameTree tree.
func findFrame(node map[string]any, id string) map[string]any {
	if node == nil {
		return nil
	}
	if f, _ := node["frame"].(map[string]any); f != nil && f["id"] == id {
		return f
	}
	kids, _ := node["childFrames"].([]any)
	for _, k := range kids {
		if f := findFrame(asMap(k), id); f != nil {
			return f
		}
	}
	return nil
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// Inherit gives h the origin a same-origin page script read in the
// document under the point (docURL, origin), when the browser's frame
// tree gave none that a URL could carry (an about:srcdoc or about:blank
// frame's is "://") and the script's document is that frame's: a script
// of chromegate's isolated world of the top document enters a frame only
// when it is of the top's origin, so that origin is the frame's. Anything
// else leaves h as it is, which the policy sees as an opaque origin.
func (h *Hit) Inherit(docURL, origin string) {
	if h.Frame || !OriginHidden(h.URL) || docURL != h.URL || origin == "" || origin == OpaqueOrigin {
		return
	}
	if u, err := url.Parse(h.Origin); err == nil && u.Host != "" {
		return // a tuple origin of the browser's own stands
	}
	h.Origin = origin
}
