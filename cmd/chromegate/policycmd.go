package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/chromegate/chromegate/policies"
	"github.com/chromegate/chromegate/policy"
)

const policyUsage = `usage: chromegate policy <command>

commands:
  test [DIR…]         run the Rego unit tests (*_test.rego) of the policies in DIR
                      (default: the embedded default policy and every example)
  eval --input FILE   print the decision for an input document (JSON)
  init DIR            write the default policy, the examples and the input schema
                      to DIR as a starting point for your own
  build --signing-key KEY.pem -o BUNDLE.tar.gz [DIR]
                      build a signed OPA bundle of the policy in DIR (default: the
                      embedded default policy) for serve --opa-config
`

func cmdPolicy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, policyUsage)
		return errUsage
	}
	switch args[0] {
	case "test":
		return policyTest(ctx, args[1:], stdout, stderr)
	case "eval":
		return policyEval(ctx, args[1:], stdout, stderr)
	case "init":
		return policyInit(args[1:], stdout, stderr)
	case "build":
		return policyBuild(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, policyUsage)
		return nil
	}
	fmt.Fprintf(stderr, "chromegate policy: unknown command %q\n\n%s", args[0], policyUsage)
	return errUsage
}

func policyTest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("policy test", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs, "chromegate policy test [flags] [DIR…]")
	coverage := fs.Bool("coverage", true, "report the share of policy lines the tests run")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	var passed, failed int
	run := func(p, f int, err error) error {
		passed += p
		failed += f
		return err
	}
	if fs.NArg() > 0 {
		for _, dir := range fs.Args() {
			fmt.Fprintf(stdout, "== %s\n", dir)
			if err := run(policy.Test(ctx, []string{dir}, stdout, *coverage)); err != nil {
				return err
			}
		}
	} else {
		fmt.Fprintf(stdout, "== %s (embedded)\n", policy.DefaultSource)
		if err := run(policy.TestFS(ctx, policy.DefaultSource, policies.Default, stdout, *coverage)); err != nil {
			return err
		}
		names, err := exampleNames()
		if err != nil {
			return err
		}
		for _, name := range names {
			sub, err := fsSub(policies.Examples, name)
			if err != nil {
				return err
			}
			label := path.Join("policies/examples", name)
			fmt.Fprintf(stdout, "== %s (embedded)\n", label)
			if err := run(policy.TestFS(ctx, label, sub, stdout, *coverage)); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(stdout, "%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return fmt.Errorf("%d policy test(s) failed", failed)
	}
	if passed == 0 {
		return fmt.Errorf("no policy tests found (tests are rules named test_* in *_test.rego files)")
	}
	return nil
}

func exampleNames() ([]string, error) {
	entries, err := fs.ReadDir(policies.Examples, ".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func fsSub(fsys fs.FS, dir string) (fs.FS, error) { return fs.Sub(fsys, dir) }

func policyEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var pf policyFlags
	fs := flag.NewFlagSet("policy eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs, "chromegate policy eval --input FILE [flags]")
	input := fs.String("input", "", "the input document, JSON (- for standard input)")
	pf.register(fs)
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if *input == "" {
		fmt.Fprintln(stderr, "policy eval needs --input FILE")
		return errUsage
	}
	var raw []byte
	var err error
	if *input == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(*input)
	}
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("input %s is not JSON: %w", *input, err)
	}
	opts := []policy.Option{policy.WithData(pf.data()), policy.WithTimeout(pf.timeout)}
	if pf.dir != "" {
		opts = append(opts, policy.WithDir(pf.dir))
	}
	if pf.dataFile != "" {
		opts = append(opts, policy.WithDataFile(pf.dataFile))
	}
	eng, err := policy.New(ctx, opts...)
	if err != nil {
		return fmt.Errorf("load policy: %w", err)
	}
	d := eng.DecideDocument(ctx, doc)
	out, _ := json.MarshalIndent(d, "", "  ")
	fmt.Fprintln(stdout, string(out))
	return nil
}

func policyInit(args []string, stdout, stderr io.Writer) error {
	if len(args) != 1 || args[0] == "" || args[0][0] == '-' {
		fmt.Fprintln(stderr, "usage: chromegate policy init DIR")
		return errUsage
	}
	dir := args[0]
	if err := policies.WriteTree(dir); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote the default policy, the examples and the input schema to %s\n", dir)
	fmt.Fprintf(stdout, "edit %s/default, test it with `chromegate policy test %s/default`, serve it with `chromegate serve --policy %s/default`\n", dir, dir, dir)
	return nil
}

func policyBuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("policy build", flag.ContinueOnError)
	flags.SetOutput(stderr)
	flags.Usage = usageFor(flags, "chromegate policy build --signing-key KEY.pem -o BUNDLE.tar.gz [flags] [DIR]")
	key := flags.String("signing-key", "", "PEM file of the private key that signs the bundle (required; the servers verify with its public key, keys.ID.key in their OPA configuration)")
	alg := flags.String("signing-alg", "RS256", "signature algorithm: RS256, RS384, RS512, PS256, ES256, ES384, ES512, HS256, ...")
	keyID := flags.String("key-id", "", "key id written into the signature (optional: the servers' bundles.NAME.signing.keyid picks the key)")
	revision := flags.String("revision", "", "the bundle's revision, reported in every decision and status (default: the time, 20060102T150405Z)")
	out := flags.String("o", "", "write the bundle here (atomically: a server serving the file never sees half of it)")
	if err := parseArgs(flags, args); err != nil {
		return err
	}
	if *key == "" || *out == "" || flags.NArg() > 1 {
		flags.Usage()
		return errUsage
	}
	var fsys fs.FS = policies.Default
	name := policy.DefaultSource
	if flags.NArg() == 1 {
		name, fsys = flags.Arg(0), os.DirFS(flags.Arg(0))
	}
	pem, err := os.ReadFile(*key)
	if err != nil {
		return fmt.Errorf("--signing-key: %w", err)
	}
	rev := *revision
	if rev == "" {
		rev = time.Now().UTC().Format("20060102T150405Z")
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".bundle-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = policy.BuildBundle(ctx, name, fsys, tmp, policy.BundleOptions{Revision: rev, SigningKey: string(pem), SigningAlg: *alg, KeyID: *keyID})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644) // a bundle is public: it is served
	}
	if err == nil {
		err = os.Rename(tmp.Name(), *out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: the policy %s, revision %s, signed with %s\n", *out, name, rev, *alg)
	return nil
}
