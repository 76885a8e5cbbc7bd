// Command readmegen writes the tool table of README.md from the tool
// constructors (mcp.Tools): a row per group (Tool.Group) and group of
// tools/list (Tool.ListGroup, the `--tools` column), in the order they
// first appear, each tool's name in table order, then the group's note
// on its first row. It rewrites only what lies between the table's two
// marker comments. Run it with `go generate ./mcp`; a test of this
// package fails when the README in the tree differs.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/chromegate/chromegate/mcp"
)

// The markers around the generated table in README.md.
const (
	begin = "<!-- tool table: generated from the tool constructors by `go generate ./mcp`; edit those, not this -->\n"
	end   = "<!-- end of tool table -->\n"
)

func main() {
	readme := flag.String("readme", "README.md", "the README to rewrite")
	flag.Parse()
	if err := rewrite(*readme); err != nil {
		fmt.Fprintln(os.Stderr, "readmegen:", err)
		os.Exit(1)
	}
}

func rewrite(path string) error {
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	table, err := toolTable(mcp.Tools())
	if err != nil {
		return err
	}
	out, err := replaceTable(old, table)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, old) {
		return nil
	}
	return os.WriteFile(path, out, 0o644)
}

// toolTable renders the tools as the README's Markdown table.
func toolTable(tools []*mcp.Tool) (string, error) {
	type row struct {
		g    *mcp.ToolGroup
		list mcp.ListGroup
	}
	var order []row
	names := map[row][]string{}
	for _, t := range tools {
		g := t.Group
		if g == nil {
			return "", fmt.Errorf("tool %s has no Group: its constructor sets one", t.Name)
		}
		r := row{g, t.ListGroup}
		if _, seen := names[r]; !seen {
			order = append(order, r)
		}
		names[r] = append(names[r], "`"+t.Name+"`")
	}
	var b strings.Builder
	b.WriteString("| group | tools | `--tools` |\n|---|---|---|\n")
	noted := map[*mcp.ToolGroup]bool{}
	for _, r := range order {
		fmt.Fprintf(&b, "| %s | %s", r.g.Name, strings.Join(names[r], " "))
		if r.g.Note != "" && !noted[r.g] {
			fmt.Fprintf(&b, " (%s)", r.g.Note)
			noted[r.g] = true
		}
		list := "always"
		if r.list != "" {
			list = string(r.list)
		}
		fmt.Fprintf(&b, " | %s |\n", list)
	}
	return b.String(), nil
}

// replaceTable puts table between the markers of readme.
func replaceTable(readme []byte, table string) ([]byte, error) {
	s := string(readme)
	i := strings.Index(s, begin)
	j := strings.Index(s, end)
	if i < 0 || j < i {
		return nil, errors.New("no tool table markers")
	}
	return []byte(s[:i+len(begin)] + table + s[j:]), nil
}
