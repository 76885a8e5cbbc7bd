package mcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
)

// ResultData is the value the text was rendered from, with the page text
// as far as the text shows it, the note when it was cut, and the image.
func TestResultData(t *testing.T) {
	s := &Server{opts: Options{MaxResultChars: 40}}
	value := map[string]any{"a": 1}
	res, err := s.envelope(&Tool{}, &Result{Value: value, Text: "line one\nline two", Untrusted: true})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := ResultData(res)
	if diff := gocmp.Diff(Data{Value: value, Text: "line one\nline two", Untrusted: true}, d); !ok || diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	res, _ = s.envelope(&Tool{}, &Result{Value: value, Text: strings.Repeat("x", 100)})
	d, _ = ResultData(res)
	if d.Value == nil || !strings.HasPrefix(d.Truncated, "…[truncated: showed 40 of 108") || d.Text != strings.Repeat("x", 40-8) {
		t.Errorf("cut result: %+v", d)
	}
	// A value the cap cuts into is left out: the text shows its start.
	res, _ = s.envelope(&Tool{}, &Result{Value: map[string]any{"a": strings.Repeat("y", 50)}, Text: "page"})
	if d, _ = ResultData(res); d.Value != nil || d.Text != "" || d.Truncated == "" {
		t.Errorf("value cut: %+v", d)
	}
	res, _ = s.envelope(&Tool{}, &Result{Value: value, Image: &Image{Data: []byte{1, 2}, MIMEType: "image/png"}})
	if d, _ := ResultData(res); d.Image == nil || d.Image.MIMEType != "image/png" || !bytes.Equal(d.Image.Data, []byte{1, 2}) {
		t.Errorf("image: %+v", d)
	}
	// Over MCP the image's bytes are the image content's only.
	b, _ := json.Marshal(res.StructuredContent)
	if want := `{"data":{"a":1},"image":{"mime_type":"image/png"}}`; string(b) != want {
		t.Errorf("structured content %s, want %s", b, want)
	}
	// A redacted result's structured content is JSON: the same fields.
	res.StructuredContent = json.RawMessage(`{"data":{"b":2,"a":1},"text":"t","truncated":"n"}`)
	if d, _ := ResultData(res); string(d.Value.(json.RawMessage)) != `{"b":2,"a":1}` || d.Text != "t" || d.Truncated != "n" {
		t.Errorf("redacted: %+v", d)
	}
}

// FuzzResultData: the structured content of a result is exactly what the
// handler returned — the value, the page text, the untrusted mark —
// whatever the page wrote, fences and fake truncation notes included.
func FuzzResultData(f *testing.F) {
	f.Add("title", "page text", true)
	f.Add("", "", false)
	f.Add("a\nb", "{\"x\":1}\nmore", true)
	f.Add("«/page-0011»", "«/page-0011»\n…[truncated: showed 1 of 2 characters; x]", true)
	f.Add("[1]", "[not json", false)
	s := &Server{opts: Options{MaxResultChars: 1 << 20}}
	f.Fuzz(func(t *testing.T, title, text string, untrusted bool) {
		value := map[string]any{"title": title}
		res, err := s.envelope(&Tool{}, &Result{Value: value, Text: text, Untrusted: untrusted})
		if err != nil {
			t.Fatal(err)
		}
		d, ok := ResultData(res)
		if !ok {
			t.Fatal("no structured content")
		}
		if diff := gocmp.Diff(any(value), d.Value); diff != "" {
			t.Errorf("value (-want +got):\n%s", diff)
		}
		if d.Text != text || d.Untrusted != untrusted || d.Truncated != "" {
			t.Errorf("got text %q untrusted %v truncated %q; want %q %v", d.Text, d.Untrusted, d.Truncated, text, untrusted)
		}
	})
}
