package host

import (
	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
)

// commitLocked is the one path every change takes: reduce, sequence, record
// in the replay log, encode once, queue to every subscriber that knows the
// action and to the store, then derive what follows from it (catalog and
// summary updates, agent events). It does not block (see leaseLocked for
// the one exception, when the store is far behind). It returns the encoded
// "action" notification (nil if encoding failed).
func (h *Host) commitLocked(ch *channel, a protocol.StateAction, origin *protocol.ActionOrigin) []byte {
	prev := ch.state
	h.clock = h.opts.Now()
	next := h.red.Apply(prev, a)
	h.nextSeqLocked()
	env := protocol.ActionEnvelope{Channel: ch.uri, Action: a, ServerSeq: h.seq, Origin: origin}
	msg, body, err := encodeAction(&env)
	if err != nil {
		// Wire types always encode; this would be a bug. The state still
		// moves on so host and agents stay consistent.
		h.log.Error("encoding an action failed", "channel", ch.uri, "type", a.Type(), "err", err)
	} else {
		typ := a.Type()
		h.replay.add(replayEntry{seq: h.seq, channel: ch.uri, actionType: typ, envelope: body, env: env, bounded: true})
		// Connections that see other shapes get the action converted and
		// encoded once per set of shapes, and the same bytes when it does
		// not change.
		var other [view.Shapes][]byte // one encoding per set of shapes, no allocation
		send := func(c *conn) {
			if !c.knowsLocked(typ) {
				return
			}
			if c.view.Shape() == view.ShapeCurrent {
				c.sendLocked(msg)
				return
			}
			shaped := other[c.view.Shape()]
			if shaped == nil {
				shaped = msg
				if e := c.view.Envelope(&env); e != &env {
					if m, _, err := encodeAction(e); err == nil {
						shaped = m
					} else {
						h.log.Error("encoding an action failed", "channel", ch.uri, "type", typ, "err", err)
					}
				}
				other[c.view.Shape()] = shaped
			}
			c.sendLocked(shaped)
		}
		if origin != nil {
			ch.first = ch.subscriberLocked(origin.ClientID)
		}
		// The client that acted last on the channel (the sender of this
		// action, or of the prompt the agent is answering) is served
		// first: its writer starts before the other subscribers', so its
		// own echo does not wait behind every other subscriber's write.
		first := ch.first
		if _, ok := ch.subs[first]; ok {
			send(first)
		}
		for c := range ch.subs {
			if c != first {
				send(c)
			}
		}
	}
	ch.state = next
	h.persistLocked(ch, prev, a, body)
	if ch.session != nil && !ch.session.disposing {
		h.afterCommitLocked(ch, prev, a, origin)
	}
	return msg
}

// nextSeqLocked issues the next serverSeq.
func (h *Host) nextSeqLocked() int64 {
	h.seq++
	h.lastSeq.Store(h.seq)
	h.leaseLocked()
	return h.seq
}

