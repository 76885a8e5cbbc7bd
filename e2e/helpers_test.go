package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp"
)

// pagesSite serves testdata/pages under /pages/, and /wander, a page that
// leaves for other.test once leave is called, and returns the port. The page
// waits for its fetch of /wander/leave, which the site answers at leave: a
// page that left on a timer raced the navigate to it on a busy machine (the
// navigate found the tab off the allowlist already).
func pagesSite(t *testing.T) (port string, leave func()) {
	t.Helper()
	left := make(chan struct{}, 16)
	mux := http.NewServeMux()
	mux.Handle("/pages/", http.StripPrefix("/pages/", http.FileServer(http.Dir("testdata/pages"))))
	mux.HandleFunc("/wander", func(w http.ResponseWriter, r *http.Request) {
		port := strings.TrimPrefix(r.Host[strings.LastIndexByte(r.Host, ':'):], ":")
		fmt.Fprintf(w, `<!doctype html><title>Leaving</title><p>leaving</p><script>fetch("/wander/leave").then(()=>{location="http://other.test:%s/pages/article.html"})</script>`, port)
	})
	mux.HandleFunc("/wander/leave", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-left:
		case <-r.Context().Done():
		}
	})
	return serveMux(t, mux), func() { left <- struct{}{} }
}

// helperServer is chromegate with only allowed.test allowlisted, mutations
// and eval on, and the test hosts resolved to the local site; leave sends
// the /wander page on its way.
func helperServer(t *testing.T) (s *server, allowed string, leave func()) {
	t.Helper()
	port, leave := pagesSite(t)
	s = startServer(t, resolverRules, "--allow-domain=allowed.test", "--enable-mutations", "--unsafe-enable-eval")
	return s, "http://allowed.test:" + port, leave
}

// pageContent splits a fenced helper result into its JSON head and the
// page text after it.
func pageContent(t testing.TB, text string) (head map[string]any, body string) {
	t.Helper()
	content, _, ok := mcp.Unfence(text)
	if !ok {
		t.Fatalf("result is not fenced page content:\n%s", short(text))
	}
	first, rest, _ := strings.Cut(content, "\n")
	if err := json.Unmarshal([]byte(first), &head); err != nil {
		t.Fatalf("result head %q: %v", first, err)
	}
	return head, rest
}

