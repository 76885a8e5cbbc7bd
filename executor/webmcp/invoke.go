package webmcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/internal/devtools"
)

// toolAnswer is a WebMCP.toolResponded event. Output is kept decoded, as
// the event came, and bounded when the call takes it (nativeResult).
type toolAnswer struct {
	Status    string
	Output    any
	OutputCut int // the whole output's length, when the extension cut it
	ErrorText string
	Exception string
}

// invokeNative runs a tool through WebMCP.invokeTool and waits for its
// toolResponded; on ctx's end the invocation is cancelled in the page.
func (pt *Tab) invokeNative(ctx context.Context, tool executor.PageTool, input json.RawMessage, p executor.PageToolCallParams) (executor.PageToolResult, error) {
	pt.mu.Lock()
	loader, nav := pt.loader, pt.navWake
	pt.mu.Unlock()
	var in any
	_ = json.Unmarshal(input, &in)
	type sent struct {
		v   any
		err error
	}
	sch := make(chan sent, 1)
	go func() {
		v, err := pt.send("WebMCP.invokeTool", map[string]any{"frameId": tool.FrameID, "toolName": tool.Name, "input": in,
			MaxOutputParam: p.OutputLimit()})
		sch <- sent{v, err}
	}()
	var sr sent
	select {
	case sr = <-sch:
	case <-ctx.Done():
		// The invocation may still start: cancel it when it does.
		go func() {
			if sr := <-sch; sr.err == nil {
				if id, _ := devtools.Dig(sr.v, "invocationId").(string); id != "" {
					_, _ = pt.send("WebMCP.cancelInvocation", map[string]any{"invocationId": id})
				}
			}
		}()
		return executor.PageToolResult{}, pageToolTimeout(ctx, tool.Name)
	case <-pt.closedCh:
		return executor.PageToolResult{}, ErrTabClosed
	}
	if sr.err != nil {
		if strings.Contains(sr.err.Error(), "Tool not found") {
			return executor.PageToolResult{}, executor.Errorf(executor.CodeBadArgs, "the page no longer has tool %s", tool.Name).
				WithHint("call page_tools_list: the page may have unregistered it or navigated")
		}
		return executor.PageToolResult{}, sr.err
	}
	id, _ := devtools.Dig(sr.v, "invocationId").(string)
	if id == "" {
		return executor.PageToolResult{}, fmt.Errorf("WebMCP.invokeTool gave no invocationId: %v", sr.v)
	}
	ch := make(chan toolAnswer, 1)
	pt.mu.Lock()
	if a, ok := pt.early[id]; ok {
		delete(pt.early, id)
		ch <- a
	} else {
		pt.pending[id] = ch
	}
	pt.mu.Unlock()
	forget := func() {
		pt.mu.Lock()
		delete(pt.pending, id)
		pt.mu.Unlock()
	}
	for {
		select {
		case a := <-ch:
			if pt.newDocument(loader) {
				return executor.PageToolResult{}, executor.ErrInterruptedByNavigation
			}
			return nativeResult(a, p.OutputLimit()), nil
		case <-ctx.Done():
			forget()
			// Cancel in the page; the call's own context is over.
			go func() { _, _ = pt.send("WebMCP.cancelInvocation", map[string]any{"invocationId": id}) }()
			return executor.PageToolResult{}, pageToolTimeout(ctx, tool.Name)
		case <-nav:
			forget()
			return executor.PageToolResult{}, executor.ErrInterruptedByNavigation
		case <-pt.closedCh:
			forget()
			return executor.PageToolResult{}, ErrTabClosed
		}
	}
}

// newDocument reports whether the tab shows another document than the one
// whose loaderId was loader (one round trip).
func (pt *Tab) newDocument(loader string) bool {
	if err := pt.readFrames(); err != nil {
		return false
	}
	pt.mu.Lock()
	defer pt.mu.Unlock()
	return pt.loader != loader
}

