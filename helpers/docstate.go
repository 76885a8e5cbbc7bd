package helpers

import (
	"context"
	_ "embed"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/chromegate/chromegate/executor"
)

//go:embed scripts/docstate.js
var docStateSource string

// DocState is which document a tab's main frame holds and whether it has
// loaded.
type DocState struct {
	// Doc is the document's token: the letters of its refs.
	Doc string `json:"doc"`
	// Loaded: its load event has fired (subresources included).
	Loaded bool `json:"loaded"`
}

// ReadDocState reads the document state of tab's main frame, reading no
// page content.
func ReadDocState(ctx context.Context, ex executor.Executor, tabID string) (DocState, error) {
	return AwaitDocState(ctx, ex, tabID, nil, 0)
}

// AwaitDocState reads the document state of tab's main frame once the
// document there is none of old and has loaded, or wait is up, whichever
// comes first; it waits in the page, on the document's own events, not by
// polling. While a document of old is still there it waits for it to go:
// the call then ends with a backend error (the document's world is gone)
// and the caller reads again. A zero wait reads at once.
func AwaitDocState(ctx context.Context, ex executor.Executor, tabID string, old map[string]bool, wait time.Duration) (DocState, error) {
	arg, err := json.Marshal(map[string]any{"old": slices.Collect(maps.Keys(old)), "wait": wait.Milliseconds()})
	if err != nil {
		return DocState{}, err
	}
	r, err := ex.RunScript(ctx, executor.ScriptParams{TabID: tabID, Source: docStateSource, Arg: arg})
	if err != nil {
		return DocState{}, err
	}
	var st DocState
	if err := json.Unmarshal(r.Value, &st); err != nil {
		return DocState{}, executor.Errorf(executor.CodeInternal, "docstate: unexpected result: %v", err)
	}
	return st, nil
}
