package host

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

// moveChat serves the moveChat command (MoveChatParams).
//
// A session destination that is the chat's own session repositions the
// chat in the session's catalog, published with session/chatsReordered.
// Another session takes the chat: session/chatRemoved on the source,
// session/chatAdded (then session/chatsReordered to put it in place) on
// the destination. A newSession destination is a session created for the
// chat, on the same agent provider and with the source's working
// directories, whose non-movable default chat it becomes
// (chat/movableChanged). In every case the chat keeps its URI, its state,
// its origin and its subscribers, and every operation the move writes goes
// to the store in one batch, so a crash keeps the chat in exactly one
// session. The agents of both sessions hear of it (agent.Event).
//
// Besides what MoveChatParams requires of every host (a movable source, a
// destination and an anchor that resolve, no anchoring on itself), this
// host refuses a chat whose turn is running (-32004): the turn's agent
// session would lose the chat it is answering in. A destination on
// another agent provider, or whose agent failed to start, is refused too
// (-32602): the conversation would move to an agent that cannot take it.
func (c *conn) moveChat(ctx context.Context, p *protocol.MoveChatParams) (*protocol.MoveChatResult, error) {
	h := c.h
	if err := h.loadChannel(ctx, p.Channel); err != nil {
		return nil, rpcError(protocol.CodeInternalError, "moveChat: %v", err)
	}
	if d, ok := p.Destination.(*protocol.ChatMoveToSessionDestination); ok {
		if err := h.loadChannel(ctx, d.Session); err != nil {
			return nil, rpcError(protocol.CodeInternalError, "moveChat: %v", err)
		}
	}
	if h.confiner() != nil {
		if err := h.confineDirs("moveChat", h.moveDirs(ctx, p)); err != nil {
			return nil, err
		}
	}
	var res *protocol.MoveChatResult
	var seq int64
	err := h.locked(ctx, func(rd *storeReads) (change, error) {
		move, err := h.moveChatLocked(rd, p)
		if err != nil {
			return nil, err
		}
		return func() error {
			res = move()
			seq = h.seq
			return nil
		}, nil
	})
	if err != nil {
		var pe *protocol.Error
		if !errors.As(err, &pe) {
			err = rpcError(protocol.CodeInternalError, "moveChat: %v", err)
		}
		return nil, err
	}
	if err := h.savedReply(ctx, "moveChat", seq); err != nil {
		return nil, err
	}
	return res, nil
}

// moveChatLocked is the read phase of a move (see step): it validates the
// whole move, changing nothing, and returns the function that makes it.
func (h *Host) moveChatLocked(rd *storeReads, p *protocol.MoveChatParams) (func() *protocol.MoveChatResult, error) {
	ch, err := h.channelLocked(rd, p.Channel)
	if err != nil {
		return nil, err
	}
	if ch == nil || ch.kind != protocol.ChannelChat || ch.session == nil {
		return nil, rpcError(protocol.CodeNotFound, "moveChat: no chat %s", p.Channel)
	}
	chat := ch.state.(*protocol.ChatState)
	// MoveChatParams: at minimum the source must advertise movable: true,
	// the destination and anchor must resolve, and the source must not
	// anchor itself.
	if m := chat.Movable; m == nil || !*m {
		return nil, rpcError(protocol.CodeInvalidParams, "moveChat: %s is not movable", p.Channel)
	}
	s := ch.session
	var dest *session // nil: a new session
	var after *string // the anchor, for a session destination
	switch d := p.Destination.(type) {
	case nil:
		return nil, rpcError(protocol.CodeInvalidParams, "moveChat: destination is required")
	case *protocol.ChatMoveToSessionDestination:
		if d.Session == s.uri {
			return h.reorderChatLocked(s, p.Channel, d.After)
		}
		dch, err := h.channelLocked(rd, d.Session)
		if err != nil {
			return nil, err
		}
		if dch == nil || dch.kind != protocol.ChannelSession || h.sessions[d.Session] == nil {
			return nil, rpcError(protocol.CodeNotFound, "moveChat: no session %s", d.Session)
		}
		dest, after = h.sessions[d.Session], d.After
	case *protocol.ChatMoveToNewSessionDestination:
	default:
		return nil, rpcError(protocol.CodeInvalidParams, "moveChat: unknown destination kind %q", p.Destination.Kind())
	}
	if chat.ActiveTurn != nil {
		return nil, rpcError(protocol.CodeTurnInProgress, "moveChat: a turn is running in %s; cancel it or wait for it to end", p.Channel)
	}
	if s.backend == nil {
		return nil, rpcError(protocol.CodeInvalidParams, "moveChat: the agent provider %q of %s is not available on this host", s.provider, s.uri)
	}
	if dest != nil {
		dst := h.channels[dest.uri].state.(*protocol.SessionState)
		switch {
		case after != nil && *after == p.Channel:
			return nil, rpcError(protocol.CodeInvalidParams, "moveChat: a chat cannot be placed after itself")
		case after != nil && !slices.ContainsFunc(dst.Chats, func(c protocol.ChatSummary) bool { return c.Resource == *after }):
			return nil, rpcError(protocol.CodeInvalidParams, "moveChat: %s is not a chat of %s", *after, dest.uri)
		case dest.provider != s.provider:
			return nil, rpcError(protocol.CodeInvalidParams, "moveChat: %s runs on the agent provider %q and %s on %q; a chat moves only between sessions of one provider", s.uri, s.provider, dest.uri, dest.provider)
		case h.capabilitiesLocked(dest).MultipleChats == nil:
			return nil, rpcError(protocol.CodeInvalidParams, "moveChat: the %s agent of %s hosts one chat per session (it does not advertise multipleChats)", dest.provider, dest.uri)
		case dst.Lifecycle == protocol.SessionLifecycleFailed || dest.backend == nil:
			return nil, rpcError(protocol.CodeInvalidParams, "moveChat: the agent of %s did not start, so it cannot take a chat", dest.uri)
		}
		// ChatState.workingDirectories: every entry must be one of the
		// owning session's.
		if d, out := outsideSession(dst, chat.WorkingDirectories); out {
			return nil, rpcError(protocol.CodeInvalidParams, "moveChat: the chat works in %q, which is not one of the working directories of %s", d, dest.uri)
		}
	}
	if err := h.refuseLocked("moveChat"); err != nil {
		return nil, err
	}

	return func() *protocol.MoveChatResult {
		// Everything the move writes goes to the store in one batch.
		h.jr.Hold()
		defer h.jr.Release()
		memo := h.detachChatLocked(ch)
		if dest == nil {
			dest = h.newSessionForChatLocked(s, ch, memo)
		} else {
			h.attachChatLocked(dest, ch, after, memo)
		}
		return &protocol.MoveChatResult{Session: dest.uri}
	}, nil
}

