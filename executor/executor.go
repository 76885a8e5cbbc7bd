// Package executor defines the backend-neutral contract every browser backend
// implements: the primitives, their JSON-serialisable parameters and results,
// the typed error codes, tab-id stamping and the Manager that picks a backend
// for each call.
//
// Nothing here knows about playwright-go, CDP sessions or DOM handles: every
// value that crosses the contract is plain data that can travel over a wire
// (the extension protocol mirrors it one-to-one).
//
// Every fetch the server makes for the model is decided per hop, like a
// navigation's landing, or goes through the browser and so through the
// egress boundary; either way it sees the network as the browser does (its
// host mapping). Fetch asks DownloadParams.DecideHop — the caller's policy,
// passed down as a function so no backend imports it — about the URL and
// every redirect before it is sent, and dials through the boundary's
// Dialer; a refused hop is never requested and nothing of it is stored.
//
// # The document a call touches
//
// A read or an action is decided on the document it touches, never on
// another: the policy decides on the tab's document, so a backend must
// not reach past it. Both backends keep that in two ways:
//
//   - A selector names an element of the tab's main frame, or of a frame
//     of the main document's own origin, whose decision is the main
//     document's. Selectors cannot enter frames: Target.Validate
//     (CheckSelector) refuses every spelling of Playwright's frame step,
//     internal:control=enter-frame (what frameLocator builds), with
//     BAD_ARGS; and a backend whose selector engine can cross into a
//     frame checks, before it reads from or acts on the element a
//     selector resolved to, that the element is in the main frame.
//   - A ref names an element of the document whose token it carries: the
//     main document (and its same-origin frames, which the main frame's
//     isolated world reaches), or a frame document of another origin
//     that a FrameReader reached through an isolated world of its own.
//     The server decides such a frame document like a page before it is
//     outlined or a call by one of its refs runs, and the backend runs a
//     ref's operation only in its own document's execution context, so a
//     ref never reaches a document nobody decided on (a frame that
//     navigated since: REF_EXPIRED).
//   - TabInfo describes the tab's document by its security origin where
//     its URL does not carry it (Tab.Origin, OriginHidden): an
//     about:blank that a page opened and wrote into is that page's
//     document, not "about:blank", and an opaque one a page could have
//     written into is decided as opaque.
//   - Records a tab keeps between calls (network-log entries, console
//     messages, dialogs) name the document that produced them
//     (Source, source.go) by the browser's own identifiers, never by a
//     URL the page can write; one a backend cannot name has none, and the
//     server withholds it.
package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Executor is one browser session seen through the primitives of the
// contract. Implementations must be safe for concurrent use; calls on one tab
// may be serialised by the backend. Every method honours ctx: when it is done
// the call returns promptly with a TIMEOUT error.
//
// An empty TabID in any params means the selected tab.
//
// Its implementations:
//
//   - executor/cdp — the Playwright backend: Chromium launched by
//     chromegate, or attached over CDP or a Playwright browser server,
//     driven through playwright-go (a primitive such as Click is in
//     actions.go; by ref, refs.go runs executor/scripts/element.js in an
//     isolated world).
//   - executor/ext — the extension backend: the user's Chrome, each
//     primitive a wire frame (executor/ext/wire) over the bridge
//     (executor/ext/bridge) to extension/, whose router hands it to the
//     handler in extension/cdp.js and on to chrome.debugger.
//   - executor/executortest — a fake for tests, recording every call.
type Executor interface {
	// Backend names the backend kind, for example "cdp" or "ext".
	Backend() string

	// Tabs lists the open tabs in a stable order.
	Tabs(ctx context.Context) ([]Tab, error)
	// TabInfo reports one tab ("" = the selected tab) with its current URL,
	// read from the browser at call time: it must reflect every navigation
	// the browser committed before the call, since the policy decides on it.
	TabInfo(ctx context.Context, tabID string) (Tab, error)
	SelectTab(ctx context.Context, tabID string) (Tab, error)
	NewTab(ctx context.Context, p NewTabParams) (Tab, error)
	CloseTab(ctx context.Context, tabID string) error

	Navigate(ctx context.Context, p NavigateParams) (NavResult, error)
	Back(ctx context.Context, p HistoryParams) (NavResult, error)
	Forward(ctx context.Context, p HistoryParams) (NavResult, error)
	Reload(ctx context.Context, p HistoryParams) (NavResult, error)

	Click(ctx context.Context, p ClickParams) (ActionResult, error)
	Type(ctx context.Context, p TypeParams) (ActionResult, error)
	Fill(ctx context.Context, p FillParams) (ActionResult, error)
	Press(ctx context.Context, p PressParams) (ActionResult, error)
	Hover(ctx context.Context, p TargetParams) (ActionResult, error)
	Scroll(ctx context.Context, p ScrollParams) (ActionResult, error)
	SelectOption(ctx context.Context, p SelectParams) (ActionResult, error)
	SetFiles(ctx context.Context, p SetFilesParams) (ActionResult, error)
	Drag(ctx context.Context, p DragParams) (ActionResult, error)

	Text(ctx context.Context, p TextParams) (TextResult, error)
	HTML(ctx context.Context, p HTMLParams) (TextResult, error)
	Screenshot(ctx context.Context, p ScreenshotParams) (Screenshot, error)
	Eval(ctx context.Context, p EvalParams) (EvalResult, error)
	WaitFor(ctx context.Context, p WaitParams) (WaitResult, error)
	// RunScript runs one of chromegate's own page scripts (never a
	// caller's code) in an isolated world named "chromegate" of the tab's
	// main frame; see ScriptParams.
	RunScript(ctx context.Context, p ScriptParams) (ScriptResult, error)
	// AnswerDialog accepts or dismisses the dialog open on a tab (see
	// Dialog) and returns the page once it has gone on: an accepted
	// beforeunload lets the pending navigation commit first. No dialog
	// open is BAD_ARGS.
	AnswerDialog(ctx context.Context, p DialogParams) (PageState, error)

	// Network lists the requests a tab's pages made since its last
	// main-frame navigation (or the last few), without headers;
	// NetworkEntry returns one of them with its headers, credentials
	// redacted, and its response body when asked (network.go).
	Network(ctx context.Context, p NetworkParams) (NetworkLog, error)
	NetworkEntry(ctx context.Context, p NetworkEntryParams) (NetworkEntry, error)
	// Console lists the console messages and uncaught exceptions of a
	// tab's pages since its last main-frame navigation (or the last few),
	// bounded (console.go).
	Console(ctx context.Context, p ConsoleParams) (ConsoleLog, error)
	// PDF prints the tab's page as PDF into the download directory
	// (pdf.go).
	PDF(ctx context.Context, p PDFParams) (PDFResult, error)

	Cookies(ctx context.Context, p CookiesParams) ([]Cookie, error)
	SetCookies(ctx context.Context, p SetCookiesParams) error
	ClipboardWrite(ctx context.Context, p ClipboardParams) error
	Download(ctx context.Context, p DownloadParams) (DownloadResult, error)

	Status(ctx context.Context) (Status, error)
	// Ping answers quickly (the caller sets a short deadline) when the
	// backend can take calls.
	Ping(ctx context.Context) error
	// Done is closed when the executor can take no more calls (the browser
	// exited, the link dropped). Calls in flight then fail promptly.
	Done() <-chan struct{}
	// Close releases what this executor launched; it never closes a browser
	// it only attached to. Close may be called more than once, concurrently.
	Close() error
}

