package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/chromegate/chromegate/mcp"
)

// OAuth 2.1 for the HTTP transports, beside keys (MCP's authorization:
// the server is an OAuth resource server).
//
// A bearer that is not a chromegate key (cgk_…) is an access token of the
// operator's authorization server (OAuthOptions.Issuer). A JWT is checked
// here: its signature against the issuer's JWKS (RS256, ES256, PS256,
// EdDSA; "none" and HMAC are refused, so a public key is never a shared
// secret), iss exactly the issuer, exp and nbf (OAuthOptions.Leeway),
// aud holding this server's resource URI (RFC 8707: a token for another
// resource is refused), and every required scope ("scope" or "scp"). A
// token that is not a JWT is asked about at the issuer's introspection
// endpoint (RFC 7662), when one is configured, with the same checks on
// its answer; an active answer is kept until the token expires, at most
// a minute. A chromegate key never leaves the server: only a bearer
// without the key prefix is sent to introspection.
//
// The token's subject is the principal "oauth:SUB" (never a key's name,
// which cannot hold ':'), with the roles its scopes map to (and, with
// OAuthOptions.RoleClaim, the roles its claim names), the tool ACL its
// scopes map to, and a rate limit per subject: input.principal as a key
// would give it. The JWKS is fetched at first use and again for a key id
// it does not hold, at most once per jwksMinRefresh, so a token with an
// invented kid cannot make the server hammer the issuer. The issuer
// unreachable fails closed: the token is refused (401), the cause logged.
//
// Clients find the issuer through the protected resource metadata
// (RFC 9728) at /.well-known/oauth-protected-resource, named in the
// WWW-Authenticate header of every 401. No token, secret or Authorization
// header is ever logged.

// OAuthOptions configures OAuth access tokens on the HTTP transports.
type OAuthOptions struct {
	// Issuer is the authorization server's issuer URL, exactly as its
	// tokens' iss says (discovery at Issuer/.well-known/…).
	Issuer string
	// Resource is this server's resource URI, which every token's aud
	// must hold (default: http://ADDR/mcp).
	Resource string
	// Scopes are required in every token (none: any token of the issuer
	// for this resource).
	Scopes []string
	// Roles maps a scope to the roles it grants.
	Roles map[string][]string
	// RoleClaim, if set, is a claim (a string or a list) whose values are
	// roles too.
	RoleClaim string
	// Tools maps a scope to tool globs (as a key's --allow-tools): a
	// token's ACL is the union of its scopes' globs; no mapped scope: no
	// ACL (every tool the policy allows).
	Tools map[string][]string
	// Rate is each subject's budget, calls a minute (0: unlimited).
	Rate float64
	// Rates, if set, holds the subjects' budgets where every replica of a
	// fleet charges them (nil: this process's).
	Rates mcp.RateStore
	// Introspection, if set, is the endpoint opaque tokens are checked
	// at, with ClientID and ClientSecret (HTTP Basic).
	Introspection          string
	ClientID, ClientSecret string
	// Leeway is the clock skew allowed on exp and nbf (default 30 s).
	Leeway time.Duration
	// HTTPClient talks to the issuer (default: a client with a 10 s
	// timeout).
	HTTPClient *http.Client
}

// jwksMinRefresh bounds how often the JWKS is fetched again.
const jwksMinRefresh = 10 * time.Second

// maxSubjects bounds the rate limiters kept for subjects.
const maxSubjects = 10000

// OAuth verifies access tokens of one issuer.
type OAuth struct {
	opts OAuthOptions
	algs []jose.SignatureAlgorithm

	mu         sync.Mutex
	jwksURL    string
	keys       *jose.JSONWebKeySet
	fetched    time.Time
	limits     map[string]*subjectLimit
	introspect map[[32]byte]remembered // opaque tokens' answers
	verified   map[[32]byte]remembered // JWTs whose signature checked out
}

type subjectLimit struct {
	limit *mcp.RateLimit
	last  time.Time
}

// remembered is a token's claims, kept until a time.
type remembered struct {
	claims tokenClaims
	until  time.Time
}

