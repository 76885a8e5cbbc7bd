package helpers

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"

	"github.com/chromegate/chromegate/executor"
)

//go:embed scripts/landing.js
var landingSource string

// LandingWatch is a watch for navigations a tab's main frame is asked for,
// begun by ArmLanding before an action.
type LandingWatch struct {
	TabID string `json:"-"`
	// Token names the watching document; Seq the watch.
	Token string `json:"token"`
	Seq   int    `json:"seq"`
	// API: the browser has the Navigation API; without it nothing is
	// ever seen.
	API bool `json:"api"`
	// Doc is the watching document's ref token (DocState.Doc).
	Doc string `json:"doc"`
}

// Landing is what a tab's main frame was asked to load since a watch
// began (see scripts/landing.js).
type Landing struct {
	// Other: the tab holds another document than the one watched: it was
	// replaced. Unarmed: no watch began in this document.
	Other   bool `json:"other"`
	Unarmed bool `json:"unarmed"`
	// Cross: a navigation to another document was asked for and neither
	// cancelled, intercepted nor a download; URL is where to.
	Cross bool   `json:"cross"`
	URL   string `json:"url"`
	// Same: a navigation within the document (a #fragment, pushState,
	// an intercepted navigation). Download: a download was asked for.
	// Prevented: a navigation was cancelled.
	Same      bool `json:"same"`
	Download  bool `json:"download"`
	Prevented bool `json:"prevented"`
	// Seen counts the navigations asked for since the watch began.
	Seen int `json:"seen"`
}

// ArmLanding begins a watch for navigations of tab's main frame; call it
// before the action, and ReadLanding after.
func ArmLanding(ctx context.Context, ex executor.Executor, tabID string) (LandingWatch, error) {
	var w LandingWatch
	tab, err := runLanding(ctx, ex, tabID, map[string]any{"op": "arm"}, &w)
	if err != nil {
		return LandingWatch{}, err
	}
	w.TabID = tab
	return w, nil
}

// ReadLanding reports the navigations asked for since w began, after
// letting the page's pending tasks run. A zero w reads the tab's last
// watch, of whatever document began it.
func ReadLanding(ctx context.Context, ex executor.Executor, tabID string, w LandingWatch) (Landing, error) {
	var l Landing
	_, err := runLanding(ctx, ex, tabID, map[string]any{"op": "read", "token": w.Token, "seq": w.Seq}, &l)
	return l, err
}

// runLanding runs the landing script on tab (the selected tab when ""),
// and returns the tab it ran on.
func runLanding(ctx context.Context, ex executor.Executor, tabID string, args map[string]any, v any) (string, error) {
	arg, err := json.Marshal(args)
	if err != nil {
		return "", err
	}
	r, err := ex.RunScript(ctx, executor.ScriptParams{TabID: tabID, Source: landingSource, Arg: arg})
	if err != nil {
		return "", err
	}
	if err := json.Unmarshal(r.Value, v); err != nil {
		return "", executor.Errorf(executor.CodeInternal, "landing: unexpected result: %v", err)
	}
	return cmp.Or(r.TabID, tabID), nil
}
