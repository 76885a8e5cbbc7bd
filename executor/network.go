package executor

import (
	"strings"
	"unicode/utf8"
)

// The network log: what a tab's page requested since its last main-frame
// navigation (or the last few), as the browser saw it. Every backend keeps
// it per tab in a ring of MaxNetworkEntries, starting a new generation at
// each main-frame document request (redirect hops excluded), and answers
// two primitives: Network lists the entries without headers, NetworkEntry
// returns one with its headers and, when asked, its response body.
//
// A backend reports what the browser saw: a request that failed is
// OutcomeFailed with the browser's error text. Telling which failures were
// the policy's is the caller's (mcp joins them with the egress boundary's
// denials), since the boundary, not the browser, knows why.

// Outcomes of a logged request.
const (
	OutcomeAllowed = "allowed" // a response arrived (any status)
	OutcomeFailed  = "failed"  // a network error, as the browser reported it
	OutcomeDenied  = "denied"  // the policy denied it (set by the caller's join)
	OutcomePending = "pending" // no response or failure yet
)

// MaxNetworkEntries bounds the requests a backend keeps per tab.
const MaxNetworkEntries = 1000

// MaxNetworkNavigations bounds how many navigations back a listing may
// reach.
const MaxNetworkNavigations = 10

// MaxBodyBytes is the cap of a response body returned by NetworkEntry, and
// its default.
const MaxBodyBytes = 64 << 10

// NetworkParams lists a tab's requests.
type NetworkParams struct {
	TabID string `json:"tabId,omitempty"`
	// Navigations is how many main-frame navigations back to reach: 0 or 1
	// = since the last one, up to MaxNetworkNavigations.
	Navigations int `json:"navigations,omitempty"`
}