// reorderChatLocked moves a chat within its session's catalog: first, or
// after the anchor. Like moveChatLocked it validates and returns the
// function that makes the change.
func (h *Host) reorderChatLocked(s *session, chat string, after *string) (func() *protocol.MoveChatResult, error) {
	sch := h.channels[s.uri]
	st := sch.state.(*protocol.SessionState)
	order := make([]protocol.URI, 0, len(st.Chats))
	for _, c := range st.Chats {
		if c.Resource != chat {
			order = append(order, c.Resource)
		}
	}
	at, err := anchorIndex(order, chat, after, s.uri)
	if err != nil {
		return nil, err
	}
	if err := h.refuseLocked("moveChat"); err != nil {
		return nil, err
	}
	return func() *protocol.MoveChatResult {
		h.reorderLocked(sch, slices.Insert(order, at, chat))
		return &protocol.MoveChatResult{Session: s.uri}
	}, nil
}

// anchorIndex is where a chat goes in an order that leaves it out: first
// without an anchor, else right after it.
func anchorIndex(order []protocol.URI, chat string, after *string, session string) (int, error) {
	if after == nil {
		return 0, nil
	}
	if *after == chat {
		return 0, rpcError(protocol.CodeInvalidParams, "moveChat: a chat cannot be placed after itself")
	}
	i := slices.Index(order, *after)
	if i < 0 {
		return 0, rpcError(protocol.CodeInvalidParams, "moveChat: %s is not a chat of %s", *after, session)
	}
	return i + 1, nil
}

// reorderLocked publishes a session's new catalog order, if it changed.
func (h *Host) reorderLocked(sch *channel, order []protocol.URI) {
	st := sch.state.(*protocol.SessionState)
	current := make([]protocol.URI, len(st.Chats))
	for i, c := range st.Chats {
		current[i] = c.Resource
	}
	if !slices.Equal(order, current) {
		h.commitLocked(sch, &protocol.SessionChatsReorderedAction{Chats: order}, nil)
	}
}

// detachChatLocked takes a chat out of its session's catalog for a move:
// session/chatRemoved goes to the session's subscribers only (the chat's
// own keep following it), and the session's agent is told. What the agent
// asked to remember under the chat's URI (agent.Host.Remember) leaves with
// the chat: it is returned.
func (h *Host) detachChatLocked(ch *channel) map[string]string {
	s := ch.session
	sch := h.channels[s.uri]
	var memo map[string]string
	if v, ok := s.memo[ch.uri]; ok {
		memo = map[string]string{ch.uri: v}
		delete(s.memo, ch.uri)
	}
	delete(s.chats, ch.uri)
	s.chatURIs = slices.DeleteFunc(s.chatURIs, func(u string) bool { return u == ch.uri })
	removed := &protocol.SessionChatRemovedAction{Chat: ch.uri}
	h.commitLocked(sch, removed, nil)
	s.deliver(agent.Event{Channel: s.uri, Action: removed})
	h.setMemoLocked(s)
	return memo
}

