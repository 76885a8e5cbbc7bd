package e2e

// The utility side of issue 32's attack suite: the real-application suite
// (e2e/realapps, its short set) and the demo run unchanged under the
// default policy, while the security-team example decides every call
// beside it without deciding anything (a shadow): the share of their calls
// it would have asked or refused is the cost of that policy to honest
// work.
//
// The shadow policy is the default policy's files with one change, its
// allowed decision carrying the shadow's verdict as a reason ("shadow
// allow: …", "shadow ask: …", "shadow deny: …"), which the decision log
// writes; and the security-team example's files as package
// chromegate.shadow, reading its data under data.shadow, its principal's
// roles from data.shadow.roles (stdio's caller has none) and counting
// loopback as public (the applications run on 127.0.0.1). A denial of the
// default policy is left as it was.

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromegate/chromegate/e2e/realapps"
	"github.com/chromegate/chromegate/internal/testkit"
)

var packageLine = regexp.MustCompile(`(?m)^package chromegate$`)

// shadowPolicy writes the default policy with the security-team example as
// its shadow, and the shadow's data, for hosts of the analyst role.
func shadowPolicy(t testing.TB, hosts []string, extra map[string]any) (dir, dataFile string) {
	t.Helper()
	const allowed = `decision := {"allow": true, "reasons": [], "hints": [], "ask": sort(ask)} if allowed`
	dir = defaultPolicyWith(t, func(src string) string {
		if !strings.Contains(src, allowed) {
			t.Fatalf("the default policy no longer says %s", allowed)
		}
		return strings.Replace(src, allowed, `decision := {"allow": true, "reasons": shadow_verdict, "hints": [], "ask": sort(ask)} if allowed`, 1) + `
# The shadow's verdict on this input (e2e/flowutility_test.go).
# An ask is an allow with reasons to ask a person (policy.Decision.Ask);
# an allow of false is a denial, whatever it asks.
shadow_verdict := [sprintf("shadow %v: %v", [shadow_kind, concat("; ", shadow_why)])]

shadow_kind := "deny" if not data.chromegate.shadow.decision.allow == true
else := "ask" if count(object.get(data.chromegate.shadow.decision, "ask", [])) > 0
else := "allow"

shadow_why := object.get(data.chromegate.shadow.decision, "ask", []) if shadow_kind == "ask"
else := object.get(data.chromegate.shadow.decision, "reasons", [])
`
	})
	stDir, stData := securityTeamPolicy(t, hosts, extra)
	files, _ := filepath.Glob(filepath.Join(stDir, "*.rego"))
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := packageLine.ReplaceAllString(string(src), "package chromegate.shadow")
		s = strings.ReplaceAll(s, "data.", "data.shadow.")
		s = strings.ReplaceAll(s, "input.principal.roles", "data.shadow.roles")
		if err := os.WriteFile(filepath.Join(dir, "shadow_"+filepath.Base(f)), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var shadow map[string]any
	raw, err := os.ReadFile(stData)
	if err == nil {
		err = json.Unmarshal(raw, &shadow)
	}
	if err != nil {
		t.Fatal(err)
	}
	shadow["roles"] = []string{"analyst"}
	raw, _ = json.Marshal(map[string]any{"shadow": shadow})
	dataFile = filepath.Join(t.TempDir(), "shadow.json")
	if err := os.WriteFile(dataFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, dataFile
}

// shadowShare is what a decision log says of the calls: how many there
// were, how many the shadow would have asked about and refused, and the
// refusals' reasons with their counts.
type shadowShare struct {
	Calls, Asked, Refused int
	Why                   map[string]int
}

func (s shadowShare) pct(n int) float64 { return 100 * float64(n) / float64(max(s.Calls, 1)) }

// readShadow counts the call decisions of a decision log (phase call: one
// line per tool call; the default policy allowed or denied it, the shadow
// said what it would have).
func readShadow(t testing.TB, path string) shadowShare {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := shadowShare{Why: map[string]int{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Phase   string   `json:"phase"`
			Tool    string   `json:"tool"`
			Allow   bool     `json:"allow"`
			Reasons []string `json:"reasons"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("decision log line %q: %v", sc.Text(), err)
		}
		if e.Phase != "call" || !e.Allow {
			continue
		}
		out.Calls++
		verdict := ""
		for _, r := range e.Reasons {
			if strings.HasPrefix(r, "shadow ") {
				verdict = r
			}
		}
		switch {
		case verdict == "":
			t.Fatalf("a call decision without the shadow's verdict: %s", sc.Text())
		case strings.HasPrefix(verdict, "shadow ask"):
			out.Asked++
			out.Why[e.Tool+": "+verdict]++
		case strings.HasPrefix(verdict, "shadow deny"):
			out.Refused++
			out.Why[e.Tool+": "+verdict]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func logShare(t testing.TB, suite string, s shadowShare) {
	t.Logf("%s under the security-team policy: %d calls, %d asked (%.0f%%), %d refused (%.0f%%)",
		suite, s.Calls, s.Asked, s.pct(s.Asked), s.Refused, s.pct(s.Refused))
	for why, n := range s.Why {
		t.Logf("  %d× %s", n, why)
	}
}

// TestFlowUtility runs the real applications' short set and the demo under
// the default policy with the security-team example as a shadow, and
// reports the share of their calls the example would ask about or refuse.
func TestFlowUtility(t *testing.T) {
	testkit.Backends(t, testkit.CDP)
	// A measurement (the share of calls the security-team policy would
	// refuse or ask): make test-flow runs it. make test runs TestRealApps
	// and TestDemo, which show the default policy's utility unchanged.
	testkit.Long(t, "test-flow")
	needBrowser(t)
	// The applications' origin is labelled confidential: what the agent
	// reads there and writes back there is not a flow to another origin,
	// so the flow rules should cost honest single-origin work nothing.
	pol, data := shadowPolicy(t, []string{"127.0.0.1"}, map[string]any{"labels": map[string]any{"127.0.0.1": []string{"confidential"}}})

	t.Run("realapps", func(t *testing.T) {
		if missing := realapps.Missing(); len(missing) > 0 {
			if os.Getenv("CI") == "true" {
				t.Fatalf("real applications missing: %s (make realapps-deps installs them)", strings.Join(missing, ", "))
			}
			t.Skipf("real applications missing: %s (make realapps-deps installs them)", strings.Join(missing, ", "))
		}
		for _, start := range []struct {
			name string
			fn   func(context.Context, string) (*realapps.App, error)
		}{
			{"mediawiki", realapps.StartMediaWiki},
			{"dokuwiki", realapps.StartDokuWiki},
			{"wordpress", realapps.StartWordPress},
		} {
			t.Run(start.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
				defer cancel()
				app, err := start.fn(ctx, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				defer app.Close()
				logPath := filepath.Join(t.TempDir(), "decisions.jsonl")
				s := startServer(t, "--allow-domain=127.0.0.1", "--enable-mutations", "--policy="+pol, "--data="+data, "--decision-log="+logPath)
				res := realapps.Run(ctx, app, realapps.NewChromegate(s.session, true), true)
				for _, err := range res.Failed {
					t.Error(err)
				}
				s.stop()
				logShare(t, app.Name, readShadow(t, logPath))
			})
		}
	})

	t.Run("demo", func(t *testing.T) {
		logPath := filepath.Join(t.TempDir(), "decisions.jsonl")
		cmd := exec.Command(binary, "demo", "--out", t.TempDir())
		cmd.Env = append(os.Environ(), "CHROMEGATE_POLICY="+pol, "CHROMEGATE_DATA="+data, "CHROMEGATE_DECISION_LOG="+logPath)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("chromegate demo: %v\n%s", err, b)
		}
		for _, want := range []string{"→ navigate", "→ click", "Thanks, Ada Lovelace", "POLICY_DENIED", "demo finished"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("demo output lacks %q:\n%s", want, b)
			}
		}
		logShare(t, "demo", readShadow(t, logPath))
	})
}
