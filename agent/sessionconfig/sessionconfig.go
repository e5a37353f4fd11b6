// Package sessionconfig checks and completes session configuration against
// the schema an agent describes it with (protocol.SessionConfigSchema): the
// values resolveSessionConfig answers, those createSession is given, the
// changes session/configChanged may make, and the completions of a
// property's values.
//
// Everything here is pure: no I/O, no clock.
package sessionconfig

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// Value encodes a Go string, bool or number as a configuration value.
func Value(v any) jsontext.Value {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sessionconfig: %T is not a JSON value: %v", v, err))
	}
	return jsontext.Value(b)
}

// Equal reports whether two JSON values are the same value (member order
// and spacing aside).
func Equal(a, b jsontext.Value) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	ca, cb := a.Clone(), b.Clone()
	if ca.Canonicalize() != nil || cb.Canonicalize() != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca, cb)
}

// CheckValue returns why v is not a valid value of prop, or "". A value
// must have the property's type and, when the property lists its values
// in enum and does not say the list is only a seed (enumDynamic), be one
// of them.
func CheckValue(prop *protocol.SessionConfigPropertySchema, v jsontext.Value) string {
	if len(v) == 0 {
		return "no value"
	}
	if !jsontext.Value(v).IsValid() {
		return "not valid JSON"
	}
	kind := jsontext.Value(v).Kind()
	want := prop.Type
	ok := false
	switch want {
	case protocol.SessionConfigPropertySchemaTypeString:
		ok = kind == '"'
	case protocol.SessionConfigPropertySchemaTypeNumber:
		ok = kind == '0'
	case protocol.SessionConfigPropertySchemaTypeBoolean:
		ok = kind == 't' || kind == 'f'
	case protocol.SessionConfigPropertySchemaTypeArray:
		ok = kind == '['
	case protocol.SessionConfigPropertySchemaTypeObject:
		ok = kind == '{'
	default:
		return fmt.Sprintf("the schema gives the property an unknown type %q", want)
	}
	if !ok {
		return fmt.Sprintf("want a %s, got %s", want, kindName(kind))
	}
	if len(prop.Enum) > 0 && !isSet(prop.EnumDynamic) {
		if !slices.ContainsFunc(prop.Enum, func(e protocol.JSONPrimitive) bool { return Equal(jsontext.Value(e), v) }) {
			return fmt.Sprintf("%s is not one of %s", v, enumList(prop.Enum))
		}
	}
	return ""
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "an invalid value"
}

func enumList(enum []protocol.JSONPrimitive) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		parts[i] = string(e)
	}
	return strings.Join(parts, ", ")
}

func isSet(b *bool) bool { return b != nil && *b }

// Resolve returns the values a session would get from the values a client
// chose so far: each valid chosen value of a property of the schema, the
// property's default where none (or an invalid one) was chosen, and the
// chosen values of names the schema does not have, which are kept as they
// are (ResolveSessionConfigResult.values: the values echoed back with the
// defaults applied). Resolving is iterative: a value that was valid for an
// earlier choice falls back to the default rather than failing. It never
// returns nil and does not modify given.
func Resolve(schema *protocol.SessionConfigSchema, given map[string]jsontext.Value) map[string]jsontext.Value {
	out := make(map[string]jsontext.Value, len(schema.Properties)+len(given))
	for name, v := range given {
		if _, known := schema.Properties[name]; !known {
			out[name] = v
		}
	}
	for name, prop := range schema.Properties {
		if v, ok := given[name]; ok && CheckValue(&prop, v) == "" {
			out[name] = v
			continue
		}
		if len(prop.Default) > 0 {
			out[name] = prop.Default
		}
	}
	return out
}

