package realapps

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Stats is what a run cost: tool calls, characters of tool results read
// (text content, in runes) and wall time.
type Stats struct {
	Calls int
	Chars int
	Wall  time.Duration
	// PerTool holds each call's wall time, by tool, in order: where the
	// time goes.
	PerTool map[string][]time.Duration
	// Waited is the agent's own waiting: between fresh outlines when a
	// control was not shown yet (Agent.Find), and between looks for a
	// task's outcome (Run).
	Waited time.Duration
}

// Browser is one browser server's tools as the agent uses them. Targets are
// refs the server's own outline showed; an implementation refuses anything
// else (a CSS selector never reaches a server).
type Browser interface {
	// Navigate loads a URL.
	Navigate(ctx context.Context, url string) error
	// Controls is the page as last shown to the agent; fresh asks for a new
	// outline even when the last result left the view current.
	Controls(ctx context.Context, fresh bool) ([]Control, error)
	Click(ctx context.Context, ref string) error
	// Fill replaces a text field's value.
	Fill(ctx context.Context, ref, text string) error
	// Submit replaces a text field's value and presses Enter.
	Submit(ctx context.Context, ref, text string) error
	// Select chooses options of a select by the labels the outline showed.
	Select(ctx context.Context, ref string, labels ...string) error
	Stats() Stats
}

// Agent finds controls by role and accessible name in what its browser
// showed it, and acts on their refs.
type Agent struct {
	B Browser
	// Tries is how many fresh outlines Find asks for when a control is not
	// (yet) shown: a page may still be loading after a click.
	Tries int
	// waited is how long the agent waited of its own accord.
	waited time.Duration
}

// Find returns the first control whose role matches role (a regexp of the
// whole role, e.g. "textbox|searchbox") and whose accessible name matches
// name.
func (a *Agent) Find(ctx context.Context, role, name string) (Control, error) {
	roleRe := regexp.MustCompile(`^(?:` + role + `)$`)
	nameRe := regexp.MustCompile(name)
	tries := max(a.Tries, 3)
	var last []Control
	for i := range tries {
		cs, err := a.B.Controls(ctx, i > 0)
		if err != nil {
			return Control{}, err
		}
		for _, c := range cs {
			if roleRe.MatchString(c.Role) && nameRe.MatchString(c.Name) {
				return c, nil
			}
		}
		last = cs
		if i > 0 {
			slept := time.Now()
			select {
			case <-ctx.Done():
				return Control{}, ctx.Err()
			case <-time.After(300 * time.Millisecond):
			}
			a.waited += time.Since(slept)
		}
	}
	var lines []string
	for _, c := range last {
		lines = append(lines, c.Ref+" "+c.Line)
	}
	return Control{}, fmt.Errorf("no %s named /%s/ among %d controls:\n%s", role, name, len(last), cut(strings.Join(lines, "\n"), 4000))
}

// Has reports whether a control is shown, without asking again.
func (a *Agent) Has(ctx context.Context, role, name string) (bool, error) {
	roleRe := regexp.MustCompile(`^(?:` + role + `)$`)
	nameRe := regexp.MustCompile(name)
	cs, err := a.B.Controls(ctx, false)
	if err != nil {
		return false, err
	}
	for _, c := range cs {
		if roleRe.MatchString(c.Role) && nameRe.MatchString(c.Name) {
			return true, nil
		}
	}
	return false, nil
}

// Click clicks the control found by role and name.
func (a *Agent) Click(ctx context.Context, role, name string) error {
	c, err := a.Find(ctx, role, name)
	if err != nil {
		return err
	}
	return a.B.Click(ctx, c.Ref)
}

// Fill fills the text field found by role and name.
func (a *Agent) Fill(ctx context.Context, role, name, text string) error {
	c, err := a.Find(ctx, role, name)
	if err != nil {
		return err
	}
	return a.B.Fill(ctx, c.Ref, text)
}

// Submit fills the text field found by role and name and presses Enter.
func (a *Agent) Submit(ctx context.Context, role, name, text string) error {
	c, err := a.Find(ctx, role, name)
	if err != nil {
		return err
	}
	return a.B.Submit(ctx, c.Ref, text)
}

// Select chooses options, by label, of the select found by role and name.
func (a *Agent) Select(ctx context.Context, role, name string, labels ...string) error {
	c, err := a.Find(ctx, role, name)
	if err != nil {
		return err
	}
	return a.B.Select(ctx, c.Ref, labels...)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
