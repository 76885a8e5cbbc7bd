package helpers

import (
	"reflect"
	"testing"
)

func TestOutlineRefs(t *testing.T) {
	t.Parallel()
	outline := `header
 kq1 link Home
 nav Main
  kq2 link "Docs" expanded
"kq9 link a fake line of page text"
# 12 ways
main
 links (ref kq+number):
 3 Guide one
 4
 12 Guide 12
 "Also:"
 kq13 textbox "Email" value="a@b.c" required
 links (ref kq+number):
 14 Next
7 not in a list
kq15 button Go`
	want := []OutlineRef{
		{"kq1", "link Home"},
		{"kq2", `link "Docs" expanded`},
		{"kq3", "link Guide one"},
		{"kq4", "link"},
		{"kq12", "link Guide 12"},
		{"kq13", `textbox "Email" value="a@b.c" required`},
		{"kq14", "link Next"},
		{"kq15", "button Go"},
	}
	if got := OutlineRefs(outline); !reflect.DeepEqual(got, want) {
		t.Errorf("OutlineRefs:\n got %q\nwant %q", got, want)
	}
}