func TestReadAsMarkdown(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	t.Parallel()
	s, allowed, _ := helperServer(t)
	pages := []struct {
		file   string
		source string
		keep   []string
		drop   []string
	}{
		{"article.html", "article",
			[]string{"|Wednesday|09:00|13.3", "](" + allowed + "/science/equinox-tides)", "~~The ferry"},
			[]string{"Subscribe", "Accept all", "Advertisement", "Sponsored", "Most read", "Privacy", "newsletter"}},
		{"blog.html", "scored div#post-body",
			[]string{"|R7|47 kΩ", "# Restoring a 1930s wireless"},
			[]string{"Archive", "Copyright"}},
		{"docs/pg-app-psql.html", "", []string{"psql — PostgreSQL interactive terminal", "\\set"}, nil},
		{"docs/pg-monitoring-stats.html", "", []string{"|`pg_stat_activity`"}, nil},
		{"docs/py-datetime.html", "", []string{"— Basic date and time types", "timedelta"}, nil},
		// A table of 800 rows, unpadded: 126,050 characters when padded.
		{"docs/pg-sql-keywords.html", "", []string{"|`ABORT`|non-reserved||||", "|`ZONE`|non-reserved|"}, nil},
	}
	for _, pg := range pages {
		t.Run(pg.file, func(t *testing.T) {
			s.call("navigate", map[string]any{"url": allowed + "/pages/" + pg.file})
			head, md := pageContent(t, resultText(s.call("read_as_markdown", map[string]any{"max_chars": 90000})))
			if pg.source != "" && head["source"] != pg.source {
				t.Errorf("source %v, want %s", head["source"], pg.source)
			}
			for _, k := range pg.keep {
				if !strings.Contains(md, k) {
					t.Errorf("markdown lacks %q", k)
				}
			}
			for _, d := range pg.drop {
				if strings.Contains(md, d) {
					t.Errorf("markdown keeps chrome %q", d)
				}
			}
			// Golden files hold the port-free Markdown of every fixture.
			testkit.Golden(t, filepath.Join("testdata", "golden", strings.ReplaceAll(pg.file, "/", "_")+".md"),
				[]byte(strings.ReplaceAll(md, allowed, "http://allowed.test")))
		})
	}

	t.Run("pages", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": allowed + "/pages/docs/py-datetime.html"})
		whole, _ := pageContent(t, resultText(s.call("read_as_markdown", map[string]any{"max_chars": 1000})))
		total := int(whole["total_chars"].(float64))
		if total < 50_000 {
			t.Fatalf("total_chars %d: the manual page is larger than that", total)
		}
		head, md := pageContent(t, resultText(s.call("read_as_markdown", map[string]any{"max_chars": 5000, "offset": 5000})))
		next, _ := head["next"].(float64)
		if head["offset"] != 5000.0 || next <= 5000 || next > 10000 {
			t.Errorf("second page head %v", head)
		}
		if !strings.Contains(md, fmt.Sprintf("offset=%d", int(next))) {
			t.Errorf("no marker naming offset=%d at the end of the page:\n…%s", int(next), md[max(0, len(md)-300):])
		}
	})
	t.Run("selector", func(t *testing.T) {
		s.call("navigate", map[string]any{"url": allowed + "/pages/article.html"})
		head, md := pageContent(t, resultText(s.call("read_as_markdown", map[string]any{"selector": "table"})))
		if head["source"] != "selector" || !strings.HasPrefix(md, "|Day|") || strings.Contains(md, "Saint-Malo has") {
			t.Errorf("selector: %v\n%s", head, md)
		}
	})
}

var linkLine = regexp.MustCompile(`^- \[(.*)\]\((\S+)\)`)

func TestExtractLinks(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	t.Parallel()
	s, allowed, _ := helperServer(t)
	s.call("navigate", map[string]any{"url": allowed + "/pages/links.html"})
	links := func(args map[string]any) (map[string]any, []string) {
		t.Helper()
		head, body := pageContent(t, resultText(s.call("extract_links", args)))
		var urls []string
		for _, line := range strings.Split(body, "\n") {
			if m := linkLine.FindStringSubmatch(line); m != nil {
				urls = append(urls, m[2])
			}
		}
		if int(head["shown"].(float64)) != len(urls) {
			t.Fatalf("head says %v shown, body lists %d", head["shown"], len(urls))
		}
		return head, urls
	}

	t.Run("capped with a count", func(t *testing.T) {
		head, urls := links(nil)
		// 300 items, the 3 nav links, the footer, "top"; "Item 0 again" is
		// a duplicate, mailto and javascript are left out.
		if head["total"] != 305.0 || len(urls) != 200 || !strings.Contains(head["note"].(string), "showing 200 of 305") {
			t.Errorf("head %v, %d links", head, len(urls))
		}
		if urls[0] != allowed+"/" || urls[3] != allowed+"/pages/items/0.html" {
			t.Errorf("first links %v: want absolute, in document order", urls[:4])
		}
		// Each link comes with a ref the other tools take.
		_, body := pageContent(t, resultText(s.call("extract_links", map[string]any{"limit": 2})))
		m := regexp.MustCompile(`\[Article\]\(\S+\) ref=([a-z]+[0-9]+)`).FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no ref on the Article link:\n%s", body)
		}
		if txt := resultText(s.call("get_text", map[string]any{"ref": m[1]})); !strings.Contains(txt, "Article") {
			t.Errorf("get_text of the link's ref: %s", txt)
		}
		_, all := links(map[string]any{"limit": 1000})
		seen := map[string]bool{}
		for _, u := range all {
			if seen[u] {
				t.Errorf("duplicate %s", u)
			}
			seen[u] = true
		}
	})
	t.Run("same origin", func(t *testing.T) {
		head, urls := links(map[string]any{"same_origin_only": true, "limit": 1000})
		for _, u := range urls {
			if !strings.HasPrefix(u, allowed+"/") {
				t.Errorf("other origin %s", u)
			}
		}
		// 3 in 8 items are relative (114), plus 3 nav links, the footer and #top.
		if head["total"] != 119.0 {
			t.Errorf("total %v", head["total"])
		}
	})
	t.Run("include and exclude", func(t *testing.T) {
		_, urls := links(map[string]any{"include": []string{"*.allowed.test"}, "limit": 1000})
		if len(urls) != 74 {
			t.Errorf("include *.allowed.test: %d links, want the 74 on docs. and cdn.assets.", len(urls))
		}
		for _, u := range urls {
			if !strings.Contains(u, ".allowed.test/") {
				t.Errorf("include let through %s", u)
			}
		}
		_, urls = links(map[string]any{"exclude": []string{"*.example.org", "example.org", "allowed.test", "*.allowed.test"}, "limit": 1000})
		if len(urls) != 38 || !strings.HasPrefix(urls[0], "http://other.test/") {
			t.Errorf("exclude: %d links, first %v; want the 38 on other.test", len(urls), urls[:min(1, len(urls))])
		}
	})
	t.Run("scope", func(t *testing.T) {
		head, urls := links(map[string]any{"selector": "header", "limit": 10})
		if head["total"] != 3.0 || urls[1] != allowed+"/pages/article.html" {
			t.Errorf("scope header: %v %v", head, urls)
		}
	})
}

