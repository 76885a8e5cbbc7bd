package executor

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The console log: what a tab's pages wrote to the console (console.log and
// its levels) and the exceptions nobody caught (an uncaught error, an
// unhandled promise rejection), since the tab's last main-frame navigation
// or the last few. Every backend keeps it per tab in a ConsoleRing: at most
// MaxConsoleEntries messages, each cut to MaxConsoleText bytes of text and
// MaxConsoleStack bytes of stack, so a page that logs in a loop, or logs
// ten megabytes at once, costs a bounded amount of memory. Generations are
// the network log's (a main-frame document request starts one), so that
// Console and Network with the same Navigations cover the same pages.

// Console log bounds.
const (
	MaxConsoleEntries     = 1000
	MaxConsoleText        = 4 << 10
	MaxConsoleStack       = 4 << 10
	MaxConsoleNavigations = MaxNetworkNavigations
)

// The levels of a console message, as the console tools name them.
const (
	LevelDebug = "debug"
	LevelLog   = "log"
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
)

// ConsoleLevels lists the levels, least severe first.
var ConsoleLevels = []string{LevelDebug, LevelLog, LevelInfo, LevelWarn, LevelError}

// ConsoleLevel maps a console API call's type (CDP's Runtime.consoleAPICalled
// type, Playwright's ConsoleMessage.Type) to a level.
func ConsoleLevel(typ string) string {
	switch typ {
	case "debug", "verbose":
		return LevelDebug
	case "info":
		return LevelInfo
	case "warning", "warn":
		return LevelWarn
	case "error", "assert":
		return LevelError
	default: // log, dir, table, trace, count, timeEnd, ...
		return LevelLog
	}
}

// ConsoleParams lists a tab's console messages.
type ConsoleParams struct {
	TabID string `json:"tabId,omitempty"`
	// Navigations is how many main-frame navigations back to reach: 0 or
	// 1 = since the last one, up to MaxConsoleNavigations.
	Navigations int `json:"navigations,omitempty"`
}

