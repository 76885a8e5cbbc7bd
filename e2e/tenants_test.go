package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromegate/chromegate/internal/testkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTenantsShareNoFiles: over HTTP each key's downloads, PDFs, upload
// roots and records are its own. Bob, saving a PDF under the name Alice
// used, learns nothing of hers (no "report (1).pdf"); Bob, handed the
// path of Alice's PDF, cannot upload it into his page; the keys "alice"
// and "alice." keep records apart (issue 27, findings 11 and 16).
func TestTenantsShareNoFiles(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	base := site(t)
	dir := t.TempDir()
	records := filepath.Join(dir, "records")
	keys := map[string]string{}
	for _, who := range []string{"alice", "bob", "alice."} {
		keys[who] = createKey(t, dir, who)
	}
	h := startHTTP(t, dir, append(permissive, "--record="+records)...)
	sess := map[string]*sdk.ClientSession{}
	for who, key := range keys {
		sess[who] = h.connect(key, nil)
		mustOK(t, "navigate", mcpCall(t, sess[who], "navigate", map[string]any{"url": base + "/form"}))
	}
	type saved struct {
		Path     string `json:"path"`
		Filename string `json:"filename"`
	}
	pdf := func(who string) saved {
		t.Helper()
		res := mustOK(t, "pdf", mcpCall(t, sess[who], "pdf", map[string]any{"filename": "report"}))
		var s saved
		if err := json.Unmarshal([]byte(jsonPart(resultText(res))), &s); err != nil || s.Path == "" {
			t.Fatalf("%s's pdf: %v %s", who, err, resultText(res))
		}
		return s
	}
	alice, bob := pdf("alice"), pdf("bob")
	if alice.Path == bob.Path || bob.Filename != "report.pdf" || alice.Filename != "report.pdf" {
		t.Errorf("the same name by two keys: alice %+v, bob %+v (a tenant learns another's file names)", alice, bob)
	}
	if filepath.Dir(alice.Path) != filepath.Join(dir, "downloads", "alice") || filepath.Dir(bob.Path) != filepath.Join(dir, "downloads", "bob") {
		t.Errorf("PDFs outside their keys' directories: %s, %s", alice.Path, bob.Path)
	}
	// Bob uploads Alice's PDF by its path: refused, nothing set.
	res := mcpCall(t, sess["bob"], "set_files", map[string]any{"selector": "#files", "paths": []string{alice.Path}})
	if txt := resultText(res); !res.IsError || !strings.Contains(txt, "BAD_ARGS") || !strings.Contains(txt, "outside the upload directories") {
		t.Errorf("bob's set_files of alice's file: %s", txt)
	}
	// His own is his to upload.
	mustOK(t, "set_files", mcpCall(t, sess["bob"], "set_files", map[string]any{"selector": "#files", "paths": []string{bob.Path}}))
	// Nor does Alice reach Bob's.
	res = mcpCall(t, sess["alice"], "set_files", map[string]any{"selector": "#files", "paths": []string{bob.Path}})
	if !res.IsError {
		t.Errorf("alice's set_files of bob's file succeeded: %s", resultText(res))
	}
	// "alice" and "alice." have records of their own.
	for _, who := range []string{"alice", "alice."} {
		mustOK(t, "get_text", mcpCall(t, sess[who], "get_text", map[string]any{}))
	}
	a, err := os.ReadDir(filepath.Join(records, "alice"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadDir(filepath.Join(records, "alice%2E"))
	if err != nil {
		t.Fatalf("the key alice. has no record directory of its own: %v", err)
	}
	if len(a) != 1 || len(b) != 1 {
		t.Errorf("alice's records %d, alice.'s %d: want one session each", len(a), len(b))
	}
}

// TestKeylessHTTPIsNotStdio: a loopback server with no keys serves any
// local user of the machine; its principal is not stdio's, so it neither
// lists nor loads the states the user who runs chromegate saved over
// stdio (issue 27, finding 17).
func TestKeylessHTTPIsNotStdio(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	dir := t.TempDir()
	copyState(t, writeTemp(t, `{"cookies":[],"origins":[]}`), dir, "local", "stdio-login")
	h := startHTTP(t, dir, permissive...)
	cs := h.connect("", nil)
	list := resultText(mustOK(t, "state_list", mcpCall(t, cs, "state_list", nil)))
	if strings.Contains(list, "stdio-login") {
		t.Errorf("a keyless HTTP caller lists stdio's states: %s", list)
	}
	res := mcpCall(t, cs, "state_load", map[string]any{"name": "stdio-login"})
	if txt := resultText(res); !res.IsError || !strings.Contains(txt, "no saved state") {
		t.Errorf("a keyless HTTP caller loaded stdio's state: %s", txt)
	}
	// Its own states are its own.
	mustOK(t, "state_save", mcpCall(t, cs, "state_save", map[string]any{"name": "mine"}))
	if _, err := os.Stat(filepath.Join(dir, "state", "local-http", "mine.json")); err != nil {
		t.Errorf("the keyless caller's state: %v", err)
	}
}

// TestSavedLoginsAreTheOperators: a model in safe mode, sent to /logout
// by a page, cannot save the logged-out context over a saved login; the
// login serve --storage-state restores is read-only to it in every mode
// (issue 27, finding 14).
func TestSavedLoginsAreTheOperators(t *testing.T) {
	testkit.Backends(t, testkit.CDP, testkit.Ext, testkit.Remote)
	needBrowser(t)
	base := site(t)
	empty := writeTemp(t, `{"cookies":[],"origins":[]}`)
	for _, mode := range []struct {
		name  string
		flags []string
	}{
		{"safe", []string{"--allow-domain=127.0.0.1"}},
		{"mutations", []string{"--allow-domain=127.0.0.1", "--enable-mutations"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			// A data dir of each server's own: the extension pairs per data dir.
			dir := t.TempDir()
			copyState(t, empty, dir, "local", "app-login")
			login := filepath.Join(dir, "state", "local", "app-login.json")
			before, err := os.ReadFile(login)
			if err != nil {
				t.Fatal(err)
			}
			s := startServer(t, append(mode.flags, "--data-dir="+dir, "--storage-state="+login)...)
			s.call("navigate", map[string]any{"url": base + "/form"})
			for _, overwrite := range []bool{false, true} {
				txt := s.fail("POLICY_DENIED", "state_save", map[string]any{"name": "app-login", "overwrite": overwrite})
				// In safe mode the policy refuses an overwrite first.
				if (!overwrite || mode.name == "mutations") && !strings.Contains(txt, "--storage-state") {
					t.Errorf("state_save over the operator's login: %s", txt)
				}
			}
			name := "fresh-" + mode.name
			s.call("state_save", map[string]any{"name": name})
			if txt := s.fail("BAD_ARGS", "state_save", map[string]any{"name": name}); !strings.Contains(txt, "overwrite") {
				t.Errorf("a second save of %s: %s", name, txt)
			}
			res := s.try("state_save", map[string]any{"name": name, "overwrite": true})
			switch {
			case mode.name == "safe" && (!res.IsError || !strings.Contains(resultText(res), "POLICY_DENIED")):
				t.Errorf("safe mode replaced a saved state: %s", resultText(res))
			case mode.name == "mutations" && res.IsError:
				t.Errorf("with mutations on, overwrite was refused: %s", resultText(res))
			}
			if after, err := os.ReadFile(login); err != nil || string(after) != string(before) {
				t.Errorf("the operator's login changed: %v", err)
			}
		})
	}
}
