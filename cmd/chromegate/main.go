// Command chromegate is an MCP server that lets MCP clients drive Chromium,
// with every read, navigation and eval decided by a Rego policy.
//
//	chromegate serve     MCP over stdio (the default for Claude Desktop / Code), or HTTP with --http
//	chromegate keys      create, list and revoke keys for the HTTP transports
//	chromegate setup     install the pinned Playwright driver from npm
//	chromegate doctor    check node, driver, Chromium and the data dir
//	chromegate demo      a scripted agent session against a built-in demo site
//	chromegate policy    test, evaluate and write out Rego policies
//	chromegate plugins   write out and check plugin tools
//	chromegate extension write out the MV3 extension
//	chromegate pair      pair the extension: native host, code, reset
//	chromegate version   print versions
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `chromegate — a policy-gated MCP server for Chromium

usage: chromegate <command> [flags]

commands:
  serve     serve MCP over stdio (stdout carries only MCP; logs go to stderr),
            or with --http ADDR Streamable HTTP MCP at /mcp and REST at /api/v1/
  keys      create, list and revoke keys for the HTTP transports
  setup     install the pinned Playwright driver (playwright-core) from npm; never downloads a browser
  doctor    check node, the driver, Chromium and the data dir, and print a fix for each problem
  demo      run a scripted agent session against a built-in demo site
  policy    test, evaluate and start your own Rego policies (chromegate policy -h)
  plugins   write out the example plugin tools, and check a plugin directory (chromegate plugins -h)
  extension write out the Chrome extension for "Load unpacked" (install DIR | path)
  pair      pair the extension with this server (install | code | reset)
  report    turn a session's record (serve --record) into one HTML file
  recipe    export a recorded run as a plugin tool (recipe export DIR)
  version   print chromegate's and its components' versions

Run 'chromegate <command> -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "serve":
		err = cmdServe(ctx, rest, stderr)
	case "keys":
		err = cmdKeys(ctx, rest, stdout, stderr)
	case "setup":
		err = cmdSetup(ctx, rest, stdout, stderr)
	case "doctor":
		err = cmdDoctor(ctx, rest, stdout, stderr)
	case "demo":
		err = cmdDemo(ctx, rest, stdout, stderr)
	case "policy":
		err = cmdPolicy(ctx, rest, stdout, stderr)
	case "plugins":
		err = cmdPlugins(rest, stdout, stderr)
	case "report":
		err = cmdReport(rest, stdout, stderr)
	case "recipe":
		err = cmdRecipe(rest, stdout, stderr)
	case "extension":
		err = cmdExtension(rest, stdout, stderr)
	case "pair":
		err = cmdPair(ctx, rest, stdout, stderr)
	case "native-host":
		err = cmdNativeHost(rest, stdin, stdout, stderr)
	case "version", "--version", "-version":
		printVersion(stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "chromegate: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintf(stderr, "chromegate %s: %v\n", cmd, err)
		return 1
	}
}

// errUsage marks an error that flag parsing has already reported.
var errUsage = errors.New("usage")
