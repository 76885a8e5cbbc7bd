package main

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/chromegate/chromegate/mcp/dist"
)

// TestBundleSettingsAreServeFlags checks that every setting of the bundle's
// form names a flag serve has, so a manifest cannot drift from the flags.
func TestBundleSettingsAreServeFlags(t *testing.T) {
	var out bytes.Buffer
	_ = cmdServe(context.Background(), []string{"-h"}, &out)
	for _, s := range dist.Settings {
		name := "\n  " + strings.TrimPrefix(s.Flag, "-")
		if !strings.Contains(out.String(), name+" ") && !strings.Contains(out.String(), name+"\n") {
			t.Errorf("setting %s maps to %s, which serve does not have", s.Key, s.Flag)
		}
	}
}

func TestHostList(t *testing.T) {
	t.Parallel()
	var l hostList
	for _, v := range []string{"a.test", "", "b.test, *.c.test  d.test", ","} {
		if err := l.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(hostList{"a.test", "b.test", "*.c.test", "d.test"}, l); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// What a user (or whoever filled the form) types into "Allowed
	// domains" stays hosts: it cannot smuggle in a flag.
	for _, v := range []string{"a.test --unsafe-all-domains", "--enable-mutations", "a.test,-x"} {
		var l hostList
		if err := l.Set(v); err == nil {
			t.Errorf("%q accepted as %v", v, l)
		}
	}
}

// TestUseExtension maps the bundle's browser choice onto the backends and
// refuses flags that say the opposite.
func TestUseExtension(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args    []string
		want    extFlags
		wantErr string
	}{
		{args: nil, want: extFlags{}},
		{args: []string{"--use-extension"}, want: extFlags{noCDPFallback: true}},
		{args: []string{"--use-extension=true"}, want: extFlags{noCDPFallback: true}},
		{args: []string{"--use-extension=false"}, want: extFlags{noExtension: true}},
		{args: []string{"--use-extension=auto"}, want: extFlags{}},
		{args: []string{"--use-extension=false", "--with-extension"}, want: extFlags{withExtension: true}},
		{args: []string{"--use-extension=true", "--no-extension"}, wantErr: "drop --no-extension"},
		{args: []string{"--use-extension=false", "--no-cdp-fallback"}, wantErr: "drop --no-cdp-fallback"},
	}
	for _, tt := range tests {
		var f extFlags
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		err := f.applyUseExtension()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: err %v, want %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tt.args, err)
			continue
		}
		got := extFlags{noExtension: f.noExtension, noCDPFallback: f.noCDPFallback, withExtension: f.withExtension}
		if got != tt.want {
			t.Errorf("%v: got %+v, want %+v", tt.args, got, tt.want)
		}
	}
	if err := (&triBool{}).Set("maybe"); err == nil {
		t.Error("--use-extension=maybe accepted")
	}
}

// TestUnfilledSetting: a bundle variable the client left in place stops
// serve with the setting's name, instead of a directory or host named
// "${user_config.data_dir}".
func TestUnfilledSetting(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := cmdServe(context.Background(), []string{"--data-dir=${user_config.data_dir}"}, &out)
	if err == nil || !strings.Contains(err.Error(), "--data-dir=${user_config.data_dir}: a bundle setting was not filled in") {
		t.Errorf("err = %v", err)
	}
}
