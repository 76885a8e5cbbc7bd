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