// NewOAuth checks opts. The issuer is first asked at the first token.
func NewOAuth(opts OAuthOptions) (*OAuth, error) {
	u, err := url.Parse(opts.Issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("oauth issuer %q: want an http(s) URL", opts.Issuer)
	}
	if opts.Resource == "" {
		return nil, errors.New("oauth: the resource URI is required")
	}
	for scope, globs := range opts.Tools {
		if _, err := mcp.NewToolACL(globs); err != nil {
			return nil, fmt.Errorf("oauth tools for scope %q: %w", scope, err)
		}
	}
	if opts.Leeway == 0 {
		opts.Leeway = 30 * time.Second
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &OAuth{
		opts:       opts,
		algs:       []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA},
		limits:     map[string]*subjectLimit{},
		introspect: map[[32]byte]remembered{},
		verified:   map[[32]byte]remembered{},
	}, nil
}

// Errors of a token, as the WWW-Authenticate header says them.
var (
	errInvalidToken      = errors.New("the access token is not valid (signature, issuer, audience or expiry)")
	errInsufficientScope = errors.New("the access token lacks a scope this server needs")
	errIssuerDown        = errors.New("the authorization server cannot be reached; the token cannot be checked")
)

// tokenClaims are the claims read from a token or an introspection.
type tokenClaims struct {
	jwt.Claims
	Scope    string          `json:"scope"`
	Scp      json.RawMessage `json:"scp"`
	ClientID string          `json:"client_id"`
	Active   *bool           `json:"active"`
	raw      map[string]any
}

func (c tokenClaims) scopes() []string {
	out := strings.Fields(c.Scope)
	var list []string
	if json.Unmarshal(c.Scp, &list) == nil {
		out = append(out, list...)
	} else {
		var one string
		if json.Unmarshal(c.Scp, &one) == nil {
			out = append(out, strings.Fields(one)...)
		}
	}
	return out
}

// Authenticate returns the principal of an access token. transport is
// "http" or "rest".
func (o *OAuth) Authenticate(ctx context.Context, token, transport string) (mcp.Principal, error) {
	var (
		c   tokenClaims
		err error
	)
	if strings.Count(token, ".") == 2 {
		c, err = o.verifiedJWT(ctx, token)
	} else {
		c, err = o.verifyOpaque(ctx, token)
	}
	if err != nil {
		return mcp.Principal{}, err
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: o.opts.Issuer, AnyAudience: jwt.Audience{o.opts.Resource}, Time: time.Now()}, o.opts.Leeway); err != nil {
		return mcp.Principal{}, errInvalidToken
	}
	if c.Expiry == nil || c.Subject == "" {
		return mcp.Principal{}, errInvalidToken
	}
	have := c.scopes()
	for _, need := range o.opts.Scopes {
		if !slices.Contains(have, need) {
			return mcp.Principal{}, errInsufficientScope
		}
	}
	return o.principal(c, have, transport)
}

// principal maps a valid token's subject, scopes and claims.
func (o *OAuth) principal(c tokenClaims, scopes []string, transport string) (mcp.Principal, error) {
	p := mcp.Principal{Name: "oauth:" + c.Subject, Roles: []string{}, Transport: transport, Expires: c.Expiry.Time()}
	var globs []string
	for _, s := range scopes {
		for _, r := range o.opts.Roles[s] {
			if !slices.Contains(p.Roles, r) {
				p.Roles = append(p.Roles, r)
			}
		}
		globs = append(globs, o.opts.Tools[s]...)
	}
	if o.opts.RoleClaim != "" {
		switch v := c.raw[o.opts.RoleClaim].(type) {
		case string:
			p.Roles = append(p.Roles, strings.Fields(v)...)
		case []any:
			for _, r := range v {
				if s, ok := r.(string); ok && !slices.Contains(p.Roles, s) {
					p.Roles = append(p.Roles, s)
				}
			}
		}
	}
	slices.Sort(p.Roles)
	if len(globs) > 0 {
		acl, err := mcp.NewToolACL(globs)
		if err != nil {
			return mcp.Principal{}, err
		}
		p.Tools = acl
	}
	if o.opts.Rate > 0 {
		p.Rate = o.limitOf(p.Name)
	}
	return p, nil
}

// limitOf is the subject's one rate limiter.
func (o *OAuth) limitOf(name string) *mcp.RateLimit {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	if sl := o.limits[name]; sl != nil {
		sl.last = now
		return sl.limit
	}
	if len(o.limits) >= maxSubjects {
		// Forget the subjects idle longest: a limiter idle a minute is
		// full again anyway.
		for k, sl := range o.limits {
			if now.Sub(sl.last) > time.Minute {
				delete(o.limits, k)
			}
		}
	}
	limit := mcp.NewRateLimit(o.opts.Rate)
	if o.opts.Rates != nil {
		limit = mcp.NewSharedRateLimit(o.opts.Rates, "rate:oauth:"+name, o.opts.Rate)
	}
	sl := &subjectLimit{limit: limit, last: now}
	o.limits[name] = sl
	return sl.limit
}