// WaitUntil is the navigation milestone a navigation waits for.
type WaitUntil string

// The milestones navigation can wait for.
const (
	WaitLoad             WaitUntil = "load"
	WaitDOMContentLoaded WaitUntil = "domcontentloaded"
	WaitNetworkIdle      WaitUntil = "networkidle"
)

// Valid reports whether w is empty (the backend default, load) or known.
func (w WaitUntil) Valid() bool {
	switch w {
	case "", WaitLoad, WaitDOMContentLoaded, WaitNetworkIdle:
		return true
	}
	return false
}

// Target names one element: exactly one of Selector or Ref.
type Target struct {
	Selector string `json:"selector,omitempty"`
	Ref      string `json:"ref,omitempty"`
}

// Validate checks that exactly one of Selector or Ref is set, and that a
// selector does not enter a frame (CheckSelector).
func (t Target) Validate() error {
	switch {
	case t.Selector != "" && t.Ref != "":
		return Errorf(CodeBadArgs, "both selector and ref are set").WithHint("pass exactly one of selector or ref")
	case t.Selector == "" && t.Ref == "":
		return Errorf(CodeBadArgs, "neither selector nor ref is set").WithHint("pass exactly one of selector or ref")
	}
	return CheckSelector(t.Selector)
}

// IsZero reports whether neither field is set (an optional target left out).
func (t Target) IsZero() bool { return t.Selector == "" && t.Ref == "" }

