package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host/internal/check"
	"github.com/ahp-go/ahp/host/internal/journal"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/store"
)

// openTimeout bounds how long an agent may take to open a session.
const openTimeout = 2 * time.Minute

// session is the host's bookkeeping for one session: its catalog entry,
// its channels and its agent. Every session has a catalog entry in memory;
// its channels and agent exist once it is loaded (created in this run, or
// read from the store on first use).
type session struct {
	uri      string
	provider string
	backend  agent.Backend // nil when the provider is not configured
	// createdAt and modifiedAt feed the summary. modifiedAt is the last
	// change to session-level state; the summary takes the latest of it
	// and every chat's modifiedAt. (A session read back from the store
	// starts from its summary's modifiedAt.)
	createdAt  string
	modifiedAt string
	summary    protocol.SessionSummary // as last announced on the root channel
	memo       map[string]string       // what the agent asked to keep (agent.Host.Remember)
	chatURIs   []string                // the session's chats, in creation order
	running    bool                    // a turn runs in one of its chats, as last stored
	listed     bool                    // summary is in Host.catalog
	listing    *listing                // summary as the catalog lists it, while listed

	loaded    bool
	loading   *loadCall // a read from the store in flight
	disposing bool      // disposeSession is removing it: nothing is derived from its changes
	// heldLifecycle is the session/ready or session/creationFailed of an
	// agent that opened before anyone subscribed to the session.
	heldLifecycle protocol.StateAction
	chats         map[string]*channel // when loaded
	mb            *mailbox            // when loaded: events for the agent, in order
}

// deliver queues an event for the session's agent.
func (s *session) deliver(ev agent.Event) {
	if s.mb != nil {
		s.mb.push(ev)
	}
}

// stop ends the agent side of the session.
func (s *session) stop() {
	if s.mb != nil {
		s.mb.stop()
	}
}

// mailbox delivers events to an agent session in order on one goroutine.
// Events that arrive before the agent has opened wait for it. Pushing never
// blocks.
type mailbox struct {
	mu      sync.Mutex
	queue   []agent.Event
	agent   agent.Session // nil until open
	stopped bool
	wake    chan struct{}
	done    chan struct{} // closed by stop
}

func newMailbox() *mailbox {
	return &mailbox{wake: make(chan struct{}, 1), done: make(chan struct{})}
}

func (m *mailbox) push(ev agent.Event) {
	m.mu.Lock()
	if !m.stopped {
		m.queue = append(m.queue, ev)
	}
	m.mu.Unlock()
	m.signal()
}

func (m *mailbox) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// setAgent hands the opened agent session to the mailbox. It reports false
// when the session was stopped meanwhile (the caller closes the agent).
func (m *mailbox) setAgent(a agent.Session) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return false
	}
	m.agent = a
	m.signal()
	return true
}

func (m *mailbox) stop() {
	m.mu.Lock()
	if !m.stopped {
		m.stopped = true
		close(m.done)
	}
	m.queue = nil
	m.mu.Unlock()
	m.signal()
}

// run delivers events until stopped, then closes the agent session.
func (m *mailbox) run(ctx context.Context) {
	for {
		select {
		case <-m.wake:
		case <-ctx.Done():
			m.stop()
		}
		m.mu.Lock()
		if m.stopped {
			a := m.agent
			m.agent = nil
			m.mu.Unlock()
			if a != nil {
				a.Close()
			}
			return
		}
		a := m.agent
		var batch []agent.Event
		if a != nil {
			batch, m.queue = m.queue, nil
		}
		m.mu.Unlock()
		for _, ev := range batch {
			a.Handle(ev)
		}
	}
}

// agentHost is the agent.Host given to one session's agent.
type agentHost struct {
	h *Host
	s *session
}

func (ah agentHost) Dispatch(channel string, a protocol.StateAction) error {
	return ah.h.dispatchServer(ah.s, channel, a)
}

// Remember keeps a value for the session's agent in the session's catalog
// entry, where it survives restarts.
func (ah agentHost) Remember(key, value string) {
	h := ah.h
	h.mu.Lock()
	defer h.mu.Unlock()
	s := ah.s
	if h.closed || h.sessions[s.uri] != s || s.memo[key] == value {
		return
	}
	if value == "" {
		delete(s.memo, key)
	} else {
		if s.memo == nil {
			s.memo = map[string]string{}
		}
		s.memo[key] = value
	}
	s.summary.Meta = memoMeta(s.memo)
	h.syncCatalogLocked(s, true)
}

