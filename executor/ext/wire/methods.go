package wire

// The command methods of protocol v1: what a command frame's "method" may
// name. extension/methods.js lists the same names for the extension's
// router; TestMethodsMatchTheExtension fails on any difference in either
// direction, so a method added on one side only is caught by go test.
const (
	MethodTabs           = "tabs"
	MethodTabInfo        = "tabInfo"
	MethodSelectTab      = "selectTab"
	MethodNewTab         = "newTab"
	MethodCloseTab       = "closeTab"
	MethodNavigate       = "navigate"
	MethodBack           = "back"
	MethodForward        = "forward"
	MethodReload         = "reload"
	MethodClick          = "click"
	MethodType           = "type"
	MethodFill           = "fill"
	MethodPress          = "press"
	MethodHover          = "hover"
	MethodScroll         = "scroll"
	MethodSelectOption   = "selectOption"
	MethodSetFiles       = "setFiles"
	MethodDrag           = "drag"
	MethodText           = "text"
	MethodHTML           = "html"
	MethodScreenshot     = "screenshot"
	MethodEval           = "eval"
	MethodWaitFor        = "waitFor"
	MethodRunScript      = "runScript"
	MethodFrameDocument  = "frameDocument"
	MethodRefDocument    = "refDocument"
	MethodFrameAt        = "frameAt"
	MethodCookies        = "cookies"
	MethodSetCookies     = "setCookies"
	MethodClipboardWrite = "clipboardWrite"
	MethodDownloadTarget = "downloadTarget"
	MethodStatus         = "status"
	MethodWebMCP         = "webmcp"
	MethodNetwork        = "network"
	MethodNetworkEntry   = "networkEntry"
	MethodAnswerDialog   = "answerDialog"
	MethodEmulate        = "emulate"
	MethodConsole        = "console"
	MethodPDF            = "pdf"
	MethodHitTest        = "hitTest"
	MethodPoint          = "point"
)

// Methods returns every command method, in the order of methods.js.
func Methods() []string {
	return []string{
		MethodTabs, MethodTabInfo, MethodSelectTab, MethodNewTab, MethodCloseTab,
		MethodNavigate, MethodBack, MethodForward, MethodReload,
		MethodClick, MethodType, MethodFill, MethodPress, MethodHover, MethodScroll,
		MethodSelectOption, MethodSetFiles, MethodDrag,
		MethodText, MethodHTML, MethodScreenshot, MethodEval, MethodWaitFor, MethodRunScript,
		MethodFrameDocument, MethodRefDocument, MethodFrameAt,
		MethodCookies, MethodSetCookies, MethodClipboardWrite, MethodDownloadTarget,
		MethodStatus, MethodWebMCP, MethodNetwork, MethodNetworkEntry,
		MethodAnswerDialog, MethodEmulate, MethodConsole, MethodPDF,
		MethodHitTest, MethodPoint,
	}
}

// The events of protocol v1: what an event frame's "event" may name, the
// extension's EVENTS in extension/methods.js (TestEventsMatchTheExtension).
const (
	EventAttached  = "attached"  // the debugger attached to a tab
	EventDetached  = "detached"  // the debugger left a tab
	EventTabClosed = "tabClosed" // a driven tab closed
	EventWebMCP    = "webmcp"    // a WebMCP event of a tab
)

// Events returns every event, in the order of methods.js.
func Events() []string {
	return []string{EventAttached, EventDetached, EventTabClosed, EventWebMCP}
}
