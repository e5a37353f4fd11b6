package agent

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// Configurable is implemented by a Backend whose sessions take
// configuration: the host answers resolveSessionConfig and
// sessionConfigCompletions from the schema it describes, checks
// createSession's config and each session/configChanged against it, and
// keeps the schema and the values in the session's state.
//
// The session learns of a client's change through Handle (a
// *protocol.SessionConfigChangedAction on the session channel) and
// reports changes the agent made itself by dispatching one.
type Configurable interface {
	// SessionConfigSchema describes the configuration of a new session.
	// It returns nil, with no error, when it knows of none.
	SessionConfigSchema(ctx context.Context, req ConfigRequest) (*protocol.SessionConfigSchema, error)
}

// ConfigRequest is what a schema is asked for.
type ConfigRequest struct {
	// WorkingDirectory is the new session's working directory as a file:
	// URI, or "".
	WorkingDirectory string
	// Values are the values the client chose so far.
	Values map[string]jsontext.Value
	// KnownOnly asks for what the backend already knows, without starting
	// anything to learn more (an agent process, say): the host asks so
	// while creating a session, which must not wait on an agent.
	KnownOnly bool
}
