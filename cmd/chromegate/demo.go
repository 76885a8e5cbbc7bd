package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/chromegate/chromegate/cmd/chromegate/internal/demo"
)

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs, "chromegate demo [flags]")
	out := fs.String("out", "demo-out", "directory for the screenshot the demo takes")
	verbose := fs.Bool("verbose", false, "show the server's log as it runs")
	var bf browserFlags
	fs.StringVar(&bf.executablePath, "executable-path", "", "Chromium or Chrome binary (as for serve)")
	fs.StringVar(&bf.driverPath, "driver-path", "", "Playwright driver directory (as for serve)")
	fs.BoolVar(&bf.headed, "headed", false, "show the browser window")
	fs.Var(&bf.browserArgs, "browser-arg", "extra Chromium flag (repeatable)")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find my own binary: %w", err)
	}
	var serveArgs []string
	if bf.executablePath != "" {
		serveArgs = append(serveArgs, "--executable-path="+bf.executablePath)
	}
	if bf.driverPath != "" {
		serveArgs = append(serveArgs, "--driver-path="+bf.driverPath)
	}
	if bf.headed {
		serveArgs = append(serveArgs, "--headed")
	}
	for _, a := range bf.browserArgs {
		serveArgs = append(serveArgs, "--browser-arg="+a)
	}
	var serverLog bytes.Buffer
	logTo := io.Writer(&serverLog)
	if *verbose {
		logTo = stderr
	}
	err = demo.Run(ctx, demo.Options{Binary: self, ServeArgs: serveArgs, OutDir: *out, Out: stdout, ServerLog: logTo})
	if err != nil && serverLog.Len() > 0 {
		fmt.Fprintf(stderr, "server log:\n%s", serverLog.String())
	}
	return err
}
