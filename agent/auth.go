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

// A Loginer is a Backend with sign-in methods that run a command for the
// user in a terminal (the agent's own login). The host lists them in the
// agent's protectedResources like the key methods; a client starts one by
// creating a terminal for that resource, and the host runs the command
// the backend returns there. When the command exits the host calls
// LoginEnded and publishes the agent's new state.
type Loginer interface {
	// LoginCommand returns the command of the login method the resource
	// names, one the backend's Info lists. A resource that names no login
	// method is refused with a *protocol.Error.
	LoginCommand(resource string) (LoginCommand, error)
	// LoginEnded is called once the login command has exited, whatever
	// its exit status: the backend checks the agent again.
	LoginEnded(ctx context.Context, resource string) error
}

// LoginCommand is a login to run in a terminal.
type LoginCommand struct {
	// Title names the terminal.
	Title string
	// Command and Args are the program and its arguments.
	Command string
	Args    []string
	// Env is the agent's environment, which overrides the host's.
	Env []string
	// Dir is the directory it runs in (absolute).
	Dir string
}
