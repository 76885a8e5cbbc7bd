package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Code classifies an error the model can act on. Codes are part of the
// public contract: they reach MCP clients, REST callers and the extension
// wire protocol unchanged.
type Code string

// The error codes of the Executor contract.
const (
	CodeNoBackend             Code = "NO_BACKEND"
	CodeExtensionDisconnected Code = "EXTENSION_DISCONNECTED"
	CodeTimeout               Code = "TIMEOUT"
	CodeTabNotFound           Code = "TAB_NOT_FOUND"
	CodeStaleTab              Code = "STALE_TAB"
	CodeSelectorNotFound      Code = "SELECTOR_NOT_FOUND"
	CodeRefExpired            Code = "REF_EXPIRED"
	CodeEvalFailed            Code = "EVAL_FAILED"
	CodeLaunchFailed          Code = "LAUNCH_FAILED"
	CodeDetached              Code = "DETACHED"
	CodeTargetGone            Code = "TARGET_GONE"
	CodePolicyDenied          Code = "POLICY_DENIED"
	CodeDevtoolsOpen          Code = "DEVTOOLS_OPEN"
	CodeDownloadFailed        Code = "DOWNLOAD_FAILED"
	CodeBackpressure          Code = "BACKPRESSURE"
	CodeBadArgs               Code = "BAD_ARGS"
	// CodeDialogOpen: the tab's page waits for an answer to a JavaScript
	// dialog (alert, confirm, prompt, beforeunload) and can do nothing
	// else until it gets one (dialog_answer).
	CodeDialogOpen Code = "DIALOG_OPEN"
	// CodeInternal marks a bug: it is logged and still reported, never a crash.
	CodeInternal Code = "INTERNAL"
)

// AllCodes lists every code in the contract, for documentation and tests.
var AllCodes = []Code{
	CodeNoBackend, CodeExtensionDisconnected, CodeTimeout, CodeTabNotFound,
	CodeStaleTab, CodeSelectorNotFound, CodeRefExpired, CodeEvalFailed,
	CodeLaunchFailed, CodeDetached, CodeTargetGone, CodePolicyDenied,
	CodeDevtoolsOpen, CodeDownloadFailed, CodeBackpressure, CodeBadArgs,
	CodeDialogOpen,
}

// Error is the one typed error of the contract. Message is a one-line
// cause; Hint says what the caller should do next. Both are the server's
// own words: nothing a page wrote (its text, HTML, titles, option labels,
// a host it redirected to) goes into them. Page is where such words go,
// when they help: the server shows them to the model fenced as page
// content, apart from the message and the hint.
//
// An Error is the one value every edge renders: the MCP result's text and
// structured content, REST's error object and the Go client's error all
// come from it, and none of them parses another's text back. In JSON it is
//
//	{"code": "RATE_LIMITED", "message": "...", "hint": "...", "retry_after_ms": 12000, "page": "..."}
//
// with hint, retry_after_ms and page left out when empty.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// RetryAfter is how long to wait before the same call can succeed
	// (a rate limit); zero when waiting would not help. In JSON it is
	// retry_after_ms, whole milliseconds, rounded up.
	RetryAfter time.Duration `json:"-"`
	Page       string        `json:"page,omitempty"` // words a page wrote that explain the error; shown fenced, never in Message or Hint
	Err        error         `json:"-"`              // the underlying cause, if any; never shown verbatim to the model
}

// errorJSON is Error on the wire: RetryAfter as whole milliseconds.
type errorJSON struct {
	Code         Code   `json:"code"`
	Message      string `json:"message"`
	Hint         string `json:"hint,omitempty"`
	RetryAfterMs int64  `json:"retry_after_ms,omitempty"`
	Page         string `json:"page,omitempty"`
}

// MarshalJSON writes e as documented on Error.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(errorJSON{Code: e.Code, Message: e.Message, Hint: e.Hint, RetryAfterMs: wholeMs(e.RetryAfter), Page: e.Page})
}

// wholeMs is d in milliseconds, rounded up; 0 for d ≤ 0.
func wholeMs(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (e *Error) UnmarshalJSON(b []byte) error {
	var w errorJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*e = Error{Code: w.Code, Message: w.Message, Hint: w.Hint, RetryAfter: time.Duration(w.RetryAfterMs) * time.Millisecond, Page: w.Page}
	return nil
}

func (e *Error) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Hint)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// LogValue keeps an Error in a log what it always was, its Error() text,
// under any slog handler: a JSON handler would otherwise log MarshalJSON's
// object, page words included.
func (e *Error) LogValue() slog.Value { return slog.StringValue(e.Error()) }

// Is makes errors.Is(err, &Error{Code: X}) match on code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// WithHint returns a copy of e with the hint set.
func (e *Error) WithHint(hint string) *Error {
	c := *e
	c.Hint = hint
	return &c
}

// WithPage returns a copy of e with the page's words that explain it.
func (e *Error) WithPage(page string) *Error {
	c := *e
	c.Page = page
	return &c
}

// WithRetryAfter returns a copy of e that says when to retry.
func (e *Error) WithRetryAfter(d time.Duration) *Error {
	c := *e
	c.RetryAfter = d
	return &c
}

// Wrap attaches an underlying cause.
func (e *Error) Wrap(err error) *Error {
	c := *e
	c.Err = err
	return &c
}

// AsError returns err as an *Error. Context errors become TIMEOUT; any other
// error becomes INTERNAL with its text as the message.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeTimeout, Message: "the call ran out of time", Hint: "retry with a larger timeout_ms, or wait_for the condition first", Err: err}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Code: CodeTimeout, Message: "the call was cancelled", Err: err}
	}
	return &Error{Code: CodeInternal, Message: err.Error(), Err: err}
}

// CodeOf returns the code of err, or "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	return AsError(err).Code
}

// DefaultHint is what to do next for a code when the backend gave no hint.
func DefaultHint(c Code) string {
	switch c {
	case CodeNoBackend:
		return "run `chromegate doctor` to see what is missing"
	case CodeExtensionDisconnected:
		return "the extension went away; retry, and check that Chrome is running"
	case CodeTimeout:
		return "retry with a larger timeout_ms, or wait_for the condition first"
	case CodeTabNotFound:
		return "call tabs_list to see the open tabs"
	case CodeStaleTab:
		return "this tab id is from another browser session; call tabs_list and use a current id"
	case CodeSelectorNotFound:
		return "check the selector, or wait_for it to appear first"
	case CodeRefExpired:
		return "the page changed since the ref was issued; take a new snapshot"
	case CodeEvalFailed:
		return "fix the expression and retry"
	case CodeLaunchFailed:
		return "run `chromegate doctor` for the fix"
	case CodeDetached, CodeTargetGone:
		return "retry the call: the browser is reconnected or relaunched on the next call"
	case CodePolicyDenied:
		return "the policy forbids this; ask the operator to allow it"
	case CodeDevtoolsOpen:
		return "close DevTools on that tab, or use another tab"
	case CodeDownloadFailed:
		return "check the URL and that downloads are enabled"
	case CodeBackpressure:
		return "the link is saturated; retry shortly with smaller requests"
	case CodeBadArgs:
		return "fix the arguments as described and retry"
	case CodeDialogOpen:
		return "answer the dialog with dialog_answer (accept or dismiss), then retry"
	}
	return "retry; if it persists, report it with the server log"
}
