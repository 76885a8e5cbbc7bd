package record

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hostile is what a page could put in the record: its URL, its title,
// the reasons naming its host.
const hostile = `</pre><script>fetch("https://evil.test/x")</script><img src=x onerror=alert(1)>`

func writeRecord(t *testing.T, entries ...Entry) *Record {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rec")
	var failed error
	w, err := Open(dir, 0, func(err error) { failed = err })
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !w.Write(e, nil) {
			t.Fatalf("write: %v", failed)
		}
	}
	w.Close()
	r, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReportEscapesWhatPagesWrote(t *testing.T) {
	r := writeRecord(t,
		Entry{Time: time.Now(), Tool: "navigate", Decision: "allow", Acting: true, URL: "http://a.test/?q=" + hostile, Title: hostile, Summary: hostile},
		Entry{Time: time.Now(), Tool: "navigate", Decision: "deny", Code: "POLICY_DENIED", Reasons: []string{hostile}},
	)
	var b bytes.Buffer
	if err := Report(&b, r); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Contains(html, "<script>fetch") || strings.Contains(html, "<img src=x") {
		t.Errorf("page text reached the report unescaped")
	}
	if n := strings.Count(html, `<li class="entry`); n != 2 {
		t.Errorf("%d entries, want 2", n)
	}
	if !strings.Contains(html, "Content-Security-Policy") || !strings.Contains(html, "default-src &#39;none&#39;") {
		t.Error("no strict CSP")
	}
}

func TestWriterCap(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, maxLine+4096, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for w.Write(Entry{Tool: "get_text", Decision: "allow", Summary: strings.Repeat("x", 500)}, nil) {
		n++
	}
	if w.Write(Entry{Tool: "get_text"}, nil) {
		t.Error("a write after the cap")
	}
	r, _ := Read(dir)
	last := r.Entries[len(r.Entries)-1]
	if !last.Truncated || len(r.Entries) != n+1 {
		t.Errorf("want %d entries then a truncation mark, got %d, last %+v", n, len(r.Entries), last)
	}
	fi, _ := os.Stat(filepath.Join(dir, CallsFile))
	if fi.Size() > maxLine+4096 || fi.Mode().Perm() != 0o600 {
		t.Errorf("calls file %d bytes, mode %v", fi.Size(), fi.Mode().Perm())
	}
}

func TestExport(t *testing.T) {
	r := writeRecord(t,
		Entry{Tool: "navigate", Acting: true, Decision: "allow", Args: map[string]any{"url": "http://127.0.0.1:9/"}, URL: "http://127.0.0.1:9/"},
		Entry{Tool: "snapshot", Decision: "allow", URL: "http://127.0.0.1:9/"},
		Entry{Tool: "fill", Acting: true, Decision: "allow", Args: map[string]any{"ref": "kq3", "value": "[redacted]"},
			Target: &Element{Tag: "input", Role: "textbox", Name: "Full name", Label: "Full name", ID: "name"}, URL: "http://127.0.0.1:9/"},
		Entry{Tool: "type", Acting: true, Decision: "allow", Args: map[string]any{"ref": "kq4", "text": "<secret:PASSWORD>"},
			Target: &Element{Tag: "input", ID: "pw"}, URL: "http://127.0.0.1:9/"},
		Entry{Tool: "click", Acting: true, Decision: "deny", Args: map[string]any{"ref": "kq9"}},
		Entry{Tool: "click", Acting: true, Decision: "allow", Args: map[string]any{"ref": "kq5"},
			Target: &Element{Tag: "button", Role: "button", Name: `Say "hi"`}, URL: "http://127.0.0.1:9/done"},
		Entry{Tool: "click", Acting: true, Decision: "allow", Args: map[string]any{"selector": "#next"}, URL: "http://127.0.0.1:9/done"},
	)
	data, err := Export(r, "my_run")
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		Name   string
		Params struct {
			Properties map[string]map[string]any
			Required   []string
		}
		Steps []struct {
			Tool string
			Args map[string]any
		}
	}
	if err := json.Unmarshal(data, &def); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range def.Steps {
		a, _ := json.Marshal(s.Args)
		got = append(got, s.Tool+" "+string(a))
	}
	want := []string{
		`navigate {"url":"{{params.origin}}/"}`,
		`wait_for {"selector":"role=textbox[name=\"Full name\"]"}`,
		`fill {"selector":"role=textbox[name=\"Full name\"]","value":"{{params.value_1}}"}`,
		`type {"selector":"#pw","text":"\u003csecret:PASSWORD\u003e"}`,
		`click {"selector":"role=button[name=\"Say \\\"hi\\\"\"]"}`,
		`wait_for {"selector":"#next"}`,
		`click {"selector":"#next"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("steps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if def.Params.Properties["origin"]["default"] != "http://127.0.0.1:9" || strings.Join(def.Params.Required, ",") != "value_1" {
		t.Errorf("params: %+v", def.Params)
	}
	// The field's label is the page's words: no part of a parameter, which
	// tools/list would show (issue 27, finding 13).
	if pj, _ := json.Marshal(def.Params); strings.Contains(strings.ToLower(string(pj)), "full") {
		t.Errorf("page words in the parameters: %s", pj)
	}
	if strings.Contains(string(data), "kq") {
		t.Error("a ref went into the recipe")
	}

	// A call by ref whose element is unknown cannot be exported.
	r = writeRecord(t, Entry{Tool: "click", Acting: true, Decision: "allow", Args: map[string]any{"ref": "kq5"}})
	if _, err := Export(r, ""); err == nil {
		t.Error("exported a ref without a selector")
	}
}
