package mcp

// Storage state: save and restore a session's cookies and storage. Each tool is one constructor: its
// declaration, its class, the facts the call path needs; the handlers
// live with the feature (state.go).

func stateSaveTool() *Tool {
	return &Tool{
		Name: "state_save", Title: "Save storage state",
		Output:      &Output{Value: stateOut{}},
		Description: "Save the session's cookies and storage under name after logging in; state_load restores it. Returns counts, no values.",
		InputSchema: object([]string{"name"}, prop{"name", str("")}, prop{"origins", strList("", 0)},
			prop{"indexed_db", boolDefault("", true)}, prop{"overwrite", boolDefault("", false)}),
		ReadOnly: no(), Destructive: yes(), Action: ActionRead, PerOrigin: true,
		Timeout:    stateTimeout,
		TimeoutArg: true,
		Handler:    stateSave,
	}
}

func stateLoadTool() *Tool {
	return &Tool{
		Name: "state_load", Title: "Load storage state",
		Output:      &Output{Value: stateOut{}},
		Description: "Restore a saved state into the session: logged in without the password.",
		InputSchema: object([]string{"name"}, prop{"name", str("")}),
		ReadOnly:    no(), Destructive: yes(), Idempotent: true, Action: ActionInteract, Mutating: true, PerOrigin: true,
		Timeout: stateTimeout,
		Use:     UseRestore, TimeoutArg: true,
		Handler: stateLoad,
	}
}

func stateListTool() *Tool {
	return &Tool{
		Name: "state_list", Title: "List saved states",
		Output:      &Output{Value: stateListOut{}},
		Description: "Names of saved states.",
		InputSchema: object(nil),
		ReadOnly:    yes(), Idempotent: true, OpenWorld: no(), Action: ActionRead, PerOrigin: true,
		NoBrowser: true,
		Handler:   stateList,
	}
}
