package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/chromegate/chromegate/executor"
	"github.com/chromegate/chromegate/mcp/flow"
	"github.com/chromegate/chromegate/policy"
	"github.com/chromegate/chromegate/policy/gate"
)

// Provenance: what the model has read decides where it may write. Each
// session has a flow.Tracker (package mcp/flow). Whatever page words a
// call's result showed the model — the text inside its fence: reads,
// outlines, changes, console, network bodies, page-tool results,
// dialogs, titles — are fed to it under the origin they came from: the
// page the result is about (Result.Page, else the page the gate decided
// on), a page tool's own origin for its result, a network body's request
// URL's origin (Result.readURL). Nothing of the text is kept or logged:
// the tracker keeps hashes.
//
// Every call that writes or sends (a tool that is not read-only: navigate,
// click, type, fill, select_option, set_files, eval, page tools,
// download_file, clipboard_write, cookies_set, fill_form…) is decided with
// input.flow: each string argument (walked into objects and arrays; a
// selector, ref, tab id, or a value holding <secret:NAME> left out) and
// the URL it loads (its path, query and fragment as "url", its host as
// "url.host") matched against what the session read, going to the URL's
// origin for a navigation or a download, else to the page the call acts
// on (a page tool's origin for a page tool). Where the tab landed and
// each hop of the server's fetch are decided with the flows of that URL;
// each request a page makes, with those of the request URL
// (gate.Sessions.Track). Every call also sees input.read_origins.
//
// Options.NoFlow turns all of it off (serve --flow=off): nothing is
// tracked, input.flow and input.read_origins are empty.

// tracker is session's tracker; nil when none is kept and create is false.
func (s *Server) tracker(session string, create bool) *flow.Tracker {
	if s.opts.NoFlow {
		return nil
	}
	if t, ok := s.flows.Load(session); ok {
		return t.(*flow.Tracker)
	}
	if !create {
		return nil
	}
	t, _ := s.flows.LoadOrStore(session, flow.New())
	return t.(*flow.Tracker)
}

// trackRequests has the gate decide each request with its flows.
func (s *Server) trackRequests() {
	if s.opts.NoFlow || s.opts.Sessions == nil {
		return
	}
	s.opts.Sessions.Track(s.requestFlows)
}

// forgetFlows drops what a closed session read.
func (s *Server) forgetFlows(session string) {
	if t, ok := s.flows.LoadAndDelete(session); ok {
		t.(*flow.Tracker).Forget()
	}
}

// feed tells c's session's tracker what c's reply showed the model of a
// page: the content of its fence, under the origin it came from.
func (s *Server) feed(ctx context.Context, c *Call, r *Result) {
	if s.opts.NoFlow || r == nil || r.fenced == "" {
		return
	}
	from := s.readFrom(ctx, c, r)
	if from == "" || from == "null" {
		return
	}
	s.tracker(c.Session, true).Read(from, r.fenced)
}

// feedError tells c's session's tracker the page words e showed the
// model (a select's option labels, a dialog's message, a page tool's
// failure), like a result's: under the page the call was about, read
// now if the gate did not ask for it.
func (s *Server) feedError(ctx context.Context, c *Call, e *executor.Error) {
	if s.opts.NoFlow {
		return
	}
	if c.before == nil && c.PageTool == nil && c.Page != nil && needsPage(c) {
		_, _ = c.Page(ctx) // it records the page in c.before, which readFrom reads
	}
	s.feed(ctx, c, &Result{fenced: e.Page})
}

// readFrom is the origin of what r shows.
func (s *Server) readFrom(ctx context.Context, c *Call, r *Result) string {
	switch {
	case r.readURL != "":
		return policy.NewPage(r.readURL).Origin
	case c.PageTool != nil:
		if t, err := c.PageTool(ctx); err == nil && t.Origin != "" {
			return t.Origin
		}
	}
	if r.Page != nil && r.Page.URL != "" {
		return policy.NewPage(r.Page.URL).Origin
	}
	if c.before != nil {
		return policy.NewDocumentPage(c.before.URL, c.before.Origin).Origin
	}
	return ""
}

