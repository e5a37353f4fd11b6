package sessionconfig_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"

	"github.com/ahp-go/ahp/agent/sessionconfig"
	"github.com/ahp-go/ahp/protocol"
)

var v = sessionconfig.Value

func enum(vals ...string) []protocol.JSONPrimitive {
	out := make([]protocol.JSONPrimitive, len(vals))
	for i, s := range vals {
		out[i] = protocol.JSONPrimitive(v(s))
	}
	return out
}

// schema: a mutable mode, a fixed isolation, a read-only branch that is
// nonetheless marked mutable, a dynamic model list, a mutable flag and a
// number.
func schema() *protocol.SessionConfigSchema {
	yes := protocol.Ptr(true)
	return &protocol.SessionConfigSchema{Properties: map[string]protocol.SessionConfigPropertySchema{
		"mode":      {Type: "string", Title: "Mode", Enum: enum("ask", "code"), EnumLabels: []string{"Ask", "Code"}, EnumDescriptions: []string{"Asks first", ""}, Default: v("ask"), SessionMutable: yes},
		"isolation": {Type: "string", Title: "Isolation", Enum: enum("folder", "worktree"), Default: v("folder")},
		"branch":    {Type: "string", Title: "Branch", Default: v("main"), ReadOnly: yes, SessionMutable: yes},
		"model":     {Type: "string", Title: "Model", Enum: enum("small"), EnumDynamic: yes, SessionMutable: yes},
		"verbose":   {Type: "boolean", Title: "Verbose", Default: v(false), SessionMutable: yes},
		"depth":     {Type: "number", Title: "Depth"},
	}}
}

func TestCheckValue(t *testing.T) {
	props := schema().Properties
	for _, tc := range []struct {
		prop, value, want string
	}{
		// ConfigPropertySchema.enum: the allowed values.
		{"mode", `"code"`, ""},
		{"mode", `"fly"`, `"fly" is not one of "ask", "code"`},
		// ConfigPropertySchema.type: the property's type.
		{"mode", `1`, "want a string, got a number"},
		{"verbose", `true`, ""},
		{"verbose", `"true"`, "want a boolean, got a string"},
		{"depth", `2.5`, ""},
		{"depth", `null`, "want a number, got null"},
		// enumDynamic: the values in enum are only a seed.
		{"model", `"huge"`, ""},
		{"model", `{}`, "want a string, got an object"},
		// A string without enum takes any string.
		{"branch", `"dev"`, ""},
		{"mode", `"co`, "not valid JSON"},
		{"mode", ``, "no value"},
	} {
		p := props[tc.prop]
		if got := sessionconfig.CheckValue(&p, jsontext.Value(tc.value)); got != tc.want {
			t.Errorf("%s = %s: %q, want %q", tc.prop, tc.value, got, tc.want)
		}
	}
}

