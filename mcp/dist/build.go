package dist

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/chromegate/chromegate/extension"
	"github.com/chromegate/chromegate/mcp"
)

// Targets are the platforms a release is built for.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// ParseTargets reads "linux/amd64,darwin/arm64" (or "all").
func ParseTargets(s string) ([]Target, error) {
	if s == "" || s == "all" {
		return Targets, nil
	}
	var out []Target
	for _, p := range strings.Split(s, ",") {
		osName, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		t := Target{osName, arch}
		if !ok || !knownTarget(t) {
			return nil, fmt.Errorf("dist: target %q: want one of %v, as os/arch", p, Targets)
		}
		out = append(out, t)
	}
	return out, nil
}

func knownTarget(t Target) bool {
	for _, k := range Targets {
		if k == t {
			return true
		}
	}
	return false
}

// Stamp is what `chromegate version` prints of a release build.
type Stamp struct {
	Version, Commit, Date string
}

// Build cross-compiles chromegate for t into dst: static (CGO_ENABLED=0),
// without local paths (-trimpath), with s stamped into main.
func Build(ctx context.Context, repo string, t Target, s Stamp, dst string) error {
	ldflags := fmt.Sprintf("-s -w -X main.version=%s -X main.commit=%s -X main.date=%s", s.Version, s.Commit, s.Date)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", dst, "./cmd/chromegate")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("dist: go build for %s: %w\n%s", t, err, out.String())
	}
	return nil
}

// ArchiveFiles are a release archive's entries: the binary, the README and
// the extension as a folder to "Load unpacked".
func ArchiveFiles(repo string, t Target, bin string) ([]File, error) {
	files := []File{
		{Name: t.Exe(), Mode: 0o755, Path: bin},
		{Name: "README.md", Mode: 0o644, Path: filepath.Join(repo, "README.md")},
	}
	err := fs.WalkDir(extension.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(extension.FS(), p)
		files = append(files, File{Name: "extension/" + p, Mode: 0o644, Data: b})
		return err
	})
	return files, err
}

// StageBundle lays out an MCP Bundle's folder in dir, for `mcpb pack`:
// manifest.json (from the tool table) and server/chromegate.
func StageBundle(dir string, s Stamp, t Target, bin string) error {
	m, err := NewManifest(BundleInput{Version: s.Version, Target: t, Tools: mcp.Tools()})
	if err != nil {
		return err
	}
	b, err := m.JSON()
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "server"), 0o755); err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644); err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "server", t.Exe()), data, 0o755)
}

// BundleName is the bundle's file name for a target.
func BundleName(version string, t Target) string {
	return "chromegate-" + strings.TrimPrefix(version, "v") + "-" + t.String() + ".mcpb"
}

// Pack validates the staged bundle in dir with the mcpb CLI and packs it
// into dst.
func Pack(ctx context.Context, mcpbCLI, dir, dst string) error {
	for _, args := range [][]string{
		{"validate", filepath.Join(dir, "manifest.json")},
		{"pack", dir, dst},
	} {
		cmd := exec.CommandContext(ctx, mcpbCLI, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("dist: mcpb %s: %w\n%s", args[0], err, out.String())
		}
	}
	return nil
}
