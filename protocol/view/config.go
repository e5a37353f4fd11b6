package view

import "github.com/ahp-go/ahp/protocol"

// Configuration schemas: minItems and maxItems of array properties came
// with the 1.x era; older versions see the properties without them.

// SessionConfigSchema returns a session configuration schema (a
// resolveSessionConfig result's) as the version sees it.
func (v *View) SessionConfigSchema(s protocol.SessionConfigSchema) protocol.SessionConfigSchema {
	if !v.legacy {
		return s
	}
	out, _ := downConfigSchema(s)
	return out
}

// downSessionConfig returns a session's configuration without the 1.x
// members, the same pointer when it has none.
func downSessionConfig(c *protocol.SessionConfigState) *protocol.SessionConfigState {
	if c == nil {
		return nil
	}
	schema, changed := downConfigSchema(c.Schema)
	if !changed {
		return c
	}
	out := *c
	out.Schema = schema
	return &out
}

func downConfigSchema(s protocol.SessionConfigSchema) (protocol.SessionConfigSchema, bool) {
	var props map[string]protocol.SessionConfigPropertySchema
	for name, p := range s.Properties {
		dp, changed := downSessionProperty(p)
		if !changed {
			continue
		}
		if props == nil {
			props = make(map[string]protocol.SessionConfigPropertySchema, len(s.Properties))
			for k, q := range s.Properties {
				props[k] = q
			}
		}
		props[name] = dp
	}
	if props == nil {
		return s, false
	}
	s.Properties = props
	return s, true
}

func downSessionProperty(p protocol.SessionConfigPropertySchema) (protocol.SessionConfigPropertySchema, bool) {
	changed := downNested(&p.MinItems, &p.MaxItems, &p.Items, &p.AdditionalProperties, &p.Properties)
	return p, changed
}

func downPropertyPtr(p *protocol.ConfigPropertySchema) (*protocol.ConfigPropertySchema, bool) {
	if p == nil {
		return nil, false
	}
	dp, changed := downProperty(*p)
	if !changed {
		return p, false
	}
	return &dp, true
}

func downProperty(p protocol.ConfigPropertySchema) (protocol.ConfigPropertySchema, bool) {
	changed := downNested(&p.MinItems, &p.MaxItems, &p.Items, &p.AdditionalProperties, &p.Properties)
	return p, changed
}

// downNested drops the array bounds of a property schema and takes its
// nested schemas down, through pointers to the fields both schema types
// have, and reports whether anything changed.
func downNested(minItems, maxItems **int64, items, additional **protocol.ConfigPropertySchema, props *map[string]protocol.ConfigPropertySchema) bool {
	changed := *minItems != nil || *maxItems != nil
	*minItems, *maxItems = nil, nil
	var c bool
	if *items, c = downPropertyPtr(*items); c {
		changed = true
	}
	if *additional, c = downPropertyPtr(*additional); c {
		changed = true
	}
	if *props, c = downProperties(*props); c {
		changed = true
	}
	return changed
}

func downProperties(m map[string]protocol.ConfigPropertySchema) (map[string]protocol.ConfigPropertySchema, bool) {
	var out map[string]protocol.ConfigPropertySchema
	for name, p := range m {
		dp, changed := downProperty(p)
		if !changed {
			continue
		}
		if out == nil {
			out = make(map[string]protocol.ConfigPropertySchema, len(m))
			for k, q := range m {
				out[k] = q
			}
		}
		out[name] = dp
	}
	if out == nil {
		return m, false
	}
	return out, true
}
