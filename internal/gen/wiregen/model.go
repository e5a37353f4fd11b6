// Package wiregen turns the AHP JSON Schemas into Go wire types.
//
// It is the library behind the wiregen command that `go generate` runs in the
// protocol package. The schema-to-Go mapping rules are written down in
// README.md next to this file; the code here follows them and nothing else.
package wiregen

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// schemaFiles lists the schema files in the order that decides which
// generated file a shared definition lands in: the first file holding it.
var schemaFiles = []string{
	"state.schema.json",
	"actions.schema.json",
	"notifications.schema.json",
	"commands.schema.json",
	"errors.schema.json",
}

// node is one JSON Schema object as decoded by encoding/json.
type node = map[string]any

// SchemaFile is one input file with its content hash.
type SchemaFile struct {
	Name   string
	SHA256 string
	defs   map[string]node
	order  []string
}

// Spec is every schema file of the spec folder, with definitions
// deduplicated by name.
type Spec struct {
	Files  []*SchemaFile
	defs   map[string]node   // by Go type name
	home   map[string]string // Go type name -> file name
	schema map[string]string // Go type name -> schema definition name
}

// Load reads the schema files from dir (the spec's schema folder).
func Load(dir string) (*Spec, error) {
	s := &Spec{defs: map[string]node{}, home: map[string]string{}, schema: map[string]string{}}
	for _, name := range schemaFiles {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("wiregen: %w", err)
		}
		sum := sha256.Sum256(data)
		f := &SchemaFile{Name: name, SHA256: hex.EncodeToString(sum[:])}
		var doc struct {
			Defs json.RawMessage `json:"$defs"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("wiregen: %s: %w", name, err)
		}
		defs, order, err := orderedObject(doc.Defs)
		if err != nil {
			return nil, fmt.Errorf("wiregen: %s: $defs: %w", name, err)
		}
		f.defs, f.order = defs, order
		for _, k := range order {
			d := renameRefs(cleanDef(defs[k])).(node)
			goName := typeName(k)
			if prev, ok := s.schema[goName]; ok && prev != k {
				return nil, fmt.Errorf("wiregen: definitions %s and %s map to one Go name %s", prev, k, goName)
			}
			if _, seen := s.defs[goName]; !seen {
				s.defs[goName] = d
				s.home[goName] = name
				s.schema[goName] = k
			}
		}
		s.Files = append(s.Files, f)
	}
	return s, nil
}

// TypeName is the Go name of a schema definition: the definition name
// with Go initialisms (AhpErrorCode is AHPErrorCode, JsonRpcMessage is
// JSONRPCMessage).
func TypeName(def string) string { return pascal(def) }

func typeName(def string) string { return TypeName(def) }

// renameRefs returns a copy of a schema whose $ref values name the Go
// type names of their definitions, so analysis works on Go names only.
func renameRefs(v any) any {
	switch t := v.(type) {
	case node:
		out := node{}
		for k, x := range t {
			if k == "$ref" {
				if ref, ok := x.(string); ok && strings.HasPrefix(ref, "#/$defs/") && ref != "#/$defs/" {
					out[k] = "#/$defs/" + typeName(strings.TrimPrefix(ref, "#/$defs/"))
					continue
				}
			}
			out[k] = renameRefs(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = renameRefs(x)
		}
		return out
	}
	return v
}

// schemaName returns the schema definition name of a Go type name.
func (s *Spec) schemaName(goName string) string {
	if n, ok := s.schema[goName]; ok {
		return n
	}
	return goName
}

// cleanDef drops the broken `{"$ref": "#/$defs/"}` entries one schema file
// carries in a union.
func cleanDef(d node) node {
	if ref, ok := d["$ref"].(string); ok && d["oneOf"] == nil && d["properties"] == nil {
		// A definition that only names another (SessionOrigin, whose one
		// variant today is AutomationSessionOrigin) is a union of one
		// variant, so that variants added later stay apart.
		out := node{}
		for k, v := range d {
			if k != "$ref" {
				out[k] = v
			}
		}
		out["oneOf"] = []any{node{"$ref": ref}}
		return out
	}
	alts, ok := d["oneOf"].([]any)
	if !ok {
		return d
	}
	kept := alts[:0:0]
	for _, a := range alts {
		if m, ok := a.(node); ok && m["$ref"] == "#/$defs/" {
			continue
		}
		kept = append(kept, a)
	}
	out := node{}
	for k, v := range d {
		out[k] = v
	}
	out["oneOf"] = kept
	return out
}

// orderKey is the hidden member under which an object's key order is kept.
const orderKey = "\x00order"

// orderedObject decodes a JSON object of schemas keeping every object's key
// order (under orderKey), so generated fields follow the schema's order.
func orderedObject(raw json.RawMessage) (map[string]node, []string, error) {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	v, err := orderedValue(dec)
	if err != nil {
		return nil, nil, err
	}
	obj, ok := v.(node)
	if !ok {
		return nil, nil, fmt.Errorf("not an object")
	}
	out := map[string]node{}
	order, _ := obj[orderKey].([]string)
	for _, k := range order {
		d, ok := obj[k].(node)
		if !ok {
			return nil, nil, fmt.Errorf("%s: not an object", k)
		}
		out[k] = d
	}
	return out, order, nil
}

func orderedValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := node{}
			var order []string
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := orderedValue(dec)
				if err != nil {
					return nil, err
				}
				obj[k] = v
				order = append(order, k)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			obj[orderKey] = order
			return obj, nil
		case '[':
			var arr []any
			for dec.More() {
				v, err := orderedValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// names returns the definition names sorted.
func (s *Spec) names() []string {
	out := make([]string, 0, len(s.defs))
	for k := range s.defs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// propNames returns the property names of an object schema in source order.
func propNames(n node) []string {
	props, _ := n["properties"].(node)
	order, _ := props[orderKey].([]string)
	return order
}
