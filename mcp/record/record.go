// Package record keeps a session's record: one JSON line per tool call
// (redacted by the server before it gets here) and a small JPEG after each
// acting call, append-only in a directory only its owner can read; and
// reads it back for the report (Report) and the recipe (Export).
package record

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/chromegate/chromegate/executor"
)

// File names inside a record directory.
const (
	CallsFile = "calls.jsonl"
	shotsDir  = "shots"
)

// DefaultMaxBytes caps one record (its lines and its images together).
// At the cap a last line says so (Entry.Truncated) and the record stops
// growing; the calls go on.
const DefaultMaxBytes = 64 << 20

// Entry is one call as recorded. Everything in it a page could have
// written (URL, title, summary, reasons, element names) is data: the
// report escapes it.
type Entry struct {
	Seq        int       `json:"seq"`
	Time       time.Time `json:"time"`
	DurationMs int64     `json:"duration_ms"`
	Session    string    `json:"session,omitempty"`
	Principal  string    `json:"principal,omitempty"`
	Tool       string    `json:"tool"`
	// Plugin names the plugin tool this call is a step of.
	Plugin string `json:"plugin,omitempty"`
	Action string `json:"action,omitempty"`
	// Acting marks a call that may change the page (not read-only).
	Acting bool `json:"acting,omitempty"`
	// Args are the call's arguments with typed text, fill values, cookies
	// and anything named like a secret replaced by "[redacted]"; a
	// <secret:NAME> reference is kept as written.
	Args map[string]any `json:"args,omitempty"`
	// Decision is allow, deny (the policy refused: Reasons say why) or
	// error (allowed, then failed: Code and Message).
	Decision string   `json:"decision"`
	Code     string   `json:"code,omitempty"`
	Message  string   `json:"message,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
	// Summary is the start of the result's JSON, bounded.
	Summary string `json:"summary,omitempty"`
	URL     string `json:"url,omitempty"`
	Title   string `json:"title,omitempty"`
	// Screenshot is the image's path inside the record directory.
	Screenshot string `json:"screenshot,omitempty"`
	// Target is what the call's ref pointed at when it ran; Fields the
	// same for each field of a fill_form (nil where a field had none).
	Target *Element   `json:"target,omitempty"`
	Fields []*Element `json:"fields,omitempty"`
	// Denied are the page requests the policy blocked during the call.
	Denied []Request `json:"denied_requests,omitempty"`
	// Console are the console errors and uncaught exceptions the tab's
	// page logged since the entry before (screened and scrubbed).
	Console []string `json:"console_errors,omitempty"`
	// Truncated marks the line written at the size cap: nothing follows.
	Truncated bool `json:"truncated,omitempty"`
}

// Element describes the element a ref named, for a selector that finds it
// again without the ref.
type Element struct {
	Tag         string `json:"tag,omitempty"`
	Type        string `json:"type,omitempty"`
	Role        string `json:"role,omitempty"`
	Name        string `json:"name,omitempty"` // accessible name
	Label       string `json:"label,omitempty"`
	ID          string `json:"id,omitempty"`
	NameAttr    string `json:"name_attr,omitempty"`
	TestID      string `json:"testid,omitempty"`
	AriaLabel   string `json:"aria_label,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
}

// Request is a page request the policy denied.
type Request struct {
	Method string `json:"method,omitempty"`
	URL    string `json:"url"`
	Reason string `json:"reason,omitempty"`
}

// Writer appends entries to one record directory. It is safe for
// concurrent use. It never fails a call: the first error is reported
// through the onErr function given to Open, and the Writer stops.
type Writer struct {
	mu      sync.Mutex
	dir     string
	path    string
	size    int64
	max     int64
	seq     int
	stopped bool
	onErr   func(error)
}

// Open creates (0700) or reopens dir and its calls file (0600, append).
// maxBytes <= 0 means DefaultMaxBytes.
func Open(dir string, maxBytes int64, onErr func(error)) (*Writer, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if err := os.MkdirAll(filepath.Join(dir, shotsDir), 0o700); err != nil {
		return nil, fmt.Errorf("record %s: %w", dir, err)
	}
	for _, d := range []string{dir, filepath.Join(dir, shotsDir)} {
		if err := os.Chmod(d, 0o700); err != nil {
			return nil, fmt.Errorf("record %s: %w", dir, err)
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, CallsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", dir, err)
	}
	// The file is opened for each line, not held: a server with many
	// sessions holds no descriptor per session.
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("record %s: %w", dir, err)
	}
	w := &Writer{dir: dir, path: filepath.Join(dir, CallsFile), size: fi.Size(), max: maxBytes, onErr: onErr}
	w.seq = countLines(w.path)
	if onErr == nil {
		w.onErr = func(error) {}
	}
	return w, nil
}

