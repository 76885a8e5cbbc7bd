// Command dist builds what chromegate ships, for `make release` and `make
// mcpb`: per target a static binary with its version stamped, a release
// archive (.tar.gz, .zip for Windows) and an MCP Bundle packed by the mcpb
// CLI; the extension's zip; and SHA256SUMS over all of them.
//
//	go run ./cmd/dist -version 1.2.3 -targets all -mcpb PATH -out dist
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromegate/chromegate/extension"
	"github.com/chromegate/chromegate/mcp/dist"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func run() error {
	version := flag.String("version", "", "the release's version, e.g. 1.2.3 (required)")
	targets := flag.String("targets", "all", "os/arch,... or all")
	out := flag.String("out", "dist", "output directory")
	mcpbCLI := flag.String("mcpb", "", "the mcpb CLI; empty: no bundles")
	archives := flag.Bool("archives", true, "write the release archives and the extension zip")
	flag.Parse()
	if *version == "" {
		return fmt.Errorf("-version is required")
	}
	ts, err := dist.ParseTargets(*targets)
	if err != nil {
		return err
	}
	ctx := context.Background()
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	stamp := dist.Stamp{Version: strings.TrimPrefix(*version, "v"), Commit: git(repo, "rev-parse", "HEAD"), Date: git(repo, "log", "-1", "--format=%cI")}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "chromegate-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	var made []string
	for _, t := range ts {
		start := time.Now()
		bin := filepath.Join(work, t.String(), t.Exe())
		if err := dist.Build(ctx, repo, t, stamp, bin); err != nil {
			return err
		}
		built := time.Since(start)
		if *archives {
			files, err := dist.ArchiveFiles(repo, t, bin)
			if err != nil {
				return err
			}
			a := filepath.Join(*out, dist.ArchiveName(stamp.Version, t))
			if err := dist.WriteArchive(a, files); err != nil {
				return err
			}
			made = append(made, a)
		}
		if *mcpbCLI != "" {
			stage := filepath.Join(work, t.String(), "bundle")
			if err := dist.StageBundle(stage, stamp, t, bin); err != nil {
				return err
			}
			b := filepath.Join(*out, dist.BundleName(stamp.Version, t))
			if err := dist.Pack(ctx, *mcpbCLI, stage, b); err != nil {
				return err
			}
			made = append(made, b)
		}
		fmt.Printf("%-14s built in %v\n", t, built.Round(100*time.Millisecond))
	}
	if *archives {
		z := filepath.Join(*out, extension.ZipName())
		f, err := os.Create(z)
		if err != nil {
			return err
		}
		if err := extension.Zip(f, "chromegate-extension"); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		made = append(made, z)
	}
	if err := dist.WriteSums(filepath.Join(*out, "SHA256SUMS"), made); err != nil {
		return err
	}
	for _, p := range made {
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		fmt.Printf("%-52s %6.1f MB\n", p, float64(st.Size())/1e6)
	}
	fmt.Printf("%-52s\n", filepath.Join(*out, "SHA256SUMS"))
	return nil
}

// git runs git in repo; "" when it cannot (a tree without history).
func git(repo string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	b, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
