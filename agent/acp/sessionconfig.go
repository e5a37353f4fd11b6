package acp

import (
	"context"
	"errors"
	"fmt"
	"maps"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/sessionconfig"
	"github.com/ahp-go/ahp/protocol"
)

// Session configuration. What an ACP agent lets a client choose for a
// session (its session config options, and the older session modes and
// models) becomes the AHP session's configuration schema, one property
// each:
//
//   - a select config option: a string property of its values, a boolean
//     one a boolean property, named by the option's id;
//   - the session modes: "mode", unless a config option already is the mode
//     (its category, or its id), since ACP asks clients to prefer config
//     options;
//   - the models: "model", on the same terms.
//
// Every property may change during the session. A client's change
// (session/configChanged) goes to every ACP session of the AHP session
// through session/set_config_option, session/set_mode or
// session/set_model; the agent's own changes (current_mode_update,
// config_option_update, the options a set_config_option answers) come
// back as session/configChanged from the default chat's ACP session.
//
// The schema a new session is resolved against is the one the agent
// reported when probed (Backend.Probe): ACP has no way to ask for a
// session's options without opening one, and the agent's real session
// only exists once the AHP session does.

// Property names of the session modes and models.
const (
	modeProperty  = "mode"
	modelProperty = "model"
)

// propKind is how an AHP configuration property is set on the agent.
type propKind int

const (
	propMode   propKind = iota // session/set_mode
	propModel                  // session/set_model
	propSelect                 // session/set_config_option with a value id
	propBool                   // session/set_config_option with a boolean
)

type configProp struct {
	kind propKind
	id   acpsdk.SessionConfigId // the config option's id
}

// acpConfig is what one ACP session reports about its configuration, as
// AHP configuration.
type acpConfig struct {
	schema protocol.SessionConfigSchema
	props  map[string]configProp
	values map[string]jsontext.Value // the current values
}

// buildConfig describes an ACP session's modes, models and config options
// as AHP configuration.
func buildConfig(modes *acpsdk.SessionModeState, models *acpsdk.SessionModelState, options []acpsdk.SessionConfigOption) acpConfig {
	cfg := acpConfig{
		schema: protocol.SessionConfigSchema{Properties: map[string]protocol.SessionConfigPropertySchema{}},
		props:  map[string]configProp{},
		values: map[string]jsontext.Value{},
	}
	hasMode, hasModel := false, false
	for _, o := range options {
		switch {
		case o.Select != nil:
			s := o.Select
			name := string(s.Id)
			if name == "" {
				continue
			}
			prop := protocol.SessionConfigPropertySchema{
				Type:           protocol.SessionConfigPropertySchemaTypeString,
				Title:          s.Name,
				Description:    s.Description,
				SessionMutable: protocol.Ptr(true),
			}
			for _, opt := range selectOptions(s.Options) {
				prop.Enum = append(prop.Enum, protocol.JSONPrimitive(sessionconfig.Value(string(opt.Value))))
				prop.EnumLabels = append(prop.EnumLabels, opt.Name)
				prop.EnumDescriptions = append(prop.EnumDescriptions, deref(opt.Description))
			}
			trimDescriptions(&prop)
			cur := sessionconfig.Value(string(s.CurrentValue))
			prop.Default = cur
			cfg.add(name, prop, configProp{kind: propSelect, id: s.Id}, cur)
			hasMode = hasMode || name == modeProperty || s.Category != nil && *s.Category == acpsdk.SessionConfigOptionCategoryMode
			hasModel = hasModel || name == modelProperty || s.Category != nil && *s.Category == acpsdk.SessionConfigOptionCategoryModel
		case o.Boolean != nil:
			b := o.Boolean
			name := string(b.Id)
			if name == "" {
				continue
			}
			cur := sessionconfig.Value(b.CurrentValue)
			prop := protocol.SessionConfigPropertySchema{
				Type:           protocol.SessionConfigPropertySchemaTypeBoolean,
				Title:          b.Name,
				Description:    b.Description,
				Default:        cur,
				SessionMutable: protocol.Ptr(true),
			}
			cfg.add(name, prop, configProp{kind: propBool, id: b.Id}, cur)
			hasMode = hasMode || name == modeProperty
			hasModel = hasModel || name == modelProperty
		}
	}
	if modes != nil && len(modes.AvailableModes) > 0 && !hasMode {
		choices := make([]choice, len(modes.AvailableModes))
		for i, m := range modes.AvailableModes {
			choices[i] = choice{string(m.Id), m.Name, m.Description}
		}
		prop, cur := choiceProperty("Mode", "How the agent works in this session", choices, string(modes.CurrentModeId))
		cfg.add(modeProperty, prop, configProp{kind: propMode}, cur)
	}
	if models != nil && len(models.AvailableModels) > 0 && !hasModel {
		choices := make([]choice, len(models.AvailableModels))
		for i, m := range models.AvailableModels {
			choices[i] = choice{string(m.ModelId), m.Name, m.Description}
		}
		prop, cur := choiceProperty("Model", "The model the agent uses", choices, string(models.CurrentModelId))
		cfg.add(modelProperty, prop, configProp{kind: propModel}, cur)
	}
	return cfg
}

