package mcp

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/chromegate/chromegate/executor"
)

// Small constructors for the schemas a tool's facts add (declareArgs) and
// for tools whose schema is not a Go type (live page tools, tests). A
// built-in tool's schema is inferred from its input type (tools_typed.go).
// Parameter descriptions are left out where the name, type and enum say
// it all: every character is repeated in every tools/list reply.

type prop struct {
	name string
	s    *jsonschema.Schema
}

// object is a closed object schema with properties in the given order.
func object(required []string, props ...prop) *jsonschema.Schema {
	s := &jsonschema.Schema{
		Type:                 "object",
		Properties:           map[string]*jsonschema.Schema{},
		Required:             required,
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}, // marshals as false
	}
	for _, p := range props {
		if _, dup := s.Properties[p.name]; dup {
			panic("mcp: duplicate property " + p.name)
		}
		s.Properties[p.name] = p.s
		s.PropertyOrder = append(s.PropertyOrder, p.name)
	}
	for _, r := range required {
		if _, ok := s.Properties[r]; !ok {
			panic("mcp: required property " + r + " is not defined")
		}
	}
	return s
}

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func boolean(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: desc}
}

func integer(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: desc}
}

func enum(desc string, vals ...string) *jsonschema.Schema {
	s := str(desc)
	for _, v := range vals {
		s.Enum = append(s.Enum, v)
	}
	return s
}

// timeout_ms states no bounds in the schema (they would cost 30 characters
// in every tool); dispatch enforces 1..maxTimeoutMs.
func timeoutProp() prop { return prop{"timeout_ms", integer("")} }
func waitUntilProp() prop {
	return prop{"wait_until", enum("", "load", "domcontentloaded", "networkidle")}
}

// propNames lists a schema's properties in schema order, for error messages.
func propNames(s *jsonschema.Schema) []string {
	if len(s.PropertyOrder) == len(s.Properties) {
		return s.PropertyOrder
	}
	return slices.Sorted(maps.Keys(s.Properties))
}

func badArgs(format string, args ...any) *executor.Error {
	return executor.Errorf(executor.CodeBadArgs, format, args...)
}

// checkSelectors holds every selector among a call's arguments, at any
// depth (a query's, a scope's, each field of a form), to
// executor.CheckSelector: none may enter a frame. A page tool's arguments
// are the page's own and are not looked at.
func checkSelectors(v any) error {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if sel, ok := e.(string); ok && strings.HasSuffix(strings.ToLower(k), "selector") {
				if err := executor.CheckSelector(sel); err != nil {
					return err
				}
				continue
			}
			if err := checkSelectors(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := checkSelectors(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTarget enforces exactly one (required) or at most one of a target's
// selector and ref, naming the arguments as the caller wrote them.
func checkTarget(args map[string]any, ta TargetArg) error {
	if point, err := checkPoint(args, ta); point {
		return err
	}
	t := targetOf(args, ta.Prefix)
	if !ta.Required && t.IsZero() {
		return nil
	}
	err := t.Validate()
	if err == nil {
		return nil
	}
	if ta.Prefix == "" {
		return err
	}
	e := executor.AsError(err)
	c := *e
	c.Message = strings.NewReplacer("selector", ta.Prefix+"selector", "ref", ta.Prefix+"ref").Replace(e.Message)
	c.Hint = fmt.Sprintf("pass exactly one of %sselector or %sref", ta.Prefix, ta.Prefix)
	return &c
}