// ResolveSessionConfigResult.values: the values are echoed back with the
// server-resolved defaults applied.
func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given map[string]jsontext.Value
		want  map[string]jsontext.Value
	}{
		{"nothing chosen: the defaults", nil,
			map[string]jsontext.Value{"mode": v("ask"), "isolation": v("folder"), "branch": v("main"), "verbose": v(false)}},
		{"valid choices are kept, unknown names echoed",
			map[string]jsontext.Value{"mode": v("code"), "model": v("huge"), "depth": v(3), "extra": v("x")},
			map[string]jsontext.Value{"mode": v("code"), "isolation": v("folder"), "branch": v("main"), "verbose": v(false), "model": v("huge"), "depth": v(3), "extra": v("x")}},
		{"a choice no longer valid falls back to the default",
			map[string]jsontext.Value{"mode": v("fly"), "verbose": v("yes")},
			map[string]jsontext.Value{"mode": v("ask"), "isolation": v("folder"), "branch": v("main"), "verbose": v(false)}},
		{"an invalid choice without a default is dropped",
			map[string]jsontext.Value{"depth": v("deep")},
			map[string]jsontext.Value{"mode": v("ask"), "isolation": v("folder"), "branch": v("main"), "verbose": v(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sessionconfig.Resolve(schema(), tc.given)
			if diff := cmp.Diff(render(tc.want), render(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func render(m map[string]jsontext.Value) map[string]string {
	out := map[string]string{}
	for k, x := range m {
		out[k] = string(x)
	}
	return out
}

func TestCheck(t *testing.T) {
	if err := sessionconfig.Check(schema(), map[string]jsontext.Value{"mode": v("code"), "unknown": v(1)}); err != nil {
		t.Errorf("valid values: %v", err)
	}
	err := sessionconfig.Check(schema(), map[string]jsontext.Value{"verbose": v(1), "mode": v("fly")})
	if err == nil || err.Error() != `invalid session configuration: "mode": "fly" is not one of "ask", "code"; "verbose": want a boolean, got a number` {
		t.Errorf("invalid values: %v", err)
	}
}

// SessionConfigChangedAction: only properties with sessionMutable: true
// may change; the server validates the action.
func TestCheckChange(t *testing.T) {
	state := &protocol.SessionConfigState{Schema: *schema(), Values: sessionconfig.Resolve(schema(), nil)}
	replace := protocol.Ptr(true)
	for _, tc := range []struct {
		name    string
		config  map[string]jsontext.Value
		replace *bool
		want    string
	}{
		{"a mutable property", map[string]jsontext.Value{"mode": v("code")}, nil, ""},
		{"several at once", map[string]jsontext.Value{"mode": v("code"), "verbose": v(true)}, nil, ""},
		{"a value outside the enum", map[string]jsontext.Value{"mode": v("fly")}, nil, `property "mode": "fly" is not one of "ask", "code"`},
		{"a wrong type", map[string]jsontext.Value{"verbose": v("on")}, nil, `property "verbose": want a boolean, got a string`},
		{"a property fixed at creation", map[string]jsontext.Value{"isolation": v("worktree")}, nil, `property "isolation" cannot change after the session was created`},
		{"a fixed property set to the value it has", map[string]jsontext.Value{"isolation": v("folder"), "mode": v("code")}, nil, ""},
		{"a read-only property", map[string]jsontext.Value{"branch": v("dev")}, nil, `property "branch" is read-only`},
		{"a property the schema lacks", map[string]jsontext.Value{"color": v("red")}, nil, `the session's configuration has no property "color"`},
		{"a dynamic enum takes other values", map[string]jsontext.Value{"model": v("huge")}, nil, ""},
		{"an empty change", map[string]jsontext.Value{}, nil, ""},
		{"replace keeping the fixed values", map[string]jsontext.Value{"isolation": v("folder"), "branch": v("main"), "mode": v("code")}, replace, ""},
		{"replace dropping a fixed value", map[string]jsontext.Value{"mode": v("code"), "branch": v("main")}, replace, `would remove property "isolation"`},
		{"replace dropping a read-only value", map[string]jsontext.Value{"mode": v("code"), "isolation": v("folder")}, replace, `would remove property "branch"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sessionconfig.CheckChange(state, &protocol.SessionConfigChangedAction{Config: tc.config, Replace: tc.replace})
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
	if got := sessionconfig.CheckChange(nil, &protocol.SessionConfigChangedAction{Config: map[string]jsontext.Value{"mode": v("code")}}); got != "the session has no configuration to change" {
		t.Errorf("no configuration: %q", got)
	}
}

// SessionConfigCompletionsParams.query: empty returns the default values;
// otherwise matching values with their display metadata.
func TestComplete(t *testing.T) {
	desc := "Asks first"
	for _, tc := range []struct {
		property, query string
		want            []protocol.SessionConfigValueItem
	}{
		{"mode", "", []protocol.SessionConfigValueItem{{Value: "ask", Label: "Ask", Description: &desc}, {Value: "code", Label: "Code"}}},
		{"mode", "COD", []protocol.SessionConfigValueItem{{Value: "code", Label: "Code"}}},
		{"mode", "first", []protocol.SessionConfigValueItem{}}, // descriptions are not searched
		{"verbose", "t", []protocol.SessionConfigValueItem{{Value: "true", Label: "true"}}},
		{"branch", "", []protocol.SessionConfigValueItem{}},
		{"model", "sm", []protocol.SessionConfigValueItem{{Value: "small", Label: "small"}}},
	} {
		got, err := sessionconfig.Complete(schema(), tc.property, tc.query)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s %q (-want +got):\n%s", tc.property, tc.query, diff)
		}
	}
	if _, err := sessionconfig.Complete(schema(), "nope", ""); !errors.Is(err, sessionconfig.ErrNoProperty) || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown property: %v", err)
	}
}

func TestEqual(t *testing.T) {
	if !sessionconfig.Equal(jsontext.Value(`{"a":1,"b":2}`), jsontext.Value(`{ "b":2, "a":1 }`)) {
		t.Error("member order made values differ")
	}
	if sessionconfig.Equal(jsontext.Value(`"1"`), jsontext.Value(`1`)) {
		t.Error("a string equals a number")
	}
}