func (c *acpConfig) add(name string, prop protocol.SessionConfigPropertySchema, p configProp, cur jsontext.Value) {
	if _, dup := c.props[name]; dup {
		return // the agent's first option of that id wins
	}
	c.schema.Properties[name] = prop
	c.props[name] = p
	c.values[name] = cur
}

// selectOptions flattens a select's options, grouped or not.
// modelOption returns the select config option that chooses the model
// (its category is "model"), or nil. Agents such as Claude Code offer
// their models only this way.
func modelOption(options []acpsdk.SessionConfigOption) *acpsdk.SessionConfigOptionSelect {
	for _, o := range options {
		if s := o.Select; s != nil && s.Category != nil && *s.Category == acpsdk.SessionConfigOptionCategoryModel {
			return s
		}
	}
	return nil
}

// optionModels lists the values of a model config option as models.
func optionModels(o *acpsdk.SessionConfigOptionSelect) []acpsdk.ModelInfo {
	var out []acpsdk.ModelInfo
	for _, v := range selectOptions(o.Options) {
		out = append(out, acpsdk.ModelInfo{ModelId: acpsdk.ModelId(v.Value), Name: v.Name, Description: v.Description})
	}
	return out
}

func selectOptions(o acpsdk.SessionConfigSelectOptions) []acpsdk.SessionConfigSelectOption {
	switch {
	case o.Ungrouped != nil:
		return *o.Ungrouped
	case o.Grouped != nil:
		var out []acpsdk.SessionConfigSelectOption
		for _, g := range *o.Grouped {
			out = append(out, g.Options...)
		}
		return out
	}
	return nil
}

// trimDescriptions drops the parallel descriptions when none says
// anything.
// choice is one of the values a mode or model property offers.
type choice struct {
	id, name    string
	description *string
}

// choiceProperty is a string property whose values are choices, with
// current as its default; it returns the property and that default.
func choiceProperty(title, description string, choices []choice, current string) (protocol.SessionConfigPropertySchema, jsontext.Value) {
	prop := protocol.SessionConfigPropertySchema{
		Type:           protocol.SessionConfigPropertySchemaTypeString,
		Title:          title,
		Description:    protocol.Ptr(description),
		SessionMutable: protocol.Ptr(true),
	}
	for _, c := range choices {
		prop.Enum = append(prop.Enum, protocol.JSONPrimitive(sessionconfig.Value(c.id)))
		prop.EnumLabels = append(prop.EnumLabels, c.name)
		prop.EnumDescriptions = append(prop.EnumDescriptions, deref(c.description))
	}
	trimDescriptions(&prop)
	cur := sessionconfig.Value(current)
	prop.Default = cur
	return prop, cur
}

