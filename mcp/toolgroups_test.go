package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestParseGroups(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]ListGroup{
		"":                      DefaultGroups,
		"core":                  {GroupCore},
		"observe, core,observe": {GroupObserve, GroupCore},
		"Emulate pages":         {GroupEmulate, GroupPages},
		"core,all":              ListGroups,
	} {
		got, err := ParseGroups(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseGroups(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseGroups("core,bogus"); err == nil || err.Error() != `unknown tool group "bogus"; the groups are core, extract, scripts, state, files, observe, emulate, pages, or all` {
		t.Errorf("an unknown group: %v", err)
	}
}

// Every built-in tool is in a group but tool_groups, which is always
// listed; the default groups list the common work.
func TestEveryToolHasAGroup(t *testing.T) {
	t.Parallel()
	for _, tool := range Tools() {
		if (tool.ListGroup == "") != (tool.Name == "tool_groups") || (tool.ListGroup != "" && !slices.Contains(ListGroups, tool.ListGroup)) {
			t.Errorf("%s: group %q", tool.Name, tool.ListGroup)
		}
	}
}

// A rare argument is in the schema dispatch checks, not in the one sent,
// and named in the description, so a model can find it.
func TestRareArgumentsAreNamed(t *testing.T) {
	t.Parallel()
	for _, tool := range Tools() {
		for _, n := range tool.Rare {
			name := n
			if _, item, ok := strings.Cut(n, "[]."); ok {
				name = item
			}
			if !strings.Contains(tool.Description, name) {
				t.Errorf("%s: rare argument %s is not named in the description %q", tool.Name, n, tool.Description)
			}
		}
	}
}

// listNames lists the tools a client sees.
func listNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("tools/list is not sorted by name: %v", names)
	}
	return names
}

// TestToolGroupsAtRunTime: a client turns a group on with tool_groups,
// hears notifications/tools/list_changed, and lists the group's tools;
// off again, they are gone. A tool of a group that is off is called by
// name all the same: groups shape the list, not what may run.
func TestToolGroupsAtRunTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	changed := make(chan struct{}, 100)
	st, ct := sdk.NewInMemoryTransports()
	ss, err := h.server.SDK().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "groups", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })

	if names := listNames(t, cs); !slices.Contains(names, "tool_groups") || !slices.Contains(names, "navigate") || slices.Contains(names, "console_messages") {
		t.Fatalf("the default list: %v", names)
	}
	if res := h.call("console_messages", nil); res.IsError {
		t.Errorf("a tool of a group that is off, by name: %s", textOf(res))
	}
	call := func(args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "tool_groups", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("tool_groups %v: %v %s", args, err, textOf(res))
		}
		return textOf(res)
	}
	if got := call(nil); !strings.Contains(got, `"observe":"off: console_messages network_request network_requests"`) || !strings.Contains(got, `"core":"on: back chrome_status click`) {
		t.Errorf("tool_groups without arguments: %s", got)
	}
	// The client's subscriptions/listen stream may not be registered yet
	// when Connect returns (see TestLivePageTools): enable until a change
	// is heard.
	deadline := time.After(10 * time.Second)
	for heard := false; !heard; {
		call(map[string]any{"enable": []string{"observe"}})
		select {
		case <-changed:
			heard = true
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("no notifications/tools/list_changed after enabling a group")
		}
	}
	if names := listNames(t, cs); !slices.Contains(names, "console_messages") || !slices.Contains(names, "navigate") || slices.Contains(names, "emulate") {
		t.Errorf("after enabling observe: %v", names)
	}
	if got := call(map[string]any{"disable": []string{"observe", "core"}}); !strings.Contains(got, `"core":"off: `) {
		t.Errorf("tool_groups disable: %s", got)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed after disabling groups")
	}
	if names := listNames(t, cs); !slices.Equal(names, []string{"tool_groups"}) {
		t.Errorf("every group off: %v", names)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "tool_groups", Arguments: map[string]any{"enable": []string{"bogus"}}})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), `unknown tool group "bogus"`) {
		t.Errorf("an unknown group: %v %s", err, textOf(res))
	}
}

func TestToolGroupsOption(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *Options) { o.Tools = []ListGroup{GroupEmulate} })
	if names := listNames(t, h.client); !slices.Equal(names, []string{"emulate", "tool_groups"}) {
		t.Errorf("--tools emulate lists %v", names)
	}
	if _, err := NewServer(Options{Manager: h.manager, Gate: h.server.opts.Gate, Tools: []ListGroup{"bogus"}}); err == nil {
		t.Error("a server with an unknown group was built")
	}
}

// The choices of callers are bounded, least recently used forgotten first.
func TestGroupChoicesBounded(t *testing.T) {
	t.Parallel()
	var g groupChoices
	for i := range maxGroupChoices + 10 {
		g.set(fmt.Sprint(i), groupSet{GroupCore: true})
	}
	if g.lru.Len() != maxGroupChoices || g.get("0") != nil || g.get(fmt.Sprint(maxGroupChoices+9)) == nil {
		t.Errorf("%d choices kept", g.lru.Len())
	}
	g.forget(fmt.Sprint(maxGroupChoices + 9))
	if g.get(fmt.Sprint(maxGroupChoices+9)) != nil {
		t.Error("a forgotten choice is still kept")
	}
}

// What the wire schema leaves out is still taken and checked: the common
// arguments, a rare one, a range; an argument no tool takes is refused
// with the accepted ones.
func TestArgumentsLeftOffTheWire(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	tab := h.fake().TabID(0)
	if res := h.call("click", map[string]any{"selector": "a", "tab_id": tab, "timeout_ms": 5000, "changes": false}); res.IsError {
		t.Errorf("click with the common arguments: %s", textOf(res))
	}
	if res := h.call("screenshot", map[string]any{"format": "jpeg", "quality": 50}); res.IsError {
		t.Errorf("screenshot with rare arguments: %s", textOf(res))
	}
	if res := h.call("navigate", map[string]any{"url": "about:blank", "wait_until": "domcontentloaded"}); res.IsError {
		t.Errorf("navigate with wait_until: %s", textOf(res))
	}
	for args, want := range map[string]string{
		`{"selector": "a", "limit": 501}`:  "BAD_ARGS: limit: maximum: 501 is greater than 500",
		`{"selector": "a", "force": true}`: "BAD_ARGS: unknown argument \"force\"\nNext: accepted arguments: selector, limit, tab_id",
	} {
		var m map[string]any
		_ = json.Unmarshal([]byte(args), &m)
		if got := textOf(h.call("query", m)); !strings.HasPrefix(got, want) {
			t.Errorf("query %s: %s, want %s", args, got, want)
		}
	}
}
