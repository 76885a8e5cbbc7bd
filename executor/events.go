package executor

// Events hears what happens to the browsers and sessions behind the
// calls, for the operator's metrics (cmd/chromegate/internal/metrics),
// without this package or a backend importing a metrics library: the
// wiring sets it on the Manager (ManagerOptions.Events) and on a backend
// that starts browsers (cdp.Options.Events). Methods are called on the
// goroutine where the event happened, may be called concurrently, and
// must not block.
//
// The rule: what an Events is given is a backend's name and a Manager
// session's key; the receiver maps a key to its kind (a closed set)
// before it counts anything by it.
type Events interface {
	// Launched: backend started (launched, or attached to) a browser, or
	// failed to (err says why).
	Launched(backend string, err error)
	// Crashed: a browser backend had started ended without the server
	// closing it (it crashed, was killed or disconnected); the next call
	// starts another.
	Crashed(backend string)
	// SessionOpened: the Manager opened session's executor on backend
	// (a browser context).
	SessionOpened(backend, session string)
	// SessionClosed: the Manager let go of session's executor on
	// backend: closed, gone with its browser, or dropped after it failed
	// its ping.
	SessionClosed(backend, session string)
	// SessionLost: session's executor on backend was let go because it
	// died (LostGone) or stopped answering (LostUnresponsive), not because
	// the server closed it; the session's next call reopens it (the
	// Manager's self-heal). SessionClosed follows.
	SessionLost(backend, session, why string)
}

// Why a Manager lost an executor (Events.SessionLost).
const (
	LostGone         = "gone"         // its browser or connection died
	LostUnresponsive = "unresponsive" // it failed its ping
)

// NoEvents is an Events that hears nothing.
type NoEvents struct{}

func (NoEvents) Launched(string, error)             {}
func (NoEvents) Crashed(string)                     {}
func (NoEvents) SessionOpened(string, string)       {}
func (NoEvents) SessionClosed(string, string)       {}
func (NoEvents) SessionLost(string, string, string) {}

var _ Events = NoEvents{}