func trimDescriptions(p *protocol.SessionConfigPropertySchema) {
	for _, d := range p.EnumDescriptions {
		if d != "" {
			return
		}
	}
	p.EnumDescriptions = nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// awaitProbe waits for done to close, then returns what the last probe
// found; it gives up when ctx ends.
func (b *Backend) awaitProbe(ctx context.Context, done <-chan struct{}) (*probeResult, error) {
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.probed, nil
}

// SessionConfigSchema implements agent.Configurable with what the agent
// reported when probed. When it has not been probed yet, it probes it
// (once, whoever asks) or waits for the probe in progress; with
// req.KnownOnly it does neither, so that creating a session never waits on
// an agent that is slow to start.
func (b *Backend) SessionConfigSchema(ctx context.Context, req agent.ConfigRequest) (*protocol.SessionConfigSchema, error) {
	b.mu.Lock()
	res, probing := b.probed, b.probing
	b.mu.Unlock()
	switch {
	case probing != nil && req.KnownOnly:
		// What an earlier probe found, if any, is what is known.
	case probing != nil:
		var err error
		if res, err = b.awaitProbe(ctx, probing); err != nil {
			return nil, err
		}
	}
	if res == nil {
		if req.KnownOnly {
			return nil, nil
		}
		// The probe outlives a request that gives up on it (bounded by the
		// start timeout): its result is the agent's, not the request's.
		done := make(chan struct{})
		go func() {
			defer close(done)
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.opts.StartTimeout)
			defer cancel()
			b.Probe(pctx)
		}()
		var err error
		if res, err = b.awaitProbe(ctx, done); err != nil {
			return nil, err
		}
		if res == nil {
			return nil, ctx.Err()
		}
	}
	if res.err != nil {
		return nil, fmt.Errorf("the agent could not be started to learn its configuration: %w", res.err)
	}
	if res.sessionErr != "" {
		// The agent started but opened no session (it wants to be signed
		// in, say): nothing is known of its configuration.
		return nil, nil
	}
	cfg := buildConfig(res.modes, res.models, res.options)
	return &cfg.schema, nil
}

// The bridge's side: each chat knows its ACP session's configuration
// (chat.config), the session holds the values AHP has (session.config),
// and applyConfig brings every ACP session to them.

// configChanged takes a client's change of the session's configuration
// and applies it to the agent in the background.
func (s *session) configChanged(a *protocol.SessionConfigChangedAction) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.config = sessionconfig.Merge(s.config, a.Config, a.Replace != nil && *a.Replace)
	if s.cfgQueued {
		return // the queued run reads the values when it starts
	}
	s.cfgQueued = true
	s.wg.Go(func() {
		s.mu.Lock()
		s.cfgQueued = false
		p := s.proc
		var chats []*chat
		for _, c := range s.chats {
			if p != nil && c.acpID != "" && c.gen == p.gen && !c.loading {
				chats = append(chats, c)
			}
		}
		s.mu.Unlock()
		for _, c := range chats {
			s.applyConfig(c, p)
		}
	})
}

// applyConfig sets each value of the session's configuration that the
// chat's ACP session has differently. A value the agent refuses is put
// back, for every client, to the one the agent has. Calls are serialized:
// the last to run reads the latest values.
func (s *session) applyConfig(c *chat, p *process) {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	type change struct {
		name string
		prop configProp
		v    jsontext.Value
	}
	s.mu.Lock()
	id := c.acpID
	var changes []change
	for name, v := range s.config {
		prop, ok := c.config.props[name]
		if !ok || sessionconfig.Equal(c.config.values[name], v) {
			continue
		}
		changes = append(changes, change{name, prop, v})
	}
	s.mu.Unlock()
	for _, ch := range changes {
		options, err := s.setConfig(p, id, ch.prop, ch.v)
		s.mu.Lock()
		if err != nil {
			s.log.Warn("the agent refused a configuration change", "property", ch.name, "value", string(ch.v), "err", errorText(err))
			if c.uri == s.defaultChat {
				if cur, ok := c.config.values[ch.name]; ok {
					s.reportConfigLocked(map[string]jsontext.Value{ch.name: cur})
				}
			}
			s.mu.Unlock()
			continue
		}
		switch ch.prop.kind {
		case propMode:
			c.mode = acpString(ch.v)
		case propModel:
			c.model = acpString(ch.v)
		}
		c.config.values[ch.name] = ch.v
		if options != nil {
			s.optionsChangedLocked(c, options)
		}
		s.mu.Unlock()
	}
}

