package record

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Recipe rules (Export):
//   - The steps are the run's allowed top-level calls that act (not
//     read-only; eval, whose source the record keeps only as a hash, and
//     plugin calls excepted) and its wait_for calls, in order.
//   - A ref becomes a selector from what it pointed at: role and
//     accessible name (role=button[name="Sign up"]), else its label
//     (the field's accessible name from a <label>), else a stable
//     attribute (#id, [data-testid], [name], [aria-label],
//     [placeholder]). A call by ref whose element was not described is
//     refused: a generated ref never goes into a recipe.
//   - Every typed plain value (the record never has it) is a required
//     string parameter named after its field; a <secret:NAME> reference
//     stays as written.
//   - Every navigate to the first navigate's origin goes through the
//     parameter "origin" (default: the recorded one), so the recipe runs
//     against another instance of the site.
//   - After a call that navigated (navigate, or an action whose page URL
//     changed), a wait_for the next step's target is inserted, unless the
//     run waited there itself.

// Export turns r into a plugin tool (the JSON --plugins loads).
func Export(r *Record, name string) ([]byte, error) {
	if name == "" {
		name = "recorded_run"
	}
	type step struct {
		Name string         `json:"name,omitempty"`
		Tool string         `json:"tool"`
		Args map[string]any `json:"args"`
	}
	params := map[string]any{}
	var required []string
	used := map[string]bool{}
	var steps []step
	// A parameter's name and description are generated (value_1, "the
	// value for step 3"), never the page's words: a field's label is the
	// page's, and tools/list must not carry it (issue 27, rule 5).
	param := func(_, kind string) string {
		p := kind
		n := p + "_1"
		for i := 2; used[n]; i++ {
			n = p + "_" + strconv.Itoa(i)
		}
		used[n] = true
		params[n] = map[string]any{"type": "string", "description": "the " + kind + " for step " + strconv.Itoa(len(steps)+1)}
		required = append(required, n)
		return n
	}
	var origin string
	navigated := false
	lastURL := ""
	for _, e := range r.Entries {
		if e.Truncated || e.Plugin != "" || e.Decision != "allow" {
			continue
		}
		if !e.Acting && e.Tool != "wait_for" {
			if e.URL != "" {
				lastURL = e.URL
			}
			continue
		}
		if e.Tool == "eval" || strings.HasPrefix(e.Action, "plugin") {
			continue
		}
		args := map[string]any{}
		for k, v := range e.Args {
			if k == "tab_id" {
				continue // tab ids die with the browser
			}
			args[k] = v
		}
		if e.Tool == "navigate" {
			u, _ := args["url"].(string)
			if pu, err := url.Parse(u); err == nil && pu.Host != "" {
				o := pu.Scheme + "://" + pu.Host
				if origin == "" {
					origin = o
					used["origin"] = true
					params["origin"] = map[string]any{"type": "string", "description": "the site's origin", "default": o}
				}
				if o == origin {
					args["url"] = "{{params.origin}}" + strings.TrimPrefix(u, o)
				}
			}
		}
		if ref, ok := args["ref"].(string); ok && ref != "" {
			sel, err := selectorFor(e.Target)
			if err != nil {
				return nil, fmt.Errorf("call #%d (%s by ref %s): %w", e.Seq, e.Tool, ref, err)
			}
			delete(args, "ref")
			args["selector"] = sel
		}
		if fields, ok := args["fields"].([]any); ok {
			out := make([]any, len(fields))
			for i, f := range fields {
				m, _ := f.(map[string]any)
				c := map[string]any{}
				for k, v := range m {
					c[k] = v
				}
				var el *Element
				if i < len(e.Fields) {
					el = e.Fields[i]
				}
				if ref, _ := c["ref"].(string); ref != "" {
					sel, err := selectorFor(el)
					if err != nil {
						return nil, fmt.Errorf("call #%d (fill_form field %d by ref %s): %w", e.Seq, i+1, ref, err)
					}
					delete(c, "ref")
					c["selector"] = sel
				}
				if c["value"] == "[redacted]" {
					c["value"] = "{{params." + param(fieldName(el, c), "value") + "}}"
				}
				out[i] = c
			}
			args["fields"] = out
		}
		for _, k := range []string{"text", "value"} {
			if args[k] == "[redacted]" {
				args[k] = "{{params." + param(fieldName(e.Target, args), k) + "}}"
			}
		}
		if navigated && e.Tool != "wait_for" {
			if sel, ok := args["selector"].(string); ok && sel != "" {
				steps = append(steps, step{Tool: "wait_for", Args: map[string]any{"selector": sel}})
			}
		}
		steps = append(steps, step{Tool: e.Tool, Args: args})
		navigated = e.Tool == "navigate" || (e.URL != "" && lastURL != "" && e.URL != lastURL)
		if e.URL != "" {
			lastURL = e.URL
		}
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("the record has no allowed acting call to replay")
	}
	// Step names are unique in a plugin: the tool's, numbered when it
	// repeats.
	count := map[string]int{}
	for _, st := range steps {
		count[st.Tool]++
	}
	nth := map[string]int{}
	for i, st := range steps {
		if count[st.Tool] > 1 {
			nth[st.Tool]++
			steps[i].Name = st.Tool + "_" + strconv.Itoa(nth[st.Tool])
		}
	}
	def := map[string]any{
		"name":        name,
		"description": fmt.Sprintf("Replays a recorded run (%d steps) through the policy.", len(steps)),
		"read_only":   false,
		"params":      map[string]any{"type": "object", "properties": params, "required": required},
		"steps":       steps,
	}
	if required == nil {
		def["params"] = map[string]any{"type": "object", "properties": params}
	}
	return json.MarshalIndent(def, "", "  ")
}

// selectorFor is a selector for el that no ref is in.
func selectorFor(el *Element) (string, error) {
	if el == nil {
		return "", fmt.Errorf("the record does not say what the ref pointed at; record the run again with serve --record")
	}
	switch {
	case el.Role != "" && el.Name != "":
		return "role=" + el.Role + "[name=" + quote(el.Name) + "]", nil
	case el.ID != "":
		return "#" + cssIdent(el.ID), nil
	case el.TestID != "":
		return "[data-testid=" + quote(el.TestID) + "]", nil
	case el.NameAttr != "":
		return el.Tag + "[name=" + quote(el.NameAttr) + "]", nil
	case el.AriaLabel != "":
		return "[aria-label=" + quote(el.AriaLabel) + "]", nil
	case el.Placeholder != "":
		return "[placeholder=" + quote(el.Placeholder) + "]", nil
	}
	return "", fmt.Errorf("its element (%s) has no role and name, label or stable attribute to find it by", el.Tag)
}

func quote(s string) string { return strconv.Quote(s) }

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func cssIdent(id string) string {
	if identRe.MatchString(id) {
		return id
	}
	return `\` + fmt.Sprintf("%x ", id[0]) + regexp.MustCompile(`([^A-Za-z0-9_-])`).ReplaceAllString(id[1:], `\$1`)
}

func fieldName(el *Element, args map[string]any) string {
	if el != nil {
		for _, s := range []string{el.Label, el.AriaLabel, el.Name, el.Placeholder, el.NameAttr, el.ID} {
			if s != "" {
				return s
			}
		}
	}
	if sel, _ := args["selector"].(string); sel != "" {
		return sel
	}
	return ""
}
