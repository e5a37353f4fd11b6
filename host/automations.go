package host

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
)

// Automations serve the automation commands (runAutomation,
// fetchAutomationRuns, listAutomationTriggerDefinitions), which they list
// in Methods like a Workspace, and own the ahp-automations:// catalogue
// and the ahp-automation-run: channels, which they open with
// AutomationHost.OpenChannel. Package automation provides them;
// Options.Automations plugs them in. Without them the host answers the
// commands with -32601 and initialize advertises no automations.
type Automations interface {
	// Methods lists the client methods served, made with Handle or
	// HandleStrict, under the same rules as Workspace.Methods.
	Methods() []Method
	// Capabilities is what initialize advertises.
	Capabilities() *protocol.AutomationCapabilities
	// Close stops the scheduler and waits for the automations' own
	// goroutines. The host calls it first while shutting down.
	Close() error
}

// AutomationHost is what Automations may ask of their host: channels of
// their own and what they publish on them, and sessions made for runs.
// Its methods take the host's lock: they must not be called from the
// callbacks the host makes with it held (ChannelOwner,
// SessionStart.TurnEnded).
type AutomationHost interface {
	OpenChannel(uri string, state protocol.SnapshotState, owner ChannelOwner) error
	CloseChannel(uri string)
	Publish(uri string, a protocol.StateAction) error
	// StartSession creates a session as createSession does, with no
	// client behind it, and starts its default chat's first turn with
	// r.Message, as a client's first message would. It returns once the
	// session is saved; the turn's end is reported to r.TurnEnded.
	StartSession(ctx context.Context, r *SessionStart) error
}

// automationHost is the AutomationHost of a Host.
type automationHost struct{ workspaceHost }

func (ah automationHost) StartSession(ctx context.Context, r *SessionStart) error {
	return ah.h.startSession(ctx, r)
}

// SessionStart is a session the host creates on behalf of the host's own
// machinery (an automation run), with the first message of its default
// chat.
type SessionStart struct {
	// Session is the new session's URI.
	Session            string
	Provider           *string
	WorkingDirectories []string
	Config             map[string]jsontext.Value
	// Origin is recorded as SessionState.origin.
	Origin protocol.SessionOrigin
	// Message starts the default chat's first turn.
	Message protocol.Message
	// TurnEnded is called once that turn ends, or the agent fails to
	// start, with nil when the turn completed and the reason otherwise.
	// It is called with the host locked: it must not block and must not
	// call Host methods.
	TurnEnded func(err error)
}

// sessionOriginKey carries a SessionStart's origin to createSession.
type sessionOriginKey struct{}

// turnWatch follows the first turn of a session made by StartSession.
type turnWatch struct {
	session string
	turn    string
	ended   func(error)
}

// startSession serves AutomationHost.StartSession.
func (h *Host) startSession(ctx context.Context, r *SessionStart) error {
	c := &conn{h: h, view: view.Current, subs: map[string]*subscription{}, known: map[string]bool{}, ended: make(chan struct{})}
	p := &protocol.CreateSessionParams{
		Channel:            r.Session,
		Provider:           r.Provider,
		WorkingDirectories: r.WorkingDirectories,
		Config:             maps.Clone(r.Config),
	}
	if r.Origin != nil {
		ctx = context.WithValue(ctx, sessionOriginKey{}, r.Origin)
	}
	if _, err := c.createSession(ctx, p); err != nil {
		return err
	}
	return h.locked(ctx, func(rd *storeReads) (change, error) {
		return h.firstMessageLocked(rd, r)
	})
}

// firstMessageLocked is the step that starts an automation run's first
// turn: it checks the new session and the message, and its change starts
// the turn.
func (h *Host) firstMessageLocked(rd *storeReads, r *SessionStart) (change, error) {
	if h.closed {
		return nil, errHostShutdown
	}
	s, ok := h.sessions[r.Session]
	if !ok || len(s.chatURIs) == 0 {
		return nil, fmt.Errorf("host: session %s went away before its first message", r.Session)
	}
	// The agent may have failed to open already, before any watch: its
	// failure is held for a first subscriber, or applied.
	if f, ok := s.heldLifecycle.(*protocol.SessionCreationFailedAction); ok {
		return nil, fmt.Errorf("the agent failed to start: %s", f.Error.Message)
	}
	if st, ok := h.channels[s.uri].state.(*protocol.SessionState); ok && st.CreationError != nil {
		return nil, fmt.Errorf("the agent failed to start: %s", st.CreationError.Message)
	}
	ch := s.chats[s.chatURIs[0]]
	if ch == nil {
		return nil, fmt.Errorf("host: session %s has no default chat", r.Session)
	}
	if chat := ch.state.(*protocol.ChatState); chat.ActiveTurn != nil {
		return nil, fmt.Errorf("host: session %s already has a turn running", r.Session)
	}
	msg := r.Message
	if err := h.checkAttachmentsLocked(rd, &msg); err != nil {
		var miss *storeMiss
		if errors.As(err, &miss) {
			return nil, err
		}
		return nil, fmt.Errorf("host: the first message: %w", err)
	}
	return func() error {
		turn := h.opts.NewID()
		if r.TurnEnded != nil {
			if h.turnWatches == nil {
				h.turnWatches = map[string]*turnWatch{}
			}
			h.turnWatches[ch.uri] = &turnWatch{session: s.uri, turn: turn, ended: r.TurnEnded}
		}
		h.pinAttachmentsLocked(&msg)
		h.commitLocked(ch, &protocol.ChatTurnStartedAction{TurnID: turn, StartedAt: h.now(), Message: msg}, nil)
		return nil
	}, nil
}

// turnEndedLocked reports the end of a watched turn.
func (h *Host) turnEndedLocked(ch *channel, a protocol.StateAction) {
	w := h.turnWatches[ch.uri]
	if w == nil {
		return
	}
	var id string
	var err error
	switch a := a.(type) {
	case *protocol.ChatTurnCompleteAction:
		id = a.TurnID
	case *protocol.ChatErrorAction:
		id = a.TurnID
		msg := "the turn ended with an error"
		if a.Part != nil && a.Part.Error.Message != "" {
			msg = a.Part.Error.Message
		} else if a.Error != nil && a.Error.Message != "" {
			msg = a.Error.Message
		}
		err = errors.New(msg)
	case *protocol.ChatTurnCancelledAction:
		id = a.TurnID
		err = errors.New("the turn was cancelled")
	default:
		return
	}
	if id != w.turn {
		return
	}
	delete(h.turnWatches, ch.uri)
	w.ended(err)
}

// sessionGoneLocked reports the end of every watched turn of a session
// whose agent failed to start or which was disposed.
func (h *Host) sessionGoneLocked(session string, why error) {
	for chat, w := range h.turnWatches {
		if w.session == session {
			delete(h.turnWatches, chat)
			w.ended(why)
		}
	}
}

// automationCapabilities returns what initialize advertises, nil when the
// host has no automations.
func (h *Host) automationCapabilities() *protocol.AutomationCapabilities {
	if h.auto == nil {
		return nil
	}
	return h.auto.Capabilities()
}
