package agent

import "context"

// An Authenticator is a Backend that takes bearer tokens for the OAuth
// protected resources its Info lists in protectedResources. The host
// accepts a client's authenticate only for a resource some backend lists,
// and hands the token to that backend, which keeps it for whatever needs
// it (its sessions, the agent process).
type Authenticator interface {
	// Authenticate delivers a token for req.Resource, one of the
	// resources Info lists. An empty token revokes the one given before.
	// A token the backend finds invalid is refused with an error; a
	// *protocol.Error reaches the client as it is, any other error as
	// AuthRequired.
	Authenticate(ctx context.Context, req AuthRequest) error
}

// AuthRequest is one token pushed by a client.
type AuthRequest struct {
	// Resource is the protected resource identifier.
	Resource string
	// Token is the bearer token, or "" to revoke.
	Token string
	// ExpiresIn is the token's remaining lifetime in seconds when the
	// client sent it, or 0 when unknown.
	ExpiresIn int64
	// Scopes are the OAuth scopes the token grants, when the client knows.
	Scopes []string
	// ClientID is the client that pushed the token.
	ClientID string
}