func TestFillForm(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	t.Parallel()
	s, allowed, _ := helperServer(t)
	s.call("navigate", map[string]any{"url": allowed + "/pages/form.html"})
	fields := []map[string]any{
		{"selector": "#name", "value": "Ada Lovelace"},
		{"selector": "#email", "value": "ada@allowed.test"},
		{"selector": "#password", "value": "s3cret-engine"},
		{"selector": "#alias", "value": "countess"},
		{"selector": "#phone", "value": "+44 20 7946 0000"},
		{"selector": "#site", "value": "https://allowed.test/ada"},
		{"selector": "#age", "value": 36},
		{"selector": "#volume", "value": "7"},
		{"selector": "#birthday", "value": "1815-12-10"},
		{"selector": "#alarm", "value": "06:30"},
		{"selector": "#meeting", "value": "1843-07-01T10:00"},
		{"selector": "#month", "value": "1843-09"},
		{"selector": "#week", "value": "1843-W36"},
		{"selector": "#colour", "value": "#336699"},
		{"selector": "#bio", "value": "Wrote the first program.\nLiked poetry."},
		{"selector": "#bio-rich", "value": "Analytical Engine notes"},
		{"selector": "#plan", "value": "Pro plan"}, // by label
		{"selector": "#interests", "value": []string{"sea", "Cities"}},
		{"selector": "#terms", "value": true},
		{"selector": "#news", "value": "off"},
		{"selector": "#dark", "value": true}, // the box is hidden: its label is clicked
		{"selector": "input[name=size]", "value": "Large"},
		{"selector": "#nope", "value": "x"},   // missing
		{"selector": "#code", "value": "x"},   // disabled
		{"selector": "#avatar", "value": "x"}, // file
		{"selector": "#plan", "value": "Platinum"},
	}
	res := s.call("fill_form", map[string]any{"fields": fields})
	head, _ := pageContent(t, resultText(res))
	var got []string
	for _, f := range head["fields"].([]any) {
		m := f.(map[string]any)
		got = append(got, fmt.Sprintf("%s %s", m["target"], m["status"]))
		if m["status"] != "filled" && m["reason"] == nil {
			t.Errorf("%s: %s without a reason", m["target"], m["status"])
		}
	}
	var want []string
	for _, f := range fields {
		want = append(want, "selector "+f["selector"].(string)+" filled")
	}
	want[22] = "selector #nope not_found"
	want[23] = "selector #code rejected"
	want[24] = "selector #avatar rejected"
	want[25] = "selector #plan rejected"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s\n%s", diff, resultText(res))
	}

	// The page sees every value: submit through the form's own button.
	s.call("fill_form", map[string]any{"fields": []map[string]any{{"selector": "#name", "value": "Ada King"}}, "submit": true})
	var data map[string]any
	if err := json.Unmarshal([]byte(s.evalString(`document.getElementById("result").textContent`)), &data); err != nil {
		t.Fatalf("the form was not submitted: %v", err)
	}
	wantData := map[string]any{
		"name": "Ada King", "email": "ada@allowed.test", "password": "s3cret-engine", "alias": "countess",
		"phone": "+44 20 7946 0000", "site": "https://allowed.test/ada", "age": "36", "volume": "7",
		"birthday": "1815-12-10", "alarm": "06:30", "meeting": "1843-07-01T10:00", "month": "1843-09",
		"week": "1843-W36", "colour": "#336699", "bio": "Wrote the first program.\nLiked poetry.",
		"rich": "Analytical Engine notes", "plan": "pro", "interests": []any{"sea", "cities"},
		"terms": "on", "dark": "on", "size": "l",
	}
	if diff := cmp.Diff(wantData, data); diff != "" {
		t.Errorf("submitted form data (-want +got):\n%s", diff)
	}

	t.Run("stop_on_error", func(t *testing.T) {
		head, _ := pageContent(t, resultText(s.call("fill_form", map[string]any{"stop_on_error": true, "submit": true, "fields": []map[string]any{
			{"selector": "#nope", "value": "x"}, {"selector": "#name", "value": "never"},
		}})))
		fs := head["fields"].([]any)
		if fs[0].(map[string]any)["status"] != "not_found" || fs[1].(map[string]any)["status"] != "skipped" {
			t.Errorf("fields %v", fs)
		}
		if sub := head["submit"].(map[string]any); sub["status"] != "skipped" {
			t.Errorf("submitted after a failure: %v", sub)
		}
		if got := s.evalString(`document.getElementById("name").value`); got != "Ada King" {
			t.Errorf("a skipped field was filled: %q", got)
		}
	})
}

