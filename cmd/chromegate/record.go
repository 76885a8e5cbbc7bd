package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/chromegate/chromegate/mcp/record"
)

// cmdReport turns a session's record into one self-contained HTML file.
func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs, "chromegate report [-o FILE] DIR  (DIR: a session's record, e.g. RECORD/local/default)")
	out := fs.String("o", "", "write the HTML here (default: DIR/report.html; - for stdout)")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	dir := fs.Arg(0)
	rec, err := record.Read(dir)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := record.Report(&b, rec); err != nil {
		return err
	}
	path := *out
	if path == "" {
		path = filepath.Join(dir, "report.html")
	}
	if path == "-" {
		_, err := stdout.Write(b.Bytes())
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s (%d calls, %d bytes)\n", path, len(rec.Entries), b.Len())
	return nil
}

// cmdRecipe exports a recorded run as a plugin tool.
func cmdRecipe(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, "usage: chromegate recipe export [--name NAME] [-o FILE] DIR")
		return errUsage
	}
	fs := flag.NewFlagSet("recipe export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageFor(fs, "chromegate recipe export [--name NAME] [-o FILE] DIR")
	name := fs.String("name", "recorded_run", "the plugin tool's name (lower case, digits, _)")
	out := fs.String("o", "", "write the plugin JSON here (default: stdout); put it in a --plugins directory")
	if err := parseArgs(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	rec, err := record.Read(fs.Arg(0))
	if err != nil {
		return err
	}
	data, err := record.Export(rec, *name)
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if *out == "" {
		_, err := stdout.Write(data)
		return err
	}
	return os.WriteFile(*out, data, 0o644)
}
