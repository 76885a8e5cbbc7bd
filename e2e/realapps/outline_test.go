package realapps

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseOutline(t *testing.T) {
	got := ParseOutline(`main
 # Log in
 kq3 textbox "Username" value="a\"b" required
 kq4 button Log in
 kq5 textbox value="== Saint-Malo =="
 links (ref kq+number):
 12 Main page
 13
 "text"`)
	want := []Control{
		{Ref: "kq3", Role: "textbox", Name: "Username", Line: `textbox "Username" value="a\"b" required`},
		{Ref: "kq4", Role: "button", Name: "Log in", Line: "button Log in"},
		{Ref: "kq5", Role: "textbox", Name: "", Line: `textbox value="== Saint-Malo =="`},
		{Ref: "kq12", Role: "link", Name: "Main page", Line: "link Main page"},
		{Ref: "kq13", Role: "link", Name: "", Line: "link "},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

func TestViewApply(t *testing.T) {
	var v View
	v.Set("main\n kq1 button Open\n kq2 textbox Name\n \"Saving…\"")
	// Lines keep their indentation after the two-character prefix.
	v.Apply("~  kq1 button \"Open\" expanded\n+  kq9 button Close\n-  kq2 textbox Name\n-  \"Saving…\"")
	if d := cmp.Diff("main\n kq1 button \"Open\" expanded\n kq9 button Close", v.Text()); d != "" {
		t.Error(d)
	}
	var names []string
	for _, c := range ParseOutline(v.Text()) {
		names = append(names, c.Ref+" "+c.Name)
	}
	if d := cmp.Diff([]string{"kq1 Open", "kq9 Close"}, names); d != "" {
		t.Error(d)
	}
}

func TestParseAria(t *testing.T) {
	got := ParseAria("- generic [ref=e1]:\n  - button \"Save \\\"all\\\"\" [ref=e12] [cursor=pointer]\n  - textbox \"Username\" [active] [ref=e5]\n  - text: hi")
	want := []Control{
		{Ref: "e1", Role: "generic", Line: "- generic [ref=e1]:"},
		{Ref: "e12", Role: "button", Name: `Save "all"`, Line: `- button "Save \"all\"" [ref=e12] [cursor=pointer]`},
		{Ref: "e5", Role: "textbox", Name: "Username", Line: `- textbox "Username" [active] [ref=e5]`},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}