func (ah agentHost) ChatState(chat string) *protocol.ChatState {
	h := ah.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch, ok := ah.s.chats[chat]; ok {
		return ch.state.(*protocol.ChatState)
	}
	return nil
}

// dispatchServer applies a server action from an agent.
func (h *Host) dispatchServer(s *session, channel string, a protocol.StateAction) error {
	h.leaseRoom()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errHostShutdown
	}
	if h.sessions[s.uri] != s {
		return fmt.Errorf("host: session %s is gone", s.uri)
	}
	ch, ok := h.channels[channel]
	if !ok || ch.session != s {
		return fmt.Errorf("host: %s is not a channel of session %s", channel, s.uri)
	}
	if scope := protocol.ActionScope(a.Type()); scope != "" && scope != ch.kind {
		return fmt.Errorf("host: %s action on a %s channel", a.Type(), ch.kind)
	}
	if err := h.jr.Failing(); err != nil {
		// The agent's work cannot be saved: end its turn, so clients
		// do not wait for it.
		if cs, ok := ch.state.(*protocol.ChatState); ok && cs.ActiveTurn != nil {
			h.commitLocked(ch, &protocol.ChatErrorAction{
				TurnID:   cs.ActiveTurn.ID,
				Duration: turnDuration(cs.ActiveTurn.StartedAt, h.opts.Now()),
				Part:     &protocol.ErrorResponsePart{Error: protocol.ErrorInfo{ErrorType: "storageError", Message: "the host cannot save changes: " + err.Error()}},
			}, nil)
		}
		return fmt.Errorf("host: %w", err)
	}
	h.commitLocked(ch, a, nil)
	return nil
}

// signInRequired refuses a session on an agent that says it needs sign-in
// (a protected resource marked required) with AuthRequired, its data
// listing those resources, so that a client can sign in and try again.
func signInRequired(info protocol.AgentInfo) error {
	var need []protocol.ProtectedResourceMetadata
	for _, r := range info.ProtectedResources {
		if r.Required != nil && *r.Required {
			need = append(need, r)
		}
	}
	if len(need) == 0 {
		return nil
	}
	data, err := protocol.Marshal(&protocol.AuthRequiredErrorData{Resources: need})
	if err != nil {
		return err
	}
	return &protocol.Error{Code: protocol.CodeAuthRequired, Data: data,
		Message: fmt.Sprintf("createSession: agent %s needs sign-in first; its sign-in methods are the resources in this error's data", info.Provider)}
}

