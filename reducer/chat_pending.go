package reducer

import (
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// This file holds the pending messages of the chat reducer: the steering
// message and the queue of messages waiting to start turns.

// chatPendingMessageSet sets the steering message, or adds a message to the
// end of the queue (replacing in place a queued message with the same id).
func chatPendingMessageSet(s *protocol.ChatState, a *protocol.ChatPendingMessageSetAction) *protocol.ChatState {
	msg := protocol.PendingMessage{ID: a.ID, Message: a.Message}
	ns := s.Clone()
	switch a.Kind {
	case protocol.PendingMessageKindSteering:
		ns.SteeringMessage = &msg
	case protocol.PendingMessageKindQueued:
		i := slices.IndexFunc(s.QueuedMessages, func(m protocol.PendingMessage) bool { return m.ID == a.ID })
		if i < 0 {
			ns.QueuedMessages = chatAppend(s.QueuedMessages, msg)
		} else {
			ns.QueuedMessages = slices.Clone(s.QueuedMessages)
			ns.QueuedMessages[i] = msg
		}
	default:
		return s
	}
	return ns
}

// chatPendingMessageRemoved removes the steering message or a queued
// message by id. A queue left empty becomes absent.
func chatPendingMessageRemoved(s *protocol.ChatState, a *protocol.ChatPendingMessageRemovedAction) *protocol.ChatState {
	ns := s.Clone()
	switch a.Kind {
	case protocol.PendingMessageKindSteering:
		if s.SteeringMessage == nil || s.SteeringMessage.ID != a.ID {
			return s
		}
		ns.SteeringMessage = nil
	case protocol.PendingMessageKindQueued:
		ns.QueuedMessages = chatWithoutQueued(s.QueuedMessages, a.ID)
		if len(ns.QueuedMessages) == len(s.QueuedMessages) {
			return s
		}
	default:
		return s
	}
	return ns
}

// chatWithoutQueued returns queue without the messages whose id is id: queue
// itself when there are none, nil when no message remains.
func chatWithoutQueued(queue []protocol.PendingMessage, id string) []protocol.PendingMessage {
	match := func(m protocol.PendingMessage) bool { return m.ID == id }
	if !slices.ContainsFunc(queue, match) {
		return queue
	}
	out := slices.DeleteFunc(slices.Clone(queue), match)
	if len(out) == 0 {
		return nil
	}
	return out
}

// chatQueuedMessagesReordered puts the queued messages in the order the
// action gives. Ids not in the queue, and repeats, are ignored; messages
// the order leaves out follow in their previous order.
func chatQueuedMessagesReordered(s *protocol.ChatState, a *protocol.ChatQueuedMessagesReorderedAction) *protocol.ChatState {
	if s.QueuedMessages == nil {
		return s
	}
	index := make(map[string]int, len(s.QueuedMessages))
	for i, m := range s.QueuedMessages {
		if _, dup := index[m.ID]; !dup {
			index[m.ID] = i
		}
	}
	placed := make([]bool, len(s.QueuedMessages))
	out := make([]protocol.PendingMessage, 0, len(s.QueuedMessages))
	for _, id := range a.Order {
		if i, ok := index[id]; ok && !placed[i] {
			placed[i] = true
			out = append(out, s.QueuedMessages[i])
		}
	}
	for i, m := range s.QueuedMessages {
		if !placed[i] {
			out = append(out, m)
		}
	}
	ns := s.Clone()
	ns.QueuedMessages = out
	return ns
}
