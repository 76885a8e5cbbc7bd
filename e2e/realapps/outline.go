package realapps

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Control is one actionable line of an outline: what the agent can find and
// act on.
type Control struct {
	Ref  string
	Role string
	Name string
	// Line is the whole line as shown (role, name and states).
	Line string
}

var (
	cgLine     = regexp.MustCompile(`^( *)([a-z]+[0-9]+) (\S+)(?: (.*))?$`)
	cgListHead = regexp.MustCompile(`^( *)links \(ref ([a-z]+)\+number\):$`)
	cgListItem = regexp.MustCompile(`^( *)([0-9]+)(?: (.*))?$`)
	// cgState: a line's rest that starts with a state (value="…",
	// options=[…]), not a name.
	cgState = regexp.MustCompile(`^[a-z_-]+=["\[]`)
)

// splitName reads a chromegate name: to the end of the line, or a JSON
// string when states follow.
func splitName(rest string) (name, states string) {
	if cgState.MatchString(rest) {
		// A control without a name: its states follow the role.
		return "", rest
	}
	if !strings.HasPrefix(rest, `"`) {
		return rest, ""
	}
	dec := json.NewDecoder(strings.NewReader(rest))
	if err := dec.Decode(&name); err != nil {
		return rest, ""
	}
	return name, strings.TrimSpace(rest[dec.InputOffset():])
}

// ParseOutline reads the controls of a chromegate outline (helpers/snapshot.go
// documents the format), links lists included.
func ParseOutline(outline string) []Control {
	var out []Control
	list, pad := "", ""
	for _, line := range strings.Split(outline, "\n") {
		if c, ok := parseOutlineLine(line, &list, &pad); ok {
			out = append(out, c)
		}
	}
	return out
}

// parseOutlineLine reads one line, tracking the links list it may belong to.
func parseOutlineLine(line string, list, pad *string) (Control, bool) {
	if m := cgListHead.FindStringSubmatch(line); m != nil {
		*list, *pad = m[2], m[1]
		return Control{}, false
	}
	if m := cgListItem.FindStringSubmatch(line); m != nil && *list != "" && m[1] == *pad {
		return Control{Ref: *list + m[2], Role: "link", Name: m[3], Line: "link " + m[3]}, true
	}
	*list = ""
	m := cgLine.FindStringSubmatch(line)
	if m == nil {
		return Control{}, false
	}
	name, _ := splitName(m[4])
	return Control{Ref: m[2], Role: m[3], Name: name, Line: strings.TrimSpace(m[3] + " " + m[4])}, true
}

// View is the agent's picture of the page: the last outline it was shown,
// kept up to date from acting calls' changes.
type View struct {
	lines []string
}

// Set replaces the view with a whole outline.
func (v *View) Set(outline string) { v.lines = strings.Split(outline, "\n") }

// Apply applies an outline change ("+ line", "- line", "~ line", each line
// as the snapshot prints it) by ref: a removed or changed line replaces or
// drops the line with the same ref; an added line goes after the last line
// added before it, or at the end.
func (v *View) Apply(changes string) {
	var list, pad string
	at := -1
	for _, ch := range strings.Split(changes, "\n") {
		if len(ch) < 2 || ch[1] != ' ' {
			continue
		}
		op, line := ch[0], ch[2:]
		c, ok := parseOutlineLine(line, &list, &pad)
		idx := -1
		if ok {
			idx = v.find(c.Ref)
		} else {
			idx = v.findLine(line)
		}
		switch op {
		case '-':
			if idx >= 0 {
				v.lines = append(v.lines[:idx], v.lines[idx+1:]...)
			}
		case '~':
			if idx >= 0 {
				v.lines[idx] = line
			} else {
				v.lines = append(v.lines, line)
			}
		case '+':
			if at < 0 || at > len(v.lines) {
				at = len(v.lines)
			}
			v.lines = append(v.lines[:at], append([]string{line}, v.lines[at:]...)...)
			at++
		}
	}
}

func (v *View) find(ref string) int {
	list, pad := "", ""
	for i, l := range v.lines {
		if c, ok := parseOutlineLine(l, &list, &pad); ok && c.Ref == ref {
			return i
		}
	}
	return -1
}

func (v *View) findLine(line string) int {
	for i, l := range v.lines {
		if l == line {
			return i
		}
	}
	return -1
}

// Text is the view as an outline.
func (v *View) Text() string { return strings.Join(v.lines, "\n") }

// pwLine is a line of Playwright's aria snapshot that has a ref:
// `- button "Save" [ref=e12]`, `- link "Home" [ref=e3] [cursor=pointer]:`.
var pwLine = regexp.MustCompile(`^\s*- ([a-z]+)(?: ("(?:[^"\\]|\\.)*"))?(.*?)\[ref=([a-z0-9]+)\]`)

// ParseAria reads the controls of a Playwright MCP aria snapshot (YAML).
func ParseAria(snapshot string) []Control {
	var out []Control
	for _, line := range strings.Split(snapshot, "\n") {
		m := pwLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var name string
		if m[2] != "" {
			if err := json.Unmarshal([]byte(m[2]), &name); err != nil {
				name = strings.Trim(m[2], `"`)
			}
		}
		out = append(out, Control{Ref: m[4], Role: m[1], Name: name, Line: strings.TrimSpace(line)})
	}
	return out
}
