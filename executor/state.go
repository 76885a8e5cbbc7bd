package executor

import (
	"context"
	"encoding/json"
)

// StorageState is a browser context's cookies and the storage of its
// origins, in Playwright's storageState format, so a file Playwright's
// tooling saved loads here and one saved here loads in Playwright:
//
//	{"cookies": [{name, value, domain, path, expires, httpOnly, secure, sameSite}],
//	 "origins": [{"origin", "localStorage": [{name, value}], "indexedDB": [...]}]}
//
// sessionStorage is an extra field of each origin, which Playwright
// ignores. IndexedDB is Playwright's own encoding (≥ 1.51), carried as is.
type StorageState struct {
	Cookies []StateCookie `json:"cookies"`
	Origins []OriginState `json:"origins"`
}

// StateCookie is a cookie as Playwright's storageState writes it: every
// field present. Expires is Unix seconds, -1 for a session cookie.
type StateCookie struct {
	Name     string  `json:"name"`
	Value    string  `json:"value"`
	Domain   string  `json:"domain"`
	Path     string  `json:"path"`
	Expires  float64 `json:"expires"`
	HTTPOnly bool    `json:"httpOnly"`
	Secure   bool    `json:"secure"`
	SameSite string  `json:"sameSite"` // Strict | Lax | None
}

// OriginState is the storage of one origin ("scheme://host[:port]").
type OriginState struct {
	Origin       string      `json:"origin"`
	LocalStorage []NameValue `json:"localStorage"`
	// SessionStorage is chromegate's: a tab's sessionStorage for the
	// origin, read from an open tab of it (Playwright has no field for it
	// and ignores this one).
	SessionStorage []NameValue `json:"sessionStorage,omitempty"`
	// IndexedDB is Playwright's serialisation of the origin's databases,
	// [{name, version, stores: [...]}], kept as it came.
	IndexedDB json.RawMessage `json:"indexedDB,omitempty"`
}

// NameValue is one storage entry.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// StorageStateParams says what StorageState reads.
type StorageStateParams struct {
	// IndexedDB includes each origin's IndexedDB databases.
	IndexedDB bool `json:"indexedDB,omitempty"`
}

// StateStore is an optional capability of an Executor that can read and
// write a whole context's storage state without the caller's tabs: every
// origin the context has storage for, not only those of open tabs, and
// IndexedDB. The cdp backend has it (Playwright's storageState and
// setStorageState); a caller without it composes the state from Cookies,
// SetCookies and scripts in the open tabs (helpers.SaveState).
//
// Implementations must be safe for concurrent use.
type StateStore interface {
	// StorageState reads the context's cookies and the localStorage (and,
	// when asked, IndexedDB) of every origin it has visited.
	StorageState(ctx context.Context, p StorageStateParams) (StorageState, error)
	// SetStorageState makes st the context's state: its cookies replace
	// the context's, and each origin's localStorage and IndexedDB replace
	// what that origin had (origins the context visited that st does not
	// name are cleared). No tab the caller sees is navigated, and no
	// request leaves the browser. SessionStorage is not touched.
	SetStorageState(ctx context.Context, st StorageState) error
}
