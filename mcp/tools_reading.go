package mcp

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/helpers"
	"github.com/chromegate/chromegate/helpers/picture"
)

// Reading: the page's outline, text, HTML, elements, image, and waiting
// for content. Each tool is one constructor: its declaration, its class,
// the facts the call path needs, its handler.

// groupReading is the README row of these tools.
var groupReading = &ToolGroup{Name: "reading", Note: "`screenshot` with `mark_refs`: the refs drawn"}

func snapshotTool() *Tool {
	return newTool(Tool{
		Name: "snapshot", Title: "Snapshot",
		Group:       groupReading,
		Output:      &Output{Value: snapshotOut{}, Text: true},
		Description: "Page outline with refs to act on; scope by ref or selector (uncut). Also: max_chars, offset." + pageTextDoc,
		Rare:        []string{"max_chars", "offset"},
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		Targets: []TargetArg{{}},
		Use:     UseOutline, TimeoutArg: true,
	}, snapshot)
}

func queryTool() *Tool {
	return newTool(Tool{
		Name: "query", Title: "Query elements",
		Group:       groupReading,
		Output:      &Output{Value: queryOut{}},
		Description: "Elements matching a CSS selector: role, name, text, attributes, ref. Also: limit." + pageTextDoc,
		Rare:        []string{"limit"},
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
	}, query)
}

func getTextTool() *Tool {
	return newTool(Tool{
		Name: "get_text", Title: "Get text",
		Group:       groupReading,
		Output:      &Output{Value: textOut{}, Text: true},
		Description: "Visible text of an element or the page." + pageTextDoc,
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		Targets:    []TargetArg{{}},
		TimeoutArg: true,
	}, getText)
}

func getHTMLTool() *Tool {
	return newTool(Tool{
		Name: "get_html", Title: "Get HTML",
		Group:       groupReading,
		Output:      &Output{Value: textOut{}, Text: true},
		Description: "HTML of an element or the document; prefer get_text." + pageTextDoc,
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		Targets:    []TargetArg{{}},
		TimeoutArg: true,
	}, getHTML)
}

func screenshotTool() *Tool {
	t := newTool(Tool{
		Name: "screenshot", Title: "Screenshot",
		Group:       groupReading,
		Output:      &Output{Value: markedShotOut{}, Image: true, Text: true},
		Description: "Image of the viewport, full page or an element; mark_refs draws refs. Also: format, quality, max_height.",
		Rare:        []string{"format", "quality", "max_height"},
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		Targets: []TargetArg{{}},
		Check:   checkShot,
		Use:     UseShot, TimeoutArg: true,
	}, screenshot)
	t.Handler = marked(t.Handler)
	return t
}

func waitForTool() *Tool {
	return newTool(Tool{
		Name: "wait_for", Title: "Wait for",
		Group:       groupReading,
		Output:      &Output{Value: waitOut{}},
		Description: "Wait until an element or text appears (gone: disappears). Also: visible.",
		Rare:        []string{"visible"},
		ReadOnly:    yes(), Idempotent: true, Action: ActionRead,
		Targets:    []TargetArg{{}},
		Check:      checkWait,
		TimeoutArg: true,
	}, waitFor)
}

// textOut heads a get_text or get_html reply; the text follows on the next
// line.
type textOut struct {
	pageOut
	Chars int `json:"chars"`
}

func (c *Call) textResult(ctx context.Context, tr executor.TextResult, err error) (*Result, error) {
	if err != nil {
		return nil, err
	}
	return &Result{
		Value:     textOut{c.pageOf(ctx, tr.PageState), utf8.RuneCountInString(tr.Text)},
		Text:      tr.Text,
		Untrusted: true,
		Page:      &tr.PageState,
	}, nil
}

// getTextIn is get_text's input: an element, or the whole page.
type getTextIn struct {
	targetIn
	tabIn
}

func getText(ctx context.Context, c *Call, a getTextIn) (*Result, error) {
	tr, err := c.Executor().Text(ctx, executor.TextParams{TabID: a.TabID, Target: a.target()})
	return c.textResult(ctx, tr, err)
}

// getHTMLIn is get_html's input.
type getHTMLIn struct {
	targetIn
	Outer bool `json:"outer,omitempty"`
	tabIn
}

