package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/internal/testkit"
	"github.com/chromegate/chromegate/mcp/client"
)

// clientSession drives a browser through the generated client: typed
// arguments in, typed results out, typed errors, and a plugin by name. It
// is shared by every transport the client speaks.
func clientSession(t *testing.T, c *client.Client, base, demo string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	page, err := c.Navigate(ctx, client.NavigateParams{URL: base + "/form"})
	if err != nil {
		t.Fatal(err)
	}
	if page.Title != "Test form" || page.Status != 200 || !strings.HasPrefix(page.TabID, "cdp:") {
		t.Errorf("navigate: %+v", page)
	}
	text, err := c.GetText(ctx, client.GetTextParams{Selector: "#para"})
	if err != nil {
		t.Fatal(err)
	}
	if text.Text != "Hello world" || text.Chars != 11 || text.URL != base+"/form" {
		t.Errorf("get_text: %+v", text)
	}
	snap, err := c.Snapshot(ctx, client.SnapshotParams{InteractiveOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var counterRef string
	for _, line := range strings.Split(snap.Text, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[1] == "button" && strings.Contains(line, "count") {
			counterRef = f[0]
		}
	}
	if snap.Title != "Test form" || counterRef == "" {
		t.Fatalf("snapshot: %+v\n%s", snap, snap.Text)
	}
	if _, err := c.Click(ctx, client.ClickParams{Ref: counterRef}); err != nil {
		t.Fatal(err)
	}
	ev, err := c.Eval(ctx, client.EvalParams{Expression: "document.getElementById('counter').textContent"})
	if err != nil {
		t.Fatal(err)
	}
	var counter string
	if err := json.Unmarshal(ev.Value, &counter); err != nil || !ev.OK || counter != "clicked 1" {
		t.Errorf("eval after click by ref: %+v (%v)", ev, err)
	}
	form, err := c.FillForm(ctx, client.FillFormParams{Fields: []client.FormField{
		{Selector: "#name", Value: "Grace"}, {Selector: "#plan", Value: "team"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if form.Filled != 2 || form.Failed != 0 || len(form.Fields) != 2 {
		t.Errorf("fill_form: %+v", form)
	}
	shot, err := c.Screenshot(ctx, client.ScreenshotParams{Selector: "#counter"})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot.Image))
	if err != nil || shot.ImageMIMEType != "image/png" || img.Bounds().Dx() != shot.Width || shot.Width == 0 {
		t.Errorf("screenshot: %dx%d %s (%v)", shot.Width, shot.Height, shot.ImageMIMEType, err)
	}
	md, err := c.ReadAsMarkdown(ctx, client.ReadAsMarkdownParams{})
	if err != nil || !strings.Contains(md.Text, "Hello **world**") {
		t.Errorf("read_as_markdown: %+v (%v)", md, err)
	}
	tabs, err := c.TabsList(ctx)
	if err != nil || len(tabs.Tabs) == 0 || tabs.Tabs[0].TabID != page.TabID {
		t.Errorf("tabs_list: %+v (%v)", tabs, err)
	}

	// Errors carry the server's code, message and hint.
	var e *client.Error
	_, err = c.Click(ctx, client.ClickParams{Selector: "#missing", TimeoutMs: 500})
	if !errors.As(err, &e) || e.Code != "SELECTOR_NOT_FOUND" && e.Code != "TIMEOUT" || e.Hint == "" {
		t.Errorf("click on a missing element: %#v", err)
	}
	_, err = c.Navigate(ctx, client.NavigateParams{URL: "file:///etc/passwd"})
	if !errors.Is(err, &client.Error{Code: "POLICY_DENIED"}) || !errors.As(err, &e) || !strings.Contains(e.Message, "file:") {
		t.Errorf("file: navigation: %#v", err)
	}

	// A plugin, by name.
	var signup struct {
		Confirmation string `json:"confirmation"`
	}
	if _, err := c.CallJSON(ctx, "acme_signup", map[string]any{"site": demo, "name": "Ada", "email": "ada@example.com"}, &signup); err != nil {
		t.Fatal(err)
	}
	if signup.Confirmation != "Thanks, Ada! We will write to ada@example.com (plan: free)." {
		t.Errorf("acme_signup: %+v", signup)
	}
}

// The generated client over stdio: it starts `chromegate serve` itself.
func TestGeneratedClientStdio(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	base, demo := site(t), demoSite(t)
	dir, _ := pluginDir(t)
	cmd := exec.Command(binary, append([]string{"serve", "--isolated", "--data-dir=" + t.TempDir(), "--log-level=warn", "--plugins=" + dir}, permissive...)...)
	log := &testkit.Buffer{}
	cmd.Stderr = log
	c, err := client.ConnectStdio(t.Context(), cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	clientSession(t, c, base, demo)
	if t.Failed() {
		t.Logf("server log:\n%s", tail(log.String(), 4000))
	}
}

// The generated client over Streamable HTTP and over REST, with a bearer
// key; then a key whose tool ACL leaves out a plugin's step.
func TestGeneratedClientHTTP(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	needBrowser(t)
	base, demo := site(t), demoSite(t)
	dir, _ := pluginDir(t)
	dataDir := t.TempDir()
	key := createKey(t, dataDir, "ci", "--role=ci")
	reader := createKey(t, dataDir, "reader", "--allow-tools=acme_signup,navigate,get_*,wait_for,chrome_status")
	s := startHTTP(t, dataDir, append([]string{"--plugins=" + dir}, permissive...)...)

	t.Run("mcp", func(t *testing.T) {
		c, err := client.ConnectHTTP(t.Context(), "http://"+s.addr+"/mcp", key, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clientSession(t, c, base, demo)
	})
	t.Run("rest", func(t *testing.T) {
		c := client.NewREST("http://"+s.addr, key)
		defer c.Close()
		clientSession(t, c, base, demo)
	})
	t.Run("wrong key", func(t *testing.T) {
		_, err := client.NewREST("http://"+s.addr, "not-a-key").Navigate(t.Context(), client.NavigateParams{URL: base + "/form"})
		if !errors.Is(err, &client.Error{Code: "UNAUTHORIZED"}) {
			t.Fatalf("a wrong key: %v, want UNAUTHORIZED", err)
		}
	})

	// The ACL holds at every step: reader may call acme_signup, but not
	// fill_form, its second step, over either transport.
	for name, c := range map[string]*client.Client{"rest": client.NewREST("http://"+s.addr, reader), "mcp": mustHTTP(t, s.addr, reader)} {
		tools, err := c.ListTools(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]bool{}
		for _, tl := range tools {
			listed[tl.Name] = true
		}
		if !listed["acme_signup"] || !listed["navigate"] || !listed["get_text"] || listed["fill_form"] || listed["post_status"] {
			t.Errorf("%s: reader's tools: %v", name, listed)
		}
		_, err = c.Call(t.Context(), "acme_signup", map[string]any{"site": demo, "name": "Ada", "email": "ada@example.com"})
		var e *client.Error
		if !errors.As(err, &e) || e.Code != "POLICY_DENIED" ||
			!strings.HasPrefix(e.Message, "plugin acme_signup stopped at step 2 (form, fill_form): tool fill_form is not available to reader") {
			t.Errorf("%s: a plugin step outside the key's ACL: %#v", name, err)
		}
		_, err = c.Call(t.Context(), "fill_form", map[string]any{"fields": []any{map[string]any{"selector": "#name", "value": "x"}}})
		if !errors.Is(err, &client.Error{Code: "POLICY_DENIED"}) {
			t.Errorf("%s: reader calling fill_form directly: %v", name, err)
		}
	}
	if strings.Contains(s.log.String(), key) || strings.Contains(s.log.String(), reader) {
		t.Error("a key reached the server log")
	}
}

func mustHTTP(t *testing.T, addr, key string) *client.Client {
	t.Helper()
	c, err := client.ConnectHTTP(t.Context(), "http://"+addr+"/mcp", key, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
