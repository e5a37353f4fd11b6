package view_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
)

// minItems and maxItems of configuration properties are 1.x members
// (SCHEMA-DIFF: ConfigPropertySchema and SessionConfigPropertySchema gain
// them): older versions see a session's configuration and a resolved
// schema without them, nested properties included; the 1.x era sees the
// value unchanged.
func TestSessionConfigSchema(t *testing.T) {
	two := protocol.Ptr[int64](2)
	schema := protocol.SessionConfigSchema{Properties: map[string]protocol.SessionConfigPropertySchema{
		"mode": {Type: "string", Title: "Mode"},
		"tags": {Type: "array", Title: "Tags", MinItems: two, MaxItems: two,
			Items: &protocol.ConfigPropertySchema{Type: "object", Title: "Tag", Properties: map[string]protocol.ConfigPropertySchema{
				"names": {Type: "array", Title: "Names", MaxItems: two},
			}}},
	}}
	state := &protocol.SessionState{Provider: "p", Title: "t", Config: &protocol.SessionConfigState{Schema: schema}}
	encode := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	before := encode(state)
	for _, v := range olderVersions {
		got := encode(view.For(v).State(state))
		if strings.Contains(got, "Items") || !strings.Contains(got, `"names"`) || !strings.Contains(got, `"mode"`) {
			t.Errorf("%s: %s", v, got)
		}
		if got := encode(view.For(v).SessionConfigSchema(schema)); strings.Contains(got, "Items") {
			t.Errorf("%s: resolved schema %s", v, got)
		}
	}
	if encode(state) != before {
		t.Error("the view changed the host's state")
	}
	for _, v := range newerVersions {
		if got := encode(view.For(v).SessionConfigSchema(schema)); strings.Count(got, "Items") != 3 {
			t.Errorf("%s: %s", v, got)
		}
	}
	plain := &protocol.SessionConfigState{Schema: protocol.SessionConfigSchema{Properties: map[string]protocol.SessionConfigPropertySchema{"mode": {Type: "string", Title: "Mode"}}}}
	if got := view.For("0.8.0").State(&protocol.SessionState{Config: plain}).(*protocol.SessionState); got.Config != plain {
		t.Error("a configuration without 1.x members was copied")
	}
}
