package httpapi

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// issuer is an authorization server for the tests: discovery, a JWKS
// with one RSA key, introspection of opaque tokens, and a signer.
type issuer struct {
	t          testing.TB
	srv        *httptest.Server
	key        *rsa.PrivateKey
	kid        string
	jwksHits   atomic.Int32
	introHits  atomic.Int32
	introspect map[string]map[string]any // opaque token → answer
	sawKey     atomic.Bool               // a cgk_ key reached introspection
}

func newIssuer(t testing.TB) *issuer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{t: t, key: key, kid: "k1", introspect: map[string]map[string]any{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.url(), "jwks_uri": is.url() + "keys", "introspection_endpoint": is.url() + "introspect"})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		is.jwksHits.Add(1)
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: is.kid, Algorithm: "RS256", Use: "sig"}}})
	})
	mux.HandleFunc("POST /introspect", func(w http.ResponseWriter, r *http.Request) {
		is.introHits.Add(1)
		if id, secret, ok := r.BasicAuth(); !ok || id != "chromegate" || secret != "s3cret" {
			http.Error(w, "unauthorized", 401)
			return
		}
		tok := r.FormValue("token")
		if strings.HasPrefix(tok, KeyPrefix) {
			is.sawKey.Store(true)
		}
		ans, ok := is.introspect[tok]
		if !ok {
			ans = map[string]any{"active": false}
		}
		_ = json.NewEncoder(w).Encode(ans)
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) url() string { return is.srv.URL + "/" }

// claims are a valid token's for resource, with scope.
func (is *issuer) claims(resource, scope string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": is.url(), "sub": "agent-7", "aud": []string{resource}, "exp": now.Add(5 * time.Minute).Unix(),
		"iat": now.Unix(), "nbf": now.Unix(), "scope": scope}
}

func (is *issuer) sign(c map[string]any) string {
	return is.signWith(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: is.key, KeyID: is.kid}}, c)
}

