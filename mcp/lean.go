package mcp

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"strings"
	"sync"
)

// Answers are sized to what happened. What a model reads of a result (its
// text) says only what the call changed or found, not what the previous
// result already told the same caller about the same tab:
//
//   - tab_id is left out when the result is about the tab the caller's
//     previous result was about; url and title when they are what the
//     caller was last told of that tab. Navigations and the tab tools
//     always say them: the page is what they are about.
//   - An acting call's outline or change follows its head as plain text,
//     a line each, and the head says how many lines: {"changes":1} then
//     "~ zq1 textbox \"Name\" value=\"hello\"" (changes.go). An action that
//     changed nothing the caller can see answers {}.
//   - eval answers with the expression's value alone (or {"ok":false,
//     "error":…} when it threw).
//   - The fence (envelope.go) wraps a text only when what it shows holds
//     words a page wrote: {} or {"chars":7} need none.
//
// The structured content is the whole value, every field, for the clients
// and REST that read it (outputs.go): only the model's rendering is lean.
// The caller is the one changes.go compares outlines for (viewer): two MCP
// sessions of one browser context are each told for themselves.

// said is what one caller was last told: the tab its last result was
// about, and per tab the url and title last shown.
type said struct {
	mu    sync.Mutex
	byKey map[string]*list.Element // viewer or viewer+tab → element of lru, holding *saidEntry
	lru   list.List
}

// saidEntry is one caller's (tab "") last tab, or one tab's url and title
// as last shown to a caller.
type saidEntry struct {
	viewer, session, tab string
	lastTab              string // for tab ""
	url, title           string
	hasURL, hasTitle     bool
}

// maxSaid bounds what the server keeps of what it told its callers (least
// recently used go first); a caller forgotten is told everything again.
const maxSaid = 1 << 14

func (s *said) entry(viewer, session, tab string) *saidEntry {
	if s.byKey == nil {
		s.byKey = map[string]*list.Element{}
	}
	k := viewer + "\x00" + tab
	if el, ok := s.byKey[k]; ok {
		s.lru.MoveToFront(el)
		return el.Value.(*saidEntry)
	}
	e := &saidEntry{viewer: viewer, session: session, tab: tab}
	s.byKey[k] = s.lru.PushFront(e)
	for s.lru.Len() > maxSaid {
		el := s.lru.Back()
		old := el.Value.(*saidEntry)
		delete(s.byKey, old.viewer+"\x00"+old.tab)
		s.lru.Remove(el)
	}
	return e
}

// forget drops what the callers of a browser session were told.
func (s *said) forget(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for el := s.lru.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*saidEntry); e.session == session {
			delete(s.byKey, e.viewer+"\x00"+e.tab)
			s.lru.Remove(el)
		}
		el = next
	}
}

// leanHead renders the head of r's text for its caller: Head if the
// handler gave one, else Value's JSON without what the caller was already
// told of the tab, the outline or change (in Tail) counted in lines; and
// records what it shows as told. It runs as the result is rendered, once
// per reply.
func (s *Server) leanHead(ctx context.Context, c *Call, r *Result) {
	if r == nil || r.head != nil {
		return
	}
	if r.Head != nil {
		b, err := marshalHead(r.Head)
		if err == nil {
			r.head = b
		}
		return
	}
	if r.Value == nil {
		return
	}
	raw, err := marshalHead(r.Value)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return
	}
	tab := ""
	if r.Page != nil {
		tab = r.Page.TabID
	}
	var v struct {
		TabID string `json:"tab_id"`
	}
	if tab == "" && json.Unmarshal(raw, &v) == nil {
		tab = v.TabID
	}
	keep := c.Tool.Action == ActionNavigate || c.Tool.Action == ActionTabs || c.Plugin != nil || tab == ""
	who := viewer(ctx, c)
	s.said.mu.Lock()
	defer s.said.mu.Unlock()
	caller := s.said.entry(who, c.Session, "")
	page := s.said.entry(who, c.Session, tab)
	var url, title *string
	out, err := rewriteObject(raw, func(key string, val json.RawMessage) json.RawMessage {
		var str string
		isStr := json.Unmarshal(val, &str) == nil
		switch {
		case (key == "changes" || key == "outline") && r.Tail != "" && isStr:
			return json.RawMessage(itoa(strings.Count(r.Tail, "\n") + 1))
		case key == "tab_id" && isStr && !keep && str == caller.lastTab:
			return nil
		case key == "url" && isStr:
			url = &str
			if !keep && page.hasURL && page.url == str {
				return nil
			}
		case key == "title" && isStr:
			title = &str
			if !keep && page.hasTitle && page.title == str {
				return nil
			}
		}
		return val
	})
	if err != nil {
		return
	}
	r.head = out
	if tab != "" {
		caller.lastTab = tab
		if url != nil {
			page.url, page.hasURL = *url, true
		}
		if title != nil {
			page.title, page.hasTitle = *title, true
		}
	}
}

// marshalHead is v as compact JSON, markup left readable (<a>, not \u003ca\u003e).
func marshalHead(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// rewriteObject passes each top-level member of the JSON object obj, in
// order, through f: f returns the member's value to keep, or nil to drop it.
func rewriteObject(obj []byte, f func(key string, val json.RawMessage) json.RawMessage) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if val = f(key, val); val == nil {
			continue
		}
		k, err := marshalHead(key)
		if err != nil {
			return nil, err
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		out.Write(k)
		out.WriteByte(':')
		out.Write(val)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// pageWords says whether a rendered head may hold words a page wrote: any
// string in it but the value of a top-level tab_id or url (the browser's
// normalised form of an allowed page's address, see envelope.go), and any
// key of a nested object. A head it cannot read is taken to hold some.
func pageWords(head []byte) bool {
	var v any
	if err := json.Unmarshal(head, &v); err != nil {
		return true
	}
	top, ok := v.(map[string]any)
	if !ok {
		return holdsStrings(v)
	}
	for k, val := range top {
		if _, isStr := val.(string); isStr && (k == "tab_id" || k == "url") {
			continue
		}
		if holdsStrings(val) {
			return true
		}
	}
	return false
}

func holdsStrings(v any) bool {
	switch v := v.(type) {
	case string:
		return true
	case map[string]any:
		return len(v) > 0
	case []any:
		for _, e := range v {
			if holdsStrings(e) {
				return true
			}
		}
	}
	return false
}
