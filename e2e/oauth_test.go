package e2e

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromegate/chromegate/internal/testkit"
)

// The OpenID provider the OAuth tests run: zitadel/oidc's example provider
// (e2e/tools/oidcprovider, a module of its own), built once per run.
var (
	providerOnce sync.Once
	providerBin  string
	providerErr  error
)

func buildProvider(t testing.TB) string {
	t.Helper()
	providerOnce.Do(func() {
		providerBin = filepath.Join(filepath.Dir(binary), "oidcprovider")
		cmd := exec.Command("go", "build", "-o", providerBin, "./oidcprovider")
		cmd.Dir = "tools"
		out, err := cmd.CombinedOutput()
		if err != nil {
			providerErr = errors.New("building e2e/tools/oidcprovider: " + err.Error() + "\n" + string(out))
		}
	})
	if providerErr != nil {
		t.Fatal(providerErr)
	}
	return providerBin
}

// startProvider runs the provider on 127.0.0.1 for tokens bound to
// audience, and returns its issuer URL.
func startProvider(t testing.TB, audience string) string {
	t.Helper()
	cmd := exec.Command(buildProvider(t), "-audience", audience)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	issuer, ok := strings.CutPrefix(strings.TrimSpace(line), "issuer=")
	if err != nil || !ok {
		t.Fatalf("the provider did not start: %q %v", line, err)
	}
	return issuer
}

// clientToken is a client-credentials token of the provider.
func clientToken(t testing.TB, issuer, id, secret, scope string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", issuer+"oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}, "scope": {scope}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	return tokenOf(t, req)
}

func tokenOf(t testing.TB, req *http.Request) string {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("token: %s %s", resp.Status, body)
	}
	return tok.AccessToken
}

