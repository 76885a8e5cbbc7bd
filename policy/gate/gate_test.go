package gate_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/executor/egress"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// secretText is a value a caller typed: no log line may carry it.
const secretText = "hunter2-typed-by-the-caller"

// navigate is the class of a navigation, as the server declares it.
var navigate = policy.Class{Action: policy.ActionNavigate, URLArg: "url"}

// every asks one question of each kind about a navigation (or, for a
// request, the request a page made), each complete.
func every() map[gate.Kind]gate.Question {
	base := func(k gate.Kind) gate.Question {
		return gate.Question{Kind: k, Tool: "navigate", Class: navigate,
			Args:      map[string]any{"url": "https://example.com/", "text": secretText},
			Principal: policy.Principal{Name: "mallory", Transport: "http"}, Session: "s1", Backend: "cdp"}
	}
	qs := map[gate.Kind]gate.Question{}
	call := base(gate.KindCall)
	call.Page = func(context.Context) (gate.Document, error) { return gate.Document{URL: "https://example.com/"}, nil }
	qs[gate.KindCall] = call
	answer := call
	answer.Kind = gate.KindAnswer
	answer.Answer = &policy.Answer{ID: "a1", Ask: []string{"a person decides"}, Outcome: policy.AnswerAccepted}
	qs[gate.KindAnswer] = answer
	landed := base(gate.KindLanded)
	landed.URL = "https://example.com/landed"
	qs[gate.KindLanded] = landed
	hop := base(gate.KindHop)
	hop.URL = "https://example.com/hop"
	qs[gate.KindHop] = hop
	frame := base(gate.KindFrame)
	frame.Document = &gate.Document{URL: "https://example.com/frame"}
	qs[gate.KindFrame] = frame
	doc := base(gate.KindDocument)
	doc.Document = &gate.Document{URL: "https://example.com/doc"}
	qs[gate.KindDocument] = doc
	origin := base(gate.KindOrigin)
	origin.State = &policy.StateOrigin{Op: policy.StateLoad, Source: policy.StateTool, Origin: "https://example.com"}
	qs[gate.KindOrigin] = origin
	tab := base(gate.KindTab)
	tab.URL = "https://example.com/tab"
	qs[gate.KindTab] = tab
	dialog := base(gate.KindDialog)
	dialog.URL = "https://example.com/dialog"
	qs[gate.KindDialog] = dialog
	list := base(gate.KindList)
	list.Args = nil
	qs[gate.KindList] = list
	qs[gate.KindRequest] = gate.Question{Kind: gate.KindRequest, Request: &egress.Request{
		Session: "s1", URL: "https://example.com/x.js", Method: "GET", ResourceType: "script", Via: egress.ViaProxy, Backend: "cdp"}}
	return qs
}

// gateWith is a gate over the policy body (package chromegate) logging to
// the returned buffer.
func gateWith(t *testing.T, body string) (*gate.Gate, *bytes.Buffer) {
	t.Helper()
	eng, err := policy.New(t.Context(), policy.WithTimeout(10*time.Second),
		policy.WithFS("test", fstest.MapFS{"p.rego": {Data: []byte("package chromegate\n\n" + body + "\n")}}))
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	return gate.New(eng, slog.New(slog.NewTextHandler(&log, nil))), &log
}

// wantClosed checks a denial a model and an operator can act on: an
// error with a code, a message and a hint, a reason, and nothing the
// caller typed in the log.
func wantClosed(t *testing.T, what string, d gate.Decision, log *bytes.Buffer, reason string) {
	t.Helper()
	if d.Allow {
		t.Fatalf("%s: allowed", what)
	}
	e := executor.AsError(d.Err)
	if e == nil || e.Code != executor.CodePolicyDenied || e.Message == "" || e.Hint == "" {
		t.Errorf("%s: error %#v, want POLICY_DENIED with a message and a hint", what, d.Err)
	}
	if !strings.Contains(d.Reason, reason) {
		t.Errorf("%s: reason %q, want it to say %q", what, d.Reason, reason)
	}
	if log != nil && strings.Contains(log.String(), secretText) {
		t.Errorf("%s: the log carries what the caller typed:\n%s", what, log)
	}
}

