package iceberg

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/deltavacuum/deltavacuum/internal/strictjson"
)

// An Avro schema, as the header of a container file holds it (the Avro specification,
// "Schema Declaration"): enough of it to walk every value (primitives, records, enums,
// arrays, maps, unions, fixed, and references to named types, a record's to itself included).
// Logical types are read as the type they annotate; defaults, aliases and docs are not needed
// to read a file written with this very schema.
type schema struct {
	kind     string // a primitive's name, or record, enum, array, map, union, fixed
	name     string // the full name of a named type
	fields   []field
	items    *schema // array
	values   *schema // map
	branches []*schema
	size     int // fixed
	symbols  int // enum
}

type field struct {
	name string
	typ  *schema
}

// maxSchemaDepth bounds the nesting of a schema's declaration.
const maxSchemaDepth = 64

var primitives = map[string]bool{"null": true, "boolean": true, "int": true, "long": true, "float": true, "double": true, "bytes": true, "string": true}

// parseSchema reads a schema in JSON.
func parseSchema(b []byte) (*schema, error) {
	var v any
	if err := strictjson.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	p := schemaParser{named: map[string]*schema{}}
	return p.parse(v, "", 0)
}

type schemaParser struct {
	named map[string]*schema
}

func (p *schemaParser) parse(v any, namespace string, depth int) (*schema, error) {
	if depth > maxSchemaDepth {
		return nil, fmt.Errorf("a schema nested deeper than %d", maxSchemaDepth)
	}
	switch v := v.(type) {
	case string:
		if primitives[v] {
			return &schema{kind: v}, nil
		}
		if s, ok := p.lookup(v, namespace); ok {
			return s, nil
		}
		return nil, fmt.Errorf("an unknown type %q", v)
	case []any:
		u := &schema{kind: "union"}
		for _, b := range v {
			s, err := p.parse(b, namespace, depth+1)
			if err != nil {
				return nil, err
			}
			u.branches = append(u.branches, s)
		}
		if len(u.branches) == 0 {
			return nil, errors.New("an empty union")
		}
		return u, nil
	case map[string]any:
		return p.object(v, namespace, depth)
	}
	return nil, fmt.Errorf("a schema that is a %T", v)
}

func (p *schemaParser) object(v map[string]any, namespace string, depth int) (*schema, error) {
	t, ok := v["type"]
	if !ok {
		return nil, errors.New("a schema object without a type")
	}
	kind, isName := t.(string)
	if !isName || !(kind == "record" || kind == "error" || kind == "enum" || kind == "array" || kind == "map" || kind == "fixed") {
		// {"type": "int", "logicalType": "date"}, {"type": {...}}, {"type": "a.Named"}
		return p.parse(t, namespace, depth+1)
	}
	s := &schema{kind: kind}
	if kind == "record" || kind == "error" || kind == "enum" || kind == "fixed" {
		name, _ := v["name"].(string)
		if name == "" {
			return nil, fmt.Errorf("a %s without a name", kind)
		}
		if ns, ok := v["namespace"].(string); ok && !strings.Contains(name, ".") {
			namespace = ns
		}
		s.name = fullName(name, namespace)
		if i := strings.LastIndexByte(s.name, '.'); i >= 0 {
			namespace = s.name[:i]
		}
		if _, dup := p.named[s.name]; dup {
			return nil, fmt.Errorf("the name %q is defined twice", s.name)
		}
		// Registered before its fields, so that a record may hold itself.
		p.named[s.name] = s
	}
	switch kind {
	case "record", "error":
		s.kind = "record"
		fs, ok := v["fields"].([]any)
		if !ok {
			return nil, fmt.Errorf("record %s without fields", s.name)
		}
		for _, f := range fs {
			fo, ok := f.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("record %s: a field that is not an object", s.name)
			}
			name, _ := fo["name"].(string)
			ft, ok := fo["type"]
			if name == "" || !ok {
				return nil, fmt.Errorf("record %s: a field without a name or a type", s.name)
			}
			typ, err := p.parse(ft, namespace, depth+1)
			if err != nil {
				return nil, fmt.Errorf("record %s, field %s: %w", s.name, name, err)
			}
			s.fields = append(s.fields, field{name: name, typ: typ})
		}
	case "enum":
		syms, ok := v["symbols"].([]any)
		if !ok || len(syms) == 0 {
			return nil, fmt.Errorf("enum %s without symbols", s.name)
		}
		s.symbols = len(syms)
	case "fixed":
		n, ok := v["size"].(float64)
		if !ok || n < 0 || n > math.MaxInt32 || n != math.Trunc(n) {
			return nil, fmt.Errorf("fixed %s of size %v", s.name, v["size"])
		}
		s.size = int(n)
	case "array":
		it, ok := v["items"]
		if !ok {
			return nil, errors.New("an array without items")
		}
		var err error
		if s.items, err = p.parse(it, namespace, depth+1); err != nil {
			return nil, err
		}
	case "map":
		vt, ok := v["values"]
		if !ok {
			return nil, errors.New("a map without values")
		}
		var err error
		if s.values, err = p.parse(vt, namespace, depth+1); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func fullName(name, namespace string) string {
	if strings.Contains(name, ".") || namespace == "" {
		return name
	}
	return namespace + "." + name
}

func (p *schemaParser) lookup(name, namespace string) (*schema, bool) {
	if s, ok := p.named[fullName(name, namespace)]; ok {
		return s, true
	}
	s, ok := p.named[name]
	return s, ok
}
