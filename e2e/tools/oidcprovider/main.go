// Command oidcprovider is the OpenID provider chromegate's OAuth tests run
// on loopback: the example provider of github.com/zitadel/oidc (an
// OpenID-certified Go library), its in-memory storage adapted so that
// access tokens are JWTs bound to the resource the test names (RFC 8707),
// carrying their scopes.
//
//	oidcprovider -port 0 -audience http://127.0.0.1:7890/mcp
//
// It prints "issuer=URL" on stdout once it serves. Clients:
//
//	svc-agent / agent-secret    client credentials, audience = -audience
//	svc-other / other-secret    client credentials, audience = svc-other (another resource)
//	svc-expired / expired-secret client credentials, tokens already expired
//	native                      authorization code + PKCE (user test-user@127.0.0.1 / verysecure)
//
// Only the tests run it: it lives in a module of its own (e2e/tools), so
// chromegate's dependency graph never holds it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

func main() {
	port := flag.Int("port", 0, "port on 127.0.0.1 (0: any)")
	audience := flag.String("audience", "", "the resource tokens are for (chromegate's /mcp URL)")
	flag.Parse()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", *port))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	issuer := "http://" + ln.Addr().String() + "/"
	storage.RegisterClients(storage.NativeClient("native", "http://localhost/callback"))
	users := storage.NewUserStore(issuer)
	st := &store{Storage: storage.NewStorage(users), audience: *audience, services: map[string]service{
		"svc-agent":   {secret: "agent-secret", audience: []string{*audience}},
		"svc-other":   {secret: "other-secret", audience: []string{"svc-other"}},
		"svc-expired": {secret: "expired-secret", audience: []string{*audience}, expired: true},
	}}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	router := exampleop.SetupServer(issuer, st, logger, false)
	fmt.Printf("issuer=%s\n", issuer)
	srv := &http.Server{Handler: router, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type service struct {
	secret   string
	audience []string
	expired  bool
}

// store is the example's storage with JWT access tokens for the given
// audience, the scopes in the token, and service clients of the test's.
type store struct {
	*storage.Storage
	audience string
	services map[string]service
}

// client issues JWT access tokens and allows chromegate's scopes.
type client struct {
	op.Client
	grants []oidc.GrantType
}

func (c client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

func (c client) IsScopeAllowed(s string) bool {
	return strings.HasPrefix(s, "chromegate:") || c.Client.IsScopeAllowed(s)
}

func (c client) GrantTypes() []oidc.GrantType {
	if c.grants != nil {
		return c.grants
	}
	return c.Client.GrantTypes()
}

func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	if svc, ok := s.services[id]; ok {
		return s.serviceClient(id, svc), nil
	}
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return client{Client: c}, nil
}

func (s *store) serviceClient(id string, svc service) op.Client {
	return client{Client: storage.WebClient(id, svc.secret), grants: []oidc.GrantType{oidc.GrantTypeClientCredentials}}
}

func (s *store) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	if svc, ok := s.services[id]; ok {
		if svc.secret != secret {
			return fmt.Errorf("invalid secret")
		}
		return nil
	}
	return s.Storage.AuthorizeClientIDSecret(ctx, id, secret)
}

func (s *store) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	svc, ok := s.services[id]
	if !ok || svc.secret != secret {
		return nil, fmt.Errorf("wrong service client or secret")
	}
	return s.serviceClient(id, svc), nil
}

func (s *store) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	svc, ok := s.services[id]
	if !ok {
		return nil, fmt.Errorf("wrong service client")
	}
	return &oidc.JWTTokenRequest{Subject: id, Audience: svc.audience, Scopes: scopes}, nil
}

func (s *store) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, req)
	if svc, ok := s.services[req.GetSubject()]; ok && svc.expired {
		exp = time.Now().Add(-time.Hour)
	}
	return id, exp, err
}

// GetPrivateClaimsFromScopes adds the scopes to the access token, as
// "scope" (RFC 9068).
func (s *store) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	claims, err := s.Storage.GetPrivateClaimsFromScopes(ctx, userID, clientID, scopes)
	if err != nil {
		return nil, err
	}
	if claims == nil {
		claims = map[string]any{}
	}
	var own []string
	for _, sc := range scopes {
		if strings.HasPrefix(sc, "chromegate:") {
			own = append(own, sc)
		}
	}
	claims["scope"] = strings.Join(own, " ")
	return claims, nil
}

// authRequest is a user's authorization, for the audience asked for.
type authRequest struct {
	op.AuthRequest
	audience []string
}

func (a authRequest) GetAudience() []string { return a.audience }

func (s *store) wrap(r op.AuthRequest, err error) (op.AuthRequest, error) {
	if err != nil {
		return nil, err
	}
	return authRequest{AuthRequest: r, audience: []string{s.audience}}, nil
}

func (s *store) CreateAuthRequest(ctx context.Context, r *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	return s.wrap(s.Storage.CreateAuthRequest(ctx, r, userID))
}

func (s *store) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	return s.wrap(s.Storage.AuthRequestByID(ctx, id))
}

func (s *store) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	return s.wrap(s.Storage.AuthRequestByCode(ctx, code))
}
