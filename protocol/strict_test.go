package protocol_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// wrongValue is a value of the wrong type for a member, and whether the
// lenient decoder reads past it (null, an unknown enumeration value) or
// fails on it (the wrong JSON kind).
type wrongValue struct {
	json    string
	lenient bool
	elem    bool // the value is an array whose first element is wrong
}

var (
	textType      = reflect.TypeFor[protocol.Text]()
	rawType       = reflect.TypeFor[jsontext.Value]()
	primitiveType = reflect.TypeFor[protocol.JSONPrimitive]()

	stringOrMarkdownType = reflect.TypeFor[protocol.StringOrMarkdown]()
	toolInputType        = reflect.TypeFor[protocol.ToolInput]()
)

// wrongValues lists, for a Go wire type, values its schema type does not
// allow. Untyped members (jsontext.Value, JSONPrimitive) take any value.
func wrongValues(t reflect.Type) []wrongValue {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	null := wrongValue{json: "null", lenient: true}
	switch {
	case t == rawType || t == primitiveType:
		return nil
	case t == textType || t == stringOrMarkdownType || t == toolInputType:
		// A string, or for the last two an object.
		return []wrongValue{{json: "5"}, {json: "[]"}, null}
	}
	switch t.Kind() {
	case reflect.String:
		out := []wrongValue{{json: "5"}, {json: "true"}, null}
		if t.Name() != "string" {
			// A named string type is a closed enumeration.
			out = append(out, wrongValue{json: `"no-such-value"`, lenient: true})
		}
		return out
	case reflect.Int64, reflect.Float64, reflect.Uint32:
		return []wrongValue{{json: `"1"`}, {json: "{}"}, null}
	case reflect.Bool:
		return []wrongValue{{json: `"true"`}, {json: "0"}, null}
	case reflect.Slice:
		out := []wrongValue{{json: `"x"`}, {json: "{}"}, null}
		if len(wrongValues(t.Elem())) > 0 {
			out = append(out, wrongValue{json: "[null]", lenient: true, elem: true})
		}
		return out
	case reflect.Map:
		return []wrongValue{{json: "5"}, {json: "[]"}, null}
	case reflect.Struct, reflect.Interface:
		return []wrongValue{{json: "5"}, {json: `"x"`}, null}
	}
	panic("no wrong values for " + t.String())
}

// memberNames returns the JSON names of a generated struct's members.
func memberNames(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = f.Type
	}
	return out
}

// TestStrictDecodingNamesWrongMembers: every member of every action a
// client may dispatch, sent with a value of the wrong type, is reported by
// UnmarshalStrict with the member's path. The cases come from the
// generated types, so an action added to the schema is covered when the
// code is generated again.
func TestStrictDecodingNamesWrongMembers(t *testing.T) {
	cases := 0
	for _, info := range protocol.Actions() {
		if !info.ClientDispatchable {
			continue
		}
		v, err := protocol.Decode("StateAction", []byte(`{"type":"`+info.Type+`"}`))
		if err != nil {
			t.Fatalf("%s: %v", info.Type, err)
		}
		a := v.(protocol.StateAction)
		if _, ok := a.(*protocol.Unknown); ok {
			t.Fatalf("%s decodes as an unknown action", info.Type)
		}
		members := memberNames(reflect.TypeOf(a).Elem())
		if len(members) == 0 {
			continue
		}
		// The zero action, encoded, is the base each case changes one
		// member of.
		base, err := protocol.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		for name, typ := range members {
			for _, wv := range wrongValues(typ) {
				cases++
				action := setMember(t, base, name, wv.json)
				in := `{"channel":"ahp-session:/s","clientSeq":1,"action":` + action + `}`
				want := "action." + name
				if wv.elem {
					want += "[0]"
				}
				var p protocol.DispatchActionParams
				err := protocol.UnmarshalStrict([]byte(in), &p)
				if !names(err, want) {
					t.Errorf("%s with %s = %s: got %v, want an error naming %s", info.Type, name, wv.json, err, want)
				}
				var q protocol.DispatchActionParams
				if err := protocol.Unmarshal([]byte(in), &q); (err == nil) != wv.lenient {
					t.Errorf("%s with %s = %s: lenient decoding gave %v", info.Type, name, wv.json, err)
				}
			}
		}
	}
	if cases < 200 {
		t.Fatalf("only %d cases", cases)
	}
	t.Logf("%d cases", cases)
}

// names reports whether err names the member at path.
func names(err error, path string) bool {
	var m *protocol.MissingError
	if errors.As(err, &m) {
		return m.HasInvalid(path)
	}
	got, _ := protocol.ErrorPath(err)
	return got == path
}

// setMember returns the JSON object obj with member name set to value.
func setMember(t *testing.T, obj []byte, name, value string) string {
	t.Helper()
	dec := jsontext.NewDecoder(strings.NewReader(string(obj)))
	var b strings.Builder
	b.WriteString("{")
	if _, err := dec.ReadToken(); err != nil {
		t.Fatal(err)
	}
	n := 0
	add := func(k, v string) {
		if n > 0 {
			b.WriteString(",")
		}
		n++
		q, _ := jsontext.AppendQuote(nil, k)
		b.Write(q)
		b.WriteString(":")
		b.WriteString(v)
	}
	for dec.PeekKind() != '}' {
		k, err := dec.ReadToken()
		if err != nil {
			t.Fatal(err)
		}
		key := k.String()
		v, err := dec.ReadValue()
		if err != nil {
			t.Fatal(err)
		}
		if key != name {
			add(key, string(v))
		}
	}
	add(name, value)
	b.WriteString("}")
	return b.String()
}