// createSession creates a session with its default chat, announces it, and
// opens the agent in the background. It answers once the session is saved.
func (c *conn) createSession(ctx context.Context, p *protocol.CreateSessionParams) (*none, error) {
	h := c.h
	p = c.viewLocked().UpCreateSession(p)
	if err := protocol.CheckSessionURI(p.Channel); err != nil {
		// Clients name their sessions (VS Code: <provider>:/<uuid>);
		// the host's own channel schemes are not theirs to use.
		return nil, rpcError(protocol.CodeInvalidParams, "createSession: channel must be an absolute URI that is not one of the host's channel schemes, such as <provider>:/<id> or ahp-session:/<id>: %v", err)
	}
	named := p.Provider
	if named == nil || *named == "" {
		// A session named <provider>:/<id> without a provider is on
		// that provider when the host has it.
		if scheme, _, _ := protocol.SplitScheme(p.Channel); h.agents[scheme] != nil {
			named = &scheme
		}
	}
	backend, err := h.backendFor("createSession", named)
	if err != nil {
		return nil, err
	}
	info := backend.Info()
	if err := signInRequired(info); err != nil {
		return nil, err
	}
	provider := info.Provider
	dirs := p.WorkingDirectories
	if len(dirs) > 1 && (info.Capabilities == nil || info.Capabilities.MultipleWorkingDirectories == nil) {
		// CreateSessionParams.workingDirectories: without the
		// multipleWorkingDirectories capability only the first counts.
		dirs = dirs[:1:1]
	}
	if err := h.confineDirs("createSession", dirs); err != nil {
		return nil, err
	}
	config, err := h.newSessionConfig(ctx, backend, dirs, p.Config)
	if err != nil {
		return nil, err
	}

	h.leaseRoom()
	h.mu.Lock()
	locked := true
	defer func() {
		if locked {
			h.mu.Unlock()
		}
	}()
	if p.ActiveClient != nil && p.ActiveClient.ClientID != c.clientID {
		// CreateSessionParams.activeClient: the clientId must match the
		// creator's.
		return nil, rpcError(protocol.CodeInvalidParams, "createSession: activeClient.clientId %q must be this client's (%q)", p.ActiveClient.ClientID, c.clientID)
	}
	if h.takenLocked(p.Channel) {
		return nil, rpcError(protocol.CodeSessionAlreadyExists, "createSession: %s already exists", p.Channel)
	}
	if err := h.refuseLocked("createSession"); err != nil {
		return nil, err
	}
	now := h.now()
	chatURI := protocol.ChatURI(h.opts.NewID())
	chat := &protocol.ChatState{ChatStateFields: &protocol.ChatStateFields{
		Resource:   chatURI,
		Title:      "Chat",
		Status:     protocol.SessionStatusIdle,
		ModifiedAt: now,
		Origin:     &protocol.ChatOriginUser{},
		Movable:    protocol.Ptr(false), // the default chat never moves
		Turns:      []protocol.Turn{},
	}}
	state := &protocol.SessionState{
		Provider:           provider,
		Title:              defaultSessionTitle,
		Status:             protocol.SessionStatusIdle,
		WorkingDirectories: dirs,
		Lifecycle:          protocol.SessionLifecycleCreating,
		ActiveClients:      []protocol.SessionActiveClient{},
		Chats:              []protocol.ChatSummary{chatSummary(chat)},
		DefaultChat:        &chatURI,
		Config:             config,
	}
	if o, ok := ctx.Value(sessionOriginKey{}).(protocol.SessionOrigin); ok {
		state.Origin = o // an automation run's (StartSession)
	}
	if p.ActiveClient != nil {
		state.ActiveClients = append(state.ActiveClients, *p.ActiveClient)
	}
	s := &session{uri: p.Channel, provider: provider, backend: backend, createdAt: now, modifiedAt: now,
		chatURIs: []string{chatURI}, loaded: true, chats: map[string]*channel{}, mb: newMailbox()}
	h.sessions[s.uri] = s
	h.chatOwner[chatURI] = s
	sch := &channel{uri: s.uri, kind: protocol.ChannelSession, state: state, subs: map[*conn]*subscription{}, channelDomain: channelDomain{session: s}}
	h.channels[s.uri] = sch
	s.chats[chatURI] = &channel{uri: chatURI, kind: protocol.ChannelChat, state: chat, subs: map[*conn]*subscription{}, channelDomain: channelDomain{session: s}}
	h.channels[chatURI] = s.chats[chatURI]
	if o := h.observerLocked(); o != nil {
		o.SessionOpened(s.uri)
	}
	h.setSummaryLocked(s, h.summaryLocked(s))
	h.catalogLocked(s)
	h.jr.Queue(h.seq, snapshotOf(sch, h.seq), snapshotOf(s.chats[chatURI], h.seq))

	h.commitLocked(h.channels[protocol.RootURI], &protocol.RootActiveSessionsChangedAction{ActiveSessions: int64(len(h.sessions))}, nil)
	h.broadcastLocked(protocol.RootURI, "root/sessionAdded", &protocol.SessionAddedParams{Channel: protocol.RootURI, Summary: s.summary})

	req := agent.OpenRequest{Session: s.uri, Chat: chatURI, Params: p}
	if config != nil {
		req.Config = maps.Clone(config.Values)
	}
	if len(dirs) > 0 {
		req.WorkingDirectory = dirs[0]
	}
	h.goFunc(func() { s.mb.run(h.ctx) })
	h.goFunc(func() { h.openAgent(s, req) })
	seq := h.seq
	h.mu.Unlock()
	locked = false
	return nil, h.savedReply(ctx, "createSession", seq)
}

// takenLocked reports whether a session or chat URI is in use.
func (h *Host) takenLocked(uri string) bool {
	_, ch := h.channels[uri]
	_, s := h.sessions[uri]
	_, c := h.chatOwner[uri]
	return ch || s || c
}

