package helpers

import (
	"context"
	_ "embed"
	"encoding/json"

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
// page content: cheap enough to poll while a new document comes in.
func ReadDocState(ctx context.Context, ex executor.Executor, tabID string) (DocState, error) {
	r, err := ex.RunScript(ctx, executor.ScriptParams{TabID: tabID, Source: docStateSource})
	if err != nil {
		return DocState{}, err
	}
	var st DocState
	if err := json.Unmarshal(r.Value, &st); err != nil {
		return DocState{}, executor.Errorf(executor.CodeInternal, "docstate: unexpected result: %v", err)
	}
	return st, nil
}