func getHTML(ctx context.Context, c *Call, a getHTMLIn) (*Result, error) {
	tr, err := c.Executor().HTML(ctx, executor.HTMLParams{TabID: a.TabID, Target: a.target(), Outer: a.Outer})
	return c.textResult(ctx, tr, err)
}

// snapshotIn is snapshot's input: a scope, if any, and how much.
type snapshotIn struct {
	targetIn
	InteractiveOnly bool `json:"interactive_only,omitempty"`
	MaxChars        int  `json:"max_chars,omitempty"`
	Offset          int  `json:"offset,omitempty"`
	tabIn
}

func snapshot(ctx context.Context, c *Call, a snapshotIn) (*Result, error) {
	sp := helpers.SnapshotParams{
		TabID: a.TabID, Scope: a.target(), InteractiveOnly: a.InteractiveOnly, MaxChars: a.MaxChars, Offset: a.Offset,
		DecideFrame: c.FrameDecider(),
	}
	sr, err := helpers.Snapshot(ctx, c.Executor(), sp)
	if err != nil {
		return nil, err
	}
	// The header is what the outline does not say: where it is, and how
	// to continue a cut one. The tab is the one asked for.
	out := snapshotOut{URL: sr.URL, Title: sr.Title, Dialogs: c.dialogsOf(ctx, sr.PageState)}
	if sr.Next > 0 || sr.Offset > 0 {
		out.Lines, out.Next = sr.Lines, sr.Next
	}
	r := &Result{Value: out, Text: sr.Text, Untrusted: true, Page: &sr.PageState}
	c.srv.sawSnapshot(ctx, c, r, sr, sp)
	return r, nil
}

// queryIn is query's input.
type queryIn struct {
	Selector string `json:"selector"`
	Limit    int    `json:"limit,omitempty"`
	tabIn
}

func (queryIn) shape(s *jsonschema.Schema) { setRange(s, "limit", 1, 500) }

func query(ctx context.Context, c *Call, a queryIn) (*Result, error) {
	qr, err := helpers.Query(ctx, c.Executor(), helpers.QueryParams{TabID: a.TabID, Selector: a.Selector, Limit: a.Limit})
	if err != nil {
		return nil, err
	}
	out := queryOut{c.pageOf(ctx, qr.PageState), fmt.Sprintf("%d of %d", len(qr.Items), qr.Total), qr.Items}
	return &Result{Value: out, Untrusted: true, Page: &qr.PageState}, nil
}

func checkScreenshot(args map[string]any) error {
	if full, _ := args["full_page"].(bool); full && !targetOf(args, "").IsZero() {
		return badArgs("full_page and a target are exclusive").WithHint("drop full_page to capture the element, or the target to capture the page")
	}
	if _, q := args["quality"]; q && args["format"] != "jpeg" {
		return badArgs("quality applies to jpeg only").WithHint(`set format to "jpeg" or drop quality`)
	}
	return nil
}

type shotOut struct {
	TabID      string      `json:"tab_id"`
	URL        string      `json:"url"`
	Width      int         `json:"width"`
	Height     int         `json:"height"`
	Truncated  bool        `json:"truncated,omitempty"`
	FullHeight int         `json:"full_height,omitempty"`
	Dialogs    []dialogOut `json:"dialogs,omitempty"`
}

// screenshotIn is screenshot's input. MarkRefs is marked's (marks.go).
type screenshotIn struct {
	targetIn
	FullPage  bool                 `json:"full_page,omitempty"`
	Format    executor.ImageFormat `json:"format,omitempty"`
	Quality   int                  `json:"quality,omitempty"`
	MaxHeight int                  `json:"max_height,omitempty"`
	MarkRefs  bool                 `json:"mark_refs,omitempty"`
	tabIn
}

func (screenshotIn) shape(s *jsonschema.Schema) {
	setEnum(s, "format", "png", "jpeg")
	setRange(s, "quality", 1, 100)
}

