package mcp

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// The tools' JSON schemas are inferred from their Go types, as the
// go-sdk does, with what it cannot infer: the JSON forms of the SDK's
// types, and the bounds of the arguments.

// typeSchemas are the schemas of the types whose JSON is not what their
// Go type says.
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[netip.Addr]():      {Type: "string"},
	reflect.TypeFor[json.RawMessage](): {Type: "object"}, // a stream event
}

// inputSchema is the schema of a tool's arguments In, with each property
// that is a list a list (not null), bounds applied, and the descriptions
// of descs.
func inputSchema[In any](bounds []bound, descs map[string]string) *jsonschema.Schema {
	s, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(err) // a type of this package that has no schema: a bug found by every test
	}
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[1] == "array" {
			p.Type, p.Types = "array", nil
		}
	}
	for _, b := range bounds {
		b.apply(s.Properties[b.name])
	}
	for name, d := range descs {
		s.Properties[name].Description = d
	}
	return s
}

// bound is the range of an argument: its value for a number, its length
// for a list; def is a number's default, 0 for none.
type bound struct {
	name          string
	min, max, def int
}

func (b bound) apply(p *jsonschema.Schema) {
	if p.Type == "array" {
		p.MinItems, p.MaxItems = &b.min, &b.max
		return
	}
	p.Minimum, p.Maximum = ptr(float64(b.min)), ptr(float64(b.max))
	if b.def != 0 {
		p.Default, _ = json.Marshal(b.def) // an int marshals
	}
}

// outputSchema is the schema of a tool's output Out: every property at
// the top, and either the ones a success requires or an error.
func outputSchema[Out any]() *jsonschema.Schema {
	s, err := jsonschema.For[Out](&jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(err) // as in inputSchema
	}
	optionalNotNull(s)
	success := s.Required
	s.Required = nil
	s.AnyOf = []*jsonschema.Schema{{Required: success}, {Required: []string{"credits_spent", "error"}}}
	return s
}

// optionalNotNull gives each optional property of s, and of the objects
// within it, its one type, not null as well: an omitempty pointer, list
// or map is left out when it has nothing, never null. (A single type is
// also what more clients take.)
func optionalNotNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for name, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" && !slices.Contains(s.Required, name) {
			p.Type, p.Types = p.Types[1], nil
		}
		optionalNotNull(p)
	}
	optionalNotNull(s.Items)
}