// setMemoLocked records a session's memo in its summary and queues its
// catalog entry.
func (h *Host) setMemoLocked(s *session) {
	sum := s.summary
	sum.Meta = memoMeta(s.memo)
	h.setSummaryLocked(s, sum)
	h.catalogLocked(s)
}

// attachChatLocked adds a detached chat to another session's catalog, after
// the anchor (first without one).
func (h *Host) attachChatLocked(dest *session, ch *channel, after *string, memo map[string]string) {
	ch.session = dest
	dest.chats[ch.uri] = ch
	dest.chatURIs = append(dest.chatURIs, ch.uri)
	h.chatOwner[ch.uri] = dest
	if memo != nil {
		if dest.memo == nil {
			dest.memo = map[string]string{}
		}
		maps.Copy(dest.memo, memo)
	}
	dch := h.channels[dest.uri]
	chat := ch.state.(*protocol.ChatState)
	added := &protocol.SessionChatAddedAction{Summary: chatSummary(chat)}
	h.commitLocked(dch, added, nil)
	st := dch.state.(*protocol.SessionState)
	order := make([]protocol.URI, 0, len(st.Chats))
	for _, c := range st.Chats {
		if c.Resource != ch.uri {
			order = append(order, c.Resource)
		}
	}
	at, _ := anchorIndex(order, ch.uri, after, dest.uri) // checked before
	h.reorderLocked(dch, slices.Insert(order, at, ch.uri))
	dest.deliver(agent.Event{Channel: dest.uri, Action: added, Chat: chat, Resume: maps.Clone(memo)})
	h.movedSnapshotLocked(ch)
	h.setMemoLocked(dest)
}

// movedSnapshotLocked writes a moved chat's snapshot under its new
// session: the store files the chat's channel by its session.
func (h *Host) movedSnapshotLocked(ch *channel) {
	h.jr.Queue(h.seq, snapshotOf(ch, h.seq))
	ch.saved.actions, ch.saved.bytes = 0, 0
}

// newSessionForChatLocked creates a session for a detached chat, as
// createSession would, on the source session's agent provider and with
// its working directories; the chat becomes its default chat and stops
// being movable (ChatState.movable: the default chat never is).
func (h *Host) newSessionForChatLocked(src *session, ch *channel, memo map[string]string) *session {
	uri := sessionURIFor(src.provider, h.opts.NewID())
	for h.takenLocked(uri) {
		uri = sessionURIFor(src.provider, h.opts.NewID())
	}
	srcState := h.channels[src.uri].state.(*protocol.SessionState)
	now := h.now()
	s := &session{uri: uri, provider: src.provider, backend: src.backend, createdAt: now, modifiedAt: now,
		memo: memo, chatURIs: []string{ch.uri}, loaded: true, chats: map[string]*channel{ch.uri: ch}, mb: newMailbox()}
	ch.session = s
	h.chatOwner[ch.uri] = s
	h.sessions[uri] = s
	// The chat is not movable before it enters the new catalog, so the
	// catalog starts consistent with it.
	h.commitLocked(ch, &protocol.ChatMovableChangedAction{Movable: false}, nil)
	chat := ch.state.(*protocol.ChatState)
	title := chat.Title
	if title == "" {
		title = defaultSessionTitle
	}
	state := &protocol.SessionState{
		Provider:           src.provider,
		Title:              title,
		Status:             protocol.SessionStatusIdle,
		WorkingDirectories: slices.Clone(srcState.WorkingDirectories),
		Lifecycle:          protocol.SessionLifecycleCreating,
		ActiveClients:      []protocol.SessionActiveClient{},
		Chats:              []protocol.ChatSummary{chatSummary(chat)},
		DefaultChat:        &ch.uri,
	}
	sch := &channel{uri: uri, kind: protocol.ChannelSession, state: state, subs: map[*conn]*subscription{}, channelDomain: channelDomain{session: s}}
	h.channels[uri] = sch
	h.setSummaryLocked(s, h.summaryLocked(s))
	h.jr.Queue(h.seq, snapshotOf(sch, h.seq))
	h.movedSnapshotLocked(ch)
	h.catalogLocked(s)
	h.commitLocked(h.channels[protocol.RootURI], &protocol.RootActiveSessionsChangedAction{ActiveSessions: int64(len(h.sessions))}, nil)
	h.broadcastLocked(protocol.RootURI, "root/sessionAdded", &protocol.SessionAddedParams{Channel: protocol.RootURI, Summary: s.summary})

	req := agent.OpenRequest{Session: uri, Chat: ch.uri, Resume: maps.Clone(memo), Params: &protocol.CreateSessionParams{
		Channel:            uri,
		Provider:           protocol.Ptr(src.provider),
		WorkingDirectories: state.WorkingDirectories,
	}}
	if len(state.WorkingDirectories) > 0 {
		req.WorkingDirectory = state.WorkingDirectories[0]
	}
	h.goFunc(func() { s.mb.run(h.ctx) })
	h.goFunc(func() { h.openAgent(s, req) })
	return s
}
