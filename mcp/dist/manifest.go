// Package dist makes what chromegate ships: the MCP Bundle manifest for
// Claude Desktop (written from the tool table, so every tool the server
// serves is listed with its own description), and the release archives
// with their SHA256SUMS. `make mcpb` and `make release` run it through
// cmd/dist.
package dist

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/chromegate/chromegate/mcp"
)

// ManifestVersion is the newest MCP Bundle manifest version that the pinned
// @anthropic-ai/mcpb validates.
const ManifestVersion = "0.4"

// Target is one platform chromegate is built for, as Go names it.
type Target struct{ OS, Arch string }

func (t Target) String() string { return t.OS + "-" + t.Arch }

// Exe is the binary's file name on the target.
func (t Target) Exe() string {
	if t.OS == "windows" {
		return "chromegate.exe"
	}
	return "chromegate"
}

// mcpbPlatform is the target's name in a bundle manifest (Node's
// process.platform).
func (t Target) mcpbPlatform() string {
	if t.OS == "windows" {
		return "win32"
	}
	return t.OS
}

// Manifest is an MCP Bundle manifest (the subset chromegate fills).
type Manifest struct {
	ManifestVersion string                `json:"manifest_version"`
	Name            string                `json:"name"`
	DisplayName     string                `json:"display_name"`
	Version         string                `json:"version"`
	Description     string                `json:"description"`
	LongDescription string                `json:"long_description"`
	Author          Author                `json:"author"`
	Homepage        string                `json:"homepage,omitempty"`
	License         string                `json:"license,omitempty"`
	Keywords        []string              `json:"keywords"`
	Server          Server                `json:"server"`
	Tools           []ManifestTool        `json:"tools"`
	ToolsGenerated  bool                  `json:"tools_generated"`
	Compatibility   Compatibility         `json:"compatibility"`
	UserConfig      map[string]UserConfig `json:"user_config"`
}

// Author is the manifest's author.
type Author struct {
	Name string `json:"name"`
	URL  string `json:"url,omitempty"`
}

// Server says how Claude Desktop starts the server.
type Server struct {
	Type       string    `json:"type"`
	EntryPoint string    `json:"entry_point"`
	MCPConfig  MCPConfig `json:"mcp_config"`
}

// MCPConfig is the command line; ${__dirname} is the unpacked bundle and
// ${user_config.KEY} a setting of the form.
type MCPConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// ManifestTool is one tool as the bundle lists it.
type ManifestTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Compatibility names the platform the bundle's binary runs on.
type Compatibility struct {
	Platforms []string `json:"platforms"`
}