// verifiedJWT is verifyJWT, remembered: a token whose signature checked
// out is not checked again (a signature is about 80 µs of the call) while
// it is valid, for at most five minutes; its claims are, at every call.
func (o *OAuth) verifiedJWT(ctx context.Context, token string) (tokenClaims, error) {
	sum := sha256.Sum256([]byte(token))
	o.mu.Lock()
	cached, ok := o.verified[sum]
	o.mu.Unlock()
	if ok && time.Now().Before(cached.until) {
		return cached.claims, nil
	}
	c, err := o.verifyJWT(ctx, token)
	if err != nil || c.Expiry == nil {
		return c, err
	}
	o.remember(o.verified, sum, c, o.opts.Leeway, 5*time.Minute)
	return c, nil
}

// remember keeps a token's claims in m (under the token's hash, never the
// token) until it expires, plus slack, and at most for keep.
func (o *OAuth) remember(m map[[32]byte]remembered, sum [32]byte, c tokenClaims, slack, keep time.Duration) {
	until := c.Expiry.Time().Add(slack)
	if limit := time.Now().Add(keep); until.After(limit) {
		until = limit
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(m) >= maxSubjects {
		clear(m)
	}
	m[sum] = remembered{claims: c, until: until}
}

func (o *OAuth) verifyJWT(ctx context.Context, token string) (tokenClaims, error) {
	tok, err := jwt.ParseSigned(token, o.algs)
	if err != nil || len(tok.Headers) != 1 {
		return tokenClaims{}, errInvalidToken
	}
	kid := tok.Headers[0].KeyID
	key, err := o.key(ctx, kid)
	if err != nil {
		return tokenClaims{}, err
	}
	var c tokenClaims
	if err := tok.Claims(key.Key, &c, &c.raw); err != nil {
		return tokenClaims{}, errInvalidToken
	}
	return c, nil
}

// key finds the issuer's signing key kid, fetching the JWKS again when it
// is unknown (at most once per jwksMinRefresh).
func (o *OAuth) key(ctx context.Context, kid string) (jose.JSONWebKey, error) {
	o.mu.Lock()
	keys := o.keys
	stale := time.Since(o.fetched) >= jwksMinRefresh
	o.mu.Unlock()
	if keys != nil {
		if k := keys.Key(kid); len(k) > 0 && k[0].Use != "enc" {
			return k[0], nil
		}
	}
	if keys != nil && !stale {
		return jose.JSONWebKey{}, errInvalidToken
	}
	keys, err := o.fetchJWKS(ctx)
	if err != nil {
		return jose.JSONWebKey{}, err
	}
	if k := keys.Key(kid); len(k) > 0 && k[0].Use != "enc" {
		return k[0], nil
	}
	return jose.JSONWebKey{}, errInvalidToken
}

func (o *OAuth) fetchJWKS(ctx context.Context) (*jose.JSONWebKeySet, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.keys != nil && time.Since(o.fetched) < jwksMinRefresh {
		return o.keys, nil // another request fetched it meanwhile
	}
	o.fetched = time.Now()
	if o.jwksURL == "" {
		var meta struct {
			Issuer        string `json:"issuer"`
			JWKS          string `json:"jwks_uri"`
			Introspection string `json:"introspection_endpoint"`
		}
		if err := o.getJSON(ctx, strings.TrimSuffix(o.opts.Issuer, "/")+"/.well-known/openid-configuration", &meta); err != nil {
			if err2 := o.getJSON(ctx, o.wellKnown("oauth-authorization-server"), &meta); err2 != nil {
				return nil, fmt.Errorf("%w: %v", errIssuerDown, err)
			}
		}
		if meta.Issuer != o.opts.Issuer || meta.JWKS == "" {
			return nil, fmt.Errorf("%w: its metadata names issuer %q and jwks_uri %q", errIssuerDown, meta.Issuer, meta.JWKS)
		}
		o.jwksURL = meta.JWKS
		if o.opts.Introspection == "" && o.opts.ClientID != "" {
			o.opts.Introspection = meta.Introspection
		}
	}
	var set jose.JSONWebKeySet
	if err := o.getJSON(ctx, o.jwksURL, &set); err != nil {
		return nil, fmt.Errorf("%w: %v", errIssuerDown, err)
	}
	o.keys = &set
	return o.keys, nil
}

// wellKnown is RFC 8414's metadata URL of the issuer.
func (o *OAuth) wellKnown(name string) string {
	u, _ := url.Parse(o.opts.Issuer)
	return u.Scheme + "://" + u.Host + "/.well-known/" + name + strings.TrimSuffix(u.Path, "/")
}

func (o *OAuth) getJSON(ctx context.Context, u string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := o.opts.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out)
}

