package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/chromegate/chromegate/mcp"
	"github.com/chromegate/chromegate/mcp/httpapi"
)

// oauthFlags configure OAuth access tokens on `serve --http` (beside
// keys). The client secret for introspection is read from a file or the
// environment, never taken on the command line, where every local user
// could read it.
type oauthFlags struct {
	issuer, resource, roleClaim, rate string
	scopes, roles, tools              listFlag
	introspect, clientID, secretFile  string
}

func (o *oauthFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.issuer, "oauth-issuer", "", "with --http: take OAuth 2.1 access tokens of this authorization server (its issuer URL) beside keys")
	fs.StringVar(&o.resource, "oauth-resource", "", "with --oauth-issuer: this server's resource URI, which a token's aud must hold (default http://ADDR/mcp)")
	fs.Var(&o.scopes, "oauth-scope", "with --oauth-issuer: a scope every token must carry (repeatable)")
	fs.Var(&o.roles, "oauth-role", "with --oauth-issuer: SCOPE=ROLE[,ROLE…]: a token with SCOPE has these roles (input.principal.roles; repeatable)")
	fs.StringVar(&o.roleClaim, "oauth-role-claim", "", "with --oauth-issuer: a token claim (string or list) whose values are roles too")
	fs.Var(&o.tools, "oauth-tools", "with --oauth-issuer: SCOPE=GLOB[,GLOB…]: the tools a token with SCOPE may call, as a key's --allow-tools (repeatable)")
	fs.StringVar(&o.rate, "oauth-rate", "", "with --oauth-issuer: each token subject's rate of tool calls (N/min, N/s, N/h)")
	fs.StringVar(&o.introspect, "oauth-introspect-url", "", "with --oauth-issuer: the introspection endpoint (RFC 7662) for opaque tokens (default: the issuer's, when --oauth-client-id is set)")
	fs.StringVar(&o.clientID, "oauth-client-id", "", "with --oauth-issuer: the client id chromegate introspects tokens as")
	fs.StringVar(&o.secretFile, "oauth-client-secret-file", "", "with --oauth-client-id: a file holding its secret (or set CHROMEGATE_OAUTH_CLIENT_SECRET)")
}

// build is the OAuth verifier of the flags, nil without --oauth-issuer.
func (o *oauthFlags) build(addr string, rates mcp.RateStore) (*httpapi.OAuth, error) {
	if o.issuer == "" {
		if o.resource != "" || len(o.scopes)+len(o.roles)+len(o.tools) > 0 || o.clientID != "" || o.introspect != "" {
			return nil, errors.New("the --oauth-* flags need --oauth-issuer")
		}
		return nil, nil
	}
	opts := httpapi.OAuthOptions{
		Issuer: o.issuer, Resource: o.resource, Scopes: o.scopes, RoleClaim: o.roleClaim,
		Roles: map[string][]string{}, Tools: map[string][]string{},
		Introspection: o.introspect, ClientID: o.clientID,
	}
	if rates != nil {
		// In a fleet, a subject's budget is the fleet's.
		opts.Rates = rates
	}
	if opts.Resource == "" {
		opts.Resource = "http://" + addr + "/mcp"
	}
	for flagName, pairs := range map[string]listFlag{"--oauth-role": o.roles, "--oauth-tools": o.tools} {
		for _, pair := range pairs {
			scope, list, ok := strings.Cut(pair, "=")
			if !ok || scope == "" || list == "" {
				return nil, fmt.Errorf("%s %q: want SCOPE=VALUE[,VALUE…]", flagName, pair)
			}
			m := opts.Roles
			if flagName == "--oauth-tools" {
				m = opts.Tools
			}
			m[scope] = append(m[scope], strings.Split(list, ",")...)
		}
	}
	if o.rate != "" {
		perMin, err := mcp.ParseRate(o.rate)
		if err != nil {
			return nil, fmt.Errorf("--oauth-rate: %w", err)
		}
		opts.Rate = perMin
	}
	if o.clientID != "" {
		secret := os.Getenv("CHROMEGATE_OAUTH_CLIENT_SECRET")
		if o.secretFile != "" {
			b, err := os.ReadFile(o.secretFile)
			if err != nil {
				return nil, fmt.Errorf("--oauth-client-secret-file: %w", err)
			}
			secret = strings.TrimSpace(string(b))
		}
		if secret == "" {
			return nil, errors.New("--oauth-client-id needs its secret: --oauth-client-secret-file or CHROMEGATE_OAUTH_CLIENT_SECRET")
		}
		opts.ClientSecret = secret
	}
	return httpapi.NewOAuth(opts)
}