func (t Target) String() string {
	if t.Ref != "" {
		return "ref " + t.Ref
	}
	return "selector " + t.Selector
}

// Tab is one open tab.
type Tab struct {
	ID       string `json:"id"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Selected bool   `json:"selected,omitempty"`
	// Origin is the security origin of the tab's document where its URL
	// does not carry it (OriginHidden: about:blank, data:, blob: ...), as
	// the browser has it: "http://host:port" for a document that
	// inherited its creator's origin (an about:blank a page opened and
	// wrote into), OpaqueOrigin for an opaque one that a page could have
	// written into (the tab has an opener). Empty when the URL's own
	// origin stands: the URL carries it, or the tab is an about:blank no
	// page ever reached (no opener). TabInfo fills it; Tabs may not.
	Origin string `json:"origin,omitempty"`
	// Dialog is the dialog open on the tab, if any (Action "open"):
	// TabInfo fills it, so the policy can name it, and Tabs.
	Dialog *Dialog `json:"dialog,omitempty"`
}

// Dialog is a JavaScript dialog a page opened (alert, confirm, prompt,
// beforeunload) and what became of it. A dialog is never accepted on the
// caller's behalf: it is left open (Action "open"), the page waiting for
// it, until the caller answers it (AnswerDialog); the one exception is an
// alert when the session was started to answer alerts itself
// (Action "accepted"). A dialog of a page the session does not drive is
// dismissed at once (Action "dismissed"). While a tab has an open dialog,
// every call that needs its page fails at once with DIALOG_OPEN; a call
// that raised one returns as soon as it is open.
type Dialog struct {
	Type    string `json:"type"` // alert | confirm | prompt | beforeunload
	Message string `json:"message"`
	// Default is a prompt's default value.
	Default string `json:"default,omitempty"`
	Action  string `json:"action"` // open | accepted | dismissed
	// Answer is the text a prompt was accepted with.
	Answer string `json:"answer,omitempty"`
	// URL is the address of the page that opened the dialog, for the
	// server to decide whether the caller may hear of it (a popup or a tab
	// outside the policy may not); it is never shown.
	URL string `json:"url,omitempty"`
	// Docs are the documents that may have opened it (source.go): the
	// one whose frame opened it when the backend can tell, else every
	// one the backend could not rule out. The server withholds the
	// dialog's words when any of them is denied; none known leaves the
	// decision to URL.
	Docs []Source `json:"docs,omitempty"`
}

// The actions of a Dialog.
const (
	DialogOpen      = "open"
	DialogAccepted  = "accepted"
	DialogDismissed = "dismissed"
)

// DialogParams answers the dialog open on a tab.
type DialogParams struct {
	TabID  string `json:"tabId,omitempty"`
	Accept bool   `json:"accept"`
	// PromptText is what a prompt is accepted with; nil keeps its default.
	PromptText *string `json:"promptText,omitempty"`
}

// PageState is what most calls report about the tab they acted on.
type PageState struct {
	TabID   string   `json:"tabId"`
	URL     string   `json:"url"`
	Title   string   `json:"title,omitempty"`
	Dialogs []Dialog `json:"dialogs,omitempty"`
}

// NewTabParams opens a tab, optionally navigating it.
type NewTabParams struct {
	URL       string    `json:"url,omitempty"`
	WaitUntil WaitUntil `json:"waitUntil,omitempty"`
}

// NavigateParams loads URL in a tab.
type NavigateParams struct {
	TabID     string    `json:"tabId,omitempty"`
	URL       string    `json:"url"`
	WaitUntil WaitUntil `json:"waitUntil,omitempty"`
	// LeaveDialog dismisses (never accepts) a dialog open on the tab, and
	// any the page opens while it is left, instead of failing with
	// DIALOG_OPEN: the server's own way off a page outside the policy.
	LeaveDialog bool `json:"leaveDialog,omitempty"`
}

// HistoryParams drives back, forward and reload.
type HistoryParams struct {
	TabID     string    `json:"tabId,omitempty"`
	WaitUntil WaitUntil `json:"waitUntil,omitempty"`
}

// NavResult is the page after a navigation. Status is the HTTP status of the
// main document, 0 when there was none (about:blank, same-document).
type NavResult struct {
	PageState
	Status int `json:"status,omitempty"`
}

// ActionResult is the page after an interaction.
type ActionResult struct {
	PageState
	// Selected lists the option values chosen by SelectOption.
	Selected []string `json:"selected,omitempty"`
}

// TargetParams names an element in a tab.
type TargetParams struct {
	TabID string `json:"tabId,omitempty"`
	Target
}

// ClickParams clicks an element with trusted mouse events.
type ClickParams struct {
	TargetParams
	Button string `json:"button,omitempty"` // left (default) | right | middle
	Count  int    `json:"count,omitempty"`  // 1 (default) or 2 for a double click
}

// TypeParams types text into an element key by key.
type TypeParams struct {
	TargetParams
	Text       string `json:"text"`
	Clear      bool   `json:"clear,omitempty"`
	PressEnter bool   `json:"pressEnter,omitempty"`
	// OnlyOrigin, when set, guards a text holding an operator's secret: it
	// goes in whole, in one input event, never key by key (the page never
	// holds a part of it), into the target only, and only while the
	// target's document is of this origin (the one the policy allowed the
	// secret on) and the target holds the focus; otherwise nothing is
	// inserted and the call fails with POLICY_DENIED (InsertScript).
	OnlyOrigin string `json:"onlyOrigin,omitempty"`
	// Shown, with OnlyOrigin, is how the field reads from now on (its
	// text with each secret as <secret:NAME>): see SecretMark.
	Shown string `json:"shown,omitempty"`
	// Unmark, with Clear and no OnlyOrigin: the text replaces a secret the
	// field may hold, so the field reads as it is again (see SecretMark).
	Unmark bool `json:"unmark,omitempty"`
}

// FillParams sets an input's value in one step.
type FillParams struct {
	TargetParams
	Value string `json:"value"`
	// OnlyOrigin guards a value holding an operator's secret, as
	// TypeParams.OnlyOrigin does.
	OnlyOrigin string `json:"onlyOrigin,omitempty"`
	// Shown and Unmark mark the field as TypeParams' do: Shown with a
	// secret, Unmark for a plain value (see SecretMark).
	Shown  string `json:"shown,omitempty"`
	Unmark bool   `json:"unmark,omitempty"`
}

// PressParams presses a key, optionally on a target (else the focused element).
type PressParams struct {
	TabID     string   `json:"tabId,omitempty"`
	Target    Target   `json:"target,omitzero"`
	Key       string   `json:"key"`
	Modifiers []string `json:"modifiers,omitempty"` // Alt Control Meta Shift
}

// ScrollParams scrolls an element into view, or the page by a delta.
type ScrollParams struct {
	TabID  string `json:"tabId,omitempty"`
	Target Target `json:"target,omitzero"`
	DX     int    `json:"dx,omitempty"`
	DY     int    `json:"dy,omitempty"`
}

// SelectParams chooses options of a <select> by value or label.
type SelectParams struct {
	TargetParams
	Values []string `json:"values"`
}

// SetFilesParams sets the files of an <input type=file>. Paths are local to
// the server.
type SetFilesParams struct {
	TargetParams
	Paths []string `json:"paths"`
	// Tenant is the caller's principal: the files must be in its own
	// directory under an upload root (TenantRoots; "" the roots
	// themselves). Set by the server, never by the model.
	Tenant string `json:"-"`
}

// DragParams drags one element onto another.
type DragParams struct {
	TabID string `json:"tabId,omitempty"`
	From  Target `json:"from"`
	To    Target `json:"to"`
}

// TextParams reads visible text of an element, or of the page body.
type TextParams struct {
	TabID  string `json:"tabId,omitempty"`
	Target Target `json:"target,omitzero"`
}

// HTMLParams reads markup of an element, or of the whole document.
type HTMLParams struct {
	TabID  string `json:"tabId,omitempty"`
	Target Target `json:"target,omitzero"`
	Outer  bool   `json:"outer,omitempty"`
}

// TextResult carries text or markup read from a page.
type TextResult struct {
	PageState
	Text string `json:"text"`
}

// ImageFormat is png (default) or jpeg.
type ImageFormat string

// Image formats for screenshots.
const (
	FormatPNG  ImageFormat = "png"
	FormatJPEG ImageFormat = "jpeg"
)

// ScreenshotParams captures the viewport, the full page (capped at
// MaxHeight CSS pixels) or one element.
type ScreenshotParams struct {
	TabID     string      `json:"tabId,omitempty"`
	Target    Target      `json:"target,omitzero"`
	FullPage  bool        `json:"fullPage,omitempty"`
	Format    ImageFormat `json:"format,omitempty"`
	Quality   int         `json:"quality,omitempty"`   // 1..100, jpeg only
	MaxHeight int         `json:"maxHeight,omitempty"` // full-page cap; 0 = backend default
}

// Screenshot is an encoded image. Truncated is set when a full-page capture
// was cut at the height cap; FullHeight is then the page's real height.
type Screenshot struct {
	PageState
	Data       []byte `json:"data"`
	MIMEType   string `json:"mimeType"`
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	Truncated  bool   `json:"truncated,omitempty"`
	FullHeight int    `json:"fullHeight,omitempty"`
}

// EvalParams evaluates a JavaScript expression in the page's main world.
type EvalParams struct {
	TabID        string `json:"tabId,omitempty"`
	Expression   string `json:"expression"`
	AwaitPromise bool   `json:"awaitPromise,omitempty"`
	// ExpectURL, when set, is the URL the call was decided on: the
	// expression runs only while the document is still at it, else Eval
	// runs nothing and returns ErrPageMoved. A backend without the check
	// ignores it (its TabInfo read the URL: it is not a TabPeeker).
	ExpectURL string `json:"expectUrl,omitempty"`
}

// ErrPageMoved is Eval's answer when the document is no longer at
// EvalParams.ExpectURL: nothing ran. The caller decides again on the URL
// read from the browser (TabInfo) and evaluates again.
var ErrPageMoved = errors.New("the page is no longer at the URL the call was decided on")

// TabPeeker is a backend that can say, with no round trip to the browser,
// the tab as it last heard of it: the URL may lag a navigation the browser
// committed a moment ago, so a call decided on it must check the URL in
// the page before it acts (EvalParams.ExpectURL). ok is false when the
// backend cannot say without a round trip: no such tab yet, a dialog, a
// URL that does not carry its document's origin.
type TabPeeker interface {
	PeekTab(tabID string) (tab Tab, ok bool)
}

// EvalResult is the outcome of Eval. A page exception is a result with OK
// false, not a Go error: the model wrote the script and should see why it
// threw.
type EvalResult struct {
	PageState
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value,omitempty"`
	Error string          `json:"error,omitempty"`
}

