package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/mcp"
)

// TestRESTKeys: admin keys manage keys; others cannot; a created key works
// at once and a revoked one stops at once.
func TestRESTKeys(t *testing.T) {
	e := newHTTPEnv(t, nil)
	admin := e.key(NewKey{Name: "root", Roles: []string{"admin", "ci"}})
	user := e.key(NewKey{Name: "user"})
	if status, _, _ := e.do("GET", "/api/v1/keys", user, "", nil); status != 403 {
		t.Errorf("non-admin lists keys: %d", status)
	}
	status, _, body := e.do("POST", "/api/v1/keys", admin, `{"name":"bot","roles":["ci"],"allow_tools":["get_*"],"rate":"10/min"}`, nil)
	var created struct {
		Data struct {
			Key  string `json:"key"`
			Name string `json:"name"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &created); err != nil || status != 201 || !strings.HasPrefix(created.Data.Key, KeyPrefix) {
		t.Fatalf("create: %d %s", status, body)
	}
	bot := created.Data.Key
	if status, _, body := e.do("GET", "/api/v1/status", bot, "", nil); status != 200 || !strings.Contains(body, `"principal":{"name":"bot","roles":["ci"],"transport":"rest"}`) {
		t.Errorf("the new key: %d %s", status, body)
	}
	_, _, body = e.do("GET", "/api/v1/keys", admin, "", nil)
	if !strings.Contains(body, `"name":"bot"`) || strings.Contains(body, "sha256") || strings.Contains(body, KeyPrefix) {
		t.Errorf("list: %s", body)
	}
	if status, _, _ := e.do("DELETE", "/api/v1/keys/bot", admin, "", nil); status != 200 {
		t.Errorf("revoke: %d", status)
	}
	if status, _, _ := e.do("GET", "/api/v1/status", bot, "", nil); status != 401 {
		t.Errorf("the revoked key: %d", status)
	}
	if status, _, _ := e.do("DELETE", "/api/v1/keys/bot", admin, "", nil); status != 404 {
		t.Errorf("revoke twice: %d", status)
	}
	if status, _, _ := e.do("POST", "/api/v1/keys", admin, `{"name":"Bad Name"}`, nil); status != 400 {
		t.Errorf("bad name: %d", status)
	}
	assertNoKeys(t, e.log.String(), admin, user, bot)
}

// TestRESTKeysWithinRights: an admin key limited to one tool, a rate and
// an expiry cannot mint a key with more: not every tool (nor a wider glob,
// nor no ACL at all), not a role it lacks, not a higher or unlimited rate,
// not a later or no expiry. What it can mint is within all four, and the
// new key is held to them.
func TestRESTKeysWithinRights(t *testing.T) {
	e := newHTTPEnv(t, nil)
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	admin := e.key(NewKey{Name: "narrow", Roles: []string{"admin"}, AllowTools: []string{"get_text"}, Rate: "5/min", Expires: exp})
	within := func(extra string) string {
		return fmt.Sprintf(`{"name":"child","roles":["admin"],"allow_tools":["get_text"],"rate":"5/min","expires":%q%s}`, exp.Format(time.RFC3339), extra)
	}
	for _, tc := range []struct{ name, body string }{
		{"every tool", strings.Replace(within(""), `["get_text"]`, `["*"]`, 1)},
		{"a wider glob", strings.Replace(within(""), `["get_text"]`, `["get_*"]`, 1)},
		{"no tool ACL", strings.Replace(within(""), `"allow_tools":["get_text"],`, ``, 1)},
		{"another tool by name", strings.Replace(within(""), `["get_text"]`, `["get_text","eval"]`, 1)},
		{"a wider role", strings.Replace(within(""), `["admin"]`, `["admin","ops"]`, 1)},
		{"a higher rate", strings.Replace(within(""), `"5/min"`, `"6/min"`, 1)},
		{"no rate", strings.Replace(within(""), `"rate":"5/min",`, ``, 1)},
		{"a later expiry", strings.Replace(within(""), exp.Format(time.RFC3339), exp.Add(time.Minute).Format(time.RFC3339), 1)},
		{"no expiry", strings.Replace(within(""), fmt.Sprintf(`,"expires":%q`, exp.Format(time.RFC3339)), ``, 1)},
	} {
		status, _, body := e.do("POST", "/api/v1/keys", admin, tc.body, nil)
		if status != 403 || !strings.Contains(body, "FORBIDDEN") || strings.Contains(body, KeyPrefix) {
			t.Errorf("%s: %d %s", tc.name, status, body)
		}
	}
	if keys, _ := e.keys.List(); len(keys) != 1 {
		t.Fatalf("refused keys were stored: %v", keys)
	}
	status, _, body := e.do("POST", "/api/v1/keys", admin, strings.Replace(within(""), `"5/min"`, `"2/min"`, 1), nil)
	var created struct {
		Data struct {
			Key string `json:"key"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &created); err != nil || status != 201 {
		t.Fatalf("a key within its rights: %d %s", status, body)
	}
	if status, _, body := e.do("POST", "/api/v1/command", created.Data.Key, `{"command":"tabs_list"}`, nil); status != 403 {
		t.Errorf("the child used a tool outside its ACL: %d %s", status, body)
	}
	assertNoKeys(t, e.log.String(), admin, created.Data.Key)
}

// TestKeyExpires: a key past its expiry is refused like a revoked one.
func TestKeyExpires(t *testing.T) {
	e := newHTTPEnv(t, nil)
	k := e.key(NewKey{Name: "brief", Expires: time.Now().Add(1500 * time.Millisecond)})
	if status, _, body := e.do("GET", "/api/v1/status", k, "", nil); status != 200 {
		t.Fatalf("before it expires: %d %s", status, body)
	}
	time.Sleep(1600 * time.Millisecond)
	if status, _, body := e.do("GET", "/api/v1/status", k, "", nil); status != 401 {
		t.Errorf("after it expired: %d %s", status, body)
	}
	if _, _, err := e.keys.Create(NewKey{Name: "late", Expires: time.Now().Add(-time.Second)}, time.Now()); err == nil {
		t.Error("a key that expired before it was made was created")
	}
}

// TestKeyStoreFile: keys are stored only as hashes, in a 0600 file in a 0700
// dir; a file others can read is refused; a change on disk is seen.
func TestKeyStoreFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	path := filepath.Join(dir, "keys.json")
	s, err := OpenKeyStore(path)
	if err != nil {
		t.Fatal(err)
	}
	key, info, err := s.Create(NewKey{Name: "ci", Roles: []string{"ci"}, AllowTools: []string{"get_*"}, Rate: "5/min"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, KeyPrefix) || len(key) != len(KeyPrefix)+43 || info.Name != "ci" {
		t.Errorf("key %d chars, info %+v", len(key), info)
	}
	b, _ := os.ReadFile(path)
	if bytes.Contains(b, []byte(key)) || bytes.Contains(b, []byte(key[len(KeyPrefix):])) || !bytes.Contains(b, []byte(`"sha256"`)) {
		t.Errorf("the file holds the key: %s", b)
	}
	for p, want := range map[string]os.FileMode{path: 0o600, dir: 0o700} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %04o", p, fi.Mode().Perm(), want)
		}
	}
	p, err := s.Authenticate(key, "http")
	if err != nil || p.Name != "ci" || p.Transport != "http" || !p.Tools.Allows("get_text") || p.Tools.Allows("click") || p.Rate == nil {
		t.Errorf("authenticate: %+v %v", p, err)
	}
	if _, err := s.Authenticate(key+"x", "http"); !errors.Is(err, ErrNoKey) {
		t.Errorf("a wrong key: %v", err)
	}
	if _, _, err := s.Create(NewKey{Name: "ci"}, time.Now()); err == nil {
		t.Error("a duplicate name was accepted")
	}
	for _, reserved := range []string{"local", "local-http"} {
		if _, _, err := s.Create(NewKey{Name: reserved}, time.Now()); err == nil {
			t.Errorf("a key named %q (a keyless caller's) was accepted", reserved)
		}
	}
	// Another process (`chromegate keys revoke`) changes the file.
	other, err := OpenKeyStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Revoke("ci"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(key, "http"); !errors.Is(err, ErrNoKey) {
		t.Errorf("a key revoked by another store still works: %v", err)
	}
	// A dir others may write to is refused, and left as it is.
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	ss, err := OpenKeyStore(filepath.Join(shared, "keys.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ss.Create(NewKey{Name: "x"}, time.Now()); err == nil || !strings.Contains(err.Error(), "others may write") {
		t.Errorf("a world-writable keys dir: %v", err)
	}
	if fi, _ := os.Stat(shared); fi.Mode().Perm() != 0o777 {
		t.Errorf("the shared dir's mode was changed to %v", fi.Mode().Perm())
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenKeyStore(path); err == nil || !strings.Contains(err.Error(), "mode 0644") {
		t.Errorf("a 0644 keys file: %v", err)
	}
	if _, err := s.Authenticate(key, "http"); err == nil {
		t.Error("a 0644 keys file still authenticates")
	}
	if !(!s.Empty()) {
		t.Error("an unreadable store counts as empty (it would open the server to anonymous callers)")
	}
}

func TestToolACL(t *testing.T) {
	tests := []struct {
		globs []string
		allow []string
		deny  []string
	}{
		{nil, []string{"click", "eval"}, nil},
		{[]string{"get_*"}, []string{"get_text", "get_html"}, []string{"click", "snapshot"}},
		{[]string{"*", "!eval"}, []string{"click", "get_text"}, []string{"eval"}},
		{[]string{"!eval"}, []string{"click"}, []string{"eval"}},
		{[]string{"{get_*,snapshot}", "!get_html"}, []string{"get_text", "snapshot"}, []string{"get_html", "click"}},
	}
	for _, tc := range tests {
		a, err := mcp.NewToolACL(tc.globs)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range tc.allow {
			if !a.Allows(n) {
				t.Errorf("%v denies %s", tc.globs, n)
			}
		}
		for _, n := range tc.deny {
			if a.Allows(n) {
				t.Errorf("%v allows %s", tc.globs, n)
			}
		}
	}
	if _, err := mcp.NewToolACL([]string{"[a-"}); err == nil {
		t.Error("a malformed glob was accepted")
	}
	if _, err := mcp.NewToolACL([]string{"!"}); err == nil {
		t.Error("an empty glob was accepted")
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"": 0, "0": 0, "60/min": 60, "2/s": 120, "30/h": 0.5} {
		if got, err := mcp.ParseRate(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"x", "5", "5/day", "-1/min"} {
		if _, err := mcp.ParseRate(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