// A policy that errors instead of deciding allows nothing, whatever is
// asked, and the operator is told.
func TestDecideFailsClosedOnAPolicyThatErrors(t *testing.T) {
	t.Parallel()
	g, log := gateWith(t, `decision := {"allow": true, "reasons": []} if input.tool == "chrome_status"
decision := {"allow": x, "reasons": []} if { input.tool != "chrome_status"; x := 1 / 0 }`)
	for kind, q := range every() {
		d := g.Decide(t.Context(), q)
		wantClosed(t, string(kind), d, log, "policy error: ")
	}
	if !strings.Contains(log.String(), "the policy failed rather than decided") {
		t.Errorf("the operator was not told:\n%s", log)
	}
	if v := g.DecideRequest(t.Context(), every()[gate.KindRequest].Request); v.Allow || !strings.HasPrefix(v.Reason, "policy error: ") {
		t.Errorf("request through the boundary's door: %+v", v)
	}
}

// A policy that does not load (a broken bundle) leaves no engine: the
// gate denies everything rather than deciding without a policy.
func TestDecideFailsClosedWithoutAPolicy(t *testing.T) {
	t.Parallel()
	_, err := policy.New(t.Context(), policy.WithFS("broken", fstest.MapFS{"p.rego": {Data: []byte("package chromegate\n\ndecision := {\n")}}))
	if err == nil {
		t.Fatal("a broken policy loaded")
	}
	var log bytes.Buffer
	for name, g := range map[string]*gate.Gate{
		"no engine": gate.New(nil, slog.New(slog.NewTextHandler(&log, nil))),
		"nil gate":  nil,
	} {
		for kind, q := range every() {
			wantClosed(t, name+"/"+string(kind), g.Decide(t.Context(), q), &log, "no policy is loaded")
		}
	}
	if !strings.Contains(log.String(), "no policy is loaded") {
		t.Errorf("the operator was not told:\n%s", log.String())
	}
}

// A question the gate does not understand, or one missing what its kind
// needs, is denied, never answered by a guess.
func TestDecideFailsClosedOnQuestionsItCannotAnswer(t *testing.T) {
	t.Parallel()
	g, log := gateWith(t, `decision := {"allow": true, "reasons": []}`) // allows anything it is asked
	ctx := t.Context()
	unknown := every()[gate.KindCall]
	unknown.Kind = "call_without_page"
	wantClosed(t, "unknown kind", g.Decide(ctx, unknown), log, "a kind the gate does not know")
	wantClosed(t, "no kind", g.Decide(ctx, gate.Question{Tool: "navigate"}), log, "a kind the gate does not know")

	missing := map[string]gate.Question{}
	for kind, q := range every() {
		if kind != gate.KindRequest {
			q.Tool = ""
			missing[string(kind)+" without its tool"] = q
		}
	}
	missing["request without its request"] = gate.Question{Kind: gate.KindRequest}
	frame := every()[gate.KindFrame]
	frame.Document = nil
	missing["frame without its document"] = frame
	frame = every()[gate.KindFrame]
	frame.Document = &gate.Document{}
	missing["frame with an empty document"] = frame
	doc := every()[gate.KindDocument]
	doc.Document = nil
	missing["document without its document"] = doc
	origin := every()[gate.KindOrigin]
	origin.State = nil
	missing["origin without its origin"] = origin
	for name, q := range missing {
		wantClosed(t, name, g.Decide(ctx, q), log, "policy error: ")
	}
	if !strings.Contains(log.String(), "could not decide") {
		t.Errorf("the operator was not told:\n%s", log)
	}

	// Each complete question is allowed by this policy: the denials above
	// are the gate's, not the policy's.
	for kind, q := range every() {
		if d := g.Decide(ctx, q); !d.Allow {
			t.Errorf("%s: %v", kind, d.Err)
		}
	}
}