// Header is one HTTP header; a list keeps repeated names (Set-Cookie).
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// NetworkRequest is one logged request.
type NetworkRequest struct {
	// ID names the entry for NetworkEntry; unique in the tab's session.
	ID           string `json:"id"`
	Method       string `json:"method"`
	URL          string `json:"url"`
	ResourceType string `json:"resourceType"`
	// Navigation: a document load of a frame of the tab.
	Navigation bool `json:"navigation,omitempty"`
	// Status is the HTTP status, 0 without a response.
	Status   int    `json:"status,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
	// Size is the response body's size in bytes as received, -1 unknown.
	Size int64 `json:"size"`
	// StartMs is when the request started, Unix milliseconds by the
	// server's clock where the backend can tell (a remote browser's clock
	// may differ), for joining with the egress boundary's decisions.
	StartMs int64 `json:"startMs"`
	// DurationMs is from start to the last byte or the failure, -1 while
	// pending.
	DurationMs int64  `json:"durationMs"`
	Outcome    string `json:"outcome"`
	// Error is the browser's failure text (net::ERR_...).
	Error string `json:"error,omitempty"`
	// Reason is why the policy denied it (set by the caller's join).
	Reason string `json:"reason,omitempty"`
	// Nav is the generation: the number of main-frame navigations of the
	// tab before this request, counted by the backend.
	Nav int `json:"nav"`
	// Doc is the document that made the request (source.go): the frame's
	// document for a subresource, the document it loads for a navigation.
	// Nil when the backend could not tell: the server withholds it.
	Doc *Source `json:"doc,omitempty"`

	// Headers, only in a NetworkEntry result, credentials redacted.
	RequestHeaders  []Header `json:"requestHeaders,omitempty"`
	ResponseHeaders []Header `json:"responseHeaders,omitempty"`
}

// NetworkLog is a tab's requests, oldest first.
type NetworkLog struct {
	PageState
	Requests []NetworkRequest `json:"requests"`
	// Nav is the tab's current generation (its main-frame navigations
	// counted by the backend); the entries are those with Nav above
	// Nav-Navigations.
	Nav int `json:"nav"`
	// Dropped counts requests of the listed navigations that the ring no
	// longer holds.
	Dropped int `json:"dropped,omitempty"`
}

// NetworkEntryParams asks for one request, by the ID a listing gave.
type NetworkEntryParams struct {
	TabID string `json:"tabId,omitempty"`
	ID    string `json:"id"`
	// Body asks for the response body: text only, cut at MaxBody bytes,
	// and only for a request whose outcome is allowed.
	Body    bool `json:"body,omitempty"`
	MaxBody int  `json:"maxBody,omitempty"` // 0 or over MaxBodyBytes = MaxBodyBytes
}

// NetworkEntry is one request with its headers and, when asked and
// available, its response body.
type NetworkEntry struct {
	PageState
	Request NetworkRequest `json:"request"`
	// Body is the response body as text (page content, untrusted), cut
	// at the cap; BodySize is the whole body's size in bytes.
	Body          string `json:"body,omitempty"`
	BodySize      int64  `json:"bodySize,omitempty"`
	BodyTruncated bool   `json:"bodyTruncated,omitempty"`
	// BodyNote says why no body is returned when one was asked for.
	BodyNote string `json:"bodyNote,omitempty"`
}

// credentialHeaders are redacted wherever headers leave a backend.
var credentialHeaders = map[string]bool{
	"cookie":              true,
	"cookie2":             true,
	"set-cookie":          true,
	"set-cookie2":         true,
	"authorization":       true,
	"proxy-authorization": true,
}

// Redacted replaces the value of a credential header.
const Redacted = "[redacted]"

// RedactHeaders returns hs with the values of credential headers (Cookie,
// Set-Cookie, Authorization, Proxy-Authorization) replaced by Redacted,
// sorted by name for a stable reading. hs is not changed.
func RedactHeaders(hs []Header) []Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]Header, len(hs))
	for i, h := range hs {
		if credentialHeaders[strings.ToLower(strings.TrimSpace(h.Name))] {
			h.Value = Redacted
		}
		out[i] = h
	}
	sortHeaders(out)
	return out
}

func sortHeaders(hs []Header) {
	// Insertion sort: header lists are short, and the order of repeated
	// names is kept.
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && strings.ToLower(hs[j].Name) < strings.ToLower(hs[j-1].Name); j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
}

// HeadersOf turns a header map into a list.
func HeadersOf(m map[string]string) []Header {
	out := make([]Header, 0, len(m))
	for k, v := range m {
		out = append(out, Header{Name: k, Value: v})
	}
	return out
}

// RedactURL drops the userinfo (user:password@) of an absolute URL.
func RedactURL(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		return scheme + "://" + rest[at+1:]
	}
	return raw
}

// TextBody decides whether a response body may be returned as text, and
// cuts it at max bytes (on a rune boundary). note is why not, when ok is
// false.
func TextBody(mime string, body []byte, max int) (text string, truncated bool, note string, ok bool) {
	if max <= 0 || max > MaxBodyBytes {
		max = MaxBodyBytes
	}
	if mime != "" && !textual(mime) {
		return "", false, "the body is not text (" + mime + "); only text bodies are returned", false
	}
	if len(body) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body, truncated = body[:cut], true
	}
	if !utf8.Valid(body) {
		return "", false, "the body is not UTF-8 text (" + orUnknown(mime) + "); only text bodies are returned", false
	}
	return string(body), truncated, "", true
}

func orUnknown(mime string) string {
	if mime == "" {
		return "no content type"
	}
	return mime
}

func textual(mime string) bool {
	m := strings.ToLower(strings.TrimSpace(mime))
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = strings.TrimSpace(m[:i])
	}
	switch {
	case strings.HasPrefix(m, "text/"),
		strings.HasSuffix(m, "+json"), strings.HasSuffix(m, "+xml"),
		m == "application/json", m == "application/javascript", m == "application/xml",
		m == "application/x-www-form-urlencoded", m == "application/ecmascript":
		return true
	}
	return false
}