// afterCommitLocked keeps derived state in step after a change on a session
// or chat channel.
func (h *Host) afterCommitLocked(ch *channel, prev protocol.SnapshotState, a protocol.StateAction, origin *protocol.ActionOrigin) {
	s := ch.session
	switch ch.kind {
	case protocol.ChannelChat:
		if origin == nil && isStreamedText(a) {
			// Streamed text changes one part of the active turn and
			// nothing else: no summary, input request or catalog entry
			// shows it, and the turn it streams into is running.
			return
		}
		switch a.(type) {
		case *protocol.ChatTurnCompleteAction:
			h.turns.complete++
		case *protocol.ChatErrorAction:
			h.turns.error++
		case *protocol.ChatTurnCancelledAction:
			h.turns.cancelled++
		}
		chat := ch.state.(*protocol.ChatState)
		h.syncChatSummaryLocked(s, chat)
		h.syncInputNeededLocked(s, chat)
		if t, ok := a.(*protocol.ChatTurnStartedAction); ok {
			h.titleFromPromptLocked(s, t.Message.Text)
		}
		if origin != nil || isHostTurnStart(a) {
			ev := agent.Event{Channel: ch.uri, Action: a, Origin: origin, Chat: chat}
			if ts, ok := a.(*protocol.ChatTurnStartedAction); ok {
				ev.Transcripts = h.transcriptsLocked(&ts.Message)
			}
			steering := h.consumeSteeringLocked(ch, a)
			if steering != nil {
				ev.Steering = &steering.Message
				ev.Chat = ch.state.(*protocol.ChatState)
			}
			s.deliver(ev)
		}
		h.consumeQueuedLocked(ch, ch.state.(*protocol.ChatState))
	case protocol.ChannelSession:
		if origin != nil {
			s.deliver(agent.Event{Channel: ch.uri, Action: a, Origin: origin})
		}
		if rm, ok := a.(*protocol.SessionActiveClientRemovedAction); ok {
			h.failClientToolsLocked(s, rm.ClientID)
		}
	}
	h.syncCatalogLocked(s, h.syncSessionSummaryLocked(s))
	if o := h.observerLocked(); o != nil {
		o.Committed(s.uri, ch.uri, a)
	}
}

// isStreamedText reports the actions a long answer is made of, which
// append text to a part of the active turn.
func isStreamedText(a protocol.StateAction) bool {
	switch a.(type) {
	case *protocol.ChatDeltaAction, *protocol.ChatReasoningAction:
		return true
	}
	return false
}

// isHostTurnStart reports a turn the host itself started (from a queued
// message or a createChat initial message), which the agent must run.
func isHostTurnStart(a protocol.StateAction) bool {
	_, ok := a.(*protocol.ChatTurnStartedAction)
	return ok
}

// broadcastLocked sends a protocol notification to the subscribers of a
// channel, and to the extra connections given, whose negotiated version
// knows it; each connection gets it once. Notifications are not sequenced
// or replayed.
func (h *Host) broadcastLocked(channel, method string, params any, extra ...map[*conn]*subscription) {
	ch, ok := h.channels[channel]
	if (!ok || len(ch.subs) == 0) && len(extra) == 0 {
		return
	}
	msg, err := encodeNotification(method, params)
	if err != nil {
		h.log.Error("encoding a notification failed", "method", method, "err", err)
		return
	}
	// Connections that see other shapes get the notification converted
	// and encoded once per set of shapes.
	var other map[view.Shape][]byte
	send := func(c *conn) {
		if !protocol.NotificationKnownToVersion(method, c.version) {
			return
		}
		if c.view.Shape() == view.ShapeCurrent {
			c.sendLocked(msg)
			return
		}
		shaped, ok := other[c.view.Shape()]
		if !ok {
			shaped = msg
			if p := c.view.Notification(method, params); p != params {
				if m, err := encodeNotification(method, p); err == nil {
					shaped = m
				} else {
					h.log.Error("encoding a notification failed", "method", method, "err", err)
				}
			}
			if other == nil {
				other = map[view.Shape][]byte{}
			}
			other[c.view.Shape()] = shaped
		}
		c.sendLocked(shaped)
	}
	if ok {
		for c := range ch.subs {
			send(c)
		}
	}
	for i, subs := range extra {
		for c := range subs {
			if ok && ch.subs[c] != nil || seenIn(c, extra[:i]) {
				continue
			}
			send(c)
		}
	}
}

func seenIn(c *conn, sets []map[*conn]*subscription) bool {
	for _, s := range sets {
		if _, ok := s[c]; ok {
			return true
		}
	}
	return false
}

// subscriberLocked returns a subscriber of ch with the given client ID, or
// nil.
func (ch *channel) subscriberLocked(clientID string) *conn {
	for c := range ch.subs {
		if c.clientID == clientID {
			return c
		}
	}
	return nil
}
