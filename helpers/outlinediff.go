package helpers

import (
	"strings"
)

// An outline's change is written a line per changed thing, each an outline
// line as Snapshot prints it (its indentation kept) after a two-character
// mark:
//
//	+ <line>   added: a new line, or a control that moved (its ref's line
//	           is now this one, here)
//	- <line>   removed
//	~ <line>   the same ref, its line changed (a value, a state, a name)
//
// Lines come in the new outline's order, a removed line where it was. A
// control of a run of links ("links (ref kq+number):" then "12 Guide")
// is written as the link line it stands for, "kq12 link Guide", so that
// every line of a change carries its whole ref; a run's head line is
// never part of a change. A client applies a change by ref: "-" forgets
// the ref, "+" and "~" set its line. Lines without a ref (headings,
// landmarks, text) are matched by their text and position.

// DefaultMaxEdits bounds the lines a change may add and remove before
// DiffOutlines gives up (the caller then sends the whole outline): a
// change of more lines is rarely shorter than the outline, and the diff's
// memory grows with the square of the bound.
const DefaultMaxEdits = 1000

// OutlineChange is the difference between two outlines of one document.
type OutlineChange struct {
	// Text is the change, a line each (see above); empty when nothing
	// changed.
	Text string
	// Added, Removed and Changed count its lines by mark.
	Added, Removed, Changed int
}

// outlineEntry is one line of an outline, as a change would print it,
// with the key it is matched by: its ref, or its text.
type outlineEntry struct {
	key  string
	line string
	ref  bool
}

// outlineEntries reads an outline as Snapshot prints it into entries: a
// run of links expanded to link lines, its head dropped; the server's
// notes ("[cut at line …]", "(nothing visible)") dropped.
func outlineEntries(outline string) []outlineEntry {
	if outline == "" || outline == "(nothing visible)" {
		return nil
	}
	lines := strings.Split(outline, "\n")
	out := make([]outlineEntry, 0, len(lines))
	list, listPad := "", ""
	for _, line := range lines {
		if strings.HasPrefix(line, "[cut at line ") {
			continue
		}
		body := strings.TrimLeft(line, " ")
		pad := line[:len(line)-len(body)]
		if tok, ok := strings.CutPrefix(body, "links (ref "); ok {
			if tok, ok = strings.CutSuffix(tok, "+number):"); ok && lettersEnd(tok) == len(tok) && tok != "" {
				list, listPad = tok, pad
				continue
			}
		}
		if list != "" {
			if n := digitsEnd(body); n > 0 && pad == listPad && (n == len(body) || body[n] == ' ') {
				ref := list + body[:n]
				out = append(out, outlineEntry{key: ref, line: pad + ref + " link" + body[n:], ref: true})
				continue
			}
			list = ""
		}
		if l := lettersEnd(body); l > 0 {
			// A ref then a quote is a cut run of text, with the ref
			// of the element holding it: text, not a control.
			if d := digitsEnd(body[l:]); d > 0 && l+d < len(body) && body[l+d] == ' ' && !strings.HasPrefix(body[l+d+1:], `"`) {
				out = append(out, outlineEntry{key: body[:l+d], line: line, ref: true})
				continue
			}
		}
		out = append(out, outlineEntry{key: "\x00" + line, line: line})
	}
	return out
}

// OutlineTokens returns the document tokens of an outline's refs (a ref is
// its document's token and a number): two outlines of the same document
// share one; an outline after the tab navigated shares none with the one
// before.
func OutlineTokens(outline string) map[string]bool {
	toks := map[string]bool{}
	for _, e := range outlineEntries(outline) {
		if e.ref {
			toks[strings.TrimRight(e.key, "0123456789")] = true
		}
	}
	return toks
}

// SameDocument says whether two outlines may be of one document: false
// only when both have refs and none of their document tokens is shared.
func SameDocument(a, b string) bool {
	ta, tb := OutlineTokens(a), OutlineTokens(b)
	if len(ta) == 0 || len(tb) == 0 {
		return true
	}
	for t := range ta {
		if tb[t] {
			return true
		}
	}
	return false
}

