package mcp

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool groups: tools/list grows with what the caller needs, not with the
// product. Every built-in tool is in one group (Tool.ListGroup, stated in
// the table of Tools); tools/list shows the tools of the groups that are
// on. The operator chooses the groups a caller starts with (serve --tools,
// Options.Tools; DefaultGroups when unset), and a caller turns groups on
// and off for itself with tool_groups, which is always listed.
//
// The rule:
//
//   - Groups shape the list only. They are not a permission: a call of a
//     tool of a group that is off, by name, runs as any call does — the
//     key's tool ACL and the policy decide it, as they decide every call.
//     Plugin steps and the server's own uses of a tool ignore groups.
//   - A tool of no group is always listed (when the ACL and the policy's
//     list phase allow it): tool_groups, an operator's plugins, and the
//     live tools a page registers (page_*), which appear only when a page
//     or the operator provides them.
//   - A caller's choice is kept per caller: its principal and MCP session
//     (the key of changes.go's viewer, without the browser session). A
//     caller without an MCP session id (stateless HTTP, a 2026-07-28
//     session, REST's VisibleTools) keeps one choice per principal. The
//     server keeps at most maxGroupChoices of them, forgetting the least
//     recently used, and forgets a session's when it closes.
//   - After a change the server sends notifications/tools/list_changed.
//     The SDK (v1.8.0) sends it only when a tool is added or removed, to
//     every session, 10 ms after the last change; the server re-adds
//     tool_groups' own, unchanged definition, so every other session
//     re-lists a list that did not change for it. A 2026-07-28 session
//     gets the notification only on a subscriptions/listen stream, as the
//     SDK does for every list change.
//   - The list stays sorted by name whatever the groups, so that clients'
//     prompt caches keep hitting for the part that did not change.

// ListGroup is a group of tools/list.
type ListGroup string

// The groups. Tools states which tools are in each.
const (
	GroupCore    ListGroup = "core"    // navigate, read, act, tabs, wait, dialogs, status
	GroupExtract ListGroup = "extract" // HTML, Markdown, links, whole forms
	GroupScripts ListGroup = "scripts" // eval
	GroupState   ListGroup = "state"   // cookies, saved logins, the clipboard
	GroupFiles   ListGroup = "files"   // uploads, downloads, PDF
	GroupObserve ListGroup = "observe" // console, network log
	GroupEmulate ListGroup = "emulate" // device, position, clock, network
	GroupPages   ListGroup = "pages"   // tools a web page registered (WebMCP)
)

// ListGroups are the groups, in the order tool_groups and the docs show
// them.
var ListGroups = []ListGroup{GroupCore, GroupExtract, GroupScripts, GroupState, GroupFiles, GroupObserve, GroupEmulate, GroupPages}

// DefaultGroups are the groups a caller starts with when the operator
// names none: the common work.
var DefaultGroups = []ListGroup{GroupCore}

// GroupsAll names every group in ParseGroups (serve --tools all).
const GroupsAll = "all"

// ParseGroups reads a list of group names separated by commas or spaces
// (serve --tools, a bundle's form field): "all" is every group; "" is
// DefaultGroups. An unknown name is an error that lists the groups.
func ParseGroups(s string) ([]ListGroup, error) {
	names := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	if len(names) == 0 {
		return slices.Clone(DefaultGroups), nil
	}
	var out []ListGroup
	for _, n := range names {
		switch {
		case n == GroupsAll:
			return slices.Clone(ListGroups), nil
		case !slices.Contains(ListGroups, ListGroup(n)):
			return nil, fmt.Errorf("unknown tool group %q; the groups are %s, or %s", n, groupNames(ListGroups), GroupsAll)
		case !slices.Contains(out, ListGroup(n)):
			out = append(out, ListGroup(n))
		}
	}
	return out, nil
}

func groupNames(gs []ListGroup) string {
	var b strings.Builder
	for i, g := range gs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(g))
	}
	return b.String()
}

// groupSet is a set of groups that are on.
type groupSet map[ListGroup]bool

func setOf(gs []ListGroup) groupSet {
	s := groupSet{}
	for _, g := range gs {
		s[g] = true
	}
	return s
}

// lists says whether a list with these groups on shows t.
func (s groupSet) lists(t *Tool) bool { return t.ListGroup == "" || s[t.ListGroup] }

// maxGroupChoices bounds the callers whose choice of groups the server
// keeps.
const maxGroupChoices = 4096

// groupChoices are the callers' choices of groups, by caller (see
// groupKey), least recently used first. The zero value is ready; its
// methods are safe for concurrent use.
type groupChoices struct {
	mu    sync.Mutex
	lru   list.List                // of *groupChoice
	byKey map[string]*list.Element // key → element of lru
}

type groupChoice struct {
	key string
	on  groupSet
}

// get returns the groups on for key, or nil when the caller chose none.
func (g *groupChoices) get(key string) groupSet {
	g.mu.Lock()
	defer g.mu.Unlock()
	el, ok := g.byKey[key]
	if !ok {
		return nil
	}
	g.lru.MoveToBack(el)
	return el.Value.(*groupChoice).on
}

