package main

import (
	"flag"
	"io"
	"testing"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/mcp/httpapi"
)

// TestLoadFlags: --spare-renderer=auto turns the spare off only for a
// server of many sessions (--http); on and off say so whatever the mode; a
// wrong value is refused. --warm-sessions is on unless turned off.
func TestLoadFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		http    bool
		noSpare bool
		noWarm  bool
		bad     bool
	}{
		{args: nil, http: false, noSpare: false},
		{args: nil, http: true, noSpare: true},
		{args: []string{"--spare-renderer=on"}, http: true, noSpare: false},
		{args: []string{"--spare-renderer=off"}, http: false, noSpare: true},
		{args: []string{"--warm-sessions=off"}, http: true, noSpare: true, noWarm: true},
		{args: []string{"--spare-renderer=sometimes"}, bad: true},
	} {
		var l loadFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		l.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		var o cdp.Options
		err := l.browser(&o, tc.http)
		if tc.bad {
			if err == nil {
				t.Errorf("%v: accepted", tc.args)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		var h httpapi.Options
		l.http(&h)
		if o.NoSpareRenderer != tc.noSpare || h.NoWarm != tc.noWarm {
			t.Errorf("%v (http %v): NoSpareRenderer %v NoWarm %v, want %v %v", tc.args, tc.http, o.NoSpareRenderer, h.NoWarm, tc.noSpare, tc.noWarm)
		}
	}
}
