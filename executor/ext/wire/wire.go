package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/chromegate/chromegate/executor/egress"
)

// Version is the protocol version every frame carries ("v").
const Version = 1

// MaxFrameBytes bounds one frame read from the extension. Screenshots are the
// largest legitimate frames (a capped full-page PNG, base64-encoded).
const MaxFrameBytes = 64 << 20

// MaxHelloBytes bounds the frames read before a connection is
// authenticated: a hello is a token, an id and a version. Anyone local can
// open a connection, so until the hello is verified the bridge reads no
// more than this; MaxFrameBytes applies only once it is welcomed.
const MaxHelloBytes = 8 << 10

// Frame types of the wire protocol (see extension/PROTOCOL.md).
const (
	TypeHello        = "hello"
	TypeWelcome      = "welcome"
	TypeUnauthorized = "unauthorized"
	TypeCommand      = "command"
	TypeResult       = "result"
	TypeError        = "error"
	TypeCancel       = "cancel"
	TypeEvent        = "event"
	TypePing         = "ping"
	TypePong         = "pong"
	// TypeDecide asks the server to decide a request of a driven tab
	// (ext -> server); TypeDecision answers it (server -> ext).
	TypeDecide   = "decide"
	TypeDecision = "decision"
)

// Close codes the bridge uses.
const (
	CloseUnauthorized = 4401 // bad token, version, code or extension id; no hello in time
	CloseProtocol     = 4400 // a malformed frame after welcome
	CloseSuperseded   = 4409 // a newer authenticated connection took over
	CloseRotated      = 4410 // the token was rotated: re-pair
)

// Frame is one wire message. Only the fields of its Type are set; the rest
// stay zero and are omitted when encoded.
type Frame struct {
	V    int    `json:"v"`
	Type string `json:"type"`

	// hello
	Token string   `json:"token,omitempty"`
	Code  string   `json:"code,omitempty"`
	Ext   *ExtInfo `json:"ext,omitempty"`

	// welcome
	SessionID   string            `json:"sessionId,omitempty"`
	HeartbeatMs int               `json:"heartbeatMs,omitempty"`
	Server      *ServerInfo       `json:"server,omitempty"`
	Scripts     map[string]string `json:"scripts,omitempty"`
	// NewToken is sent in welcome only to an extension that paired with a
	// code: it keeps it for reconnecting. The field shares the hello's
	// "token" name on the wire, see MarshalJSON.
	NewToken string `json:"-"`

	// unauthorized
	Reason string `json:"reason,omitempty"`

	// command, result, error, cancel, ping, pong
	ID        string          `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	TabID     *string         `json:"tabId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	TimeoutMs int64           `json:"timeoutMs,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Error     *Error          `json:"error,omitempty"`

	// event
	Event string `json:"event,omitempty"`

	// decide (the request) and decision (allow; the reason of a denial is
	// in Reason)
	// decide frames carry egress.Request, the one request type from
	// here to the policy; only its JSON-named fields come from the
	// extension.
	Request *egress.Request `json:"request,omitempty"`
	Allow   bool            `json:"allow,omitempty"`
}

// ExtInfo is what the extension says about itself in hello.
type ExtInfo struct {
	ID      string `json:"id"`
	Version string `json:"version,omitempty"`
	Browser string `json:"browser,omitempty"`
}

// ServerInfo names the server in welcome.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Error is the error of an error frame; Code is an executor code.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// Page holds words a page wrote that explain the error (an option's
	// label, what covers an element); the server shows them fenced.
	Page string `json:"page,omitempty"`
	// Ref, when set, is a ref the page's registry refused: the server words
	// the error (executor.RefError) in place of Code, Message and Hint.
	Ref *RefFailure `json:"ref,omitempty"`
}

// RefFailure is a registry lookup failure of a ref, as the element script
// reports it: Failure is "malformed", "expired" (Why "navigated" or
// "removed") or "unknown".
type RefFailure struct {
	Ref     string `json:"ref"`
	Failure string `json:"failure"`
	Why     string `json:"why,omitempty"`
}

// MarshalJSON writes NewToken under the wire name "token".
func (f Frame) MarshalJSON() ([]byte, error) {
	type plain Frame
	if f.NewToken != "" {
		f.Token = f.NewToken
	}
	return json.Marshal(plain(f))
}

// Decode parses one frame strictly: a JSON object with v == 1, a known
// shape for its type and no trailing data. Field names are matched
// case-sensitively, so "Token" can never stand in for "token".
func Decode(b []byte) (Frame, error) {
	var f Frame
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return f, fmt.Errorf("frame is not a JSON object")
	}
	if len(b) > MaxFrameBytes {
		return f, fmt.Errorf("frame of %d bytes is over the %d byte limit", len(b), MaxFrameBytes)
	}
	if err := checkFieldCase(b); err != nil {
		return f, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&f); err != nil {
		return Frame{}, fmt.Errorf("frame is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Frame{}, fmt.Errorf("frame has data after its JSON object")
	}
	if f.V != Version {
		return Frame{}, fmt.Errorf("frame has version %d, want %d", f.V, Version)
	}
	switch f.Type {
	case TypeResult, TypeError, TypeCommand, TypeCancel, TypeDecide, TypeDecision:
		if f.ID == "" {
			return Frame{}, fmt.Errorf("%s frame has no id", f.Type)
		}
	}
	if f.Type == TypeDecide && f.Request == nil {
		return Frame{}, fmt.Errorf("decide frame has no request")
	}
	if f.Type == TypeError && f.Error == nil {
		return Frame{}, fmt.Errorf("error frame has no error")
	}
	if f.Type == "" {
		return Frame{}, fmt.Errorf("frame has no type")
	}
	return f, nil
}

// wireNames are the frame's JSON field names; checkFieldCase refuses any
// top-level key that equals one of them only when case is ignored, since
// encoding/json would otherwise fold "TOKEN" onto "token".
var wireNames = func() map[string]string {
	names := []string{"v", "type", "token", "code", "ext", "sessionId", "heartbeatMs", "server", "scripts",
		"reason", "id", "method", "tabId", "params", "timeoutMs", "data", "error", "event", "request", "allow"}
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[lower(n)] = n
	}
	return m
}()

func lower(s string) string { return string(bytes.ToLower([]byte(s))) }

func checkFieldCase(b []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return fmt.Errorf("frame is not valid JSON: %v", err)
	}
	for k := range top {
		if want, ok := wireNames[lower(k)]; ok && want != k {
			return fmt.Errorf("frame field %q differs from %q only in case", k, want)
		}
	}
	return nil
}
