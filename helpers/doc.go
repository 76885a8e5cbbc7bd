// Package helpers holds the higher-level reading and form tools —
// ExtractLinks, ReadAsMarkdown and FillForm — and the storage-state save
// and restore (SaveState, RestoreState), composed only from
// executor.Executor primitives (and the optional executor.StateStore), so
// they work on every backend.
//
// # The policy gate
//
// A helper runs inside the one gated tool call that invoked it, on the
// executor that call got: the Gate already decided the call on the page the
// helper acts on. None of these helpers navigates or reads a URL other than
// the tab's current page, so none re-enters the Gate. A helper that ever does
// (following a link, fetching a second page) must go back through the Gate
// for each new URL; it cannot do so from here, which is why such steps
// belong in mcp, not in this package. SaveState and RestoreState touch
// every origin of a context rather than one page: they take the Gate's
// per-origin decision as a function (OriginDecider, as downloads take
// executor.HopFunc) and ask it about each origin before anything of it is
// read or written; the one tab RestoreState may open goes only to an
// origin so decided, as a navigation there. An interaction a helper performs that
// moves the tab (a form submission) is reported in the result's page state,
// and dispatch checks that landing like any other.
//
// # The document a step touches
//
// Every step reads from or acts on the document the Gate decided, never a
// frame of another origin: the page scripts run in the main frame's
// isolated world, which reaches only frames of the main document's own
// origin, and a selector a helper passes on (a field, a scope, a query) is
// held to executor.CheckSelector like the model's own, so none enters a
// frame.
//
// # Page scripts
//
// Page-side logic lives in scripts/*.js, embedded, never in Go string
// literals. Scripts take their arguments as JSON, so a selector or a value
// is data, never code.
package helpers
