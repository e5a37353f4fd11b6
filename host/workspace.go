package host

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

// A Workspace serves what a host delegates: the client commands the host
// does not handle itself (files, terminals, watches, changesets) and the
// channels it owns. Package workspace provides one; Options.Workspace
// plugs it in.
//
// The host calls Serve on the connection's goroutine, without its lock.
type Workspace interface {
	// Serve answers one client request. It returns ErrNotServed for a
	// method it does not serve.
	Serve(ctx context.Context, call *Call) (result any, err error)
	// Disconnected is called, without the host's lock, when a client's
	// connection has gone.
	Disconnected(c Client)
	// Close releases everything the workspace holds (processes, watches).
	// The host calls it while shutting down, before closing its agents.
	Close() error
}

// A SessionObserver is a Workspace that follows the sessions held in
// memory and what happens on their channels (changesets recompute after
// turns, for one). Its methods are called with the host locked: they must
// not block and must not call Host methods (queue the work instead).
type SessionObserver interface {
	// SessionOpened is called when a session's channels come into memory:
	// created, or loaded from the store.
	SessionOpened(session string)
	// SessionClosed is called when a session is disposed.
	SessionClosed(session string)
	// Committed is called after an action was applied on the session's
	// channel or on one of its chats' channels.
	Committed(session, channel string, a protocol.StateAction)
}

// ErrNotServed is what Workspace.Serve returns for methods it does not
// serve; the host answers those with -32601.
var ErrNotServed = errors.New("method not served")

// Call is one client request handed to a Workspace.
type Call struct {
	Method string
	Params jsontext.Value
	Client Client
}

// Client identifies one client connection. It is comparable and usable as
// a map key; the zero Client is no connection.
type Client struct {
	c  *conn
	id string
}

// clientLocked returns the Client for c.
func clientLocked(c *conn) Client { return Client{c, c.clientID} }

// ID is the clientId the connection initialized with.
func (c Client) ID() string { return c.id }

// ChannelOwner is told about what happens on a channel it opened with
// Host.OpenChannel. Its methods are called with the host locked: they must
// not block and must not call Host methods (queue the work instead).
type ChannelOwner interface {
	// ValidateAction returns why a client action on the channel must be
	// rejected, or "" to accept it.
	ValidateAction(c Client, state protocol.SnapshotState, a protocol.StateAction) string
	// ActionAccepted is called after an accepted client action was
	// applied and sent to subscribers.
	ActionAccepted(c Client, a protocol.StateAction)
	// Unsubscribed is called when a client stops watching the channel
	// (unsubscribe or disconnect), with the number still subscribed.
	Unsubscribed(c Client, remaining int)
}

// OpenChannel adds a channel the host does not derive from sessions: a
// terminal, a changeset or a resource watch. Its state is kept, reduced,
// sequenced and fanned out like every other channel's, but not stored,
// and the replay log keeps a bounded share of its actions (2 MiB): a
// client that missed more of them reconnects with a snapshot.
func (h *Host) OpenChannel(uri string, state protocol.SnapshotState, owner ChannelOwner) error {
	parsed, err := protocol.ParseChannel(uri)
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHostShutdown
	}
	if h.takenLocked(uri) {
		return fmt.Errorf("host: channel %s already exists", uri)
	}
	h.channels[uri] = &channel{uri: uri, kind: parsed.Kind, state: state, subs: map[*conn]*subscription{}, owner: owner}
	return nil
}

// CloseChannel removes a channel opened with OpenChannel and every
// subscription to it.
func (h *Host) CloseChannel(uri string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.channels[uri]; ok && ch.owner != nil {
		h.dropChannelLocked(uri)
	}
}

// Publish applies a server action to a channel opened with OpenChannel, or
// to the root channel, and sends it to subscribers.
func (h *Host) Publish(uri string, a protocol.StateAction) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHostShutdown
	}
	ch, ok := h.channels[uri]
	if !ok || (ch.owner == nil && uri != protocol.RootURI) {
		return fmt.Errorf("host: no channel %s to publish on", uri)
	}
	h.commitLocked(ch, a, nil)
	return nil
}

