package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/chromegate/chromegate/executor/cdp"
	"github.com/chromegate/chromegate/mcp/httpapi"
)

const keysUsage = `usage: chromegate keys <command> [flags]

commands:
  create NAME [--role R]... [--allow-tools GLOB]... [--rate N/min]
            make a key for the HTTP transports and print it once
  list      list the keys (names, roles, tool globs, rates; never the keys)
  revoke NAME
            remove a key; a running server refuses it from the next request

Keys live hashed in <data-dir>/keys.json (mode 0600). Every command takes --data-dir.
`

func cmdKeys(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, keysUsage)
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	var (
		dataDir  string
		roles    listFlag
		tools    listFlag
		rateSpec string
		expires  time.Duration
		asJSON   bool
	)
	fs := flag.NewFlagSet("keys "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&dataDir, "data-dir", "", "chromegate's data dir, which holds keys.json (default: "+cdp.DefaultDataDir()+")")
	var ff fleetFlags
	fs.StringVar(&ff.redisURL, "redis-url", "", "manage the keys of the fleet sharing this Redis instead of the data dir's ($"+envRedisURL+" keeps a password off the command line)")
	switch sub {
	case "create":
		fs.Usage = usageFor(fs, "chromegate keys create NAME [flags]")
		fs.Var(&roles, "role", "a role of the key, fed to the policy as input.principal.roles (repeatable); admin may manage keys over REST")
		fs.Var(&tools, "allow-tools", "a tool glob the key may use, e.g. get_* (repeatable or comma-separated); !glob excludes; none = every tool")
		fs.StringVar(&rateSpec, "rate", "", "tool calls allowed per minute (N/min, N/s, N/h); default unlimited")
		fs.DurationVar(&expires, "expires", 0, "the key stops working after this long, e.g. 720h; default never (a key it creates over REST must expire by then too)")
	case "list":
		fs.Usage = usageFor(fs, "chromegate keys list [flags]")
		fs.BoolVar(&asJSON, "json", false, "print JSON")
	case "revoke":
		fs.Usage = usageFor(fs, "chromegate keys revoke NAME [flags]")
	default:
		fmt.Fprintf(stderr, "chromegate keys: unknown command %q\n\n%s", sub, keysUsage)
		return errUsage
	}
	pos, err := parseInterspersed(fs, rest)
	if err != nil {
		return err
	}
	if dataDir == "" {
		dataDir = cdp.DefaultDataDir()
	}
	ff.replica = "keys-command"
	shared, err := ff.open(nil)
	if err != nil {
		return err
	}
	if shared != nil {
		defer shared.Close()
	}
	store, err := openKeys(context.Background(), shared, dataDir, false)
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "keys create takes one NAME")
			return errUsage
		}
		var globs []string
		for _, t := range tools {
			for _, g := range strings.Split(t, ",") {
				if g = strings.TrimSpace(g); g != "" {
					globs = append(globs, g)
				}
			}
		}
		now := time.Now()
		nk := httpapi.NewKey{Name: pos[0], Roles: roles, AllowTools: globs, Rate: rateSpec}
		if expires < 0 {
			return fmt.Errorf("--expires %s: want a positive duration", expires)
		}
		if expires > 0 {
			nk.Expires = now.Add(expires)
		}
		key, info, err := store.Create(nk, now)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "created key %q (roles: %s; tools: %s; rate: %s) in %s\nThis is the only time the key is shown; store it now:\n",
			info.Name, orNone(info.Roles), orAll(info.AllowTools), orUnlimited(info.Rate), store.Path())
		fmt.Fprintln(stdout, key)
	case "list":
		if len(pos) != 0 {
			fmt.Fprintln(stderr, "keys list takes no arguments")
			return errUsage
		}
		keys, err := store.List()
		if err != nil {
			return err
		}
		if asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(keys)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tROLES\tTOOLS\tRATE\tCREATED\tEXPIRES")
		for _, k := range keys {
			exp := "never"
			if k.Expires != nil {
				exp = k.Expires.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.Name, orNone(k.Roles), orAll(k.AllowTools), orUnlimited(k.Rate), k.Created.Format(time.RFC3339), exp)
		}
		return tw.Flush()
	case "revoke":
		if len(pos) != 1 {
			fmt.Fprintln(stderr, "keys revoke takes one NAME")
			return errUsage
		}
		if err := store.Revoke(pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "revoked key %q\n", pos[0])
	}
	return nil
}

// parseInterspersed parses flags that may come before or after the
// positional arguments (`keys create NAME --role ci`).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, errUsage
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if err := fromEnv(fs); err != nil {
		fmt.Fprintf(fs.Output(), "%v\n", err)
		return nil, errUsage
	}
	return pos, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, ",")
}

func orAll(s []string) string {
	if len(s) == 0 {
		return "*"
	}
	return strings.Join(s, ",")
}

func orUnlimited(s string) string {
	if s == "" {
		return "unlimited"
	}
	return s
}