// openAgent opens the agent session and moves the session to ready (when
// it is not already, as a session read back from the store is), or to
// creationFailed with the agent's error.
func (h *Host) openAgent(s *session, req agent.OpenRequest) {
	ctx, cancel := context.WithTimeout(h.ctx, openTimeout)
	defer cancel()
	// Disposing the session cancels an open in progress: the agent stops
	// starting.
	go func() {
		select {
		case <-s.mb.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	a, err := s.backend.Open(ctx, req, agentHost{h: h, s: s})
	if err == nil && !s.mb.setAgent(a) {
		a.Close()
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, ok := h.channels[s.uri]
	if !ok || ch.session != s {
		return
	}
	if h.closed {
		return
	}
	var next protocol.StateAction
	if err != nil {
		h.log.Warn("agent failed to open a session", "session", s.uri, "provider", s.provider, "err", err)
		next = &protocol.SessionCreationFailedAction{Error: protocol.ErrorInfo{ErrorType: "agentError", Message: err.Error()}}
		h.sessionGoneLocked(s.uri, fmt.Errorf("the agent failed to start: %w", err))
	} else if ch.state.(*protocol.SessionState).Lifecycle != protocol.SessionLifecycleReady {
		next = &protocol.SessionReadyAction{}
	}
	if next == nil {
		return
	}
	if len(ch.subs) == 0 {
		// Nobody watches the session yet: the move out of "creating"
		// waits for its first subscriber.
		s.heldLifecycle = next
		h.held[s] = struct{}{}
		return
	}
	h.commitLocked(ch, next, nil)
}

// releaseHeldLocked dispatches the held session/ready or
// session/creationFailed of every session that now has a subscriber. The
// session channel page has the creator subscribe next to createSession and
// receive the "creating" snapshot, then the outcome of the agent's start
// as an action; an agent that opened before anyone subscribed (the
// built-in one opens at once) would skip that. It runs once a locked
// handler's answer is queued, so the action follows the new subscriber's
// snapshot.
func (h *Host) releaseHeldLocked() {
	for s := range h.held {
		ch := h.channels[s.uri]
		if ch == nil || ch.session != s || h.sessions[s.uri] != s {
			delete(h.held, s)
			continue
		}
		if len(ch.subs) == 0 {
			continue
		}
		delete(h.held, s)
		a := s.heldLifecycle
		s.heldLifecycle = nil
		h.commitLocked(ch, a, nil)
	}
}

// disposeSession removes a session and its chats, ends their
// subscriptions and closes the agent session. It answers once the removal
// is saved.
func (h *Host) disposeSession(ctx context.Context, p *protocol.DisposeSessionParams) error {
	h.leaseRoom()
	h.mu.Lock()
	s, ok := h.sessions[p.Channel]
	if !ok {
		h.mu.Unlock()
		return rpcError(protocol.CodeSessionNotFound, "disposeSession: no session %s", p.Channel)
	}
	if err := h.refuseLocked("disposeSession"); err != nil {
		h.mu.Unlock()
		return err
	}
	// chat-channel.md, Disposal: every chat removed because its session
	// was torn down is removed from the catalog with session/chatRemoved,
	// so subscribers can release their chat subscriptions. Subscribers of
	// the session or of one of its chats also hear root/sessionRemoved, so
	// none of them waits on a channel that is gone.
	s.disposing = true
	// The chats as they were: removeChatLocked takes each out of
	// s.chatURIs.
	chats := slices.Clone(s.chatURIs)
	var subs map[*conn]*subscription
	if sch := h.channels[s.uri]; sch != nil {
		subs = sch.subs
		for _, uri := range chats {
			if ch := s.chats[uri]; ch != nil {
				subs = union(subs, ch.subs)
				h.removeChatLocked(ch)
			}
		}
	}
	for _, uri := range chats {
		if h.chatOwner[uri] == s {
			delete(h.chatOwner, uri)
		}
	}
	h.dropChannelLocked(s.uri)
	delete(h.sessions, s.uri)
	h.sessionGoneLocked(s.uri, errors.New("the session was disposed"))
	if o := h.observerLocked(); o != nil {
		o.SessionClosed(s.uri)
	}
	h.unlistLocked(s)
	s.stop()
	h.jr.Forget(s.uri)
	h.jr.Queue(h.seq, journal.Pending{Op: store.DeleteSession{URI: s.uri}})
	h.commitLocked(h.channels[protocol.RootURI], &protocol.RootActiveSessionsChangedAction{ActiveSessions: int64(len(h.sessions))}, nil)
	h.broadcastLocked(protocol.RootURI, "root/sessionRemoved", &protocol.SessionRemovedParams{Channel: protocol.RootURI, Session: s.uri}, subs)
	seq := h.seq
	h.mu.Unlock()
	return h.savedReply(ctx, "disposeSession", seq)
}

// leaveSessionLocked removes a client from a session's active clients
// once none of its connections subscribes to the session any more: the
// host removes active clients "when they unsubscribe"
// (SessionState.activeClients).
func (h *Host) leaveSessionLocked(clientID string, ch *channel) {
	if ch.kind != protocol.ChannelSession || h.closed {
		return
	}
	for c := range ch.subs {
		if c.clientID == clientID {
			return
		}
	}
	st := ch.state.(*protocol.SessionState)
	if slices.ContainsFunc(st.ActiveClients, func(a protocol.SessionActiveClient) bool { return a.ClientID == clientID }) {
		h.commitLocked(ch, &protocol.SessionActiveClientRemovedAction{ClientID: clientID}, nil)
	}
}

// removeChatLocked removes a chat from its session's catalog with
// session/chatRemoved and drops the chat's channel. The removal goes to the
// session's subscribers and also to the chat's own, so a client following
// only the chat hears that it is gone.
func (h *Host) removeChatLocked(ch *channel) {
	s := ch.session
	sch := h.channels[s.uri]
	msg := h.commitLocked(sch, &protocol.SessionChatRemovedAction{Chat: ch.uri}, nil)
	if msg != nil {
		for c := range ch.subs {
			if _, dup := sch.subs[c]; !dup && c.knowsLocked("session/chatRemoved") {
				c.sendLocked(msg)
			}
		}
	}
	h.dropChannelLocked(ch.uri)
	delete(s.chats, ch.uri)
	s.chatURIs = slices.DeleteFunc(s.chatURIs, func(u string) bool { return u == ch.uri })
}

// union returns the connections of both sets (a new map when both have
// some).
func union(a, b map[*conn]*subscription) map[*conn]*subscription {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make(map[*conn]*subscription, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// dropChannelLocked removes a channel and every subscription to it.
func (h *Host) dropChannelLocked(uri string) {
	ch, ok := h.channels[uri]
	if !ok {
		return
	}
	for c := range ch.subs {
		delete(c.subs, uri)
	}
	delete(h.channels, uri)
}

// createChat adds a chat to a session, optionally starting its first turn.
// It answers once the chat is saved.
func (c *conn) createChat(ctx context.Context, p *protocol.CreateChatParams) (*none, error) {
	h := c.h
	p = c.viewLocked().UpCreateChat(p)
	parsed, err := protocol.ParseChannel(p.Chat)
	if err != nil || parsed.Kind != protocol.ChannelChat {
		return nil, rpcError(protocol.CodeInvalidParams, "createChat: chat must be a chat URI (ahp-chat:/<id>), got %q", p.Chat)
	}
	if err := h.confineDirs("createChat", p.WorkingDirectories); err != nil {
		return nil, err
	}
	if err := h.loadChannel(ctx, p.Channel); err != nil {
		return nil, rpcError(protocol.CodeInternalError, "createChat: %v", err)
	}
	var seq int64
	err = h.locked(ctx, func(rd *storeReads) (change, error) {
		s, ok := h.sessions[p.Channel]
		if !ok {
			return nil, rpcError(protocol.CodeSessionNotFound, "createChat: no session %s", p.Channel)
		}
		if h.takenLocked(p.Chat) {
			return nil, rpcError(protocol.CodeAlreadyExists, "createChat: %s already exists", p.Chat)
		}
		// AgentCapabilities.multipleChats: without it a session has only
		// the chat it starts with.
		if h.capabilitiesLocked(s).MultipleChats == nil {
			return nil, rpcError(protocol.CodeInvalidParams, "createChat: the %s agent hosts one chat per session (it does not advertise multipleChats)", s.provider)
		}
		if p.Source != nil {
			return nil, rpcError(protocol.CodeInvalidParams, "createChat: the %s agent does not support forks or side chats", s.provider)
		}
		if err := h.refuseLocked("createChat"); err != nil {
			return nil, err
		}
		sch, err := h.channelLocked(rd, s.uri)
		var miss *storeMiss
		if errors.As(err, &miss) {
			return nil, err
		}
		if err != nil {
			return nil, rpcError(protocol.CodeInternalError, "createChat: %v", err)
		}
		// CreateChatParams.workingDirectories: every entry must be one of the
		// session's working directories.
		if d, out := outsideSession(sch.state.(*protocol.SessionState), p.WorkingDirectories); out {
			return nil, rpcError(protocol.CodeInvalidParams, "createChat: %q is not one of the session's working directories", d)
		}
		if m := p.InitialMessage; m != nil {
			err := check.Reject(clientMessage(m))
			if err == nil {
				err = h.checkAttachmentsLocked(rd, m)
			}
			var rej *check.Rejection
			if errors.As(err, &rej) {
				return nil, rpcError(protocol.CodeInvalidParams, "createChat: initialMessage: %s", rej.Reason)
			}
			if err != nil {
				return nil, err
			}
		}
		return func() error {
			h.createChatLocked(rd, s, p)
			seq = h.seq
			return nil
		}, nil
	})
	if err != nil {
		var pe *protocol.Error
		if !errors.As(err, &pe) {
			err = rpcError(protocol.CodeInternalError, "createChat: %v", err)
		}
		return nil, err
	}
	return nil, h.savedReply(ctx, "createChat", seq)
}

// createChatLocked is the change of createChat, once validated: it adds
// the chat to its session and starts the turn of its initial message.
func (h *Host) createChatLocked(rd *storeReads, s *session, p *protocol.CreateChatParams) {
	chat := &protocol.ChatState{ChatStateFields: &protocol.ChatStateFields{
		Resource:           p.Chat,
		Title:              "Chat",
		Status:             protocol.SessionStatusIdle,
		ModifiedAt:         h.now(),
		Origin:             &protocol.ChatOriginUser{},
		WorkingDirectories: p.WorkingDirectories,
		Movable:            protocol.Ptr(true), // within its session: see moveChat
		Turns:              []protocol.Turn{},
	}}
	ch := &channel{uri: p.Chat, kind: protocol.ChannelChat, state: chat, subs: map[*conn]*subscription{}, channelDomain: channelDomain{session: s}}
	h.channels[p.Chat] = ch
	s.chats[p.Chat] = ch
	s.chatURIs = append(s.chatURIs, p.Chat)
	h.chatOwner[p.Chat] = s
	h.jr.Queue(h.seq, snapshotOf(ch, h.seq))
	h.commitLocked(h.channels[s.uri], &protocol.SessionChatAddedAction{Summary: chatSummary(chat)}, nil)
	h.catalogLocked(s)
	if p.InitialMessage != nil {
		h.pinAttachmentsLocked(p.InitialMessage)
		h.commitReadLocked(rd, ch, &protocol.ChatTurnStartedAction{TurnID: h.opts.NewID(), StartedAt: h.now(), Message: *p.InitialMessage}, nil)
	}
}

// disposeChat removes one chat from its session. It answers once the
// removal is saved.
func (h *Host) disposeChat(ctx context.Context, p *protocol.DisposeChatParams) error {
	if err := h.loadChannel(ctx, p.Channel); err != nil {
		return rpcError(protocol.CodeInternalError, "disposeChat: %v", err)
	}
	h.mu.Lock()
	ch, err := h.channelLocked(nil, p.Channel)
	if err != nil {
		h.mu.Unlock()
		return rpcError(protocol.CodeInternalError, "disposeChat: %v", err)
	}
	if ch == nil || ch.kind != protocol.ChannelChat {
		h.mu.Unlock()
		return rpcError(protocol.CodeNotFound, "disposeChat: no chat %s", p.Channel)
	}
	if err := h.refuseLocked("disposeChat"); err != nil {
		h.mu.Unlock()
		return err
	}
	s := ch.session
	delete(h.chatOwner, ch.uri)
	h.jr.Queue(h.seq, journal.Pending{Op: store.DeleteChannel{URI: ch.uri}})
	h.removeChatLocked(ch)
	h.catalogLocked(s)
	seq := h.seq
	h.mu.Unlock()
	return h.savedReply(ctx, "disposeChat", seq)
}

// endRunningTurnsLocked fails every active turn with message, as the
// lifecycle page asks for turns interrupted by the host going away.
func (h *Host) endRunningTurnsLocked(message string) {
	for _, s := range h.sessions {
		for _, ch := range s.chats {
			chat := ch.state.(*protocol.ChatState)
			if chat.ActiveTurn == nil {
				continue
			}
			h.commitLocked(ch, &protocol.ChatErrorAction{
				TurnID:   chat.ActiveTurn.ID,
				Duration: turnDuration(chat.ActiveTurn.StartedAt, h.opts.Now()),
				Part:     &protocol.ErrorResponsePart{Error: protocol.ErrorInfo{ErrorType: "hostShutdown", Message: message}},
			}, nil)
		}
	}
}

// turnDuration returns the milliseconds since startedAt, or 0 when it does
// not parse.
func turnDuration(startedAt string, now time.Time) float64 {
	t, err := protocol.ParseTime(startedAt)
	if err != nil {
		return 0
	}
	return float64(now.Sub(t).Milliseconds())
}
