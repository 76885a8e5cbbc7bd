// Package demo runs chromegate's built-in demonstration: it serves a small
// site on 127.0.0.1, starts `chromegate serve` as a child process and drives
// it over real MCP stdio the way an agent would, printing every call.
package demo

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/chromegate/chromegate/mcp"
)

//go:embed site
var siteFS embed.FS

// Options configures a demo run.
type Options struct {
	// Binary is the chromegate executable to spawn as the server.
	Binary string
	// ServeArgs are extra flags for `chromegate serve` (browser flags).
	ServeArgs []string
	// OutDir receives the screenshot.
	OutDir string
	// Out receives the narration; ServerLog the server's stderr.
	Out       io.Writer
	ServerLog io.Writer
}

// Site serves the demo site on a loopback port until ctx is done. It returns
// the base URL.
func Site(ctx context.Context) (string, error) {
	sub, err := fs.Sub(siteFS, "site")
	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("demo site: %w", err)
	}
	srv := &http.Server{Handler: http.FileServerFS(sub), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/", nil
}

// Run performs the scripted session. It fails if any step that should work
// does not.
func Run(ctx context.Context, o Options) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	base, err := Site(ctx)
	if err != nil {
		return err
	}
	host := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/")
	hostname, _, _ := net.SplitHostPort(host)
	fmt.Fprintf(o.Out, "demo site: %s\n", base)

	args := append([]string{"serve", "--isolated", "--log-level=warn",
		"--allow-domain=" + hostname, "--enable-mutations"}, o.ServeArgs...)
	cmd := exec.Command(o.Binary, args...)
	cmd.Stderr = o.ServerLog
	fmt.Fprintf(o.Out, "server:    %s %s\n\n", filepath.Base(o.Binary), strings.Join(args, " "))

	client := sdk.NewClient(&sdk.Implementation{Name: "chromegate-demo", Version: "1"}, nil)
	start := time.Now()
	session, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("start chromegate serve: %w", err)
	}
	defer session.Close()

	a := &agent{ctx: ctx, s: session, out: o.Out}
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	raw, _ := json.Marshal(tools)
	fmt.Fprintf(o.Out, "→ tools/list\n  ✓ %d tools, %d characters of definitions\n", len(tools.Tools), len(raw))

	steps := []struct {
		tool string
		args map[string]any
	}{
		{"navigate", map[string]any{"url": base}},
		{"fill", map[string]any{"selector": "#name", "value": "Ada Lovelace"}},
		{"type", map[string]any{"selector": "#email", "text": "ada@example.com"}},
		{"select_option", map[string]any{"selector": "#plan", "values": []string{"Pro — weekly"}}},
		{"click", map[string]any{"selector": "#terms"}},
		{"click", map[string]any{"selector": "#submit"}},
		{"wait_for", map[string]any{"text": "Thanks, Ada"}},
		{"get_text", map[string]any{"selector": "#result"}},
	}
	for i, s := range steps {
		res, err := a.call(s.tool, s.args)
		if err != nil {
			return err
		}
		if i == 0 {
			fmt.Fprintf(o.Out, "  (cold start to first page: %v)\n", time.Since(start).Round(time.Millisecond))
		}
		if s.tool == "get_text" && !strings.Contains(text(res), "Thanks, Ada Lovelace") {
			return fmt.Errorf("the form did not submit: result was %q", text(res))
		}
	}

	res, err := a.call("screenshot", map[string]any{"full_page": true})
	if err != nil {
		return err
	}
	if err := saveImage(res, o.OutDir, "screenshot.png", o.Out); err != nil {
		return err
	}

	// The policy at work: a host outside the allowlist is refused, and the
	// model is told why and what would allow it.
	if _, err := a.callExpectError("navigate", map[string]any{"url": "https://example.org/"}); err != nil {
		return err
	}

	if _, err := a.call("chrome_status", map[string]any{}); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "\ndemo finished in %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

type agent struct {
	ctx context.Context
	s   *sdk.ClientSession
	out io.Writer
}

func (a *agent) do(tool string, args map[string]any) (*sdk.CallToolResult, time.Duration, error) {
	shown, _ := json.Marshal(args)
	fmt.Fprintf(a.out, "→ %s %s\n", tool, shown)
	start := time.Now()
	res, err := a.s.CallTool(a.ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", tool, err)
	}
	return res, time.Since(start), nil
}

func (a *agent) call(tool string, args map[string]any) (*sdk.CallToolResult, error) {
	res, d, err := a.do(tool, args)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		fmt.Fprintf(a.out, "  ✗ %s\n", short(text(res), 400))
		return nil, fmt.Errorf("%s failed: %s", tool, text(res))
	}
	fmt.Fprintf(a.out, "  ✓ %v  %s\n", d.Round(100*time.Microsecond), short(text(res), 160))
	if d, ok := mcp.ResultData(res); ok && tool == "get_text" && d.Untrusted {
		// What the page said: the result's text, which the model reads fenced.
		fmt.Fprintf(a.out, "    page text (fenced as untrusted): %s\n", short(d.Text, 300))
	}
	return res, nil
}

func (a *agent) callExpectError(tool string, args map[string]any) (*sdk.CallToolResult, error) {
	res, d, err := a.do(tool, args)
	if err != nil {
		return nil, err
	}
	if !res.IsError {
		return nil, fmt.Errorf("%s should have been denied, but it succeeded: %s", tool, short(text(res), 200))
	}
	fmt.Fprintf(a.out, "  ✗ denied as expected (%v):\n", d.Round(100*time.Microsecond))
	for _, line := range strings.Split(text(res), "\n") {
		fmt.Fprintf(a.out, "    %s\n", line)
	}
	return res, nil
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func saveImage(res *sdk.CallToolResult, dir, name string, out io.Writer) error {
	for _, c := range res.Content {
		img, ok := c.(*sdk.ImageContent)
		if !ok {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, img.Data, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "  saved %s (%d bytes, %s)\n", path, len(img.Data), img.MIMEType)
		return nil
	}
	return errors.New("screenshot returned no image")
}