func screenshot(ctx context.Context, c *Call, a screenshotIn) (*Result, error) {
	s, err := c.guardedShot(ctx, c.Executor(), a.TabID, a.FullPage, !a.target().IsZero(), a.Quality, func() (executor.Screenshot, error) {
		return c.Executor().Screenshot(ctx, executor.ScreenshotParams{
			TabID: a.TabID, Target: a.target(), FullPage: a.FullPage,
			Format: a.Format, Quality: a.Quality, MaxHeight: a.MaxHeight,
		})
	})
	if err != nil {
		return nil, err
	}
	if _, err := picture.CheckPixels(s.Data); err != nil {
		return nil, err
	}
	p := pageOut{Dialogs: c.dialogsOf(ctx, s.PageState)}
	r := pageResult(shotOut{
		TabID: s.TabID, URL: s.URL, Width: s.Width, Height: s.Height,
		Truncated: s.Truncated, FullHeight: s.FullHeight, Dialogs: p.Dialogs,
	}, p, s.PageState)
	r.Image = &Image{Data: s.Data, MIMEType: s.MIMEType}
	return r, nil
}

func checkWait(args map[string]any) error {
	_, text := args["text"]
	switch hasTarget := !targetOf(args, "").IsZero(); {
	case hasTarget && text:
		return badArgs("both a target and text are set").WithHint("wait for a selector or ref, or for text, not both")
	case !hasTarget && !text:
		return badArgs("nothing to wait for").WithHint("pass a selector or ref, or text")
	}
	return nil
}

// waitSlice is how long one step of wait_for runs before the server
// looks where the tab is. A wait is a run of steps, so that a wait on a tab
// that is or becomes outside the policy ends, within one step, as
// POLICY_DENIED whether its condition held or not: neither the answer nor
// its timing tells what the denied page shows.
const waitSlice = 500 * time.Millisecond

// tabCheckTimeout bounds reading where a tab is after a wait step; it runs
// even when the call's own deadline has passed, so that a wait that runs
// out on a denied page is still told apart from one on an allowed page.
const tabCheckTimeout = 2 * time.Second

// waitForIn is wait_for's input: an element, or text.
type waitForIn struct {
	targetIn
	Text    string `json:"text,omitempty"`
	Gone    bool   `json:"gone,omitempty"`
	Visible bool   `json:"visible,omitempty"`
	tabIn
}

func waitFor(ctx context.Context, c *Call, a waitForIn) (*Result, error) {
	p := executor.WaitParams{TabID: a.TabID, Target: a.target(), Text: a.Text, Gone: a.Gone, Visible: a.Visible}
	ex := c.Executor()
	start := time.Now()
	for {
		step, cancel := context.WithTimeout(ctx, waitSlice)
		stepEnd, _ := step.Deadline()
		wr, err := ex.WaitFor(step, p)
		cancel()
		if tab, denied := c.outsideNow(ctx); denied {
			if err == nil {
				// Found: answer when not finding would have.
				sleepUntil(ctx, stepEnd)
			}
			return nil, outsideErr(c, nil, c.srv.blankOutside(ctx, c, ex, tab.ID))
		}
		if err == nil {
			wr.ElapsedMs = time.Since(start).Milliseconds()
			pg := c.pageOf(ctx, wr.PageState)
			return pageResult(waitOut{pg, wr.ElapsedMs}, pg, wr.PageState), nil
		}
		if executor.CodeOf(err) != executor.CodeTimeout {
			return nil, err
		}
		if ctx.Err() != nil || !time.Now().Before(deadlineOf(ctx)) {
			return nil, executor.Errorf(executor.CodeTimeout, "waited %s for %s", time.Since(start).Round(time.Millisecond), p.Describe()).
				WithHint("retry with a larger timeout_ms, or check the condition with get_text or screenshot").Wrap(err)
		}
	}
}

// outsideNow reads where the call's tab is and says whether that is a page
// outside the policy.
func (c *Call) outsideNow(ctx context.Context) (executor.Tab, bool) {
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tabCheckTimeout)
	defer cancel()
	var tab executor.Tab
	outside := c.pageOutside(tctx, func(ctx context.Context) (url string, err error) {
		tab, err = c.Executor().TabInfo(ctx, c.TabID())
		return documentURL(tab), err
	})
	return tab, outside
}

func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Hour)
}

// sleepUntil waits until t, or until ctx is done.
func sleepUntil(ctx context.Context, t time.Time) {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
}
