package helpers

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../e2e/testdata/pages/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The e2e tests keep golden files of the fixtures' Markdown through real
// Chromium; these check the heuristics' choices without a browser.
func TestReadAsMarkdownDropsChrome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		page, url, source string
		keep, drop        []string
	}{
		{
			"article.html", "https://coastal.example/travel/saint-malo/tides.html", "article",
			[]string{
				"# Tide Tables and the Harbour of Saint-Malo",
				"|Wednesday|09:00|13.3",                                                     // the table
				"[equinoctial spring tides](https://coastal.example/science/equinox-tides)", // absolute links
				"(https://coastal.example/travel/data/tides-2025.csv)",
				"~~The ferry to Dinard runs every hour.~~",
				"```\nhour 1: 1/12 of the range",
				"Figures rounded from SHOM predictions", // the article's own footer
			},
			[]string{"Subscribe", "cookies", "Accept all", "Advertisement", "Sponsored", "Most read", "newsletter", "Privacy", "Mont-Saint-Michel", "Skip to content", "Search", "dataLayer", "Home"},
		},
		{
			"blog.html", "https://blog.example/2025/03/wireless", "scored div#post-body",
			[]string{"# Restoring a 1930s wireless", "|C20|8 µF 450 V", "That will be a post of its own."},
			[]string{"Archive", "soldering", "Copyright", "RSS"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.page, func(t *testing.T) {
			t.Parallel()
			f := fakePage(t, tt.url, fixture(t, tt.page), nil)
			r, err := ReadAsMarkdown(t.Context(), f, MarkdownParams{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Source != tt.source {
				t.Errorf("source %q, want %q", r.Source, tt.source)
			}
			for _, s := range tt.keep {
				if !strings.Contains(r.Markdown, s) {
					t.Errorf("markdown lacks %q", s)
				}
			}
			for _, s := range tt.drop {
				if strings.Contains(r.Markdown, s) {
					t.Errorf("markdown keeps chrome %q", s)
				}
			}
			if r.Next != 0 || r.Total != utf8.RuneCountInString(r.Markdown) {
				t.Errorf("a short page came paginated: next %d, total %d", r.Next, r.Total)
			}
			if t.Failed() {
				t.Logf("markdown:\n%s", r.Markdown)
			}
		})
	}
}

func TestReadAsMarkdownSelector(t *testing.T) {
	t.Parallel()
	f := fakePage(t, "https://coastal.example/a/b.html", fixture(t, "article.html"), map[string]string{
		".sidebar": `<aside class="sidebar"><h3>Most read</h3><ol><li><a href="/news/x">Storm</a></li></ol><script>x()</script></aside>`,
	})
	r, err := ReadAsMarkdown(t.Context(), f, MarkdownParams{Target: executor.Target{Selector: ".sidebar"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "### Most read\n\n1. [Storm](https://coastal.example/news/x)"
	if r.Source != "selector" || r.Markdown != want {
		t.Errorf("source %q, markdown:\n%s\nwant:\n%s", r.Source, r.Markdown, want)
	}
	last := f.Last().Params.(executor.HTMLParams)
	if !last.Outer || last.Target.Selector != ".sidebar" {
		t.Errorf("read %+v, want the outer HTML of .sidebar", last)
	}
}

// Paging through a long document returns every character exactly once,
// each page within max_chars and ending at a line break where one is near.
func TestReadAsMarkdownPages(t *testing.T) {
	t.Parallel()
	var doc strings.Builder
	doc.WriteString("<main>")
	for i := range 300 {
		doc.WriteString("<p>Paragraph ")
		doc.WriteString(strings.Repeat("é", i%37))
		doc.WriteString(" with some words in it, and a comma.</p>")
	}
	doc.WriteString("</main>")
	f := fakePage(t, "https://example.com/", doc.String(), nil)
	full, err := ReadAsMarkdown(t.Context(), f, MarkdownParams{MaxChars: MaxMaxChars})
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	offset, pages := 0, 0
	for {
		r, err := ReadAsMarkdown(t.Context(), f, MarkdownParams{MaxChars: 1000, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if n := utf8.RuneCountInString(r.Markdown); n > 1000 {
			t.Fatalf("page of %d characters", n)
		}
		if r.Total != full.Total || r.Offset != offset {
			t.Fatalf("page at %d: offset %d total %d", offset, r.Offset, r.Total)
		}
		got.WriteString(r.Markdown)
		if r.Next == 0 {
			if r.Marker() != "" {
				t.Errorf("last page has a marker %q", r.Marker())
			}
			break
		}
		if !strings.HasSuffix(r.Markdown, "\n") {
			t.Errorf("page at %d does not end at a line break", offset)
		}
		if !strings.Contains(r.Marker(), "offset="+strconv.Itoa(r.Next)) {
			t.Errorf("marker %q does not say offset=%d", r.Marker(), r.Next)
		}
		offset = r.Next
		if pages > 100 {
			t.Fatal("paging does not end")
		}
	}
	if diff := cmp.Diff(full.Markdown, got.String()); diff != "" {
		t.Errorf("pages joined differ from the whole (-whole +pages):\n%s", diff)
	}
	r, err := ReadAsMarkdown(t.Context(), f, MarkdownParams{Offset: full.Total + 5})
	if err != nil || r.Markdown != "" || r.Next != 0 {
		t.Errorf("past the end: %q next %d err %v", r.Markdown, r.Next, err)
	}
}

func TestReadAsMarkdownBadArgs(t *testing.T) {
	t.Parallel()
	f := fakePage(t, "https://example.com/", "<p>x</p>", nil)
	for _, p := range []MarkdownParams{{MaxChars: 5}, {MaxChars: MaxMaxChars + 1}, {Offset: -1}} {
		if _, err := ReadAsMarkdown(t.Context(), f, p); executor.AsError(err).Code != executor.CodeBadArgs {
			t.Errorf("%+v: got %v, want BAD_ARGS", p, err)
		}
	}
}

func TestChromeWordsAreWholeWords(t *testing.T) {
	t.Parallel()
	doc := `<main><div class="header-image download shadow"><p>` + strings.Repeat("kept text ", 30) + `</p></div>
<div class="ad-slot"><p>dropped ad</p></div><div id="gdpr_notice"><p>dropped notice</p></div></main>`
	f := fakePage(t, "https://example.com/", doc, nil)
	r, err := ReadAsMarkdown(t.Context(), f, MarkdownParams{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Markdown, "kept text") || strings.Contains(r.Markdown, "dropped") {
		t.Errorf("markdown:\n%s", r.Markdown)
	}
}