// verifyOpaque asks the introspection endpoint about a token that is not
// a JWT.
func (o *OAuth) verifyOpaque(ctx context.Context, token string) (tokenClaims, error) {
	if strings.HasPrefix(token, KeyPrefix) {
		return tokenClaims{}, errInvalidToken // a key, never sent out
	}
	o.mu.Lock()
	discover := o.opts.Introspection == "" && o.opts.ClientID != "" && o.jwksURL == ""
	o.mu.Unlock()
	if discover {
		// The discovery document may name the endpoint.
		if _, err := o.fetchJWKS(ctx); err != nil {
			return tokenClaims{}, err
		}
	}
	o.mu.Lock()
	endpoint := o.opts.Introspection
	sum := sha256.Sum256([]byte(token))
	cached, ok := o.introspect[sum]
	o.mu.Unlock()
	if endpoint == "" {
		return tokenClaims{}, errInvalidToken
	}
	if ok && time.Now().Before(cached.until) {
		return cached.claims, nil
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return tokenClaims{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(o.opts.ClientID), url.QueryEscape(o.opts.ClientSecret))
	resp, err := o.opts.HTTPClient.Do(req)
	if err != nil {
		return tokenClaims{}, fmt.Errorf("%w: %v", errIssuerDown, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return tokenClaims{}, fmt.Errorf("%w: introspection: %s", errIssuerDown, resp.Status)
	}
	var c tokenClaims
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(body, &c) != nil || json.Unmarshal(body, &c.raw) != nil || c.Active == nil || !*c.Active {
		return tokenClaims{}, errInvalidToken
	}
	if c.Issuer == "" {
		c.Issuer = o.opts.Issuer // RFC 7662: iss is optional; the endpoint is the issuer's
	}
	if c.Expiry != nil {
		o.remember(o.introspect, sum, c, 0, time.Minute)
	}
	return c, nil
}

// protectedResourcePath is where the metadata is served: the path itself
// and the path with /mcp after it (RFC 9728's form for the resource
// http://HOST/mcp).
const protectedResourcePath = "/.well-known/oauth-protected-resource"

// metadataURL is the metadata's URL on the host the client called.
func (h *Handler) metadataURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + protectedResourcePath + "/mcp"
}

// protectedResource is RFC 9728's metadata of this server.
func (o *OAuth) protectedResource() map[string]any {
	scopes := slices.Clone(o.opts.Scopes)
	for s := range o.opts.Roles {
		scopes = append(scopes, s)
	}
	for s := range o.opts.Tools {
		scopes = append(scopes, s)
	}
	slices.Sort(scopes)
	return map[string]any{
		"resource":                 o.opts.Resource,
		"authorization_servers":    []string{o.opts.Issuer},
		"scopes_supported":         slices.Compact(scopes),
		"bearer_methods_supported": []string{"header"},
		"resource_name":            "chromegate",
	}
}

// challenge is the WWW-Authenticate value of a refusal (RFC 6750, RFC
// 9728): where the metadata is, the scope needed, and the error when a
// token was presented.
func (o *OAuth) challenge(metadataURL string, err error) string {
	v := fmt.Sprintf(`Bearer resource_metadata=%q`, metadataURL)
	if len(o.opts.Scopes) > 0 {
		v += fmt.Sprintf(`, scope=%q`, strings.Join(o.opts.Scopes, " "))
	}
	switch {
	case errors.Is(err, errInsufficientScope):
		v += `, error="insufficient_scope"`
	case err != nil && !errors.Is(err, errNoKey):
		v += `, error="invalid_token"`
	}
	return v
}
