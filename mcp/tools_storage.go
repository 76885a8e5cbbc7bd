package mcp

import "github.com/google/jsonschema-go/jsonschema"

// Storage state: save and restore a session's cookies and storage. Each
// tool is one constructor: its declaration, its class, the facts the call
// path needs; the handlers
// live with the feature (state.go).

// groupStorage is the README row of these tools.
var groupStorage = &ToolGroup{Name: "storage state", Note: "[log in once](#log-in-once-storage-state)"}

func stateSaveTool() *Tool {
	return newTool(Tool{
		Name: "state_save", Title: "Save storage state",
		Group:       groupStorage,
		Output:      &Output{Value: stateOut{}},
		Description: "Save the session's cookies and storage under name after logging in; state_load restores it. Returns counts, no values.",
		ReadOnly:    no(), Destructive: yes(), Action: ActionRead, PerOrigin: true,
		Timeout:    stateTimeout,
		TimeoutArg: true,
	}, stateSave)
}

// stateSaveIn is state_save's input.
type stateSaveIn struct {
	Name      string   `json:"name"`
	Origins   []string `json:"origins,omitempty"`
	IndexedDB bool     `json:"indexed_db,omitempty"`
	Overwrite bool     `json:"overwrite,omitempty"`
}

func (stateSaveIn) shape(s *jsonschema.Schema) {
	setDefault(s, "indexed_db", true)
	setDefault(s, "overwrite", false)
}

func stateLoadTool() *Tool {
	return newTool(Tool{
		Name: "state_load", Title: "Load storage state",
		Group:       groupStorage,
		Output:      &Output{Value: stateOut{}},
		Description: "Restore a saved state into the session: logged in without the password.",
		ReadOnly:    no(), Destructive: yes(), Idempotent: true, Action: ActionInteract, Mutating: true, PerOrigin: true,
		Timeout: stateTimeout,
		Use:     UseRestore, TimeoutArg: true,
	}, stateLoad)
}

// stateLoadIn is state_load's input.
type stateLoadIn struct {
	Name string `json:"name"`
}

func stateListTool() *Tool {
	return newTool(Tool{
		Name: "state_list", Title: "List saved states",
		Group:       groupStorage,
		Output:      &Output{Value: stateListOut{}},
		Description: "Names of saved states.",
		ReadOnly:    yes(), Idempotent: true, OpenWorld: no(), Action: ActionRead, PerOrigin: true,
		NoBrowser: true,
	}, stateList)
}
