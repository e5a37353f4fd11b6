// Package agent defines how the host talks to the agents that do the work.
//
// A Backend is one agent provider (the built-in echo agent, or an ACP agent
// process). For every AHP session on that provider the host opens a
// Session. The host tells the session what happened on its channels through
// Handle, and the session answers by dispatching server actions through the
// Host it was given: response parts, deltas, tool calls, turn completion.
//
// Every action a session dispatches goes through the same path as client
// actions: it is reduced, sequenced and fanned out to every subscriber.
package agent

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// Backend is an agent provider.
type Backend interface {
	// Info describes the agent, as listed in the root state's agents.
	Info() protocol.AgentInfo
	// Open starts the agent side of a new session. The session must not
	// dispatch actions before Open returns. Open should not take long: a
	// session is "creating" until it returns and "ready" after.
	Open(ctx context.Context, req OpenRequest, host Host) (Session, error)
	// Close releases what the backend holds (processes, connections).
	Close() error
}

// OpenRequest describes the session being opened.
type OpenRequest struct {
	// Session is the session URI.
	Session string
	// Chat is the URI of the session's default chat.
	Chat string
	// WorkingDirectory is the session's working directory as a file: URI,
	// or "" when none was given.
	WorkingDirectory string
	// Params are the createSession parameters as the client sent them.
	Params *protocol.CreateSessionParams
	// Config holds the session's configuration values (SessionState's
	// config), as the host resolved them from the agent's schema, or as
	// they were when the host stopped; nil when it has none. The agent
	// applies them when it opens the session.
	Config map[string]jsontext.Value
	// Resume holds what the session passed to Host.Remember before the
	// host restarted; nil for a new session. An agent uses it to pick up
	// its own conversation again (an ACP session id, say).
	Resume map[string]string
}

// Host is what a session uses to act on its channels. Its methods are safe
// for concurrent use and never block on the network.
type Host interface {
	// Dispatch applies a server action to a channel of the session (the
	// session URI or one of its chats). It returns an error when the
	// channel is gone or the host is shutting down.
	Dispatch(channel string, action protocol.StateAction) error
	// ChatState returns the current state of one of the session's chats,
	// or nil when it does not exist. The value must not be modified.
	ChatState(chat string) *protocol.ChatState
	// Remember keeps a small value with the session, saved with it and
	// handed back in OpenRequest.Resume when the session is opened again
	// after a host restart. An empty value forgets the key. Clients can
	// see these values in the session summary's _meta, so they must not
	// be secrets. A value kept under a chat's URI moves with the chat when
	// it moves to another session (and is handed to that session's agent
	// in OpenRequest.Resume when the move creates the session).
	Remember(key, value string)
}

// Event is something that happened on one of a session's channels that the
// agent may need to act on: an action a client dispatched and the host
// accepted, a chat created on the session, or a chat moved in or out of it
// (moveChat: session/chatRemoved on the session it left, session/chatAdded
// with Chat set on the one it joined; a chat never moves while a turn
// runs in it).
type Event struct {
	// Channel is the channel the action was applied to.
	Channel string
	// Action is the accepted action.
	Action protocol.StateAction
	// Origin is the dispatching client; nil for host-originated actions.
	Origin *protocol.ActionOrigin
	// Chat is the chat state after the action when Channel is a chat.
	Chat *protocol.ChatState
	// Steering is, for a chat/turnStarted, the steering message that was
	// waiting when the turn started. The host has consumed it (removed it
	// from the chat); the agent takes it into the turn's context.
	Steering *protocol.Message
	// Resume is, for a chat moved into the session (session/chatAdded),
	// what the agent of its former session remembered under the chat's
	// URI (Host.Remember): an agent picks up the chat's conversation from
	// it, as from OpenRequest.Resume after a restart. The host keeps it
	// with this session from now on.
	Resume map[string]string
	// Transcripts are, for a chat/turnStarted, the transcripts of the
	// message's chat attachments, in the order of the attachments, as the
	// host resolved them when it accepted the message. The agent takes
	// them into the turn's context (TranscriptText renders one).
	Transcripts []Transcript
}

// Transcript is the resolved content of a chat attachment: the referenced
// chat's completed turns from its first retained one through the pinned
// end turn. Chat attachments inside those turns stay references.
type Transcript struct {
	Attachment *protocol.MessageChatAttachment
	Turns      []protocol.Turn
}

// Session is the agent side of one AHP session.
type Session interface {
	// Handle is called once for each event, in sequence order, on a
	// goroutine owned by the host for this session. It must return quickly:
	// long work (running a turn) belongs on the session's own goroutines.
	Handle(ev Event)
	// Close ends the session: running turns stop and resources are freed.
	// The host does not dispatch on the session's behalf after Close.
	Close() error
}
