package policies_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policies"
	"github.com/chromegate/chromegate/policy"
)

// TestRegoTests runs the Rego unit tests of every policy that ships, from
// the embedded files, and fails if any test fails or coverage is partial.
func TestRegoTests(t *testing.T) {
	t.Parallel()
	dirs := map[string]fs.FS{"default": policies.Default}
	for _, name := range []string{"ci-agent", "security-team", "desktop"} {
		sub, err := fs.Sub(policies.Examples, name)
		if err != nil {
			t.Fatal(err)
		}
		dirs["examples/"+name] = sub
	}
	for name, fsys := range dirs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			passed, failed, err := policy.TestFS(t.Context(), name, fsys, &out, true)
			if err != nil {
				t.Fatal(err)
			}
			if failed > 0 || passed < 8 {
				t.Errorf("%d passed, %d failed:\n%s", passed, failed, out.String())
			}
			if !bytes.Contains(out.Bytes(), []byte("coverage: 100.0%")) {
				t.Errorf("coverage below 100%%:\n%s", out.String())
			}
		})
	}
}

func TestExamplesAreComplete(t *testing.T) {
	t.Parallel()
	entries, err := fs.ReadDir(policies.Examples, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Errorf("%d examples, want 3", len(entries))
	}
	for _, e := range entries {
		for _, f := range []string{"chromegate.rego", "chromegate_test.rego", "data.json"} {
			if _, err := fs.Stat(policies.Examples, e.Name()+"/"+f); err != nil {
				t.Errorf("examples/%s: %v", e.Name(), err)
			}
		}
	}
}

func TestWriteTree(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "policies")
	if err := policies.WriteTree(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"README.md", "input.schema.json", "default/chromegate.rego", "default/data.json", "examples/desktop/chromegate_test.rego"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Error(err)
		}
	}
	// What was written is a policy a user can test and load as it is.
	var out bytes.Buffer
	if passed, failed, err := policy.Test(t.Context(), []string{filepath.Join(dir, "examples", "ci-agent")}, &out, false); err != nil || failed > 0 || passed == 0 {
		t.Errorf("written ci-agent: %d passed, %d failed, %v:\n%s", passed, failed, err, out.String())
	}
	if _, err := policy.New(t.Context(), policy.WithDir(filepath.Join(dir, "default"))); err != nil {
		t.Error(err)
	}
	// Never overwrites, and writes nothing when it would.
	if err := os.WriteFile(filepath.Join(dir, "default", "data.json"), []byte(`{"mine": true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := policies.WriteTree(dir); !errors.Is(err, policies.ErrExists) {
		t.Errorf("second WriteTree = %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "default", "data.json")); string(b) != `{"mine": true}` {
		t.Errorf("data.json was overwritten: %s", b)
	}
}

func TestSchemaIsJSON(t *testing.T) {
	t.Parallel()
	if !bytes.Contains(policies.Schema(), []byte(`"$schema"`)) {
		t.Error("Schema() is not the JSON Schema")
	}
}

// TestREADMEPolicyAndTestRun checks that the policy and the test shown in
// README.md load and pass together.
func TestREADMEPolicyAndTestRun(t *testing.T) {
	t.Parallel()
	readme, err := fs.ReadFile(policies.Tree, "README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, part := range strings.Split(string(readme), "```rego\n")[1:] {
		blocks = append(blocks, strings.SplitN(part, "```", 2)[0])
	}
	dir := t.TempDir()
	wrote := 0
	for _, b := range blocks {
		name := ""
		switch {
		case strings.HasPrefix(b, "package chromegate_test"):
			name = "readme_test.rego"
		case strings.HasPrefix(b, "package chromegate\n"):
			name = "readme.rego"
		default:
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		wrote++
	}
	if wrote != 2 {
		t.Fatalf("found %d of the 2 README blocks", wrote)
	}
	var out bytes.Buffer
	passed, failed, err := policy.Test(t.Context(), []string{dir}, &out, false)
	if err != nil || failed != 0 || passed != 1 {
		t.Fatalf("README policy: %d passed, %d failed, %v:\n%s", passed, failed, err, out.String())
	}
	e, err := policy.New(t.Context(), policy.WithDir(dir), policy.WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	in, _ := policy.NewInput(policy.PhaseCall, "navigate", policy.Class{Action: policy.ActionNavigate, URLArg: "url"},
		map[string]any{"url": "https://docs.wiki.example.com/x"})
	if d := e.Decide(t.Context(), in); !d.Allow {
		t.Errorf("README policy denies its own wiki: %+v", d)
	}
	// Its pages load from the wiki, and from nowhere else.
	for u, want := range map[string]bool{"https://static.wiki.example.com/app.js": true, "https://cdn.example.net/lib.js": false} {
		req, err := policy.NewRequestInput(&egress.Request{URL: u, Method: "GET", ResourceType: "script", Via: "route"}, policy.Principal{})
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := e.DecideRequest(t.Context(), req); d.Allow != want {
			t.Errorf("README policy, request to %s: %+v, want allow %v", u, d, want)
		}
	}
}

// TestREADMEInputMatchesSchema validates the input documents shown in
// README.md (a call's and a request's) against input.schema.json.
func TestREADMEInputMatchesSchema(t *testing.T) {
	t.Parallel()
	readme, _ := fs.ReadFile(policies.Tree, "README.md")
	for _, heading := range []string{"## The input document", "### The request input"} {
		section := strings.SplitN(string(readme), heading, 2)[1]
		doc := strings.SplitN(strings.SplitN(section, "```json\n", 2)[1], "```", 2)[0]
		validateInput(t, heading, doc)
	}
}

func validateInput(t *testing.T, name, doc string) {
	t.Helper()
	var schema jsonschema.Schema
	if err := json.Unmarshal(policies.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	if err := resolved.Validate(v); err != nil {
		t.Errorf("README input under %q: %v", name, err)
	}
}

// TestFlowRulesAreOneFile: the information-flow rules are the same file in
// the default policy and the security-team example (each policy directory
// stands alone, so each carries its copy).
func TestFlowRulesAreOneFile(t *testing.T) {
	t.Parallel()
	a, err := fs.ReadFile(policies.Default, "flow.rego")
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(policies.Examples, "security-team/flow.rego")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("policies/default/flow.rego and policies/examples/security-team/flow.rego differ; keep them one file")
	}
}
