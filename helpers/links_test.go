package helpers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/executortest"
)

const linksDoc = `<!doctype html><html><head><base href="/docs/"><title>L</title></head><body>
<nav><a href="/">Home</a></nav>
<main id="m">
<a href="intro.html">  Intro
   page </a>
<a href="intro.html">Intro again</a>
<a href="https://a.cdn.example.com/x.js" aria-label="CDN"></a>
<a href="https://example.com/about"><img alt="About us"></a>
<a href="https://other.org/p?q=1#frag">Other</a>
<a href="javascript:alert(1)">JS</a>
<a href="mailto:me@example.com">Mail</a>
<a href="data:text/html,x">Data</a>
<a>no href</a>
<map><area href="/area" alt="Area"></map>
</main></body></html>`

// fakePage returns a Fake whose selected tab is at url and whose HTML
// primitive serves doc (the whole document) or, for a target, outer.
func fakePage(t *testing.T, url, doc string, outer map[string]string) *executortest.Fake {
	t.Helper()
	f := executortest.New("fake", "s")
	if _, err := f.Navigate(t.Context(), executor.NavigateParams{URL: url}); err != nil {
		t.Fatal(err)
	}
	f.Handle("HTML", func(ctx context.Context, params any) (any, error) {
		p := params.(executor.HTMLParams)
		ps := executor.PageState{TabID: f.TabID(0), URL: url}
		if p.Target.IsZero() {
			return executor.TextResult{PageState: ps, Text: doc}, nil
		}
		s, ok := outer[p.Target.Selector]
		if !ok {
			return nil, executor.Errorf(executor.CodeSelectorNotFound, "no element matches %s", p.Target)
		}
		return executor.TextResult{PageState: ps, Text: s}, nil
	})
	f.ResetCalls()
	return f
}

func TestExtractLinks(t *testing.T) {
	t.Parallel()
	f := fakePage(t, "https://example.com/start/page.html", linksDoc, map[string]string{
		"#m":   `<main id="m"><a href="intro.html">Intro</a><a href="https://other.org/">O</a></main>`,
		"head": `<base href="/docs/"><title>L</title>`,
	})
	urls := func(r LinksResult) []string {
		var out []string
		for _, l := range r.Links {
			out = append(out, l.URL+" "+l.Text)
		}
		return out
	}
	tests := []struct {
		name      string
		p         LinksParams
		want      []string
		wantTotal int
	}{
		{"all http links, resolved against base, de-duplicated", LinksParams{}, []string{
			"https://example.com/ Home",
			"https://example.com/docs/intro.html Intro page",
			"https://a.cdn.example.com/x.js CDN",
			"https://example.com/about About us",
			"https://other.org/p?q=1#frag Other",
			"https://example.com/area ",
		}, 6},
		{"same origin", LinksParams{SameOriginOnly: true}, []string{
			"https://example.com/ Home", "https://example.com/docs/intro.html Intro page",
			"https://example.com/about About us", "https://example.com/area ",
		}, 4},
		{"include any-depth subdomains only", LinksParams{Include: []string{"*.example.com"}}, []string{
			"https://a.cdn.example.com/x.js CDN",
		}, 1},
		{"exclude", LinksParams{Exclude: []string{"example.com", "*.example.com"}}, []string{
			"https://other.org/p?q=1#frag Other",
		}, 1},
		{"include drops links without a host", LinksParams{NonHTTP: true, Include: []string{"*"}, Exclude: []string{"*.example.com", "example.com", "other.org"}}, nil, 0},
		{"limit", LinksParams{Limit: 2}, []string{
			"https://example.com/ Home", "https://example.com/docs/intro.html Intro page",
		}, 6},
		{"scope reads the element and the head", LinksParams{Scope: executor.Target{Selector: "#m"}}, []string{
			"https://example.com/docs/intro.html Intro", "https://other.org/ O",
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ExtractLinks(t.Context(), f, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, urls(r)); diff != "" {
				t.Errorf("links (-want +got):\n%s", diff)
			}
			if r.Total != tt.wantTotal {
				t.Errorf("total %d, want %d", r.Total, tt.wantTotal)
			}
			if (r.Note() != "") != (len(r.Links) < r.Total) {
				t.Errorf("note %q with %d of %d", r.Note(), len(r.Links), r.Total)
			}
		})
	}
}

func TestExtractLinksMailto(t *testing.T) {
	t.Parallel()
	f := fakePage(t, "https://example.com/", linksDoc, nil)
	r, err := ExtractLinks(t.Context(), f, LinksParams{NonHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range r.Links {
		if !strings.HasPrefix(l.URL, "http") {
			got = append(got, l.URL)
		}
	}
	if diff := cmp.Diff([]string{"mailto:me@example.com"}, got); diff != "" {
		t.Errorf("non-http links (-want +got):\n%s", diff)
	}
}

// Links are read from the page's HTML; their refs come from one script in
// the isolated world, matched by URL.
func TestExtractLinksRefs(t *testing.T) {
	t.Parallel()
	f := fakePage(t, "https://example.com/", linksDoc, nil)
	f.Handle("RunScript", func(ctx context.Context, params any) (any, error) {
		p := params.(executor.ScriptParams)
		if !strings.Contains(p.Source, "chromegateRefs") || string(p.Arg) != "{}" {
			t.Errorf("script arg %s, source without the registry: %v", p.Arg, !strings.Contains(p.Source, "chromegateRefs"))
		}
		// The browser serialises the host's URL with a "/" path.
		return executor.ScriptResult{Value: json.RawMessage(`[["https://example.com/","ab1"],["https://example.com/docs/intro.html","ab2"],["https://example.com/docs/intro.html","ab3"],["https://OTHER.org/p?q=1#frag","ab4"]]`)}, nil
	})
	r, err := ExtractLinks(t.Context(), f, LinksParams{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range r.Links {
		got = append(got, l.Ref)
	}
	if diff := cmp.Diff([]string{"ab1", "ab2", "", "", "ab4", ""}, got); diff != "" {
		t.Errorf("refs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"RunScript", "HTML"}, f.Methods()); diff != "" {
		t.Errorf("primitives (-want +got):\n%s", diff)
	}
}

func TestExtractLinksBadArgs(t *testing.T) {
	t.Parallel()
	f := fakePage(t, "https://example.com/", linksDoc, nil)
	for _, p := range []LinksParams{{Limit: -1}, {Limit: MaxLinkLimit + 1}, {Include: []string{" "}}} {
		_, err := ExtractLinks(t.Context(), f, p)
		if executor.AsError(err).Code != executor.CodeBadArgs {
			t.Errorf("%+v: got %v, want BAD_ARGS", p, err)
		}
	}
}

func TestLinkTextCapped(t *testing.T) {
	t.Parallel()
	doc := `<a href="/x">` + strings.Repeat("word ", 100) + `</a>`
	f := fakePage(t, "https://example.com/", doc, nil)
	r, err := ExtractLinks(t.Context(), f, LinksParams{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(r.Links[0].Text)); n > maxLinkText || !strings.HasSuffix(r.Links[0].Text, "…") {
		t.Errorf("text of %d runes: %q", n, r.Links[0].Text)
	}
}