// PublishToSession applies a server action to a session's channel or to
// one of its chats' channels (a changeset catalogue, a chat's changes
// summary) and sends it to subscribers. Like an agent's actions it is
// stored with the session, and the session's summary follows it.
func (h *Host) PublishToSession(uri string, a protocol.StateAction) error {
	h.leaseRoom()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHostShutdown
	}
	ch, ok := h.channels[uri]
	if !ok || ch.session == nil || ch.session.disposing {
		return fmt.Errorf("host: no session or chat channel %s", uri)
	}
	if scope := protocol.ActionScope(a.Type()); scope != ch.kind {
		return fmt.Errorf("host: %s action on a %s channel", a.Type(), ch.kind)
	}
	if err := h.jr.Failing(); err != nil {
		return fmt.Errorf("host: %w", err)
	}
	h.commitLocked(ch, a, nil)
	return nil
}

// observerLocked returns the workspace as a SessionObserver, or nil.
func (h *Host) observerLocked() SessionObserver {
	o, _ := h.ws.(SessionObserver)
	return o
}

// State returns the current state of a channel, or nil. The value must not
// be modified.
func (h *Host) State(uri string) protocol.SnapshotState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.channels[uri]; ok {
		return ch.state
	}
	return nil
}

// Subscribers returns how many connections subscribe to a channel.
func (h *Host) Subscribers(uri string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.channels[uri]; ok {
		return len(ch.subs)
	}
	return 0
}

// Backlog returns the most bytes any subscriber of a channel has queued
// and not yet taken: how far the slowest one is behind. A channel's owner
// can hold back what it publishes while it is large (a terminal pausing
// its process's output), rather than let a subscriber that is only slow
// fall far enough behind to be dropped.
func (h *Host) Backlog(uri string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var most int64
	if ch, ok := h.channels[uri]; ok {
		for c := range ch.subs {
			most = max(most, c.rpc.QueuedBytes())
		}
	}
	return most
}

// WorkingDirectories returns a session's working directories (file: URIs)
// and whether the session exists.
func (h *Host) WorkingDirectories(session string) ([]string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[session]
	if !ok {
		return nil, false
	}
	return slices.Clone(h.workingDirsLocked(s)), true
}

// AllWorkingDirectories returns the working directories of every session.
func (h *Host) AllWorkingDirectories() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, s := range h.sessions {
		for _, d := range h.workingDirsLocked(s) {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (h *Host) workingDirsLocked(s *session) []string {
	if ch, ok := h.channels[s.uri]; ok {
		return ch.state.(*protocol.SessionState).WorkingDirectories
	}
	return s.summary.WorkingDirectories
}

// unsubscribedLocked tells a channel's owner that c left it.
func (h *Host) unsubscribedLocked(c *conn, ch *channel) {
	if ch.owner != nil {
		ch.owner.Unsubscribed(clientLocked(c), len(ch.subs))
	}
}

// serveWorkspace hands a request the host does not handle to the
// workspace.
func (c *conn) serveWorkspace(ctx context.Context, method string, params jsontext.Value) (any, bool, error) {
	ws := c.h.ws
	if ws == nil {
		return nil, false, nil
	}
	c.h.mu.Lock()
	cl := clientLocked(c)
	c.h.mu.Unlock()
	res, err := ws.Serve(ctx, &Call{Method: method, Params: params, Client: cl})
	if errors.Is(err, ErrNotServed) {
		return nil, false, nil
	}
	return res, true, err
}

// Trim replaces the state of a channel opened with OpenChannel without an
// action, to bound what the host keeps (a terminal's scrollback, say):
// subscribers keep what they have, later subscribers get the trimmed
// state. f gets the current state and returns the new one; it runs with
// the host locked and must not block.
func (h *Host) Trim(uri string, f func(protocol.SnapshotState) protocol.SnapshotState) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.channels[uri]; ok && ch.owner != nil {
		ch.state = f(ch.state)
	}
}

// Terminals implements agent.TerminalHost: the workspace's terminals, when
// it offers them to agents.
func (ah agentHost) Terminals() agent.Terminals {
	if t, ok := ah.h.ws.(agent.Terminals); ok {
		return t
	}
	return nil
}