// UserConfig is one field of the form Claude Desktop shows on install.
type UserConfig struct {
	Type        string `json:"type"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	Default     any    `json:"default"`
}

// Setting is one user_config field and the serve flag it becomes.
type Setting struct {
	Key  string
	Flag string // --flag=${user_config.Key}
	UserConfig
}

// Settings are what a desktop user decides, each mapped onto one serve
// flag. Every default is a value the flag takes, so an untouched form
// starts the server as `chromegate serve` would, plus the bundle's safe
// choice of browser (one chromegate launches, never the user's own Chrome
// until they say so).
var Settings = []Setting{
	{Key: "allowed_domains", Flag: "--allow-domain", UserConfig: UserConfig{
		Type:        "string",
		Title:       "Allowed domains",
		Description: "Hosts the model may open and read, separated by commas or spaces; *.example.com allows every subdomain. Empty: every navigation is refused until you add one.",
		Default:     "",
	}},
	{Key: "enable_mutations", Flag: "--enable-mutations", UserConfig: UserConfig{
		Type:        "boolean",
		Title:       "Allow changes to pages",
		Description: "Let the model click, type, fill forms, press keys, select, drag, upload and set cookies on allowed pages. Off: it can only navigate and read.",
		Default:     false,
	}},
	{Key: "tools", Flag: "--tools", UserConfig: UserConfig{
		Type:        "string",
		Title:       "Tool groups",
		Description: "Which tools Claude sees, by group, separated by commas: core (navigate, read, click, type, tabs, wait), extract (HTML, Markdown, links, whole forms), scripts (JavaScript), state (cookies, saved logins), files (uploads, downloads, PDF), observe (console, network log), emulate (devices), pages (tools web pages offer), or all. Claude can turn groups on itself with tool_groups.",
		Default:     "core",
	}},
	{Key: "use_my_chrome", Flag: "--use-extension", UserConfig: UserConfig{
		Type:        "boolean",
		Title:       "Use my Chrome (through the chromegate extension)",
		Description: "On: drive your own Chrome, with your logins, through the chromegate extension (install it from the release's chromegate-extension zip, then pair once: see the README); no browser is launched. Off: chromegate launches its own Chromium or Chrome with a separate profile.",
		Default:     false,
	}},
	{Key: "data_dir", Flag: "--data-dir", UserConfig: UserConfig{
		Type:        "directory",
		Title:       "Data directory",
		Description: "Where chromegate keeps the launched browser's profile, downloads, saved logins and the extension's pairing. Empty: the default (~/.local/share/chromegate).",
		Default:     "",
	}},
	{Key: "install_driver", Flag: "--install-driver", UserConfig: UserConfig{
		Type:        "boolean",
		Title:       "Install the Playwright driver when missing",
		Description: "A launched browser is driven through the Playwright driver (playwright-core from npm, run by Node.js). On: when it is missing, chromegate installs it on start, as `chromegate setup` does (Node.js and npm must be installed). Never downloads a browser.",
		Default:     true,
	}},
}

// BundleInput is what one bundle's manifest is made from.
type BundleInput struct {
	Version string
	Target  Target
	Tools   []*mcp.Tool
}

// NewManifest writes the bundle manifest for in.Target.
func NewManifest(in BundleInput) (*Manifest, error) {
	if in.Version == "" {
		return nil, fmt.Errorf("dist: manifest: no version")
	}
	if len(in.Tools) == 0 {
		return nil, fmt.Errorf("dist: manifest: no tools")
	}
	entry := "server/" + in.Target.Exe()
	args := []string{"serve"}
	form := map[string]UserConfig{}
	for _, s := range Settings {
		args = append(args, s.Flag+"=${user_config."+s.Key+"}")
		form[s.Key] = s.UserConfig
	}
	m := &Manifest{
		ManifestVersion: ManifestVersion,
		Name:            "chromegate",
		DisplayName:     "chromegate — a policy-gated browser",
		Version:         strings.TrimPrefix(in.Version, "v"),
		Description:     "Drive Chromium or your own Chrome, with every navigation, read and action decided by a policy that denies by default.",
		LongDescription: "chromegate is an MCP server that lets Claude drive a browser: it navigates, reads pages as an outline or Markdown, fills forms, clicks, takes screenshots and PDFs. Every call is decided by a Rego policy that denies by default: only the domains you allow, and changes to pages only when you allow them. Page content reaches the model inside an untrusted-content fence. It drives a Chromium or Chrome it launches (needs the Playwright driver: Node.js, and `chromegate setup`, which this bundle runs for you when \"Install the Playwright driver\" is on), or your own Chrome through its extension. chrome_status tells what is missing and how to get it.",
		Author:          Author{Name: "chromegate"},
		Keywords:        []string{"browser", "chromium", "chrome", "policy", "playwright", "automation"},
		Server: Server{
			Type:       "binary",
			EntryPoint: entry,
			MCPConfig: MCPConfig{
				Command: "${__dirname}/" + entry,
				Args:    args,
			},
		},
		Compatibility: Compatibility{Platforms: []string{in.Target.mcpbPlatform()}},
		UserConfig:    form,
	}
	for _, t := range in.Tools {
		m.Tools = append(m.Tools, ManifestTool{Name: t.Name, Description: t.Description})
	}
	return m, nil
}

// JSON is the manifest as written into the bundle.
func (m *Manifest) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("dist: manifest: %w", err)
	}
	return b.Bytes(), nil
}