// What the gate reads from the browser can fail or panic: either denies,
// with the error read (a STALE_TAB stays one), and a panic is logged.
func TestDecideFailsClosedWhenReadingThePageFails(t *testing.T) {
	t.Parallel()
	g, log := gateWith(t, `decision := {"allow": true, "reasons": []}`)
	ctx := t.Context()
	stale := every()[gate.KindCall]
	stale.Page = func(context.Context) (gate.Document, error) {
		return gate.Document{}, executor.Errorf(executor.CodeStaleTab, "tab t1 is from an older session")
	}
	if d := g.Decide(ctx, stale); d.Allow || executor.CodeOf(d.Err) != executor.CodeStaleTab {
		t.Errorf("a page that could not be read: %+v", d)
	}
	for name, set := range map[string]func(*gate.Question){
		"page": func(q *gate.Question) {
			q.Page = func(context.Context) (gate.Document, error) { panic("page " + secretText) }
		},
		"page tool": func(q *gate.Question) { q.ReadTool = func(context.Context) (*policy.PageTool, error) { panic("tool") } },
		"frames":    func(q *gate.Question) { q.Frames = func(context.Context) ([]gate.Document, error) { panic("frames") } },
		"points":    func(q *gate.Question) { q.Points = func(context.Context) ([]gate.Spot, error) { panic("points") } },
	} {
		q := every()[gate.KindCall]
		set(&q)
		d := g.Decide(ctx, q)
		if d.Allow || executor.CodeOf(d.Err) != executor.CodePolicyDenied || !strings.Contains(d.Reason, "the decision failed") {
			t.Errorf("%s panicked: %+v", name, d)
		}
	}
	if !strings.Contains(log.String(), "panic") {
		t.Errorf("the panic was not logged:\n%s", log)
	}

	// A call whose deadline passed while its page was read does not run,
	// and the model is told it timed out.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if d := g.Decide(cctx, every()[gate.KindCall]); d.Allow || executor.CodeOf(d.Err) != executor.CodeTimeout {
		t.Errorf("a call past its deadline: %+v", d)
	}
}

// The documents the page can name as it likes are denied by the gate's
// own rules before any policy sees them: a dialog of a page whose URL
// hides its origin, a record of a document named by nothing.
func TestDecideDeniesDocumentsOfUnknownOrigin(t *testing.T) {
	t.Parallel()
	g, log := gateWith(t, `decision := {"allow": true, "reasons": []}`)
	ctx := t.Context()
	for _, u := range []string{"", "about:blank", "blob:https://example.com/x", "data:text/html,hi"} {
		q := every()[gate.KindDialog]
		q.URL = u
		wantClosed(t, "dialog on "+u, g.Decide(ctx, q), log, "origin")
		q = every()[gate.KindDocument]
		q.Document = &gate.Document{URL: u}
		wantClosed(t, "document "+u, g.Decide(ctx, q), log, "")
	}
	q := every()[gate.KindDocument]
	q.Document = &gate.Document{URL: "about:srcdoc", Origin: "https://example.com"}
	if d := g.Decide(ctx, q); !d.Allow {
		t.Errorf("a document the browser gave an origin: %v", d.Err)
	}
}

// A page's requests are decided for the principal that drives its
// session, and forgotten with the session.
func TestRequestsAreDecidedForTheSessionsPrincipal(t *testing.T) {
	t.Parallel()
	g, _ := gateWith(t, `decision := {"allow": "ci" in input.principal.roles, "reasons": ["not ci"]}`)
	r := every()[gate.KindRequest].Request
	if v := g.DecideRequest(t.Context(), r); v.Allow || v.Reason != "not ci" {
		t.Errorf("an unbound session: %+v", v)
	}
	g.Sessions.Bind("s1", policy.Principal{Name: "ci", Roles: []string{"ci"}})
	if v := g.DecideRequest(t.Context(), r); !v.Allow {
		t.Errorf("a session the ci principal drives: %+v", v)
	}
	g.Sessions.Forget("s1")
	if v := g.DecideRequest(t.Context(), r); v.Allow {
		t.Errorf("a forgotten session: %+v", v)
	}
}
