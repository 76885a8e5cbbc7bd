// Command readmegen writes the tool table of README.md from the tool
// constructors (mcp.Tools): a row per group (Tool.Group), in the order
// the groups first appear, each tool's name in table order, then the
// group's note. It rewrites only what lies between the table's two
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
	var order []*mcp.ToolGroup
	names := map[*mcp.ToolGroup][]string{}
	for _, t := range tools {
		g := t.Group
		if g == nil {
			return "", fmt.Errorf("tool %s has no Group: its constructor sets one", t.Name)
		}
		if _, seen := names[g]; !seen {
			order = append(order, g)
		}
		names[g] = append(names[g], "`"+t.Name+"`")
	}
	var b strings.Builder
	b.WriteString("| group | tools |\n|---|---|\n")
	for _, g := range order {
		fmt.Fprintf(&b, "| %s | %s", g.Name, strings.Join(names[g], " "))
		if g.Note != "" {
			fmt.Fprintf(&b, " (%s)", g.Note)
		}
		b.WriteString(" |\n")
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
