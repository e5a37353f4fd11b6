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

// Automations serves the automation commands (runAutomation,
// fetchAutomationRuns, listAutomationTriggerDefinitions) and owns the
// ahp-automations:// catalogue and the ahp-automation-run: channels, which
// it opens with OpenChannel. Package automation provides one;
// Options.Automations plugs it in. Without one the host answers the
// commands with -32601 and initialize advertises no automations.
//
// The host calls its methods on the connection's goroutine, without its
// lock.
type Automations interface {
	// Capabilities is what initialize advertises.
	Capabilities() *protocol.AutomationCapabilities
	ListTriggerDefinitions(ctx context.Context, c Client, p *protocol.ListAutomationTriggerDefinitionsParams) (*protocol.ListAutomationTriggerDefinitionsResult, error)
	Run(ctx context.Context, c Client, p *protocol.RunAutomationParams) (*protocol.RunAutomationResult, error)
	FetchRuns(ctx context.Context, c Client, p *protocol.FetchAutomationRunsParams) error
	// Close stops the scheduler and waits for the automations' own
	// goroutines. The host calls it first while shutting down.
	Close() error
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

// StartSession creates a session as createSession does, with no client
// behind it, and starts its default chat's first turn with r.Message, as a
// client's first message would. It returns once the session is saved; the
// turn's end is reported to r.TurnEnded.
func (h *Host) StartSession(ctx context.Context, r *SessionStart) error {
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
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHostShutdown
	}
	s, ok := h.sessions[r.Session]
	if !ok || len(s.chatURIs) == 0 {
		return fmt.Errorf("host: session %s went away before its first message", r.Session)
	}
	// The agent may have failed to open already, before any watch: its
	// failure is held for a first subscriber, or applied.
	if f, ok := s.heldLifecycle.(*protocol.SessionCreationFailedAction); ok {
		return fmt.Errorf("the agent failed to start: %s", f.Error.Message)
	}
	if st, ok := h.channels[s.uri].state.(*protocol.SessionState); ok && st.CreationError != nil {
		return fmt.Errorf("the agent failed to start: %s", st.CreationError.Message)
	}
	ch := s.chats[s.chatURIs[0]]
	if ch == nil {
		return fmt.Errorf("host: session %s has no default chat", r.Session)
	}
	if chat := ch.state.(*protocol.ChatState); chat.ActiveTurn != nil {
		return fmt.Errorf("host: session %s already has a turn running", r.Session)
	}
	msg := r.Message
	if reason := h.checkAttachmentsLocked(&msg); reason != "" {
		return fmt.Errorf("host: the first message: %s", reason)
	}
	if miss := h.takeMiss(); miss != nil {
		// Attachments that need the store are not part of automation
		// messages; refuse rather than read under the lock.
		return errors.New("host: the first message refers to content that is not in memory")
	}
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

// hasAutomations reports whether the host serves automations.
func hasAutomations(h *Host) bool { return h.auto != nil }

func (c *conn) client() Client {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	return clientLocked(c)
}

func (c *conn) automations(method string) (Automations, error) {
	if c.h.auto == nil {
		return nil, rpcError(protocol.CodeMethodNotFound, "%s is not supported by this host", method)
	}
	return c.h.auto, nil
}

func (c *conn) listAutomationTriggerDefinitions(ctx context.Context, p *protocol.ListAutomationTriggerDefinitionsParams) (*protocol.ListAutomationTriggerDefinitionsResult, error) {
	a, err := c.automations("listAutomationTriggerDefinitions")
	if err != nil {
		return nil, err
	}
	return a.ListTriggerDefinitions(ctx, c.client(), p)
}

func (c *conn) runAutomation(ctx context.Context, p *protocol.RunAutomationParams) (*protocol.RunAutomationResult, error) {
	a, err := c.automations("runAutomation")
	if err != nil {
		return nil, err
	}
	return a.Run(ctx, c.client(), p)
}

func (c *conn) fetchAutomationRuns(ctx context.Context, p *protocol.FetchAutomationRunsParams) (*protocol.FetchAutomationRunsResult, error) {
	a, err := c.automations("fetchAutomationRuns")
	if err != nil {
		return nil, err
	}
	if err := a.FetchRuns(ctx, c.client(), p); err != nil {
		return nil, err
	}
	return &protocol.FetchAutomationRunsResult{}, nil
}
