package main

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStamp(t *testing.T) {
	t.Parallel()
	info := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/chromegate/chromegate", Version: "v0.3.1"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc123"},
			{Key: "vcs.time", Value: "2026-11-20T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	devel := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
	tests := []struct {
		name    string
		v, c, d string
		info    *debug.BuildInfo
		want    buildStamp
	}{
		{"stamped by make release wins", "1.2.0", "fff", "2026-11-24T00:00:00Z", info,
			buildStamp{Version: "1.2.0", Commit: "fff", Date: "2026-11-24T00:00:00Z"}},
		{"go install of a module version", "", "", "", info,
			buildStamp{Version: "v0.3.1", Commit: "abc123", Date: "2026-11-20T10:00:00Z", Modified: true}},
		{"go build in a checkout", "", "", "", devel, buildStamp{Version: "dev"}},
		{"no build info", "", "", "", nil, buildStamp{Version: "dev"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := stampFrom(tt.v, tt.c, tt.d, func() (*debug.BuildInfo, bool) { return tt.info, tt.info != nil })
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("stamp (-want +got):\n%s", d)
			}
		})
	}
}