func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		n++
	}
	return n
}

// Dir is the record's directory.
func (w *Writer) Dir() string { return w.dir }

// Write appends e (numbered and, when shot is not empty, with its image
// saved beside it). It reports whether it was written.
func (w *Writer) Write(e Entry, shot []byte) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return false
	}
	w.seq++
	e.Seq = w.seq
	if len(shot) > 0 && w.size+int64(len(shot)) < w.max-maxLine {
		name := filepath.Join(shotsDir, fmt.Sprintf("%06d.jpg", e.Seq))
		if err := os.WriteFile(filepath.Join(w.dir, name), shot, 0o600); err != nil {
			w.fail(err)
			return false
		}
		w.size += int64(len(shot))
		e.Screenshot = filepath.ToSlash(name)
	}
	line, err := json.Marshal(e)
	if err != nil {
		w.fail(err)
		return false
	}
	if len(line) > maxLine {
		e.Summary, e.Args = "", map[string]any{"(args)": "too large to record"}
		line, _ = json.Marshal(e)
	}
	if w.size+int64(len(line))+1 > w.max-maxLine {
		end, _ := json.Marshal(Entry{Seq: e.Seq, Time: e.Time, Tool: e.Tool, Decision: e.Decision, Truncated: true})
		w.append(end)
		w.stopped = true
		return false
	}
	return w.append(line)
}

// maxLine bounds one line: a call's arguments can be large (fill_form).
const maxLine = 256 << 10

func (w *Writer) append(line []byte) bool {
	line = append(line, '\n')
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err == nil {
		_, err = f.Write(line)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		w.fail(err)
		return false
	}
	w.size += int64(len(line))
	return true
}

func (w *Writer) fail(err error) {
	w.stopped = true
	w.onErr(err)
}

// Close stops the Writer: later writes are dropped. It may be called
// more than once, concurrently.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	return nil
}

// Record is a record read back.
type Record struct {
	Dir     string
	Entries []Entry
}

// Read reads the record in dir. A torn last line (the server stopped
// mid-write) is skipped.
func Read(dir string) (*Record, error) {
	f, err := os.Open(filepath.Join(dir, CallsFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is not a chromegate record (no %s); records are per session: look in its subdirectories", dir, CallsFile)
		}
		return nil, err
	}
	defer f.Close()
	r := &Record{Dir: dir}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 2*maxLine)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue
		}
		r.Entries = append(r.Entries, e)
	}
	return r, sc.Err()
}

// Image reads the screenshot of e, if it has one inside the record.
func (r *Record) Image(e Entry) []byte {
	if e.Screenshot == "" || !shotName.MatchString(e.Screenshot) {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, filepath.FromSlash(e.Screenshot)))
	if err != nil {
		return nil
	}
	return b
}

var shotName = regexp.MustCompile(`^shots/[0-9]{6}\.jpg$`)

// SessionDir is the directory of one session's record under root:
// root/PRINCIPAL/SESSION, PRINCIPAL encoded by executor.TenantDir, which
// no two principals share (a key "alice" and a key "alice." have records
// of their own), SESSION by sessionName. SESSION
// is "default" for the server's default session (stdio), mcp-ID for an MCP
// session over HTTP (ID: its Mcp-Session-Id), named-NAME for a key's named
// session.
// The server's default session (stdio's) is "default".
func SessionDir(root, principal, session string) string {
	switch {
	case session == "":
		session = "default"
	case strings.HasPrefix(session, "named:"+principal+":"):
		session = "named-" + strings.TrimPrefix(session, "named:"+principal+":")
	case strings.HasPrefix(session, "mcp:"):
		session = "mcp-" + strings.TrimPrefix(session, "mcp:")
	}
	return filepath.Join(root, executor.TenantDir(principal), sessionName(session))
}

// sessionName is a session's directory name: its letters (of either case:
// an MCP session id is upper-case base32), digits, '-' and '_' as they
// are, every other byte %XX, so that no two sessions share a directory.
func sessionName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if b.Len() == 0 || b.Len() > 120 {
		return executor.TenantDir(s) // empty, or cut with a hash
	}
	return b.String()
}
