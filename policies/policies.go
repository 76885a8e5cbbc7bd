// Package policies holds chromegate's Rego policies as files: the embedded
// default policy (default/), example policies for each kind of user
// (examples/), the JSON Schema of the input document and the README that
// documents them. The policy package loads Default when no --policy
// directory is given; `chromegate policy init` writes Tree out as a
// starting point.
package policies

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed README.md input.schema.json default examples
var tree embed.FS

// Tree is every file of this directory that ships in the binary:
// README.md, input.schema.json, default/ and examples/<name>/.
var Tree fs.FS = tree

// Default is the default policy directory: chromegate.rego (with
// reasons.rego, its words for a denial), its tests
// and data.json, rooted so that data.json is the top of data.
var Default fs.FS = mustSub("default")

// Examples holds one policy directory per example: ci-agent, desktop and
// security-team.
var Examples fs.FS = mustSub("examples")

// Schema is the JSON Schema of the policy input document.
func Schema() []byte {
	b, err := tree.ReadFile("input.schema.json")
	if err != nil {
		panic(err) // embedded at build time; cannot be missing
	}
	return b
}

func mustSub(dir string) fs.FS {
	sub, err := fs.Sub(tree, dir)
	if err != nil {
		panic(err) // a constant path into the embedded tree
	}
	return sub
}

// ErrExists is returned by WriteTree when a file it would write is there.
var ErrExists = errors.New("file exists")

// WriteTree writes Tree under dir (created if needed): dir/README.md,
// dir/input.schema.json, dir/default/... and dir/examples/<name>/..., so
// that `--policy dir/default` or `--policy dir/examples/ci-agent` loads one
// policy. It never overwrites: if any file exists it writes nothing and
// returns an error wrapping ErrExists.
func WriteTree(dir string) error {
	var files []string
	err := fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range files {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if _, err := os.Lstat(dst); err == nil {
			return fmt.Errorf("write policies to %s: %s: %w", dir, dst, ErrExists)
		}
	}
	for _, p := range files {
		b, err := tree.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("write policies: %w", err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return fmt.Errorf("write policies: %w", err)
		}
	}
	return nil
}
