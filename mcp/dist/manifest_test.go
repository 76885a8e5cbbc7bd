package dist

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/mcp"
)

// TestManifest checks the bundle manifest against the tool table and the
// form: every tool listed with its own description, every setting mapped
// onto one serve argument, and the binary named per platform.
func TestManifest(t *testing.T) {
	t.Parallel()
	for _, target := range Targets {
		m, err := NewManifest(BundleInput{Version: "v1.2.3", Target: target, Tools: mcp.Tools()})
		if err != nil {
			t.Fatal(err)
		}
		if m.Version != "1.2.3" || m.ManifestVersion != ManifestVersion {
			t.Errorf("%s: version %q, manifest_version %q", target, m.Version, m.ManifestVersion)
		}
		tools := mcp.Tools()
		if len(m.Tools) != len(tools) {
			t.Fatalf("%s: %d tools in the manifest, %d in the table", target, len(m.Tools), len(tools))
		}
		for i, tl := range tools {
			if m.Tools[i].Name != tl.Name || m.Tools[i].Description != tl.Description {
				t.Errorf("manifest tool %d is %q, the table's %q (or their descriptions differ)", i, m.Tools[i].Name, tl.Name)
			}
		}
		wantCmd := "${__dirname}/server/" + target.Exe()
		if m.Server.MCPConfig.Command != wantCmd || m.Server.EntryPoint != "server/"+target.Exe() {
			t.Errorf("%s: command %q, entry %q", target, m.Server.MCPConfig.Command, m.Server.EntryPoint)
		}
		if want := map[string]string{"windows": "win32"}[target.OS]; want != "" && m.Compatibility.Platforms[0] != want {
			t.Errorf("%s: platforms %v", target, m.Compatibility.Platforms)
		}
		args := m.Server.MCPConfig.Args
		if args[0] != "serve" {
			t.Errorf("args %v do not start with serve", args)
		}
		for key := range m.UserConfig {
			ref := "=${user_config." + key + "}"
			if !slices.ContainsFunc(args, func(a string) bool { return strings.HasSuffix(a, ref) && strings.HasPrefix(a, "--") }) {
				t.Errorf("setting %s reaches no serve flag in %v", key, args)
			}
		}
		if len(m.UserConfig) != len(Settings) {
			t.Errorf("%d settings in the form, %d declared", len(m.UserConfig), len(Settings))
		}
		for _, s := range Settings {
			// Every default is given, or Claude Desktop would pass the
			// placeholder through unreplaced.
			if s.Default == nil {
				t.Errorf("setting %s has no default", s.Key)
			}
		}
		b, err := m.JSON()
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `\u003c`) {
			t.Error("the manifest escapes HTML characters in descriptions")
		}
	}
}

func TestParseTargets(t *testing.T) {
	t.Parallel()
	all, err := ParseTargets("all")
	if err != nil || len(all) != 6 {
		t.Fatalf("all: %v %v", all, err)
	}
	got, err := ParseTargets("linux/amd64, windows/arm64")
	if err != nil || !slices.Equal(got, []Target{{"linux", "amd64"}, {"windows", "arm64"}}) {
		t.Errorf("got %v %v", got, err)
	}
	for _, bad := range []string{"linux", "plan9/amd64", "linux/amd64/x"} {
		if _, err := ParseTargets(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if n := ArchiveName("v1.0.0", Target{"windows", "amd64"}); n != "chromegate-1.0.0-windows-amd64.zip" {
		t.Errorf("windows archive %s", n)
	}
	if n := ArchiveName("1.0.0", Target{"darwin", "arm64"}); n != "chromegate-1.0.0-darwin-arm64.tar.gz" {
		t.Errorf("darwin archive %s", n)
	}
}