// set records on as key's groups. It reports whether key is new.
func (g *groupChoices) set(key string, on groupSet) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byKey == nil {
		g.byKey = map[string]*list.Element{}
	}
	if el, ok := g.byKey[key]; ok {
		el.Value.(*groupChoice).on = on
		g.lru.MoveToBack(el)
		return false
	}
	g.byKey[key] = g.lru.PushBack(&groupChoice{key: key, on: on})
	for g.lru.Len() > maxGroupChoices {
		old := g.lru.Front()
		delete(g.byKey, old.Value.(*groupChoice).key)
		g.lru.Remove(old)
	}
	return true
}

// forget drops key's choice.
func (g *groupChoices) forget(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if el, ok := g.byKey[key]; ok {
		delete(g.byKey, key)
		g.lru.Remove(el)
	}
}

// groupKey names a caller: its principal and MCP session ("" without one).
func groupKey(p Principal, mcpSession string) string { return p.Name + "\x00" + mcpSession }

// groupsOf returns the groups on for a caller.
func (s *Server) groupsOf(p Principal, mcpSession string) groupSet {
	if on := s.choices.get(groupKey(p, mcpSession)); on != nil {
		return on
	}
	return s.defaultGroups
}

// sessionOf is the MCP session of a request; nil without one.
func sessionOf(req sdk.Request) *sdk.ServerSession {
	ss, _ := req.GetSession().(*sdk.ServerSession)
	return ss
}

// serverSessionKey is a context key: the SDK session a tool call came on.
type serverSessionKey struct{}

func withServerSession(ctx context.Context, ss *sdk.ServerSession) context.Context {
	return context.WithValue(ctx, serverSessionKey{}, ss)
}

// toolGroupsArgs are tool_groups' arguments.
type toolGroupsArgs struct {
	Enable  []string `json:"enable,omitempty"`
	Disable []string `json:"disable,omitempty"`
}

func toolGroupsTool() *Tool {
	return newTool(Tool{
		Name: "tool_groups", Title: "Tool groups",
		Group:       groupStatus,
		Output:      &Output{Value: map[string]string{}},
		Description: "Show tool groups; enable/disable them to list their tools.",
		ReadOnly:    yes(), Idempotent: true, OpenWorld: no(), Action: ActionStatus,
		NoBrowser: true,
	}, toolGroups)
}

// toolGroups changes the caller's groups, if asked, and reports every
// group: on or off, and its tools.
func toolGroups(ctx context.Context, c *Call, in toolGroupsArgs) (*Result, error) {
	s := c.srv
	ss, _ := ctx.Value(serverSessionKey{}).(*sdk.ServerSession)
	var id string
	if ss != nil {
		id = ss.ID()
	}
	on := s.groupsOf(c.Principal, id)
	if len(in.Enable)+len(in.Disable) > 0 {
		next := groupSet{}
		for g := range on {
			next[g] = true
		}
		for _, names := range []struct {
			list []string
			on   bool
		}{{in.Enable, true}, {in.Disable, false}} {
			for _, n := range names.list {
				gs, err := ParseGroups(n)
				if strings.TrimSpace(n) == "" {
					err = fmt.Errorf("an empty tool group; the groups are %s, or %s", groupNames(ListGroups), GroupsAll)
				}
				if err != nil {
					return nil, badArgs("%v", err)
				}
				for _, g := range gs {
					next[g] = names.on
				}
			}
		}
		for g, v := range next {
			if !v {
				delete(next, g)
			}
		}
		key := groupKey(c.Principal, id)
		if s.choices.set(key, next) && ss != nil && id != "" {
			go func() {
				_ = ss.Wait()
				s.choices.forget(key)
			}()
		}
		on = next
		s.toolsChanged()
	}
	byGroup := map[ListGroup][]string{}
	for _, e := range s.tools {
		if g := e.tool.ListGroup; g != "" && s.visible(ctx, e.tool, c.Principal) {
			byGroup[g] = append(byGroup[g], e.tool.Name)
		}
	}
	out := map[string]string{}
	for _, g := range ListGroups {
		names := byGroup[g]
		slices.Sort(names)
		state := "off"
		if on[g] {
			state = "on"
		}
		out[string(g)] = state + ": " + strings.Join(names, " ")
	}
	return &Result{Value: out}, nil
}

// toolsChanged has the SDK send notifications/tools/list_changed: it
// re-adds a tool's own definition, unchanged (see the rule above).
func (s *Server) toolsChanged() {
	if e := s.relist; e != nil {
		s.sdk.AddTool(s.definition(e.tool), s.sdkHandler(e))
	}
}

// definition is t as this server lists it: with its output schema when
// Options.OutputSchemas asks for them.
func (s *Server) definition(t *Tool) *sdk.Tool {
	d := t.Definition()
	if s.opts.OutputSchemas {
		d.OutputSchema = t.OutputSchema()
	}
	return d
}

// restDefinition is t as REST's tool list gives it: the whole input
// schema (the common and rare arguments, the ranges, no other arguments
// allowed), which tools/list trims for a model that has the instructions,
// and the output schema. A REST client reads no instructions and pays no
// tokens for a schema.
func restDefinition(t *Tool) *sdk.Tool {
	d := t.Definition()
	if t.declared() {
		d.InputSchema = t.InputSchema.CloneSchemas()
		d.OutputSchema = t.OutputSchema()
	}
	return d
}
