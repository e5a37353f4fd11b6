package host

import (
	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

// committed is the engine's after-commit hook (engineHooks.committed): the
// change is queued for the store, then what follows from it on a session
// or chat channel is derived.
func (h *Host) committed(rd *storeReads, ch *channel, prev protocol.SnapshotState, a protocol.StateAction, origin *protocol.ActionOrigin, env []byte) {
	h.persistLocked(ch, prev, a, env)
	if ch.session != nil && !ch.session.disposing {
		h.afterCommitLocked(rd, ch, prev, a, origin)
	}
}

// afterCommitLocked keeps derived state in step after a change on a session
// or chat channel. rd is what the step committing read, nil outside one.
func (h *Host) afterCommitLocked(rd *storeReads, ch *channel, prev protocol.SnapshotState, a protocol.StateAction, origin *protocol.ActionOrigin) {
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
				ev.Transcripts = h.transcriptsLocked(rd, &ts.Message)
			}
			steering := h.consumeSteeringLocked(ch, a)
			if steering != nil {
				ev.Steering = &steering.Message
				ev.Chat = ch.state.(*protocol.ChatState)
			}
			s.deliver(ev)
		}
		h.consumeQueuedLocked(rd, ch, ch.state.(*protocol.ChatState))
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
