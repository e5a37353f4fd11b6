package host

import (
	"context"
	"errors"
	"maps"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/sessionconfig"
	"github.com/ahp-go/ahp/protocol"
)

// Session configuration: the agent describes it (agent.Configurable), the
// host resolves values against that schema, keeps schema and values in
// SessionState.config, and checks every client change
// (sessionconfig.CheckChange) before the agent hears of it.

// backendFor returns the agent of a provider id, or the host's first agent
// for an empty one.
func (h *Host) backendFor(method string, provider *string) (agent.Backend, error) {
	if provider != nil && *provider != "" {
		if b := h.agents[*provider]; b != nil {
			return b, nil
		}
		return nil, rpcError(protocol.CodeProviderNotFound, "%s: no agent provider %q", method, *provider)
	}
	if len(h.opts.Agents) > 0 {
		return h.opts.Agents[0], nil
	}
	return nil, rpcError(protocol.CodeProviderNotFound, "%s: the host has no agents", method)
}

// configSchema returns the configuration schema of a new session of the
// backend: empty for a backend that takes none.
func configSchema(ctx context.Context, method string, b agent.Backend, req agent.ConfigRequest) (*protocol.SessionConfigSchema, error) {
	empty := &protocol.SessionConfigSchema{Properties: map[string]protocol.SessionConfigPropertySchema{}}
	c, ok := b.(agent.Configurable)
	if !ok {
		return empty, nil
	}
	schema, err := c.SessionConfigSchema(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, rpcError(protocol.CodeInternalError, "%s: the agent could not describe its configuration: %v", method, err)
	}
	if schema == nil {
		return empty, nil
	}
	if schema.Properties == nil {
		schema.Properties = map[string]protocol.SessionConfigPropertySchema{}
	}
	return schema, nil
}

func firstDir(dir *string) string {
	if dir == nil {
		return ""
	}
	return *dir
}

func (c *conn) resolveSessionConfig(ctx context.Context, p *protocol.ResolveSessionConfigParams) (*protocol.ResolveSessionConfigResult, error) {
	b, err := c.h.backendFor("resolveSessionConfig", p.Provider)
	if err != nil {
		return nil, err
	}
	schema, err := configSchema(ctx, "resolveSessionConfig", b, agent.ConfigRequest{WorkingDirectory: firstDir(p.WorkingDirectory), Values: p.Config})
	if err != nil {
		return nil, err
	}
	return &protocol.ResolveSessionConfigResult{Schema: c.viewLocked().SessionConfigSchema(*schema), Values: sessionconfig.Resolve(schema, vscodeConfig(schema, p.Config))}, nil
}

func (c *conn) sessionConfigCompletions(ctx context.Context, p *protocol.SessionConfigCompletionsParams) (*protocol.SessionConfigCompletionsResult, error) {
	if p.Property == "" {
		return nil, rpcError(protocol.CodeInvalidParams, "sessionConfigCompletions: property is required")
	}
	b, err := c.h.backendFor("sessionConfigCompletions", p.Provider)
	if err != nil {
		return nil, err
	}
	schema, err := configSchema(ctx, "sessionConfigCompletions", b, agent.ConfigRequest{WorkingDirectory: firstDir(p.WorkingDirectory), Values: p.Config})
	if err != nil {
		return nil, err
	}
	query := ""
	if p.Query != nil {
		query = *p.Query
	}
	items, err := sessionconfig.Complete(schema, p.Property, query)
	if errors.Is(err, sessionconfig.ErrNoProperty) {
		return nil, rpcError(protocol.CodeInvalidParams, "sessionConfigCompletions: %v", err)
	}
	if err != nil {
		return nil, err
	}
	return &protocol.SessionConfigCompletionsResult{Items: items}, nil
}

// newSessionConfig returns the configuration a new session starts with:
// the agent's schema with the values resolved from what the client chose,
// or nil when the agent describes none and the client chose nothing. A
// client's values for an agent without a schema are kept with an empty
// one, as they were given. Creating a session never starts an agent to
// learn its schema (ConfigRequest.KnownOnly): one that cannot say is
// created without.
func (h *Host) newSessionConfig(ctx context.Context, b agent.Backend, dirs []string, given map[string]jsontext.Value) (*protocol.SessionConfigState, error) {
	req := agent.ConfigRequest{Values: given, KnownOnly: true}
	if len(dirs) > 0 {
		req.WorkingDirectory = dirs[0]
	}
	schema, err := configSchema(ctx, "createSession", b, req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		h.log.Warn("creating a session without its configuration schema", "provider", b.Info().Provider, "err", err)
		schema = &protocol.SessionConfigSchema{Properties: map[string]protocol.SessionConfigPropertySchema{}}
	}
	given = vscodeConfig(schema, given)
	if err := sessionconfig.Check(schema, given); err != nil {
		return nil, rpcError(protocol.CodeInvalidParams, "createSession: %v", err)
	}
	if len(schema.Properties) == 0 {
		if len(given) == 0 {
			return nil, nil
		}
		return &protocol.SessionConfigState{Schema: *schema, Values: maps.Clone(given)}, nil
	}
	return &protocol.SessionConfigState{Schema: *schema, Values: sessionconfig.Resolve(schema, given)}, nil
}