// userToken runs the authorization-code flow with PKCE as a client would,
// the user logging in on the provider's own login page.
func userToken(t testing.TB, issuer, scope string) string {
	t.Helper()
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	verifier := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(verifier))
	redirect := "http://localhost/callback"
	q := url.Values{"client_id": {"native"}, "redirect_uri": {redirect}, "response_type": {"code"}, "scope": {scope},
		"state": {"st-1"}, "code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	var callback *url.URL
	c := &http.Client{CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if req.URL.Host == "localhost" { // the client's own redirect URI: never fetched
			callback = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}}
	resp, err := c.Get(issuer + "auth?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Request.URL.Query().Get("authRequestID")
	if id == "" {
		t.Fatalf("no login page: %s", resp.Request.URL)
	}
	resp, err = c.PostForm(issuer+"login/username", url.Values{"id": {id}, "username": {"test-user2"}, "password": {"verysecure"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if callback == nil || callback.Query().Get("code") == "" || callback.Query().Get("state") != "st-1" {
		t.Fatalf("no code after login: %v (%s)", callback, resp.Status)
	}
	req, _ := http.NewRequest("POST", issuer+"oauth/token", strings.NewReader(url.Values{"grant_type": {"authorization_code"},
		"code": {callback.Query().Get("code")}, "redirect_uri": {redirect}, "client_id": {"native"}, "code_verifier": {verifier}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return tokenOf(t, req)
}

// TestOAuthRealProvider: chromegate takes the access tokens of a real
// OpenID provider (client credentials, and authorization code with PKCE),
// refuses a token for another audience, an expired one, a tampered one and
// one without the needed scope, maps scopes to roles and a tool ACL, keeps
// taking keys, and writes no token to its log.
func TestOAuthRealProvider(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	const resource = "https://chromegate.test/mcp"
	issuer := startProvider(t, resource)
	site := cookieSite(t)
	dir := t.TempDir()
	key := createKey(t, dir, "ci")
	h := startHTTP(t, dir, "--allow-domain=127.0.0.1", "--oauth-issuer="+issuer, "--oauth-resource="+resource,
		"--oauth-scope=chromegate:use", "--oauth-role=chromegate:use=agent", "--oauth-role=chromegate:admin=admin",
		"--oauth-tools=chromegate:read=get_*,navigate,tabs_list")

	service := clientToken(t, issuer, "svc-agent", "agent-secret", "chromegate:use chromegate:read")
	user := userToken(t, issuer, "openid chromegate:use chromegate:admin")
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	t.Run("client credentials", func(t *testing.T) {
		cs := h.connectAt("2026-07-28", "", bearer(service), nil)
		lr, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range lr.Tools {
			if !strings.HasPrefix(tl.Name, "get_") && tl.Name != "navigate" && tl.Name != "tabs_list" {
				t.Errorf("the read scope lists %s", tl.Name)
			}
		}
		mustOK(t, "navigate", mcpCall(t, cs, "navigate", map[string]any{"url": site + "/echo"}))
		if text := resultText(mustOK(t, "get_text", mcpCall(t, cs, "get_text", nil))); !strings.Contains(text, "cookies: []") {
			t.Errorf("get_text: %q", text)
		}
		status, _, body := h.rest("GET", "/api/v1/status", "", "", bearer(service))
		if status != 200 || !strings.Contains(body, `"principal":{"name":"oauth:svc-agent","roles":["agent"],"transport":"rest"}`) {
			t.Errorf("status: %d %.300s", status, body)
		}
	})
	t.Run("authorization code with PKCE", func(t *testing.T) {
		cs := h.connectAt("2025-11-25", "", bearer(user), nil)
		mustOK(t, "navigate", mcpCall(t, cs, "navigate", map[string]any{"url": site + "/echo"}))
		status, _, body := h.rest("GET", "/api/v1/status", "", "", bearer(user))
		if status != 200 || !strings.Contains(body, `"roles":["admin","agent"]`) || !strings.Contains(body, `"name":"oauth:`) {
			t.Errorf("status: %d %.300s", status, body)
		}
	})
	t.Run("refused", func(t *testing.T) {
		parts := strings.Split(service, ".")
		sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
		sig[0] ^= 0x80
		tampered := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(sig)
		for _, tc := range []struct {
			name, token string
			status      int
			err         string
		}{
			{"another audience", clientToken(t, issuer, "svc-other", "other-secret", "chromegate:use"), 401, "invalid_token"},
			{"expired", clientToken(t, issuer, "svc-expired", "expired-secret", "chromegate:use"), 401, "invalid_token"},
			{"tampered", tampered, 401, "invalid_token"},
			{"without the needed scope", clientToken(t, issuer, "svc-agent", "agent-secret", "chromegate:read"), 403, "insufficient_scope"},
			{"none", "", 401, "resource_metadata="},
		} {
			hdr := map[string]string{}
			if tc.token != "" {
				hdr = bearer(tc.token)
			}
			status, rh, body := h.rest("POST", "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
				mergeHeaders(hdr, map[string]string{"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}))
			if status != tc.status || !strings.Contains(rh.Get("WWW-Authenticate"), tc.err) {
				t.Errorf("%s: %d %q %.200s", tc.name, status, rh.Get("WWW-Authenticate"), body)
			}
		}
	})
	t.Run("metadata", func(t *testing.T) {
		status, _, body := h.rest("GET", "/.well-known/oauth-protected-resource/mcp", "", "", nil)
		if status != 200 || !strings.Contains(body, `"resource":"`+resource+`"`) || !strings.Contains(body, `"authorization_servers":["`+issuer+`"]`) {
			t.Errorf("metadata: %d %s", status, body)
		}
	})
	t.Run("keys keep working", func(t *testing.T) {
		cs := h.connectAt("2026-07-28", key, nil, nil)
		mustOK(t, "tabs_list", mcpCall(t, cs, "tabs_list", nil))
	})
	// Nothing of a token reaches the log (the server logs at debug).
	log := h.log.String()
	for _, tok := range []string{service, user, strings.Split(service, ".")[2]} {
		if strings.Contains(log, tok) {
			t.Error("a token appears in the server's log")
		}
	}
}

func mergeHeaders(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