// setConfig makes one change on the agent. It returns the config options
// the agent answered session/set_config_option with.
func (s *session) setConfig(p *process, id acpsdk.SessionId, prop configProp, v jsontext.Value) ([]acpsdk.SessionConfigOption, error) {
	ctx := s.ctx
	switch prop.kind {
	case propMode:
		_, err := p.conn.SetSessionMode(ctx, acpsdk.SetSessionModeRequest{SessionId: id, ModeId: acpsdk.SessionModeId(acpString(v))})
		return nil, err
	case propModel:
		_, err := p.conn.UnstableSetSessionModel(ctx, acpsdk.UnstableSetSessionModelRequest{SessionId: id, ModelId: acpsdk.UnstableModelId(acpString(v))})
		return nil, err
	case propSelect:
		res, err := p.conn.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{ValueId: &acpsdk.SetSessionConfigOptionValueId{
			SessionId: id, ConfigId: prop.id, Value: acpsdk.SessionConfigValueId(acpString(v))}})
		return res.ConfigOptions, err
	case propBool:
		on := v.Kind() == 't'
		res, err := p.conn.SetSessionConfigOption(ctx, acpsdk.SetSessionConfigOptionRequest{Boolean: &acpsdk.SetSessionConfigOptionBoolean{
			SessionId: id, ConfigId: prop.id, Type: "boolean", Value: on}})
		return res.ConfigOptions, err
	}
	return nil, errors.New("unknown kind of configuration property")
}

// acpString returns the string a JSON string value holds.
func acpString(v jsontext.Value) string {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return string(v)
	}
	return s
}

// optionsChangedLocked takes the config options a chat's ACP session now
// has (config_option_update, or a set_config_option answer); the default
// chat's changed values become the session's.
func (s *session) optionsChangedLocked(c *chat, options []acpsdk.SessionConfigOption) {
	c.options = options
	prev := c.config.values
	c.config = buildConfig(c.modeState(), c.modelState(), options)
	// The values the modes and models had stay as they were set.
	for name, prop := range c.config.props {
		if prop.kind == propMode || prop.kind == propModel {
			if v, ok := prev[name]; ok {
				c.config.values[name] = v
			}
		}
	}
	if c.uri == s.defaultChat {
		s.reportConfigLocked(c.config.values)
	}
}

// modeChangedLocked takes a current_mode_update.
func (s *session) modeChangedLocked(c *chat, mode string) {
	c.mode = mode
	s.choiceChangedLocked(c, modeProperty, propMode, mode)
}

// choiceChangedLocked records the value the agent now has for the chat's
// mode or model property, when the configuration has it as that kind, and
// reports it when the chat is the default one.
func (s *session) choiceChangedLocked(c *chat, name string, kind propKind, value string) {
	if prop, ok := c.config.props[name]; !ok || prop.kind != kind {
		return
	}
	v := sessionconfig.Value(value)
	c.config.values[name] = v
	if c.uri == s.defaultChat {
		s.reportConfigLocked(map[string]jsontext.Value{name: v})
	}
}

// reportConfigLocked makes the values AHP has of the session's
// configuration properties the agent's: those that differ go to every
// client as one session/configChanged, once Open has returned. Only the
// properties the session's configuration has are reported.
func (s *session) reportConfigLocked(values map[string]jsontext.Value) {
	if s.config == nil {
		return
	}
	changed := map[string]jsontext.Value{}
	for name, v := range values {
		if old, ok := s.config[name]; ok && !sessionconfig.Equal(old, v) {
			changed[name] = v
		}
	}
	if len(changed) == 0 {
		return
	}
	maps.Copy(s.config, changed)
	if s.cfgReport == nil {
		s.cfgReport = map[string]jsontext.Value{}
	}
	maps.Copy(s.cfgReport, changed)
	s.flushSessionLocked()
}

// modelChangedLocked records a model the chat's ACP session was switched
// to.
func (s *session) modelChangedLocked(c *chat, model string) {
	c.model = model
	s.choiceChangedLocked(c, modelProperty, propModel, model)
}

// modeState and modelState are the chat's modes and models as ACP states
// them, nil when the agent has none.
func (c *chat) modeState() *acpsdk.SessionModeState {
	if len(c.modes) == 0 {
		return nil
	}
	return &acpsdk.SessionModeState{CurrentModeId: acpsdk.SessionModeId(c.mode), AvailableModes: c.modes}
}

func (c *chat) modelState() *acpsdk.SessionModelState {
	if len(c.models) == 0 {
		return nil
	}
	return &acpsdk.SessionModelState{CurrentModelId: acpsdk.ModelId(c.model), AvailableModels: c.models}
}
