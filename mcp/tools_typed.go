package mcp

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// Typed tools. A tool's input is a Go type, and its JSON schema is
// inferred from that type (jsonschema.For, as the go-sdk's AddTool does):
//
//   - a field's json name is the argument's name, and the fields, in
//     declaration order with embedded structs flattened, are the
//     properties in order;
//   - a field without omitempty is a required argument;
//   - a pointer or a slice is its element type or an array, never null;
//   - what a tag cannot state (an enum, a range, a default, a schema of
//     its own) the type states in its shape method (shaper), on the
//     schema inferred so far.
//
// The handler receives the decoded input. Dispatch validates the call's
// arguments against the schema by their exact names (decodeArgs) before
// the Gate; the handler's value is decoded, after the Gate, from the same
// arguments the Gate saw, so the two cannot differ.

// shaper is an input type that states what its tags cannot: enums,
// ranges, defaults. shape changes s, the schema inferred from the type.
type shaper interface {
	shape(s *jsonschema.Schema)
}

// newTool completes t, the declaration of a tool whose input is In: its
// input schema is In's, and its handler decodes the arguments into an In
// for h.
func newTool[In any](t Tool, h func(context.Context, *Call, In) (*Result, error)) *Tool {
	t.InputSchema = inputSchema[In]()
	t.Handler = func(ctx context.Context, c *Call) (*Result, error) {
		var in In
		if err := c.Bind(&in); err != nil {
			return nil, err
		}
		return h(ctx, c, in)
	}
	return &t
}

// inputSchema is the schema of the arguments In decodes. A type For cannot
// describe is a bug in a constructor: it panics when the table is built,
// which every test does.
func inputSchema[In any]() *jsonschema.Schema {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: input schema: %v", err))
	}
	notNull(s)
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{} // declareArgs adds to it
	}
	var zero In
	if sh, ok := any(zero).(shaper); ok {
		sh.shape(s)
	}
	return s
}

// notNull makes every ["null", T] that For infers for a pointer or a slice
// plain T: an argument that is absent is not given, and null is not one of
// its values.
func notNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		notNull(p)
	}
	notNull(s.Items)
}

// Shape helpers, for shape methods. Each names a property the type has;
// a name it does not have is a bug in the type and panics when the table
// is built.

func propOf(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties[name]
	if !ok {
		panic("mcp: shape: no property " + name)
	}
	return p
}

// setEnum states the values a string argument (or each item of a list of
// strings) may take.
func setEnum(s *jsonschema.Schema, name string, vals ...string) {
	p := propOf(s, name)
	if p.Type == "array" {
		p = p.Items
	}
	p.Enum = nil
	for _, v := range vals {
		p.Enum = append(p.Enum, v)
	}
}

// setRange states an integer argument's bounds.
func setRange(s *jsonschema.Schema, name string, lo, hi float64) {
	p := propOf(s, name)
	p.Minimum, p.Maximum = &lo, &hi
}

// setDefault states a boolean argument's default, which dispatch applies.
func setDefault(s *jsonschema.Schema, name string, def bool) {
	propOf(s, name).Default = []byte(fmt.Sprint(def))
}

// setMinItems states the least number of items of a list argument.
func setMinItems(s *jsonschema.Schema, name string, n int) {
	propOf(s, name).MinItems = &n
}