// DiffOutlines returns how outline after differs from before, two outlines
// of one document as Snapshot prints them. Lines are matched by ref where
// they have one and by text otherwise, along their longest common
// subsequence (Myers' algorithm, after the common head and tail are taken
// off). maxEdits bounds the work: when more than maxEdits lines were added
// and removed, ok is false and the caller should send the new outline
// instead, which is then no longer than the change would be. The cost is
// O((N+M)·D) time and O(D²) memory for D ≤ maxEdits edits.
func DiffOutlines(before, after string, maxEdits int) (c OutlineChange, ok bool) {
	a, b := outlineEntries(before), outlineEntries(after)
	// The common head and tail: most actions change one place.
	head := 0
	for head < len(a) && head < len(b) && a[head].key == b[head].key {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail].key == b[len(b)-1-tail].key {
		tail++
	}
	ops, ok := myers(a[head:len(a)-tail], b[head:len(b)-tail], maxEdits)
	if !ok {
		return OutlineChange{}, false
	}
	// A ref in both outlines that the subsequence did not match moved:
	// it is written once, as "+" where it is now.
	inAfter := map[string]bool{}
	for _, o := range ops {
		if o.kind == opAdd && b[head+o.j].ref {
			inAfter[b[head+o.j].key] = true
		}
	}
	var sb strings.Builder
	write := func(mark byte, line string) {
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteByte(mark)
		sb.WriteByte(' ')
		sb.WriteString(line)
	}
	same := func(i, j int) {
		if x, y := a[i], b[j]; x.ref && x.line != y.line {
			write('~', y.line)
			c.Changed++
		}
	}
	for i := range head {
		same(i, i)
	}
	for _, o := range ops {
		switch o.kind {
		case opSame:
			same(head+o.i, head+o.j)
		case opDel:
			if e := a[head+o.i]; !(e.ref && inAfter[e.key]) {
				write('-', e.line)
				c.Removed++
			}
		case opAdd:
			write('+', b[head+o.j].line)
			c.Added++
		}
	}
	for k := range tail {
		same(len(a)-tail+k, len(b)-tail+k)
	}
	c.Text = sb.String()
	return c, true
}

type opKind uint8

const (
	opSame opKind = iota
	opDel
	opAdd
)

// op is one step of an edit script: a[i] kept as b[j], a[i] deleted, or
// b[j] added.
type op struct {
	kind opKind
	i, j int
}

// myers returns the shortest edit script from a to b by key (Myers, "An
// O(ND) Difference Algorithm", 1986), or ok false when it needs more than
// max edits.
func myers(a, b []outlineEntry, max int) ([]op, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		if n+m > max {
			return nil, false
		}
		ops := make([]op, 0, n+m)
		for i := range n {
			ops = append(ops, op{kind: opDel, i: i})
		}
		for j := range m {
			ops = append(ops, op{kind: opAdd, j: j})
		}
		return ops, true
	}
	limit := min(max, n+m)
	off := limit + 1
	v := make([]int32, 2*limit+3)
	// trace[d] is the part of v step d reads (k from -d-1 to d+1), as it
	// was before step d, for the walk back.
	var trace [][]int32
	found := -1
	for d := 0; d <= limit && found < 0; d++ {
		trace = append(trace, append([]int32(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1]) // down: an addition
			} else {
				x = int(v[off+k-1]) + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x].key == b[y].key {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return nil, false
	}
	var rev []op
	x, y := n, m
	for d := found; d >= 0; d-- {
		row := trace[d]
		at := func(k int) int { return int(row[k+d+1]) }
		k := x - y
		pk := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, op{kind: opSame, i: x, j: y})
		}
		if d > 0 {
			if x == px {
				rev = append(rev, op{kind: opAdd, j: py})
			} else {
				rev = append(rev, op{kind: opDel, i: px})
			}
		}
		x, y = px, py
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev, true
}

// lettersEnd is the length of s's leading run of a-z.
func lettersEnd(s string) int {
	i := 0
	for i < len(s) && s[i] >= 'a' && s[i] <= 'z' {
		i++
	}
	return i
}

// digitsEnd is the length of s's leading run of 0-9.
func digitsEnd(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
