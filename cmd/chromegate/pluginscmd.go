package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/chromegate/chromegate/mcp"
)

const pluginsUsage = `usage: chromegate plugins <command>

commands:
  init DIR    write the example plugin tools to DIR (acme_signup against the demo
              site; post_status, a recipe for posting to Mastodon, and under
              policy/ the policy data it needs); never overwrites a file
  check DIR   load DIR as 'chromegate serve --plugins DIR' would, and report each
              plugin tool and each rejected file with its reason; exit status 1
              if any file was rejected
`

func cmdPlugins(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, pluginsUsage)
		return errUsage
	}
	switch args[0] {
	case "init":
		return pluginsInit(args[1:], stdout, stderr)
	case "check":
		return pluginsCheck(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, pluginsUsage)
		return nil
	}
	fmt.Fprintf(stderr, "chromegate plugins: unknown command %q\n\n%s", args[0], pluginsUsage)
	return errUsage
}

func oneDir(name string, args []string, stderr io.Writer) (string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs, "chromegate "+name+" DIR")
	if err := parseArgs(fs, args); err != nil {
		return "", err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return "", errUsage
	}
	return fs.Arg(0), nil
}

func pluginsInit(args []string, stdout, stderr io.Writer) error {
	dir, err := oneDir("plugins init", args, stderr)
	if err != nil {
		return err
	}
	written, err := mcp.WritePluginExamples(dir)
	for _, p := range written {
		fmt.Fprintf(stdout, "wrote %s\n", p)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "serve them with: chromegate serve --plugins %s\n", dir)
	return nil
}

var errRejected = errors.New("some plugin files were rejected")

func pluginsCheck(args []string, stdout, stderr io.Writer) error {
	dir, err := oneDir("plugins check", args, stderr)
	if err != nil {
		return err
	}
	ps, err := mcp.LoadPlugins(dir)
	if err != nil {
		return err
	}
	for _, p := range ps.Loaded {
		fmt.Fprintf(stdout, "ok       %s  %s  steps: %v\n", p.Name(), p.File, p.Tools())
	}
	for _, r := range ps.Rejected {
		fmt.Fprintf(stdout, "rejected %s: %s\n", r.File, r.Reason)
	}
	if len(ps.Rejected) > 0 {
		return errRejected
	}
	return nil
}
