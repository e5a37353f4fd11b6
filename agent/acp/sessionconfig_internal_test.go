package acp

import (
	"encoding/json"
	"testing"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/google/go-cmp/cmp"
)

// TestBuildConfig maps what ACP sessions report to AHP configuration
// properties. ACP's session config options page: clients should prefer
// config options to the older modes (and models), so an option that is
// the mode or the model replaces those.
func TestBuildConfig(t *testing.T) {
	modes := &acpsdk.SessionModeState{CurrentModeId: "ask", AvailableModes: []acpsdk.SessionMode{{Id: "ask", Name: "Ask"}, {Id: "code", Name: "Code"}}}
	models := &acpsdk.SessionModelState{CurrentModelId: "m1", AvailableModels: []acpsdk.ModelInfo{{ModelId: "m1", Name: "One", Description: acpsdk.Ptr("the first")}}}
	sel := func(id string, cat *acpsdk.SessionConfigOptionCategory, cur string, vals ...string) acpsdk.SessionConfigOption {
		var opts acpsdk.SessionConfigSelectOptionsUngrouped
		for _, v := range vals {
			opts = append(opts, acpsdk.SessionConfigSelectOption{Value: acpsdk.SessionConfigValueId(v), Name: "N" + v})
		}
		return acpsdk.SessionConfigOption{Select: &acpsdk.SessionConfigOptionSelect{Id: acpsdk.SessionConfigId(id), Name: "T" + id, Category: cat,
			CurrentValue: acpsdk.SessionConfigValueId(cur), Type: "select", Options: acpsdk.SessionConfigSelectOptions{Ungrouped: &opts}}}
	}
	grouped := acpsdk.SessionConfigSelectOptionsGrouped{
		{Group: "a", Name: "A", Options: []acpsdk.SessionConfigSelectOption{{Value: "x", Name: "X"}}},
		{Group: "b", Name: "B", Options: []acpsdk.SessionConfigSelectOption{{Value: "y", Name: "Y", Description: acpsdk.Ptr("why")}}},
	}
	for _, tc := range []struct {
		name    string
		modes   *acpsdk.SessionModeState
		models  *acpsdk.SessionModelState
		options []acpsdk.SessionConfigOption
		want    string // property: kind, enum, labels, descriptions, default
	}{
		{"modes and models", modes, models, nil, `{
			"mode":{"kind":0,"type":"string","enum":["ask","code"],"labels":["Ask","Code"],"default":"ask"},
			"model":{"kind":1,"type":"string","enum":["m1"],"labels":["One"],"descriptions":["the first"],"default":"m1"}}`},
		{"a mode option replaces the modes", modes, models,
			[]acpsdk.SessionConfigOption{sel("approval", acpsdk.Ptr(acpsdk.SessionConfigOptionCategoryMode), "auto", "auto", "manual")}, `{
			"approval":{"kind":2,"type":"string","enum":["auto","manual"],"labels":["Nauto","Nmanual"],"default":"auto"},
			"model":{"kind":1,"type":"string","enum":["m1"],"labels":["One"],"descriptions":["the first"],"default":"m1"}}`},
		{"an option named model replaces the models", nil, models,
			[]acpsdk.SessionConfigOption{sel("model", nil, "big", "big")}, `{
			"model":{"kind":2,"type":"string","enum":["big"],"labels":["Nbig"],"default":"big"}}`},
		{"grouped values are flattened; booleans", nil, nil, []acpsdk.SessionConfigOption{
			{Select: &acpsdk.SessionConfigOptionSelect{Id: "g", Name: "G", CurrentValue: "y", Type: "select", Options: acpsdk.SessionConfigSelectOptions{Grouped: &grouped}}},
			{Boolean: &acpsdk.SessionConfigOptionBoolean{Id: "fast", Name: "Fast", CurrentValue: true, Type: "boolean"}},
		}, `{
			"g":{"kind":2,"type":"string","enum":["x","y"],"labels":["X","Y"],"descriptions":["","why"],"default":"y"},
			"fast":{"kind":3,"type":"boolean","default":true}}`},
		{"the first option of an id wins; options without an id are skipped", nil, nil, []acpsdk.SessionConfigOption{
			sel("e", nil, "1", "1"), sel("e", nil, "2", "2"), sel("", nil, "3", "3"),
		}, `{"e":{"kind":2,"type":"string","enum":["1"],"labels":["N1"],"default":"1"}}`},
		{"nothing", nil, nil, nil, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := buildConfig(tc.modes, tc.models, tc.options)
			type prop struct {
				Kind         propKind        `json:"kind"`
				Type         string          `json:"type"`
				Enum         []string        `json:"enum,omitempty"`
				Labels       []string        `json:"labels,omitempty"`
				Descriptions []string        `json:"descriptions,omitempty"`
				Default      json.RawMessage `json:"default"`
			}
			var want map[string]prop
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			got := map[string]prop{}
			for name, p := range cfg.schema.Properties {
				if p.SessionMutable == nil || !*p.SessionMutable {
					t.Errorf("%s is not sessionMutable", name)
				}
				if string(cfg.values[name]) != string(p.Default) {
					t.Errorf("%s: current value %s, default %s", name, cfg.values[name], p.Default)
				}
				g := prop{Kind: cfg.props[name].kind, Type: string(p.Type), Labels: p.EnumLabels, Descriptions: p.EnumDescriptions, Default: json.RawMessage(p.Default)}
				for _, e := range p.Enum {
					var s string
					json.Unmarshal(e, &s)
					g.Enum = append(g.Enum, s)
				}
				got[name] = g
			}
			norm := func(m map[string]prop) map[string]prop {
				for k, p := range m {
					var v any
					json.Unmarshal(p.Default, &v)
					b, _ := json.Marshal(v)
					p.Default = b
					m[k] = p
				}
				return m
			}
			if diff := cmp.Diff(norm(want), norm(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