// ConsoleMessage is one message or uncaught exception.
type ConsoleMessage struct {
	// ID is unique in the tab's session and grows with time.
	ID    string `json:"id"`
	Level string `json:"level"`
	// Exception marks an uncaught exception or unhandled rejection
	// (Level error).
	Exception bool   `json:"exception,omitempty"`
	Text      string `json:"text"`
	// TextBytes is the text's whole length when it was cut.
	TextBytes int `json:"textBytes,omitempty"`
	// URL, Line and Column are where the message came from (1-based;
	// zero when the browser did not say).
	URL    string `json:"url,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Stack  string `json:"stack,omitempty"`
	// Page is the URL of the tab's document when it was logged: the
	// caller decides on it whether the message may be shown.
	Page string `json:"page,omitempty"`
	// Doc is the document that logged it, by its execution context
	// (source.go); nil when the backend could not tell.
	Doc    *Source `json:"doc,omitempty"`
	TimeMs int64   `json:"timeMs"`
	Nav    int     `json:"nav"`
}

// ConsoleLog is a tab's console messages, oldest first.
type ConsoleLog struct {
	PageState
	Messages []ConsoleMessage `json:"messages"`
	// Nav is the tab's current generation.
	Nav int `json:"nav"`
	// Dropped counts messages of the listed navigations the ring let go.
	Dropped int `json:"dropped,omitempty"`
}

// BoundConsole cuts a message's text and stack to their caps on a UTF-8
// boundary, recording the text's whole length, and drops the userinfo of
// its URLs. Every backend applies it where a message is recorded, and the
// Go side once more on what a wire carried.
func BoundConsole(m ConsoleMessage) ConsoleMessage {
	if len(m.Text) > MaxConsoleText {
		if m.TextBytes == 0 {
			m.TextBytes = len(m.Text)
		}
		m.Text = cutUTF8(m.Text, MaxConsoleText)
	}
	if len(m.Stack) > MaxConsoleStack {
		m.Stack = cutUTF8(m.Stack, MaxConsoleStack)
	}
	m.URL, m.Page = RedactURL(cutUTF8(m.URL, 2048)), RedactURL(cutUTF8(m.Page, 2048))
	if m.Doc != nil {
		d := *m.Doc
		d.URL = RedactURL(cutUTF8(d.URL, 2048))
		m.Doc = &d
	}
	return m
}

func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ConsoleRing is a tab's console log as a backend keeps it: bounded in
// messages and in bytes per message. Safe for concurrent use.
type ConsoleRing struct {
	mu      sync.Mutex
	max     int
	next    int
	ring    []ConsoleMessage // oldest first
	dropped map[int]int      // messages of a generation the ring let go
}

// NewConsoleRing returns a ring of at most max messages (0:
// MaxConsoleEntries).
func NewConsoleRing(max int) *ConsoleRing {
	if max <= 0 {
		max = MaxConsoleEntries
	}
	return &ConsoleRing{max: max, dropped: map[int]int{}}
}

// Add records m, bounded (BoundConsole), in generation m.Nav, giving it its
// ID. Generations more than MaxConsoleNavigations behind m.Nav are let go.
func (r *ConsoleRing) Add(m ConsoleMessage) {
	m = BoundConsole(m)
	r.mu.Lock()
	defer r.mu.Unlock()
	old := m.Nav - MaxConsoleNavigations
	n := 0
	for n < len(r.ring) && r.ring[n].Nav <= old {
		n++
	}
	if n > 0 {
		r.ring = append(r.ring[:0:0], r.ring[n:]...)
	}
	for g := range r.dropped {
		if g <= old {
			delete(r.dropped, g)
		}
	}
	r.next++
	m.ID = strconv.Itoa(r.next)
	if len(r.ring) >= r.max {
		r.dropped[r.ring[0].Nav]++
		r.ring[0] = ConsoleMessage{}
		r.ring = r.ring[1:]
	}
	r.ring = append(r.ring, m)
}

// List returns the messages of the last n generations before and at nav
// (the tab's current one), and how many of them the ring let go.
func (r *ConsoleRing) List(nav, n int) (ms []ConsoleMessage, dropped int) {
	n = max(1, min(n, MaxConsoleNavigations))
	from := nav - n + 1
	r.mu.Lock()
	defer r.mu.Unlock()
	for g := max(from, 0); g <= nav; g++ {
		dropped += r.dropped[g]
	}
	ms = []ConsoleMessage{}
	for _, m := range r.ring {
		if m.Nav >= from && m.Nav <= nav {
			ms = append(ms, m)
		}
	}
	return ms, dropped
}

// StackLocation is where a JavaScript stack's first frame is: its URL,
// line and column ("    at f (https://x.test/a.js:3:9)" or
// "    at https://x.test/a.js:3:9"). Zero values when it names none.
func StackLocation(stack string) (url string, line, col int) {
	for _, l := range strings.Split(stack, "\n") {
		l = strings.TrimSpace(l)
		rest, ok := strings.CutPrefix(l, "at ")
		if !ok {
			continue
		}
		if i := strings.LastIndexByte(rest, '('); i >= 0 && strings.HasSuffix(rest, ")") {
			rest = rest[i+1 : len(rest)-1]
		}
		c := strings.LastIndexByte(rest, ':')
		if c < 0 {
			return "", 0, 0
		}
		l2 := strings.LastIndexByte(rest[:c], ':')
		if l2 < 0 {
			return "", 0, 0
		}
		ln, err1 := strconv.Atoi(rest[l2+1 : c])
		cn, err2 := strconv.Atoi(rest[c+1:])
		if err1 != nil || err2 != nil || l2 == 0 {
			return "", 0, 0 // no numbers, or numbers of no URL ("at f (:3:9)")
		}
		return rest[:l2], ln, cn
	}
	return "", 0, 0
}
