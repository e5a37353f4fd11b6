package host

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

// A Workspace serves what a host delegates: client methods the host does
// not serve itself (files, terminals, watches, changesets) and the
// channels it owns. Package workspace provides one; Options.Workspace
// plugs it in, and the workspace reaches the host through the
// WorkspaceHost it is made with.
type Workspace interface {
	// Methods lists the client methods the workspace serves, made with
	// Handle or HandleStrict. New puts them in the host's one method
	// table, beside the host's own: each must be a method the protocol
	// lets clients send (protocol.Methods), taking the params type the
	// protocol gives it, and one the host does not already serve, or New
	// fails. The table then decodes their params, refuses them before
	// initialize and outside the connection's protocol version, and
	// answers bad params with -32602, exactly as for the host's methods.
	// Their handlers run on the connection's goroutine, without the
	// host's lock.
	Methods() []Method
	// Disconnected is called, without the host's lock, when a client's
	// connection has gone.
	Disconnected(c Client)
	// Close releases everything the workspace holds (processes, watches).
	// The host calls it while shutting down, before closing its agents.
	Close() error
}

// WorkspaceHost is what a Workspace may ask of its host: channels of its
// own, what it publishes on them and on sessions, and the sessions'
// working directories. Its methods take the host's lock: they must not be
// called from the callbacks the host makes with it held (ChannelOwner,
// SessionObserver).
type WorkspaceHost interface {
	// OpenChannel adds a channel the host does not derive from sessions:
	// a terminal, a changeset or a resource watch. Its state is kept,
	// reduced, sequenced and fanned out like every other channel's, but
	// not stored, and the replay log keeps a bounded share of its actions
	// (2 MiB): a client that missed more of them reconnects with a
	// snapshot.
	OpenChannel(uri string, state protocol.SnapshotState, owner ChannelOwner) error
	// CloseChannel removes a channel opened with OpenChannel and every
	// subscription to it.
	CloseChannel(uri string)
	// Publish applies a server action to a channel opened with
	// OpenChannel, or to the root channel, and sends it to subscribers.
	Publish(uri string, a protocol.StateAction) error
	// PublishToSession applies a server action to a session's channel or
	// to one of its chats' channels (a changeset catalogue, a chat's
	// changes summary) and sends it to subscribers. Like an agent's
	// actions it is stored with the session, and the session's summary
	// follows it.
	PublishToSession(uri string, a protocol.StateAction) error
	// Trim replaces the state of a channel opened with OpenChannel
	// without an action, to bound what the host keeps (a terminal's
	// scrollback, say): subscribers keep what they have, later
	// subscribers get the trimmed state. f gets the current state and
	// returns the new one; it runs with the host locked and must not
	// block.
	Trim(uri string, f func(protocol.SnapshotState) protocol.SnapshotState)
	// State returns the current state of a channel, or nil. The value
	// must not be modified.
	State(uri string) protocol.SnapshotState
	// Subscribers returns how many connections subscribe to a channel.
	Subscribers(uri string) int
	// Backlog returns the most bytes any subscriber of a channel has
	// queued and not yet taken: how far the slowest one is behind. A
	// channel's owner can hold back what it publishes while it is large
	// (a terminal pausing its process's output), rather than let a
	// subscriber that is only slow fall far enough behind to be dropped.
	Backlog(uri string) int64
	// WorkingDirectories returns a session's working directories (file:
	// URIs) and whether the session exists.
	WorkingDirectories(session string) ([]string, bool)
	// AllWorkingDirectories returns the working directories of every
	// session.
	AllWorkingDirectories() []string
	// AgentLogin returns the login command of an agent's sign-in method
	// (the resource its root entry lists) and what to call once it has
	// exited: it has the agent checked again, bounded by timeout and the
	// host's life, and publishes the agent's new state. A resource no
	// agent lists, or one that is not a login, is refused with
	// InvalidParams.
	AgentLogin(resource string, timeout time.Duration) (agent.LoginCommand, func(), error)
}

// A SessionObserver is a Workspace that follows the sessions held in
// memory and what happens on their channels (changesets recompute after
// turns, for one). Its methods are called with the host locked: they must
// not block and must not call the WorkspaceHost (queue the work instead).
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