// ScriptParams runs one of chromegate's own scripts in a tab.
//
// Source is a JavaScript expression that evaluates to a function; the
// backend calls it as fn(arg, env) in an isolated world named "chromegate"
// of the tab's main frame, where page scripts can neither see nor change
// its globals, and returns its JSON-serialisable result (a promise is
// awaited). Arg is JSON (null when empty).
//
// The isolated world's globalThis lasts as long as the document: every
// script run in one document sees the same globalThis, and the first
// script of a new document sees a fresh one. env.doc is a short token of
// lowercase letters that the backend offers to no other document of the
// session; a script that needs a per-document identity (the ref registry)
// adopts the token it is first offered and keeps it on globalThis.
//
// Source must come from chromegate itself (an embedded .js file): the
// isolated world has the same DOM access as the page, and what it keeps
// (refs) must stay out of the page's and the caller's reach.
type ScriptParams struct {
	TabID  string          `json:"tabId,omitempty"`
	Source string          `json:"source"`
	Arg    json.RawMessage `json:"arg,omitempty"`
	// Doc, when set, runs the script in the frame document with this
	// token (FrameDoc.Doc, from a FrameReader) instead of the main
	// frame's, and env.doc is that token. A token of a document that is
	// gone, or that the backend never gave a frame, is REF_EXPIRED: the
	// script never runs in another document.
	Doc string `json:"doc,omitempty"`
}