// callFlows completes q, the question of c before it runs, with the
// session's provenance: the origins it read, and, for a call that writes
// or sends, the flows of its values to where they go.
func (s *Server) callFlows(ctx context.Context, c *Call, q *gate.Question) {
	t := s.tracker(c.Session, false)
	if t == nil {
		return
	}
	q.ReadOrigins = t.Origins()
	class := q.Class
	if class.ReadOnly || c.Tool.Action == ActionPlugin || len(q.ReadOrigins) == 0 {
		return
	}
	var values []flow.Value
	to := ""
	if raw, _ := c.Args[class.URLArg].(string); class.URLArg != "" && raw != "" {
		to = policy.NewPage(raw).Origin
		values = urlValues("url", raw)
	}
	values = argValues(values, "arg:", c.Args, class.URLArg)
	if len(values) == 0 {
		return
	}
	if to == "" {
		to = s.actsOn(ctx, c)
	}
	if to == "" {
		return // nothing to decide on: the gate fails on the page itself
	}
	q.Flow = policyFlows(t.Match(to, values))
}

// actsOn is the origin a call that loads no URL acts on: a page tool's,
// else the tab's page's (read once per call, as the gate reads it).
func (s *Server) actsOn(ctx context.Context, c *Call) string {
	if c.PageTool != nil {
		if t, err := c.PageTool(ctx); err == nil {
			return t.Origin
		}
		return ""
	}
	if c.Page == nil || !needsPage(c) {
		return ""
	}
	tab, err := c.Page(ctx)
	if err != nil {
		return ""
	}
	return policy.NewDocumentPage(tab.URL, tab.Origin).Origin
}

// urlFlows completes q, a question about a URL a call loads (where it
// landed, a hop of its fetch), with the flows of that URL.
func (s *Server) urlFlows(c *Call, q *gate.Question, rawURL string) {
	t := s.tracker(c.Session, false)
	if t == nil {
		return
	}
	q.ReadOrigins = t.Origins()
	if len(q.ReadOrigins) > 0 {
		q.Flow = policyFlows(t.Match(policy.NewPage(rawURL).Origin, urlValues("url", rawURL)))
	}
}

// requestFlows is the gate's provenance of a request a page of session
// makes to rawURL.
func (s *Server) requestFlows(session, rawURL string) ([]policy.Flow, []string) {
	t := s.tracker(session, false)
	if t == nil {
		return nil, nil
	}
	read := t.Origins()
	if len(read) == 0 {
		return nil, nil
	}
	return policyFlows(t.Match(policy.NewPage(rawURL).Origin, urlValues("request", rawURL))), read
}

// urlValues are a URL's values for matching: its path, query and fragment
// (via prefix+".url"... "url" for a call's) and its host (prefix+".host").
func urlValues(prefix, raw string) []flow.Value {
	host, rest := splitURL(raw)
	via := prefix
	if prefix == "request" {
		via = "request.url"
	}
	var out []flow.Value
	if rest != "" && rest != "/" {
		out = append(out, flow.Value{Via: via, Text: rest})
	}
	if host != "" {
		out = append(out, flow.Value{Via: prefix + ".host", Text: host})
	}
	return out
}

// splitURL cuts an absolute URL into its host[:port] and the rest (path,
// query, fragment); a URL without "//" is all rest.
func splitURL(raw string) (host, rest string) {
	_, after, ok := strings.Cut(raw, "://")
	if !ok {
		return "", raw
	}
	i := strings.IndexAny(after, "/?#")
	if i < 0 {
		i = len(after)
	}
	host = after[:i]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:] // userinfo is not where it goes
	}
	return strings.ToLower(host), after[i:]
}

// argValues appends the string values under args, named by their path,
// but those of skip and of arguments that only say where something
// happens in the page (selectors, refs, tab ids) or hold a secret's
// reference.
func argValues(out []flow.Value, path string, v any, skip string) []flow.Value {
	switch v := v.(type) {
	case string:
		if !strings.Contains(v, "<secret:") && len(v) >= flow.K {
			out = append(out, flow.Value{Via: path, Text: v})
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			if path == "arg:" && k == skip || placeKey(k) {
				continue
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := path + k
			if path != "arg:" {
				p = path + "." + k
			}
			out = argValues(out, p, v[k], skip)
		}
	case []any:
		for i, e := range v {
			out = argValues(out, fmt.Sprintf("%s[%d]", path, i), e, skip)
		}
	}
	return out
}

// placeKey says an argument names a place in the browser, not a value
// that leaves it.
func placeKey(k string) bool {
	return k == "tab_id" || k == "ref" || k == "selector" || strings.HasSuffix(k, "_ref") || strings.HasSuffix(k, "_selector")
}

func policyFlows(fs []flow.Flow) []policy.Flow {
	if len(fs) == 0 {
		return nil
	}
	out := make([]policy.Flow, len(fs))
	for i, f := range fs {
		out[i] = policy.Flow{FromOrigin: f.FromOrigin, ToOrigin: f.ToOrigin, Via: f.Via, Length: f.Length, Total: f.Total}
	}
	return out
}