func pageToolTimeout(ctx context.Context, name string) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return executor.Errorf(executor.CodeTimeout, "page tool %s was cancelled; it was cancelled in the page too", name).Wrap(ctx.Err())
	}
	return executor.Errorf(executor.CodeTimeout, "page tool %s did not answer in time; the call was cancelled in the page", name).
		WithHint("retry with a larger timeout_ms if the tool is slow").Wrap(ctx.Err())
}

func nativeResult(a toolAnswer, limit int) executor.PageToolResult {
	switch a.Status {
	case "Completed":
		out, size, cut := executor.BoundOutput(a.Output, limit)
		r := executor.PageToolResult{Output: out}
		if cut || a.OutputCut > 0 {
			r.OutputChars = max(size, a.OutputCut)
		}
		r.IsError, r.Error = mcpError(out)
		return r
	case "Canceled":
		return executor.PageToolResult{IsError: true, Error: "the page cancelled the call"}
	}
	msg := a.ErrorText
	if msg == "" {
		msg = firstLineOf(a.Exception)
	}
	if msg == "" {
		msg = "the page tool failed"
	}
	return executor.PageToolResult{IsError: true, Error: msg}
}

// mcpError reads an MCP-shaped result's isError flag and its text.
func mcpError(out json.RawMessage) (bool, string) {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(out, &r) != nil || !r.IsError {
		return false, ""
	}
	// out is bounded already: its texts are too.
	var texts []string
	for _, c := range r.Content {
		if c.Type == "text" && c.Text != "" {
			texts = append(texts, c.Text)
		}
	}
	return true, strings.Join(texts, "\n")
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

// invokeInPage runs a tool through the in-page script (a polyfill's
// executeTool, or tools/call to @mcp-b/global's server).
func (pt *Tab) invokeInPage(ctx context.Context, tool executor.PageTool, input json.RawMessage, p executor.PageToolCallParams) (executor.PageToolResult, error) {
	pt.mu.Lock()
	loader, nav := pt.loader, pt.navWake
	pt.mu.Unlock()
	var in any
	_ = json.Unmarshal(input, &in)
	ms := int64(30_000)
	if dl, ok := ctx.Deadline(); ok {
		ms = max(1, time.Until(dl).Milliseconds())
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	callID := hex.EncodeToString(b[:])
	var out struct {
		OK      bool   `json:"ok"`
		Output  string `json:"output"` // JSON text, cut in the page to max
		Size    int    `json:"size"`
		Cut     bool   `json:"cut"`
		Error   string `json:"error"`
		Missing bool   `json:"missing"`
		Timeout bool   `json:"timeout"`
	}
	limit := p.OutputLimit()
	done := make(chan error, 1)
	go func() {
		done <- pt.script(context.WithoutCancel(ctx), map[string]any{"op": "call", "id": callID, "surface": tool.Surface,
			"name": tool.Name, "input": in, "ms": ms, "max": limit}, &out)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		go func() {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var ok bool
			_ = pt.script(cctx, map[string]any{"op": "cancel", "id": callID}, &ok)
		}()
		return executor.PageToolResult{}, pageToolTimeout(ctx, tool.Name)
	case <-nav:
		return executor.PageToolResult{}, executor.ErrInterruptedByNavigation
	}
	if err != nil {
		if pt.newDocument(loader) || devtools.ContextGone(err) {
			return executor.PageToolResult{}, executor.ErrInterruptedByNavigation
		}
		return executor.PageToolResult{}, err
	}
	if pt.newDocument(loader) {
		return executor.PageToolResult{}, executor.ErrInterruptedByNavigation
	}
	switch {
	case out.Timeout:
		return executor.PageToolResult{}, pageToolTimeout(ctx, tool.Name)
	case out.Missing:
		return executor.PageToolResult{}, executor.Errorf(executor.CodeBadArgs, "the page no longer has tool %s", tool.Name).
			WithHint("call page_tools_list: the page may have unregistered it or navigated")
	case !out.OK:
		return executor.PageToolResult{IsError: true, Error: executor.CutPageText(out.Error, 2000)}, nil
	}
	// The page's script bounded the output; bound it again here, where the
	// page cannot reach.
	var v any
	if err := json.Unmarshal([]byte(out.Output), &v); err != nil {
		v = out.Output
	}
	bounded, size, cut := executor.BoundOutput(v, limit)
	r := executor.PageToolResult{Output: bounded}
	if cut || out.Cut {
		r.OutputChars = max(size, out.Size)
	}
	r.IsError, r.Error = mcpError(bounded)
	return r, nil
}

// Call calls a page tool of the tab with input the caller validated. The
// result's PageState is the backend's to fill.
func (pt *Tab) Call(ctx context.Context, p executor.PageToolCallParams) (executor.PageToolResult, error) {
	if !executor.ValidPageToolName(p.Name) {
		return executor.PageToolResult{}, executor.Errorf(executor.CodeBadArgs, "%q is not a page tool name", p.Name).
			WithHint("call page_tools_list for the names")
	}
	if !p.Surface.Valid() {
		return executor.PageToolResult{}, executor.Errorf(executor.CodeBadArgs, "unknown surface %q", p.Surface)
	}
	input, err := executor.NormalizeInput(p.Input)
	if err != nil {
		return executor.PageToolResult{}, err
	}
	if err := pt.ensure(ctx); err != nil {
		return executor.PageToolResult{}, err
	}
	tool, ok := pt.find(p.Name, p.Surface)
	if !ok {
		// A tool registered a moment ago may not have been polled yet.
		if _, err := pt.Tools(ctx); err == nil {
			tool, ok = pt.find(p.Name, p.Surface)
		}
	}
	if !ok {
		what := "no page tool " + p.Name
		if p.Surface != "" {
			what += " on surface " + string(p.Surface)
		}
		return executor.PageToolResult{}, executor.Errorf(executor.CodeBadArgs, "%s in tab %s", what, pt.id).
			WithHint("call page_tools_list: the page may have unregistered it or navigated")
	}
	var r executor.PageToolResult
	if tool.Surface == executor.SurfaceWebMCP {
		r, err = pt.invokeNative(ctx, tool, input, p)
	} else {
		r, err = pt.invokeInPage(ctx, tool, input, p)
	}
	if err != nil {
		return executor.PageToolResult{}, err
	}
	r.Surface = tool.Surface
	return r, nil
}

// MCP sends one request to the MCP server the tab's page runs
// (@mcp-b/global). The answer is bounded to about limit bytes while it is
// read (lists: each string to 2048 characters first); cut says it was.
func (pt *Tab) MCP(ctx context.Context, method string, params json.RawMessage, limit int) (result json.RawMessage, cut bool, err error) {
	if err := pt.ensure(ctx); err != nil {
		return nil, false, err
	}
	var ps any
	if len(params) > 0 {
		if err := json.Unmarshal(params, &ps); err != nil {
			return nil, false, executor.Errorf(executor.CodeBadArgs, "params are not JSON: %v", err)
		}
	}
	limit = min(max(limit, 1), executor.MaxPageToolOutput)
	var out struct {
		OK     bool   `json:"ok"`
		Result string `json:"result"` // JSON text
		Cut    bool   `json:"cut"`
		Error  string `json:"error"`
	}
	if err := pt.script(ctx, map[string]any{"op": "mcp", "method": method, "params": ps, "max": limit}, &out); err != nil {
		return nil, false, err
	}
	if !out.OK {
		return nil, false, executor.Errorf(executor.CodeBadArgs, "the page's MCP server refused %s", method).
			WithHint("the page may not run @mcp-b/global, or not offer this").
			WithPage(executor.CutPageText(strings.Join(strings.Fields(out.Error), " "), 300))
	}
	var v any
	if err := json.Unmarshal([]byte(out.Result), &v); err != nil {
		return nil, false, executor.Errorf(executor.CodeBadArgs, "the page's MCP server answered %s with something that is not JSON", method)
	}
	b, _, c := executor.BoundOutput(v, limit)
	return b, c || out.Cut, nil
}
