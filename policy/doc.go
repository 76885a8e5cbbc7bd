// Package policy decides, with a Rego (OPA) policy that denies by default,
// whether a chromegate tool call may run: every navigation, read,
// interaction and eval, and whether a tool is listed at all.
//
// # One gate
//
// Policy is checked in exactly one place: the MCP dispatch gate, which
// every entry point goes through — stdio and Streamable HTTP, REST, plugin
// tools, WebMCP page tools, and each primitive a helper runs that touches a
// new URL. Nothing else calls an Executor for a tool call. The gate builds
// an Input (NewInput, from the Class the tool's declaration carries; then
// Page, Principal, Backend and PageTool), calls Engine.Decide, and on a
// denial returns DeniedError as the tool's isError result without touching
// the browser. A navigation is decided twice:
// before, on the requested URL, and after, on where the tab landed
// (Input.Landed) — as is any call after which the tab shows another URL,
// such as a click on a link; a tab that lands outside policy is sent back
// to about:blank and nothing of it is read. A fetch the server makes itself
// (download_file) is decided per hop the same way: its URL and every
// redirect it would follow are the call again with that URL
// (Input.Redirected), before the request is sent. tools/list is filtered by a
// PhaseList decision per tool, and a filtered tool is still decided at call
// time.
//
// # The document a call touches
//
// A read or an action is decided on the document it touches, not on the
// tab's URL alone: Input.Page is built by NewDocumentPage from the URL and
// the security origin the browser gave the document. Where the URL does
// not carry that origin (about:blank, about:srcdoc, data:, blob:), the
// page is the origin — an about:blank a denied page wrote into is decided
// as that page, an opaque one a page could have written into as the
// opaque origin "null", which no URL rule allows — and Page.ShownURL keeps
// the URL for reasons and logs. No target reaches a frame of another
// origin (see package executor), so the tab's document is the one a call
// touches.
//
// # Fail closed
//
// Decide never returns an error: an evaluation error, an undefined
// decision, a non-object decision, a non-boolean allow, a deadline passed
// (WithTimeout: 100ms by default; chromegate serve uses --policy-timeout,
// 1s) or a panic is a denial whose reason starts with
// "policy error:". Builtins that reach the network or the host
// (RemovedBuiltins: http.send, net.lookup_ip_addr, opa.runtime, ...) are not
// in the capabilities, so a policy that calls one fails to load, naming the
// builtin and its file:line. Builtin errors are evaluation errors
// (StrictBuiltinErrors).
//
// # The policy
//
// The default policy is embedded from the policies package; WithDir loads a
// directory instead. The query is data.chromegate.decision, which must be
// {"allow": bool, "reasons": [string]} (and optionally "hints":
// [string]). Flags reach the policy only as data (WithData): allow_domains,
// enable_mutations, enable_eval, enable_downloads, all_domains. chromegate
// adds two builtins: chromegate.host_match (host patterns on gobwas/glob,
// where "*.example.com" matches any depth of subdomain) and
// chromegate.parse_url (ParseTarget from Rego). policies/README.md
// documents the input document, the data and the builtins.
//
// The decision log is bounded: it rotates at a size
// (OpenRotatingDecisionLog), and a page's repeated request denials are
// counted, not written one line each — the first denial of a kind
// (principal, session, host, hook, reasons) in a DenialWindow is a line,
// its repeats one line with their count at the window's end or at
// Engine.Close (denials.go). Call decisions stay one line each.
//
// # From OPA bundles
//
// WithOPA takes the policy from signed OPA bundles instead (NewOPA: OPA's
// own configuration, run by OPA's plugins.Manager with its bundle,
// decision-log and status plugins). A bundle goes in force only if OPA
// verified its signature and chromegate prepared its query inside the
// bundle's storage transaction; otherwise the last good one keeps
// deciding. Before the first one every decision denies. The decision
// log's lines, redacted as the file's, go to OPA's decision-log plugin
// (OPA.DecisionWriter) with the deciding bundles' revisions and
// labels.replica. BuildBundle makes a signed bundle of a policy directory.
// The rules are stated at the top of opa.go.
//
// Engine is safe for concurrent use. Reload and Watch swap in a new policy
// atomically; a policy that fails to load leaves the old one in force and
// shows in Status. Test runs a policy's Rego unit tests.
package policy
