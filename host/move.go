package host

import (
	"context"
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// moveChat serves the moveChat command. A move within the chat's own
// session repositions it in the session's catalog and publishes the order
// with session/chatsReordered. Moving a chat to another session, or to a
// new one, would move its agent conversation between two agent sessions,
// which no agent interface here offers; the command's description lets a
// host reject unsupported destinations, and this host does (-32602), with
// nothing changed.
func (c *conn) moveChat(ctx context.Context, p *protocol.MoveChatParams) (*protocol.MoveChatResult, error) {
	h := c.h
	if err := h.loadChannel(ctx, p.Channel); err != nil {
		return nil, rpcError(protocol.CodeInternalError, "moveChat: %v", err)
	}
	h.mu.Lock()
	ch, err := h.channelLocked(p.Channel)
	if err != nil {
		h.mu.Unlock()
		return nil, rpcError(protocol.CodeInternalError, "moveChat: %v", err)
	}
	if ch == nil || ch.kind != protocol.ChannelChat || ch.session == nil {
		h.mu.Unlock()
		return nil, rpcError(protocol.CodeNotFound, "moveChat: no chat %s", p.Channel)
	}
	// MoveChatParams: at minimum the source must advertise movable: true,
	// the destination and anchor must resolve, and the source must not
	// anchor itself.
	if m := ch.state.(*protocol.ChatState).Movable; m == nil || !*m {
		h.mu.Unlock()
		return nil, rpcError(protocol.CodeInvalidParams, "moveChat: %s is not movable", p.Channel)
	}
	s := ch.session
	dest, ok := p.Destination.(*protocol.ChatMoveToSessionDestination)
	switch {
	case p.Destination == nil:
		h.mu.Unlock()
		return nil, rpcError(protocol.CodeInvalidParams, "moveChat: destination is required")
	case !ok:
		h.mu.Unlock()
		return nil, rpcError(protocol.CodeInvalidParams, "moveChat: this host moves chats only within their session, not to a %q destination", p.Destination.Kind())
	case dest.Session != s.uri:
		h.mu.Unlock()
		if h.sessionKnown(dest.Session) {
			return nil, rpcError(protocol.CodeInvalidParams, "moveChat: this host moves chats only within their session, not to %s", dest.Session)
		}
		return nil, rpcError(protocol.CodeNotFound, "moveChat: no session %s", dest.Session)
	}
	if err := h.refuseLocked("moveChat"); err != nil {
		h.mu.Unlock()
		return nil, err
	}
	sch := h.channels[s.uri]
	st := sch.state.(*protocol.SessionState)
	order := make([]protocol.URI, 0, len(st.Chats))
	for _, c := range st.Chats {
		if c.Resource != p.Channel {
			order = append(order, c.Resource)
		}
	}
	at := 0 // no anchor: first
	if dest.After != nil {
		if *dest.After == p.Channel {
			h.mu.Unlock()
			return nil, rpcError(protocol.CodeInvalidParams, "moveChat: a chat cannot be placed after itself")
		}
		i := slices.Index(order, *dest.After)
		if i < 0 {
			h.mu.Unlock()
			return nil, rpcError(protocol.CodeInvalidParams, "moveChat: %s is not a chat of %s", *dest.After, s.uri)
		}
		at = i + 1
	}
	order = slices.Insert(order, at, p.Channel)
	current := make([]protocol.URI, len(st.Chats))
	for i, c := range st.Chats {
		current[i] = c.Resource
	}
	if !slices.Equal(order, current) {
		h.commitLocked(sch, &protocol.SessionChatsReorderedAction{Chats: order}, nil)
	}
	seq := h.seq
	h.mu.Unlock()
	if err := h.savedReply(ctx, "moveChat", seq); err != nil {
		return nil, err
	}
	return &protocol.MoveChatResult{Session: s.uri}, nil
}

// sessionKnown reports whether the host has the session.
func (h *Host) sessionKnown(uri string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.sessions[uri]
	return ok
}
