package host

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

// authenticate hands a client's bearer token to the agent that advertised
// the resource in the root state's protectedResources. ahpd has no MCP
// servers or tool calls of its own that challenge for auth, so the agents'
// lists are the only resources it advertises: any other resource is
// refused with InvalidParams.
func (c *conn) authenticate(ctx context.Context, p *protocol.AuthenticateParams, missing *protocol.MissingError) (*protocol.AuthenticateResult, error) {
	if missing != nil {
		// An absent token is not a revocation: that is an empty one.
		return nil, rpcError(protocol.CodeInvalidParams, "authenticate: %v", missing)
	}
	if p.Resource == "" {
		return nil, rpcError(protocol.CodeInvalidParams, "authenticate: resource is required")
	}
	if p.ExpiresIn != nil && *p.ExpiresIn < 1 {
		return nil, rpcError(protocol.CodeInvalidParams, "authenticate: expiresIn must be a positive number of seconds")
	}
	h := c.h
	h.mu.Lock()
	provider := h.resourceProviderLocked(p.Resource)
	clientID := c.clientID
	h.mu.Unlock()
	if provider == "" {
		return nil, rpcError(protocol.CodeInvalidParams, "authenticate: %q is not a protected resource this host advertised", clip(p.Resource, maxLoggedValue))
	}
	auth, ok := h.agents[provider].(agent.Authenticator)
	if !ok {
		return nil, rpcError(protocol.CodeInternalError, "authenticate: agent %s lists %q but takes no tokens", provider, clip(p.Resource, maxLoggedValue))
	}
	req := agent.AuthRequest{Resource: p.Resource, Token: p.Token, Scopes: p.Scopes, ClientID: clientID}
	if p.ExpiresIn != nil {
		req.ExpiresIn = *p.ExpiresIn
	}
	if err := auth.Authenticate(ctx, req); err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) {
			return nil, pe
		}
		// The token stays out of the message and the log.
		h.log.Info("a token was refused", "provider", provider, "resource", clip(p.Resource, maxLoggedValue), "client", clip(clientID, maxLoggedValue), "err", err)
		return nil, rpcError(protocol.CodeAuthRequired, "authenticate: %s refused the token: %v", provider, err)
	}
	// Signing in changes the agent's state.
	h.RefreshAgents()
	return &protocol.AuthenticateResult{}, nil
}

// resourceProviderLocked returns the agent whose root entry lists the
// protected resource, or "".
func (h *Host) resourceProviderLocked(resource string) string {
	for _, a := range h.channels[protocol.RootURI].state.(*protocol.RootState).Agents {
		if slices.ContainsFunc(a.ProtectedResources, func(r protocol.ProtectedResourceMetadata) bool { return r.Resource == resource }) {
			return a.Provider
		}
	}
	return ""
}

// AgentLogin implements WorkspaceHost: the login command of an agent's
// sign-in method (see agent.Loginer).
func (wh workspaceHost) AgentLogin(resource string, timeout time.Duration) (agent.LoginCommand, func(), error) {
	return wh.h.agentLogin(resource, timeout)
}

func (h *Host) agentLogin(resource string, timeout time.Duration) (agent.LoginCommand, func(), error) {
	h.mu.Lock()
	provider := h.resourceProviderLocked(resource)
	h.mu.Unlock()
	if provider == "" {
		return agent.LoginCommand{}, nil, rpcError(protocol.CodeInvalidParams, "%q is not a sign-in method this host advertised", clip(resource, maxLoggedValue))
	}
	l, ok := h.agents[provider].(agent.Loginer)
	if !ok {
		return agent.LoginCommand{}, nil, rpcError(protocol.CodeInvalidParams, "agent %s runs no logins", provider)
	}
	cmd, err := l.LoginCommand(resource)
	if err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) {
			return agent.LoginCommand{}, nil, pe
		}
		return agent.LoginCommand{}, nil, rpcError(protocol.CodeInternalError, "%s: %v", provider, err)
	}
	ended := func() {
		ctx, cancel := context.WithTimeout(h.ctx, timeout)
		defer cancel()
		if err := l.LoginEnded(ctx, resource); err != nil {
			h.log.Warn("checking the agent after its login failed", "provider", provider, "err", err)
		}
		h.RefreshAgents()
	}
	return cmd, ended, nil
}
