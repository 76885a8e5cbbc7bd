package executor

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// TabIDs stamps raw backend tab ids as "<backend>:<session>:<raw>" and checks
// them on the way back, so an id from another backend or from an earlier
// browser session is refused with STALE_TAB instead of reaching the wrong tab.
// The zero value is not useful; use NewTabIDs.
type TabIDs struct {
	Backend string
	Session string
}

// NewTabIDs returns a stamper for a fresh session of backend: every launch or
// attach gets a new random session, so ids never survive a relaunch.
func NewTabIDs(backend string) TabIDs {
	return TabIDs{Backend: backend, Session: NewSessionID()}
}

// NewSessionID returns 8 random hex characters.
func NewSessionID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// Stamp turns a raw backend id into a public tab id.
func (s TabIDs) Stamp(raw string) string {
	return s.Backend + ":" + s.Session + ":" + raw
}

// Raw returns the backend's raw id for a public tab id. An empty id is passed
// through (it means the selected tab). A well-formed id from another backend
// or session is STALE_TAB; anything else is TAB_NOT_FOUND.
func (s TabIDs) Raw(id string) (string, error) {
	if id == "" {
		return "", nil
	}
	backend, rest, ok1 := strings.Cut(id, ":")
	session, raw, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || backend == "" || session == "" || raw == "" {
		return "", Errorf(CodeTabNotFound, "%q is not a tab id", id).
			WithHint("tab ids look like cdp:1a2b3c4d:1; call tabs_list for the current ones")
	}
	if backend != s.Backend || session != s.Session {
		return "", Errorf(CodeStaleTab, "tab id %q belongs to an earlier or different browser session", id).
			WithHint("call tabs_list and use a current id")
	}
	return raw, nil
}
