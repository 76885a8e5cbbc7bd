package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/executor/executortest"
	"github.com/chromegate/chromegate/mcp"
)

// transcriptPage scripts the fake browser f as a small shop page, so that
// every tool has something to show (options "page"):
//
//   - the reading scripts answer: snapshot an outline (which a click
//     changes), query one button, the page's HTML has two links,
//     the form probe every field found as a text input;
//   - its first tab has a page tool (add_to_cart), one request and one
//     console message logged;
//   - press opens a confirm dialog, which dialog_answer answers;
//   - hover makes the page request a host the boundary denies (b, when
//     set), so its result ends with the blocked note.
func transcriptPage(t *testing.T, f *executortest.Fake, b *egress.Boundary) {
	tab := f.TabID(0)
	state := func(ctx context.Context, id string) executor.PageState {
		tb, err := f.TabInfo(ctx, id)
		if err != nil {
			return executor.PageState{TabID: tab, URL: "about:blank"}
		}
		return executor.PageState{TabID: tb.ID, URL: tb.URL, Title: tb.Title}
	}
	var clicked atomic.Bool
	f.Handle("Click", func(ctx context.Context, p any) (any, error) {
		clicked.Store(true)
		return executor.ActionResult{PageState: state(ctx, p.(executor.ClickParams).TabID)}, nil
	})
	f.Handle("HTML", func(ctx context.Context, p any) (any, error) {
		return executor.TextResult{PageState: state(ctx, p.(executor.HTMLParams).TabID),
			Text: `<main><h1>Shop</h1><p>Shoes and <a href="/hats">hats</a>.</p><a href="https://help.test/">Help</a></main>`}, nil
	})
	f.Handle("RunScript", func(ctx context.Context, p any) (any, error) {
		sp := p.(executor.ScriptParams)
		var arg struct {
			Op     string            `json:"op"`
			Fields []json.RawMessage `json:"fields"`
		}
		_ = json.Unmarshal(sp.Arg, &arg)
		var v any
		switch {
		case arg.Op == "snapshot":
			outline := "## Shop\nab1 button \"Add to cart\"\nab2 link Help"
			if clicked.Load() {
				outline = "## Shop\nab1 button \"Add to cart\" pressed\nab3 status \"1 item\"\nab2 link Help"
			}
			v = map[string]any{"text": outline, "total": strings.Count(outline, "\n") + 1}
		case arg.Op == "query":
			v = map[string]any{"total": 1, "items": []map[string]any{{"tag": "button", "role": "button", "name": "Add to cart", "ref": "ab1"}}}
		case arg.Fields != nil:
			fields := make([]map[string]any, len(arg.Fields))
			for i := range fields {
				fields[i] = map[string]any{"queryable": true, "found": true, "kind": "text", "type": "text", "label": "Email"}
			}
			v = map[string]any{"fields": fields}
		}
		raw, _ := json.Marshal(v)
		return executor.ScriptResult{PageState: state(ctx, sp.TabID), Value: raw}, nil
	})
	f.SetPageTools(tab, []executor.PageTool{{
		URL: "about:blank", Origin: "null", Name: "add_to_cart", Description: "Add an item to the cart.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"sku":{"type":"string"}}}`),
	}})
	if _, err := f.AddRequest(tab, executor.NetworkRequest{ID: "1", Method: "GET", URL: "https://shop.test/api/cart", ResourceType: "fetch",
		Status: 200, Size: 11, MIMEType: "application/json", StartMs: 1700000000000, DurationMs: 3,
		ResponseHeaders: []executor.Header{{Name: "Content-Type", Value: "application/json"}},
	}, []byte(`{"items":0}`)); err != nil {
		t.Error(err)
	}
	if err := f.AddConsole(tab, executor.ConsoleMessage{Level: "warning", Text: "cart is empty", URL: "https://shop.test/app.js", Line: 3, Column: 7}); err != nil {
		t.Error(err)
	}
	f.Handle("Press", func(ctx context.Context, p any) (any, error) {
		ps := state(ctx, p.(executor.PressParams).TabID)
		if err := f.OpenDialog(ps.TabID, executor.Dialog{Type: "confirm", Message: "Empty the cart?", URL: ps.URL}); err != nil {
			return nil, err
		}
		ps.Dialogs = []executor.Dialog{{Type: "confirm", Message: "Empty the cart?", Action: "open", URL: ps.URL}}
		return executor.ActionResult{PageState: ps}, nil
	})
	f.Handle("Hover", func(ctx context.Context, p any) (any, error) {
		b.DecideRequest(ctx, &egress.Request{Session: mcp.DefaultSession, URL: "https://tracker.test/pixel", Method: "GET", ResourceType: "image", Via: egress.ViaProxy})
		return executor.ActionResult{PageState: state(ctx, p.(executor.TargetParams).TabID)}, nil
	})
}
