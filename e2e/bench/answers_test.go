//go:build peers

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/chromegate/chromegate/executor/cdp"
)

// TestPeersAnswers prints what a model reads of each everyday answer, in
// characters of the result's text, on every server in one run on the
// bench page: navigate, a plain fill (the first on the page and again), a
// click that changes nothing visible, eval of 1+1, reading the page's
// text; and each server's tools/list. Sizes, not times: one call each.
func TestPeersAnswers(t *testing.T) {
	chromium, err := cdp.FindChromium("")
	if err != nil {
		t.Fatalf("no Chromium: %v", err)
	}
	bin := installPeers(t, filepath.Join(cdp.DefaultCacheDir(), "peers"))
	cg := buildChromegate(t)
	page := servePages(t) + "/bench"

	type op struct {
		name string
		call func(s *session) (string, map[string]any)
	}
	fixed := func(tool string, args map[string]any) func(*session) (string, map[string]any) {
		return func(*session) (string, map[string]any) { return tool, args }
	}
	cgOps := []op{
		{"fill (first)", fixed("fill", map[string]any{"selector": "#t", "value": "hello"})},
		{"fill (again)", fixed("fill", map[string]any{"selector": "#t", "value": "hello world"})},
		{"click, no visible change", fixed("click", map[string]any{"selector": "#b"})},
		{"eval 1+1", fixed("eval", map[string]any{"expression": "1+1"})},
		{"page text", fixed("get_text", map[string]any{})},
	}
	pwOps := []op{
		{"fill (first)", fixed("browser_type", map[string]any{"target": "#t", "text": "hello"})},
		{"fill (again)", fixed("browser_type", map[string]any{"target": "#t", "text": "hello world"})},
		{"click, no visible change", fixed("browser_click", map[string]any{"target": "#b"})},
		{"eval 1+1", fixed("browser_evaluate", map[string]any{"function": "() => 1+1"})},
		{"page text", fixed("browser_evaluate", map[string]any{"function": "() => document.body.innerText"})},
	}
	cdmOps := []op{
		{"fill (first)", func(s *session) (string, map[string]any) {
			return "fill", map[string]any{"pageId": 1, "uid": s.vars["text"], "value": "hello"}
		}},
		{"fill (again)", func(s *session) (string, map[string]any) {
			return "fill", map[string]any{"pageId": 1, "uid": s.vars["text"], "value": "hello world"}
		}},
		{"click, no visible change", func(s *session) (string, map[string]any) {
			return "click", map[string]any{"pageId": 1, "uid": s.vars["button"]}
		}},
		{"eval 1+1", fixed("evaluate_script", map[string]any{"pageId": 1, "function": "() => 1+1", "waitForStableDom": false})},
		{"page text", fixed("evaluate_script", map[string]any{"pageId": 1, "function": "() => document.body.innerText", "waitForStableDom": false})},
	}
	byName := map[string]*server{}
	for _, sv := range configs(cg, bin, chromium) {
		byName[sv.name] = sv
	}
	allOn := *byName["chromegate"]
	allOn.name = "chromegate (all tools)"
	allOn.argv = append(append([]string{}, allOn.argv...), "--tools=all")
	entries := []struct {
		sv  *server
		ops []op
		// prepare reads what the ops need (uids) without counting it.
		prepare func(s *session)
	}{
		{byName["chromegate"], cgOps, nil},
		{&allOn, nil, nil},
		{byName["playwright-mcp"], pwOps, nil},
		{byName["playwright-mcp fast"], pwOps, nil},
		{byName["devtools-mcp"], cdmOps, byName["devtools-mcp"].prepare},
		{byName["devtools-mcp slim"], nil, nil},
	}
	opNames := []string{"tools/list", "navigate"}
	for _, o := range cgOps {
		opNames = append(opNames, o.name)
	}
	size := map[string]map[string]int{}
	shown := map[string]map[string]string{}
	for _, e := range entries {
		s := start(t, e.sv)
		size[e.sv.name], shown[e.sv.name] = map[string]int{}, map[string]string{}
		record := func(op, txt string) {
			size[e.sv.name][op] = utf8.RuneCountInString(txt)
			shown[e.sv.name][op] = txt
		}
		ctx, cancel := context.WithTimeout(context.Background(), callTimout)
		lr, err := s.cs.ListTools(ctx, nil)
		cancel()
		if err != nil {
			t.Fatalf("%s: tools/list: %v", e.sv.name, err)
		}
		b, _ := json.Marshal(lr)
		record("tools/list", string(b))
		name, args := e.sv.navigate(page)
		res, _ := s.call(name, args)
		record("navigate", text(res))
		if e.prepare != nil {
			e.prepare(s)
		}
		for _, o := range e.ops {
			name, args := o.call(s)
			res, _ := s.call(name, args)
			record(o.name, text(res))
		}
		s.close()
	}

	var out strings.Builder
	fmt.Fprintf(&out, "\ncharacters a model reads of each answer (text content; tools/list: the whole result), one call each on the bench page\n\n")
	w := tabwriter.NewWriter(&out, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := []string{"op"}
	for _, e := range entries {
		hdr = append(hdr, e.sv.name)
	}
	fmt.Fprintln(w, strings.Join(hdr, "\t")+"\t")
	for _, op := range opNames {
		row := []string{op}
		for _, e := range entries {
			if n, ok := size[e.sv.name][op]; ok {
				row = append(row, fmt.Sprint(n))
			} else {
				row = append(row, "—")
			}
		}
		fmt.Fprintln(w, strings.Join(row, "\t")+"\t")
	}
	w.Flush()
	fmt.Fprintf(&out, "\nchromegate's answers as read:\n")
	for _, op := range opNames[1:] {
		fmt.Fprintf(&out, "  %-26s %q\n", op, short(shown["chromegate"][op]))
	}
	fmt.Fprintf(&out, "Chromium: %s; peers: %s, %s\n", chromium, playwrightMCP, devtoolsMCP)
	t.Log(out.String())
	fmt.Println(out.String())
}