// ScriptResult is the JSON value a script returned (null for undefined).
// An exception the script threw is an EVAL_FAILED error.
type ScriptResult struct {
	PageState
	Value json.RawMessage `json:"value"`
}

// WaitParams waits, by polling, for a selector to appear (or, with Gone, to
// disappear), or for text to appear in the page. Exactly one of Target or
// Text. The deadline is the context's.
type WaitParams struct {
	TabID  string `json:"tabId,omitempty"`
	Target Target `json:"target,omitzero"`
	Text   string `json:"text,omitempty"`
	Gone   bool   `json:"gone,omitempty"`
	// Visible requires the element to be visible, not only attached.
	Visible bool `json:"visible,omitempty"`
}

// Describe says what p waits for, for messages: "the text "x" to appear".
func (p WaitParams) Describe() string {
	switch {
	case p.Text != "" && p.Gone:
		return fmt.Sprintf("the text %q to disappear", p.Text)
	case p.Text != "":
		return fmt.Sprintf("the text %q to appear", p.Text)
	case p.Gone:
		return p.Target.String() + " to disappear or be hidden"
	case p.Visible:
		return p.Target.String() + " to be visible"
	}
	return p.Target.String() + " to appear"
}

// WaitResult reports how long the wait took.
type WaitResult struct {
	PageState
	ElapsedMs int64 `json:"elapsedMs"`
}

