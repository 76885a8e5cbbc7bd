package policy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
)

// BundleOptions says how BuildBundle signs and labels a bundle.
type BundleOptions struct {
	// Revision is the manifest's revision, carried into every decision
	// the bundle makes and into OPA's status reports.
	Revision string
	// SigningKey is the private key, PEM (or the path of a PEM file).
	// Required: chromegate activates only signed bundles.
	SigningKey string
	// SigningAlg is the JWT algorithm (default RS256).
	SigningAlg string
	// KeyID, when set, is the kid of the signature; the server's
	// bundles.NAME.signing.keyid names the verifying key either way.
	KeyID string
}

// BuildBundle writes a signed OPA bundle (a .tar.gz) of the policy in
// fsys to w, with OPA's own bundle package: every .rego file but the
// *_test.rego ones, under its path in fsys, and the data files merged into
// one data.json the way the engine merges them (each under data at its
// directory's path), so that the bundle decides exactly as the directory
// does. The policy must load (New with WithFS) before anything is written.
// name names the policy in errors.
func BuildBundle(ctx context.Context, name string, fsys fs.FS, w io.Writer, opts BundleOptions) error {
	if opts.SigningKey == "" {
		return errors.New("bundle: a signing key is required")
	}
	if _, err := New(ctx, WithFS(name, fsys)); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	src := source{name: name, fsys: fsys}
	_, data, err := loadSource(src, false)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	files, err := walkPolicy(src, false)
	if err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	b := bundle.Bundle{Data: data, Manifest: bundle.Manifest{Revision: opts.Revision}}
	b.Manifest.SetRegoVersion(ast.RegoV1)
	for _, p := range files {
		if !strings.HasSuffix(p, ".rego") {
			continue
		}
		raw, err := fs.ReadFile(fsys, p)
		if err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		url := "/" + path.Clean(p)
		b.Modules = append(b.Modules, bundle.ModuleFile{URL: url, Path: url, Raw: raw})
	}
	if err := b.GenerateSignature(bundle.NewSigningConfig(opts.SigningKey, opts.SigningAlg, ""), opts.KeyID, false); err != nil {
		return fmt.Errorf("bundle: sign: %w", err)
	}
	if err := bundle.NewWriter(w).DisableFormat(true).Write(b); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	return nil
}
