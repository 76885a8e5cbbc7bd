package executor

import (
	"strings"
	"testing"
)

func TestCheckSelector(t *testing.T) {
	t.Parallel()
	refused := []string{
		"iframe >> internal:control=enter-frame >> #s",
		"#f>>internal:control=enter-frame>>#s",
		"  css=iframe  >>  internal:control  =enter-frame  >>  text=Pay",
		"iframe >> *internal:control=enter-frame >> p",
		"iframe >> INTERNAL:CONTROL=enter-frame >> p",
		`iframe >> internal\:control=enter-frame >> p`,
		`iframe >> internal\3a control=enter-frame >> p`,
		`iframe >> internal\u003acontrol=enter-frame >> p`,
		`body >> internal:has="iframe >> internal\u003acontrol=enter-frame >> #s"`,
		`body >> internal:has="body >> internal:has=\"iframe >> internal\\u003acontrol=enter-frame\""`,
	}
	for _, sel := range refused {
		err := CheckSelector(sel)
		if err == nil {
			t.Errorf("CheckSelector(%q) = nil, want BAD_ARGS", sel)
			continue
		}
		if e := AsError(err); e.Code != CodeBadArgs || !strings.Contains(e.Message, "selectors cannot enter frames") || e.Hint == "" {
			t.Errorf("CheckSelector(%q) = %v", sel, e)
		}
		if err := (Target{Selector: sel}).Validate(); err == nil {
			t.Errorf("Target{Selector: %q}.Validate() = nil", sel)
		}
	}
	for _, sel := range []string{
		"#s", "iframe", "iframe#f", ".center-frame", "[data-control=enter-frame]", "text=internal control",
		"role=button[name=\"OK\"]", `#\31 23`, "//p[@id='s']", "div >> text=Pay", `internal:has="p"`,
	} {
		if err := CheckSelector(sel); err != nil {
			t.Errorf("CheckSelector(%q) = %v, want nil", sel, err)
		}
	}
}

func FuzzCheckSelector(f *testing.F) {
	f.Add("iframe >> internal:control=enter-frame >> #s")
	f.Add(`internal\u003acontrol`)
	f.Add(`\3a \`)
	f.Fuzz(func(t *testing.T, sel string) {
		err := CheckSelector(sel)
		if strings.Contains(strings.ToLower(unescape(unescape(sel))), frameStep) && err == nil {
			t.Fatalf("CheckSelector(%q) let the frame step through", sel)
		}
	})
}

func TestOriginHidden(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"about:blank": true, "about:srcdoc": true, "ABOUT:blank#x": true, "data:text/html,hi": true,
		"blob:https://a.example/1f0e": true, "javascript:1": true, "": true, "%zz": true,
		"https://a.example/": false, "http://127.0.0.1:8080/x": false, "chrome://newtab/": false, "file:///tmp/x": false,
	} {
		if got := OriginHidden(url); got != want {
			t.Errorf("OriginHidden(%q) = %v, want %v", url, got, want)
		}
	}
}
