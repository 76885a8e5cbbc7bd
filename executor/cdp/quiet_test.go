package cdp

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestQuietArgs: every launch carries the switches that keep the browser
// from calling anyone of its own accord, and one --disable-features, last
// but for --enable-features, that keeps Playwright's features, ours and
// the user's.
func TestQuietArgs(t *testing.T) {
	b, err := New(Options{BrowserArgs: []string{"--disable-features=UserThing", "--lang=de"}})
	if err != nil {
		t.Fatal(err)
	}
	args := b.chromiumArgs()
	for _, want := range quietSwitches {
		if !slices.Contains(args, want) {
			t.Errorf("missing %s in %v", want, args)
		}
	}
	var disable []string
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--disable-features="); ok {
			if i != len(args)-2 {
				t.Errorf("--disable-features is not next to last: %v", args)
			}
			disable = append(disable, strings.Split(v, ",")...)
		}
	}
	if strings.Count(strings.Join(args, " "), "--disable-features=") != 1 {
		t.Fatalf("want exactly one --disable-features, got %v", args)
	}
	for _, f := range append(append(slices.Clone(playwrightDisabledFeatures), quietFeatures...), "UserThing") {
		if !slices.Contains(disable, f) {
			t.Errorf("--disable-features lacks %s: %v", f, disable)
		}
	}
	// The switches that send a Google service nowhere name a port Chromium
	// refuses and a name that never resolves.
	for _, a := range args {
		if strings.Contains(a, "chromegate.invalid") && !strings.HasSuffix(a, ".chromegate.invalid:1/") {
			t.Errorf("%s: not port 1 of a .invalid name", a)
		}
	}
}

// TestDisabledFeaturesKeepPlaywrights: our --disable-features replaces
// Playwright's (Chromium reads the last), so it must list every feature the
// installed driver disables.
func TestDisabledFeaturesKeepPlaywrights(t *testing.T) {
	d, err := FindDriver("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	src, err := os.ReadFile(filepath.Join(d.Dir, "package", "lib", "coreBundle.js"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`disabledFeatures = \[([^\]]*)\]`).FindSubmatch(src)
	if m == nil {
		t.Fatal("the driver's bundle has no disabledFeatures list: read chromiumSwitches.ts of this Playwright and update playwrightDisabledFeatures")
	}
	var theirs []string
	for _, q := range regexp.MustCompile(`"([A-Za-z0-9]+)"`).FindAllSubmatch(m[1], -1) {
		theirs = append(theirs, string(q[1]))
	}
	if len(theirs) == 0 {
		t.Fatalf("no features read from %q", m[1])
	}
	for _, f := range theirs {
		if !slices.Contains(playwrightDisabledFeatures, f) {
			t.Errorf("Playwright %s disables %s; playwrightDisabledFeatures lacks it", d.Version, f)
		}
	}
}

// TestSpareRendererArgs: NoSpareRenderer adds the spare renderer's feature
// to the one --disable-features switch (beside Playwright's, ours and the
// user's); without it the spare is kept.
func TestSpareRendererArgs(t *testing.T) {
	for _, off := range []bool{false, true} {
		b, err := New(Options{NoSpareRenderer: off, BrowserArgs: []string{"--disable-features=UserThing"}})
		if err != nil {
			t.Fatal(err)
		}
		var disable []string
		for _, a := range b.chromiumArgs() {
			if v, ok := strings.CutPrefix(a, "--disable-features="); ok {
				disable = append(disable, strings.Split(v, ",")...)
			}
		}
		for _, f := range spareRendererFeatures {
			if got := slices.Contains(disable, f); got != off {
				t.Errorf("NoSpareRenderer=%v: %s disabled = %v", off, f, got)
			}
		}
		if !slices.Contains(disable, "UserThing") || !slices.Contains(disable, quietFeatures[0]) {
			t.Errorf("NoSpareRenderer=%v lost a feature: %v", off, disable)
		}
	}
}
