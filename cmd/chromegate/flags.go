package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

// listFlag is a repeatable string flag; from the environment it takes a
// comma-separated list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// envName is the environment variable that stands in for a flag:
// --executable-path → CHROMEGATE_EXECUTABLE_PATH.
func envName(flagName string) string {
	return "CHROMEGATE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags parses args, then fills every flag not given on the command line
// from its CHROMEGATE_* variable, so the command line always wins.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	return fromEnv(fs)
}

// fromEnv fills every flag not given on the command line from its
// CHROMEGATE_* variable.
func fromEnv(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		v, ok := os.LookupEnv(envName(f.Name))
		if !ok {
			return
		}
		if _, isList := f.Value.(*listFlag); isList {
			for _, part := range strings.Split(v, ",") {
				if part = strings.TrimSpace(part); part != "" {
					_ = f.Value.Set(part)
				}
			}
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = fmt.Errorf("%s=%q: %w", envName(f.Name), v, e)
		}
	})
	return err
}

// parseArgs is parseFlags for a subcommand: -h gives flag.ErrHelp; any
// other problem is reported on the flag set's output (flag already reports
// its own) and becomes errUsage, exit status 2.
func parseArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if err := fromEnv(fs); err != nil {
		fmt.Fprintf(fs.Output(), "%v\n", err)
		return errUsage
	}
	return nil
}

// usageFor prints a subcommand's synopsis and flags with their variables.
func usageFor(fs *flag.FlagSet, synopsis string) func() {
	return func() {
		out := fs.Output()
		fmt.Fprintf(out, "usage: %s\n\nflags (each also readable from CHROMEGATE_<NAME>):\n", synopsis)
		fs.PrintDefaults()
	}
}