// A Method is one entry of a host's method table: the handler of one
// client method. Make one with Handle or HandleStrict; a Workspace lists
// its entries in Methods.
type Method struct {
	name string
	r    route
}

// Name is the JSON-RPC method the entry serves.
func (m Method) Name() string { return m.name }

// Handle returns the method-table entry serving the client method name
// with f. P must be the method's params type as protocol.Methods gives it
// (protocol.ResourceReadParams for resourceRead); R is the result, nil or
// a nil pointer for a method whose result is null. f gets the params
// decoded and checked: a member of the wrong type, null where the schema
// has no null, or a string outside an enumeration was answered with
// -32602 naming the member before f runs; an absent required member
// decodes as its zero value. An error f returns that is a
// *protocol.Error travels with its code (translated for the connection's
// version); any other is -32603.
func Handle[P, R any](name string, f func(ctx context.Context, c Client, p *P) (R, error)) Method {
	return Method{name: name, r: route{
		ws:     true,
		params: reflect.TypeFor[*P](),
		serve: func(in inbound) (any, error) {
			r, err := f(in.ctx, in.client, in.params.(*P))
			if err != nil {
				return nil, err
			}
			return r, nil
		},
	}}
}

// HandleStrict is Handle for a method whose handler must tell an absent
// required member from a present one: f gets, as missing, the required
// members the params lacked and the members present with a value their
// type does not allow (null, a string outside an enumeration), nil when
// there are none, and decides itself how to answer. A member of the wrong
// JSON kind is still answered with -32602 before f runs.
func HandleStrict[P, R any](name string, f func(ctx context.Context, c Client, p *P, missing *protocol.MissingError) (R, error)) Method {
	return Method{name: name, r: route{
		ws:     true,
		strict: true,
		params: reflect.TypeFor[*P](),
		serve: func(in inbound) (any, error) {
			r, err := f(in.ctx, in.client, in.params.(*P), in.missing)
			if err != nil {
				return nil, err
			}
			return r, nil
		},
	}}
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
// WorkspaceHost.OpenChannel. Its methods are called with the host locked: they must
// not block and must not call the WorkspaceHost (queue the work instead).
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

// OpenChannel implements WorkspaceHost.
func (wh workspaceHost) OpenChannel(uri string, state protocol.SnapshotState, owner ChannelOwner) error {
	h := wh.h
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
	h.channels[uri] = &channel{uri: uri, kind: parsed.Kind, state: state, subs: map[*conn]*subscription{}, channelDomain: channelDomain{owner: owner}}
	return nil
}

// CloseChannel implements WorkspaceHost.
func (wh workspaceHost) CloseChannel(uri string) {
	h := wh.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.channels[uri]; ok && ch.owner != nil {
		h.dropChannelLocked(uri)
	}
}

// Publish implements WorkspaceHost.
func (wh workspaceHost) Publish(uri string, a protocol.StateAction) error {
	h := wh.h
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

// PublishToSession implements WorkspaceHost.
func (wh workspaceHost) PublishToSession(uri string, a protocol.StateAction) error {
	h := wh.h
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

// workspaceHost is the WorkspaceHost a host gives its workspace.
type workspaceHost struct{ h *Host }

// State implements WorkspaceHost.
func (wh workspaceHost) State(uri string) protocol.SnapshotState { return wh.h.State(uri) }

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

// Subscribers implements WorkspaceHost.
func (wh workspaceHost) Subscribers(uri string) int {
	h := wh.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := h.channels[uri]; ok {
		return len(ch.subs)
	}
	return 0
}

// Backlog implements WorkspaceHost.
func (wh workspaceHost) Backlog(uri string) int64 {
	h := wh.h
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

// WorkingDirectories implements WorkspaceHost.
func (wh workspaceHost) WorkingDirectories(session string) ([]string, bool) {
	h := wh.h
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[session]
	if !ok {
		return nil, false
	}
	return slices.Clone(h.workingDirsLocked(s)), true
}

// AllWorkingDirectories implements WorkspaceHost.
func (wh workspaceHost) AllWorkingDirectories() []string {
	h := wh.h
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

// Trim implements WorkspaceHost.
func (wh workspaceHost) Trim(uri string, f func(protocol.SnapshotState) protocol.SnapshotState) {
	h := wh.h
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