func (is *issuer) signWith(k jose.SigningKey, c map[string]any) string {
	s, err := jose.NewSigner(k, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		is.t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(c).Serialize()
	if err != nil {
		is.t.Fatal(err)
	}
	return tok
}

const testResource = "https://chromegate.test/mcp"

func oauthEnv(t *testing.T, is *issuer, configure func(*OAuthOptions)) *httpEnv {
	o := OAuthOptions{Issuer: is.url(), Resource: testResource, Scopes: []string{"chromegate:use"},
		Roles: map[string][]string{"chromegate:admin": {"admin"}, "chromegate:use": {"agent"}},
		Tools: map[string][]string{"chromegate:read": {"get_*"}},
		Rate:  600, ClientID: "chromegate", ClientSecret: "s3cret"}
	if configure != nil {
		configure(&o)
	}
	v, err := NewOAuth(o)
	if err != nil {
		t.Fatal(err)
	}
	return newHTTPEnv(t, func(opts *Options) { opts.OAuth = v })
}

// TestOAuthTokens is the table of access tokens a server with an issuer
// takes and refuses, from the attacker's side as well.
func TestOAuthTokens(t *testing.T) {
	is := newIssuer(t)
	e := oauthEnv(t, is, nil)
	key := e.key(NewKey{Name: "ci"})
	good := is.sign(is.claims(testResource, "chromegate:use chromegate:read"))

	tamper := func(tok string) string {
		parts := strings.Split(tok, ".")
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		sig[10] ^= 0x01
		return parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
	}
	forged := func(edit func(map[string]any)) string {
		c := is.claims(testResource, "chromegate:use")
		edit(c)
		return is.sign(c)
	}
	// alg none: a header that says none and no signature.
	noneHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	body, _ := json.Marshal(is.claims(testResource, "chromegate:use"))
	algNone := noneHeader + "." + base64.RawURLEncoding.EncodeToString(body) + "."
	// HMAC keyed with the issuer's public key, the classic confusion.
	pubDER, _ := json.Marshal(jose.JSONWebKey{Key: &is.key.PublicKey})
	hmac := is.signWith(jose.SigningKey{Algorithm: jose.HS256, Key: pubDER}, is.claims(testResource, "chromegate:use"))
	// Another key, with the issuer's kid.
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	wrongKey := is.signWith(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: other, KeyID: is.kid}}, is.claims(testResource, "chromegate:use"))
	is.introspect["opaque-good"] = map[string]any{"active": true, "sub": "svc-9", "aud": testResource, "scope": "chromegate:use", "exp": time.Now().Add(time.Minute).Unix()}
	is.introspect["opaque-other-aud"] = map[string]any{"active": true, "sub": "svc-9", "aud": "https://elsewhere/mcp", "scope": "chromegate:use", "exp": time.Now().Add(time.Minute).Unix()}

	for _, tc := range []struct {
		name, token string
		status      int
		challenge   string // in WWW-Authenticate
	}{
		{"valid", good, 200, ""},
		{"a key still works", key, 200, ""},
		{"no token", "", 401, `resource_metadata="http://`},
		{"another audience", forged(func(c map[string]any) { c["aud"] = []string{"https://elsewhere/mcp"} }), 401, `error="invalid_token"`},
		{"expired", forged(func(c map[string]any) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() }), 401, `error="invalid_token"`},
		{"not yet valid", forged(func(c map[string]any) { c["nbf"] = time.Now().Add(10 * time.Minute).Unix() }), 401, `error="invalid_token"`},
		{"another issuer", forged(func(c map[string]any) { c["iss"] = "https://evil.example/" }), 401, `error="invalid_token"`},
		{"no expiry", forged(func(c map[string]any) { delete(c, "exp") }), 401, `error="invalid_token"`},
		{"tampered signature", tamper(good), 401, `error="invalid_token"`},
		{"tampered claims", strings.Split(good, ".")[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(body), "agent-7", "admin", 1))) + "." + strings.Split(good, ".")[2], 401, `error="invalid_token"`},
		{"alg none", algNone, 401, `error="invalid_token"`},
		{"HMAC with the public key", hmac, 401, `error="invalid_token"`},
		{"signed by another key", wrongKey, 401, `error="invalid_token"`},
		{"without the needed scope", is.sign(is.claims(testResource, "chromegate:read")), 403, `error="insufficient_scope"`},
		{"opaque, introspected", "opaque-good", 200, ""},
		{"opaque, inactive", "opaque-unknown", 401, `error="invalid_token"`},
		{"opaque, another audience", "opaque-other-aud", 401, `error="invalid_token"`},
		{"an unknown key", KeyPrefix + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 401, `error="invalid_token"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.token != "" {
				hdr["Authorization"] = "Bearer " + tc.token
			}
			status, h, body := e.do("GET", "/api/v1/status", "", "", hdr)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if got := h.Get("WWW-Authenticate"); tc.challenge != "" && !strings.Contains(got, tc.challenge) {
				t.Errorf("WWW-Authenticate %q, want %s", got, tc.challenge)
			}
		})
	}
	if is.sawKey.Load() {
		t.Error("a chromegate key was sent to the introspection endpoint")
	}
	noneIn(t, e.log.String(), good, "opaque-good", key, "s3cret")
}

// TestOAuthPrincipal: a token's subject, scopes and claims become the
// principal as a key's would: name, roles, tool ACL (tools/list and
// calls), a rate per subject; the metadata names the issuer.
func TestOAuthPrincipal(t *testing.T) {
	is := newIssuer(t)
	e := oauthEnv(t, is, func(o *OAuthOptions) { o.RoleClaim = "groups"; o.Rate = 2 })
	c := is.claims(testResource, "chromegate:use chromegate:read")
	c["groups"] = []string{"sre"}
	tok := is.sign(c)
	status, _, body := e.do("GET", "/api/v1/status", "", "", map[string]string{"Authorization": "Bearer " + tok})
	if status != 200 || !strings.Contains(body, `"principal":{"name":"oauth:agent-7","roles":["agent","sre"],"transport":"rest"}`) {
		t.Errorf("status: %d %s", status, body)
	}
	cs := e.mustConnectAt("2026-07-28", "", map[string]string{"Authorization": "Bearer " + tok})
	names := toolNames(t, cs)
	for _, n := range names {
		if !strings.HasPrefix(n, "get_") {
			t.Errorf("the read scope lists %s", n)
		}
	}
	if res := callTool(t, cs, "navigate", map[string]any{"url": "https://example.com/"}); !res.IsError || !strings.Contains(textOf(res), "not available to oauth:agent-7") {
		t.Errorf("navigate outside the ACL: %s", textOf(res))
	}
	// The rate: 2 a minute, per subject, across connections.
	other := e.mustConnectAt("2025-11-25", "", map[string]string{"Authorization": "Bearer " + tok})
	callTool(t, cs, "get_text", nil)
	callTool(t, other, "get_text", nil)
	if res := callTool(t, cs, "get_text", nil); !res.IsError || !strings.Contains(textOf(res), "RATE_LIMITED") {
		t.Errorf("the subject's third call: %s", textOf(res))
	}
	// The metadata, without a token.
	status, _, body = e.do("GET", "/.well-known/oauth-protected-resource/mcp", "", "", nil)
	var meta map[string]any
	if status != 200 || json.Unmarshal([]byte(body), &meta) != nil || meta["resource"] != testResource ||
		!strings.Contains(body, `"authorization_servers":["`+is.url()+`"]`) || !strings.Contains(body, "chromegate:use") {
		t.Errorf("metadata: %d %s", status, body)
	}
}

// TestOAuthJWKSRefresh: a token with a key id the JWKS does not hold makes
// the server fetch the JWKS again, at most once per jwksMinRefresh, however
// many such tokens come.
func TestOAuthJWKSRefresh(t *testing.T) {
	is := newIssuer(t)
	e := oauthEnv(t, is, nil)
	good := is.sign(is.claims(testResource, "chromegate:use"))
	if status, _, _ := e.do("GET", "/api/v1/status", "", "", map[string]string{"Authorization": "Bearer " + good}); status != 200 {
		t.Fatal(status)
	}
	before := is.jwksHits.Load()
	for i := range 20 {
		k, _ := rsa.GenerateKey(rand.Reader, 1024)
		tok := is.signWith(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: k, KeyID: "invented-" + string(rune('a'+i))}}, is.claims(testResource, "chromegate:use"))
		if status, _, _ := e.do("GET", "/api/v1/status", "", "", map[string]string{"Authorization": "Bearer " + tok}); status != 401 {
			t.Fatalf("a token of an invented key: %d", status)
		}
	}
	if n := is.jwksHits.Load() - before; n > 1 {
		t.Errorf("20 tokens with invented key ids fetched the JWKS %d times", n)
	}
}

// TestOAuthIssuerDown: an issuer that cannot be reached fails closed, and
// says so in the log (without the token).
func TestOAuthIssuerDown(t *testing.T) {
	is := newIssuer(t)
	e := oauthEnv(t, is, nil)
	tok := is.sign(is.claims(testResource, "chromegate:use"))
	is.srv.Close()
	if status, _, _ := e.do("GET", "/api/v1/status", "", "", map[string]string{"Authorization": "Bearer " + tok}); status != 401 {
		t.Errorf("with the issuer down: %d", status)
	}
	if !strings.Contains(e.log.String(), "cannot be checked") {
		t.Errorf("no log line says why:\n%s", e.log.String())
	}
	noneIn(t, e.log.String(), tok)
}

// BenchmarkOAuthJWT is the cost of checking one JWT access token (the
// JWKS already fetched): what OAuth adds to each call — "first" a token
// never seen (the signature checked), "again" one checked before.
func BenchmarkOAuthJWT(b *testing.B) {
	b.Run("first", func(b *testing.B) { benchJWT(b, true) })
	b.Run("again", func(b *testing.B) { benchJWT(b, false) })
}

func benchJWT(b *testing.B, fresh bool) {
	is := newIssuer(b)
	o, err := NewOAuth(OAuthOptions{Issuer: is.url(), Resource: testResource, Scopes: []string{"chromegate:use"}})
	if err != nil {
		b.Fatal(err)
	}
	tok := is.sign(is.claims(testResource, "chromegate:use"))
	if _, err := o.Authenticate(b.Context(), tok, "http"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		var err error
		if fresh {
			_, err = o.verifyJWT(b.Context(), tok) // what a token not seen before costs
		} else {
			_, err = o.Authenticate(b.Context(), tok, "http")
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// noneIn fails when the log holds any of the secrets.
func noneIn(t *testing.T, log string, secrets ...string) {
	t.Helper()
	if log == "" {
		t.Fatal("the log is empty: nothing was checked")
	}
	for _, s := range secrets {
		if strings.Contains(log, s) {
			t.Errorf("a token or secret appears in the log: %.12s…", s)
		}
	}
}
