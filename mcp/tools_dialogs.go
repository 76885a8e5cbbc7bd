package mcp

// Dialogs: answer the JavaScript dialog a page waits on. Each tool is one
// constructor: its declaration, its class, the facts the call path needs;
// the handlers
// live with the feature (dialogs.go).

// groupDialogs is the README row of these tools.
var groupDialogs = &ToolGroup{Name: "dialogs"}

func dialogAnswerTool() *Tool {
	return newTool(Tool{
		Name: "dialog_answer", Title: "Answer dialog",
		Group:       groupDialogs,
		Output:      &Output{Value: pageOut{}},
		Description: "Answer the dialog a page waits on (DIALOG_OPEN, or action \"open\"): accept true = OK (prompt_text answers a prompt), false = Cancel. Returns the page.",
		// Mutating and destructive: accepting a confirm may delete,
		// pay or send, and leaving a page may lose its form.
		// prompt_text may be a password a prompt asks for.
		ReadOnly: no(), Action: ActionInteract, Mutating: true, Secrets: []string{"prompt_text"},
		Changes: true, MayLoad: true, AnswersDialog: true,
	}, dialogAnswer)
}

// dialogAnswerIn is dialog_answer's input. PromptText is nil when not
// given: a prompt then gets its default.
type dialogAnswerIn struct {
	Accept     bool    `json:"accept"`
	PromptText *string `json:"prompt_text,omitempty"`
	tabIn
}
