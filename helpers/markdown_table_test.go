package helpers

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/chromegate/chromegate/internal/testkit"
)

// TestMarkdownTablesAreCompact: a table is a GFM table without the padding
// that aligns its columns, which on a long table is most of the text: the
// PostgreSQL keyword appendix (a table of 800 rows) and a small table with
// spans, an empty cell, a pipe and inline code, as golden files.
func TestMarkdownTablesAreCompact(t *testing.T) {
	t.Parallel()
	small := `<main><table><thead><tr><th>Key</th><th>Meaning</th><th>Since</th></tr></thead><tbody>
<tr><td><code>\x</code></td><td>expanded output, a long description that would pad every other row</td><td>8.0</td></tr>
<tr><td>a | b</td><td></td><td>9.1</td></tr>
<tr><td colspan="2">spans two</td><td>10</td></tr>
</tbody></table>
<table><tr><td>no</td><td>header</td></tr><tr><td>row</td><td>two</td></tr></table></main>`
	for _, c := range []struct{ name, url, html string }{
		{"table-small", "https://example.com/", small},
		{"pg-sql-keywords", "https://www.postgresql.org/docs/15/sql-keywords-appendix.html", fixture(t, "docs/pg-sql-keywords.html")},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := fakePage(t, c.url, c.html, nil)
			r, err := ReadAsMarkdown(t.Context(), f, MarkdownParams{MaxChars: MaxMaxChars})
			if err != nil {
				t.Fatal(err)
			}
			if r.Next != 0 {
				t.Fatalf("cut at %d of %d", r.Next, r.Total)
			}
			if strings.Contains(r.Markdown, "   |") || strings.Contains(r.Markdown, "|   ") {
				t.Errorf("a table is padded")
			}
			t.Logf("%s: %d characters", c.name, utf8.RuneCountInString(r.Markdown))
			testkit.Golden(t, filepath.Join("testdata", "markdown", c.name+".md"), []byte(r.Markdown))
		})
	}
}
