package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/helpers"
)

// The JSON results of the tools that share none with others.

type cookiesOut struct {
	Cookies []cookie `json:"cookies"`
}

type downloadOut struct {
	Path     string `json:"path"`
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
	MIMEType string `json:"mime_type,omitempty"`
	SHA256   string `json:"sha256"`
	URL      string `json:"url"`
}

type evalOut struct {
	pageOut
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value,omitempty"`
	Error string          `json:"error,omitempty"`
}

type formOut struct {
	pageOut
	Filled int                    `json:"filled"`
	Failed int                    `json:"failed"`
	Fields []helpers.FieldOutcome `json:"fields"`
	Submit *helpers.SubmitOutcome `json:"submit,omitempty"`
}

type linksOut struct {
	pageOut
	Total int    `json:"total"`
	Shown int    `json:"shown"`
	Note  string `json:"note,omitempty"`
}

type markdownOut struct {
	pageOut
	Source string `json:"source"`
	Offset int    `json:"offset,omitempty"`
	Total  int    `json:"total_chars"`
	Next   int    `json:"next,omitempty"`
}

type queryOut struct {
	pageOut
	Showing string              `json:"showing"`
	Items   []helpers.QueryItem `json:"items"`
}

type setOut struct {
	Set int `json:"set"`
}

type snapshotOut struct {
	URL     string      `json:"url"`
	Title   string      `json:"title,omitempty"`
	Dialogs []dialogOut `json:"dialogs,omitempty"`
	Lines   int         `json:"lines,omitempty"`
	Next    int         `json:"next,omitempty"`
}

type tabCloseOut struct {
	Closed string   `json:"closed"`
	Tabs   []tabOut `json:"tabs"`
}

type tabsOut struct {
	Tabs []tabOut `json:"tabs"`
	// Hidden counts the tabs whose URL and title are left out because they
	// show pages outside the policy; Note says so in words.
	Hidden int    `json:"hidden,omitempty"`
	Note   string `json:"note,omitempty"`
}

type waitOut struct {
	pageOut
	ElapsedMs int64 `json:"elapsed_ms"`
}

type writtenOut struct {
	Written int `json:"written"`
}

// The structured result. Every successful tool result carries, besides the
// text a model reads, the same result as structuredContent (Data): the
// value the text's JSON line was rendered from, then what followed it.
//
//	{"data": {...}, "text": "...", "untrusted": true, "truncated": "…[truncated: …]",
//	 "blocked": "[chromegate: the policy blocked …]", "image": {"mime_type": "image/png"}}
//
//   - data is the tool's value (Output.Value's type). It is absent only
//     when the value alone was longer than --max-result-chars: the text
//     then shows it cut, and truncated says so.
//   - text is the page text, Markdown or HTML that followed the value, as
//     the text shows it (cut where the text is cut), without the fence.
//   - untrusted says the result carries words a page wrote: the text
//     fences it for models. In structuredContent a JSON string is its own
//     boundary, which no page can close; untrusted labels it.
//   - truncated is the server's note when the result was cut.
//   - blocked is the note on the page's requests the policy refused while
//     the call ran, as the text's last content says it (its hosts fenced:
//     the page chose them).
//   - image names the type of the image content that follows the text
//     (screenshot); its bytes are that content's, not repeated here.
//
// Each tool declares this shape as its outputSchema (outputSchema below),
// data's schema inferred from Output.Value's Go type as the go-sdk's
// AddTool infers it. REST answers with the same fields ({"ok": true, ...},
// the image's bytes included) and the Go client reads them: nobody parses
// the text back.

// outputSchemas caches the output schema of each kind of Output.
var outputSchemas sync.Map // outputKey → *jsonschema.Schema

type outputKey struct {
	value       reflect.Type
	text, image bool
}

// outputSchema is the output schema of a tool with output o (nil: any
// value, page text and an image may come, as from a plugin or a page's
// tool). Each call returns a copy of its own.
func outputSchema(o *Output) *jsonschema.Schema {
	key := outputKey{text: true, image: true}
	if o != nil {
		key = outputKey{reflect.TypeOf(o.Value), o.Text, o.Image}
	}
	if s, ok := outputSchemas.Load(key); ok {
		return s.(*jsonschema.Schema).CloneSchemas()
	}
	data := &jsonschema.Schema{}
	if key.value != nil {
		var err error
		data, err = jsonschema.ForType(key.value, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
			reflect.TypeFor[json.RawMessage](): {}, // any JSON value (eval's value, a page tool's schema)
		}})
		if err != nil {
			panic(fmt.Sprintf("mcp: the output type %T has no JSON schema: %v", o.Value, err)) // a programming error, caught by every test
		}
		compact(data)
	}
	str, yes := &jsonschema.Schema{Type: "string"}, &jsonschema.Schema{Type: "boolean"}
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"data": data, "untrusted": yes, "truncated": str, "blocked": str,
	}}
	if key.text {
		s.Properties["text"] = str
	}
	if key.image {
		s.Properties["image"] = &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"mime_type": str}}
	}
	outputSchemas.Store(key, s)
	return s.CloneSchemas()
}

// compact takes out of an inferred schema what only costs tools/list
// characters: "additionalProperties": false on objects (a client that
// validates still checks every property it knows, and a result may grow
// a field before a client's copy of the schema does), the order of
// properties, and "null" from the types of an optional property (a field
// left out when empty, omitempty, is never null).
func compact(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil {
		s.AdditionalProperties = nil
	}
	s.PropertyOrder = nil
	for name, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" && !slices.Contains(s.Required, name) {
			p.Type, p.Types = p.Types[1], nil
		}
		compact(p)
	}
	compact(s.Items)
	compact(s.AdditionalProperties)
}