// Check returns an error naming every value of a property of the schema
// that is not valid, in name order, or nil. Values of names the schema
// does not have are not checked.
func Check(schema *protocol.SessionConfigSchema, values map[string]jsontext.Value) error {
	var bad []string
	for _, name := range sortedKeys(values) {
		prop, ok := schema.Properties[name]
		if !ok {
			continue
		}
		if why := CheckValue(&prop, values[name]); why != "" {
			bad = append(bad, fmt.Sprintf("%q: %s", name, why))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("invalid session configuration: %s", strings.Join(bad, "; "))
	}
	return nil
}

// CheckChange returns why a client's session/configChanged must be
// rejected, or "". Only properties of the schema with sessionMutable set
// may change, to valid values; readOnly properties never change. A change
// that replaces all values must carry every other property's value
// unchanged, since it would otherwise remove it.
func CheckChange(state *protocol.SessionConfigState, a *protocol.SessionConfigChangedAction) string {
	if state == nil {
		return "the session has no configuration to change"
	}
	for _, name := range sortedKeys(a.Config) {
		v := a.Config[name]
		prop, ok := state.Schema.Properties[name]
		if !ok {
			return fmt.Sprintf("the session's configuration has no property %q", name)
		}
		if Equal(state.Values[name], v) {
			continue
		}
		if isSet(prop.ReadOnly) {
			return fmt.Sprintf("property %q is read-only", name)
		}
		if !isSet(prop.SessionMutable) {
			return fmt.Sprintf("property %q cannot change after the session was created", name)
		}
		if why := CheckValue(&prop, v); why != "" {
			return fmt.Sprintf("property %q: %s", name, why)
		}
	}
	if a.Replace != nil && *a.Replace {
		for _, name := range sortedKeys(state.Values) {
			if _, kept := a.Config[name]; kept {
				continue
			}
			prop, ok := state.Schema.Properties[name]
			if !ok || isSet(prop.SessionMutable) && !isSet(prop.ReadOnly) {
				// A mutable property, or a value the schema does not
				// describe, may go.
				continue
			}
			return fmt.Sprintf("replacing the configuration would remove property %q, which cannot change after the session was created", name)
		}
	}
	return ""
}

// ErrNoProperty is wrapped by Complete's error for a property the schema
// does not have.
var ErrNoProperty = fmt.Errorf("no such property")

// Complete returns the values of a property that match query: the
// property's enum values whose value or label contains query, ignoring
// case, in the schema's order (all of them for an empty query). A
// boolean property offers true and false. A property without listed
// values has no completions.
func Complete(schema *protocol.SessionConfigSchema, property, query string) ([]protocol.SessionConfigValueItem, error) {
	prop, ok := schema.Properties[property]
	if !ok {
		return nil, fmt.Errorf("%w %q in the session configuration schema", ErrNoProperty, property)
	}
	items := []protocol.SessionConfigValueItem{}
	q := strings.ToLower(query)
	add := func(value, label string, desc *string) {
		if q != "" && !strings.Contains(strings.ToLower(value), q) && !strings.Contains(strings.ToLower(label), q) {
			return
		}
		items = append(items, protocol.SessionConfigValueItem{Value: value, Label: label, Description: desc})
	}
	if prop.Type == protocol.SessionConfigPropertySchemaTypeBoolean && len(prop.Enum) == 0 {
		add("true", "true", nil)
		add("false", "false", nil)
		return items, nil
	}
	for i, e := range prop.Enum {
		value := string(e)
		var s string
		if json.Unmarshal(e, &s) == nil {
			value = s
		}
		label := value
		if i < len(prop.EnumLabels) && prop.EnumLabels[i] != "" {
			label = prop.EnumLabels[i]
		}
		var desc *string
		if i < len(prop.EnumDescriptions) && prop.EnumDescriptions[i] != "" {
			desc = &prop.EnumDescriptions[i]
		}
		add(value, label, desc)
	}
	return items, nil
}

// Merge returns values with changes applied, or changes alone when
// replace is set, as the session/configChanged reducer does. It modifies
// neither map.
func Merge(values, changes map[string]jsontext.Value, replace bool) map[string]jsontext.Value {
	out := make(map[string]jsontext.Value, len(values)+len(changes))
	if !replace {
		maps.Copy(out, values)
	}
	maps.Copy(out, changes)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