// Cookie is one browser cookie. Expires is Unix seconds; -1 or 0 = session.
type Cookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain,omitempty"`
	Path     string  `json:"path,omitempty"`
	URL      string  `json:"url,omitempty"` // set only: scope by URL instead of domain+path
	Expires  float64 `json:"expires,omitempty"`
	HTTPOnly bool    `json:"httpOnly,omitempty"`
	Secure   bool    `json:"secure,omitempty"`
	SameSite string  `json:"sameSite,omitempty"` // Strict | Lax | None
}

// CookiesParams filters cookies by the URLs they would be sent to; no URLs =
// every cookie of the session.
type CookiesParams struct {
	URLs []string `json:"urls,omitempty"`
}

// SetCookiesParams adds cookies. Each needs URL, or Domain and Path.
type SetCookiesParams struct {
	Cookies []Cookie `json:"cookies"`
}

// ClipboardParams writes text to the page's clipboard.
type ClipboardParams struct {
	TabID string `json:"tabId,omitempty"`
	Text  string `json:"text"`
}

// DownloadParams fetches a URL, or the download a click on Target starts,
// into the server-owned download directory.
type DownloadParams struct {
	TabID    string `json:"tabId,omitempty"`
	URL      string `json:"url,omitempty"`
	Target   Target `json:"target,omitzero"`
	Filename string `json:"filename,omitempty"` // suggested; always sanitised
	// DecideHop, when set, decides every request the server's own fetch
	// makes for this download (the URL, a URL a click led to, and every
	// redirect hop) before it is sent; see HopFunc. The caller (the
	// server's dispatch) passes its policy down this way, so a backend
	// never needs to know what a policy is.
	DecideHop HopFunc `json:"-"`
	// Tenant is the caller's principal: the file lands in its own
	// directory under the downloads directory (TenantRoot).
	Tenant string `json:"-"`
}

// HopFunc decides one request a fetch the server makes for a call is about
// to send: its first URL and each redirect hop, decided as the call itself
// was. A non-nil error refuses the request; the fetch stops and returns
// that error unchanged (an *Error with CodePolicyDenied, whose message and
// hint the caller chose).
type HopFunc func(ctx context.Context, rawURL string) error

// Validate checks that exactly one of URL or Target is set, and a Target
// well-formed.
func (p DownloadParams) Validate() error {
	if (p.URL != "") == !p.Target.IsZero() {
		return Errorf(CodeBadArgs, "pass exactly one of url or target")
	}
	if !p.Target.IsZero() {
		return p.Target.Validate()
	}
	return nil
}

// DownloadResult says where a download landed.
type DownloadResult struct {
	Path     string `json:"path"`
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	MIMEType string `json:"mimeType,omitempty"`
	SHA256   string `json:"sha256"`
	URL      string `json:"url"`
}

// Status describes a backend for chrome_status.
type Status struct {
	Backend     string `json:"backend"`
	Session     string `json:"session"`
	Browser     string `json:"browser,omitempty"`
	Version     string `json:"version,omitempty"`
	Headless    bool   `json:"headless"`
	Attached    bool   `json:"attached"` // attached to a browser it did not launch
	Profile     string `json:"profile,omitempty"`
	Tabs        int    `json:"tabs"`
	SelectedTab string `json:"selectedTab,omitempty"`
	DownloadDir string `json:"downloadDir,omitempty"`
}

// SanitizeFilename makes a download name safe to create in a flat directory:
// no path separators, no control characters, no leading dots, bounded
// length. It never returns an empty name.
func SanitizeFilename(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f:
			continue
		case strings.ContainsRune(`<>:"|?*`, r):
			b.WriteRune('_')
		default:
			b.WriteRune(r)
		}
	}
	out := strings.TrimLeft(strings.TrimSpace(b.String()), ".")
	const max = 120
	if len(out) > max {
		ext := ""
		if i := strings.LastIndexByte(out, '.'); i > 0 && len(out)-i <= 10 {
			ext = out[i:]
		}
		cut := max - len(ext)
		for cut > 0 && !utf8Start(out[cut]) {
			cut--
		}
		out = out[:cut] + ext
	}
	if out == "" {
		out = "download"
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
