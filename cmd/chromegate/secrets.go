package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/chromegate/chromegate/mcp/vault"
)

// secretFlags declare the operator's secrets: where their values are (a
// file, the environment; never a flag's value, which any user of the
// machine can read in the process list) and the origins each may be typed
// on (not secret: they go to the policy as data).
type secretFlags struct {
	file    string
	origins bindingsFlag
}

func (s *secretFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.file, "secrets", "", "file of NAME=value lines (dotenv, mode 0600) declaring secrets the model refers to as <secret:NAME>; CHROMEGATE_SECRET_NAME variables declare them too")
	fs.Var(&s.origins, "secret-origins", "NAME=https://origin[,https://other]: the origins a secret may be typed on (repeatable; a secret bound to none goes nowhere)")
}

// load reads the secrets and binds their origins. The environment's secret
// variables are taken out of the process's environment, so that nothing
// chromegate starts (the browser, the Playwright driver) inherits them.
func (s *secretFlags) load() (*vault.Vault, error) {
	v, err := vault.Load(s.file, os.Environ())
	if err != nil {
		return nil, err
	}
	for name := range vault.FromEnv(os.Environ()) {
		os.Unsetenv(vault.EnvPrefix + name)
	}
	for name, origins := range s.origins.m {
		if err := v.Bind(name, origins); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// bindingsFlag collects NAME=origin,origin values. Several may be given
// in one value separated by ";" (for CHROMEGATE_SECRET_ORIGINS).
type bindingsFlag struct{ m map[string][]string }

func (b *bindingsFlag) String() string {
	if b == nil || len(b.m) == 0 {
		return ""
	}
	names := make([]string, 0, len(b.m))
	for n := range b.m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strings.Join(b.m[n], ",")
	}
	return strings.Join(parts, ";")
}

func (b *bindingsFlag) Set(v string) error {
	if b.m == nil {
		b.m = map[string][]string{}
	}
	for spec := range strings.SplitSeq(v, ";") {
		if spec = strings.TrimSpace(spec); spec == "" {
			continue
		}
		name, origins, err := vault.ParseBinding(spec)
		if err != nil {
			return err
		}
		if _, dup := b.m[name]; dup {
			return fmt.Errorf("%s is bound twice; list all its origins in one NAME=a,b", name)
		}
		b.m[name] = origins
	}
	return nil
}
