package policy

import (
	"strings"
	"time"
)

// A page can make requests the policy denies in a loop, thousands a
// second, and each is a decision: written one line each, the decision log
// of one tab grew by a gigabyte an hour. So request denials are counted
// per kind — principal, session, page host, target host, hook and reasons
// — in windows of DenialWindow: the first denial of a kind is written at
// once (an operator watching the log sees it when it happens), the
// repeats within the window become one line with their count, written
// when the window ends or the log is closed. At most maxDenialWindows
// kinds are told apart at once; denials of further kinds count together
// per principal and session, under the target host "*". Call decisions
// stay one line each.

// DenialWindow is how long repeats of a request denial are counted into
// one line.
const DenialWindow = 10 * time.Second

// maxDenialWindows bounds the kinds of denial counted apart at once (a
// page may ask for a new host name each time).
const maxDenialWindows = 256

// otherHosts is the target host of the line that counts the denials past
// maxDenialWindows.
const otherHosts = "*"

type denialKey struct {
	principal, session, page, host, via, reasons string
}

func keyOf(e LogEntry) denialKey {
	return denialKey{e.Principal, e.Session, e.PageHost, e.TargetHost, e.Via, strings.Join(e.Reasons, "\x00")}
}

// denialCount is one open window: the repeats seen in it.
type denialCount struct {
	until  time.Time
	repeat LogEntry // the first repeat, written with Count and Until
	n      int
	last   time.Time
}

// denials counts request denials for a decisionLog; its methods run with
// the log's mutex held.
type denials struct {
	window time.Duration // zero: every denial is a line
	open   map[denialKey]*denialCount
	// after schedules f (time.AfterFunc); a test may run it by hand.
	after  func(d time.Duration, f func())
	closed bool
}

// note reports whether the denial e is to be written now; if not, it is
// counted into its window's line.
func (d *denials) note(l *decisionLog, e LogEntry) bool {
	if d.window <= 0 || d.closed {
		return true
	}
	if d.open == nil {
		d.open = map[denialKey]*denialCount{}
	}
	k := keyOf(e)
	if c, ok := d.open[k]; ok {
		if e.Time.Before(c.until) {
			c.add(e)
			return false
		}
		d.flush(l, k, c) // its timer is late
	}
	if _, ok := d.open[k]; !ok && len(d.open) >= maxDenialWindows {
		k = denialKey{principal: e.Principal, session: e.Session, host: otherHosts}
		e.TargetHost, e.Address, e.Reasons = otherHosts, "", []string{"denials of more kinds than the log counts apart at once"}
		if c, ok := d.open[k]; ok && e.Time.Before(c.until) {
			c.add(e)
			return false
		}
	}
	d.open[k] = &denialCount{until: e.Time.Add(d.window)}
	after := d.after
	if after == nil {
		after = func(w time.Duration, f func()) { time.AfterFunc(w, f) }
	}
	after(d.window+time.Millisecond, func() { l.flushDue(time.Now()) })
	return true
}

func (c *denialCount) add(e LogEntry) {
	if c.n == 0 {
		c.repeat = e
	}
	c.n++
	c.last = e.Time
}

// flush writes k's repeats, if any, and closes its window.
func (d *denials) flush(l *decisionLog, k denialKey, c *denialCount) {
	delete(d.open, k)
	if c.n == 0 {
		return
	}
	e := c.repeat
	e.Count, e.Until = c.n, &c.last
	if err := l.emit(e); err != nil && l.onErr != nil {
		l.onErr(err)
	}
}

// flushDue writes the lines of the windows that ended by now.
func (l *decisionLog) flushDue(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, c := range l.denials.open {
		if !now.Before(c.until) {
			l.denials.flush(l, k, c)
		}
	}
}

// close writes every open window's line; denials after it are a line each.
func (l *decisionLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, c := range l.denials.open {
		l.denials.flush(l, k, c)
	}
	l.denials.closed = true
}