// Every helper is decided by the policy on the page it would read: a tab
// that wandered off the allowlist is read by none of them.
func TestHelpersDeniedOffPolicy(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext)
	t.Parallel()
	s, allowed, leave := helperServer(t)
	// A direct navigation is refused before anything loads.
	s.fail("POLICY_DENIED", "navigate", map[string]any{"url": strings.Replace(allowed, "allowed.test", "other.test", 1) + "/pages/article.html"})
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_as_markdown", nil},
		{"extract_links", nil},
		{"fill_form", map[string]any{"fields": []map[string]any{{"selector": "input", "value": "x"}}}},
	} {
		// Each denial sends the tab to about:blank: wander off again.
		s.call("navigate", map[string]any{"url": allowed + "/wander"})
		leave()
		s.waitTabHidden() // the boundary kept other.test from loading
		txt := s.fail("POLICY_DENIED", c.tool, c.args)
		if strings.Contains(txt, "Saint-Malo") || strings.Contains(txt, "equinox") {
			t.Errorf("%s leaked page content: %s", c.tool, txt)
		}
	}
}

// defaultPolicyWith writes the default policy (every .rego file of
// policies/default but its tests) into a temp dir, with chromegate.rego
// passed through edit, and returns the dir for --policy.
func defaultPolicyWith(t testing.TB, edit func(src string) string) string {
	t.Helper()
	from := filepath.Join("..", "policies", "default")
	files, err := filepath.Glob(filepath.Join(from, "*.rego"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the default policy's files: %v", err)
	}
	dir := t.TempDir()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.rego") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "chromegate.rego" {
			src = []byte(edit(string(src)))
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), src, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
