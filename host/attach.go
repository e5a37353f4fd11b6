package host

import (
	"fmt"
	"slices"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/protocol"
)

// Chat attachments ("Pulling a chat into another chat", chat-channel.md):
// a message may attach another chat's transcript, bounded by a completed
// turn (endTurn, or the latest completed turn when it is absent). The host
// rejects an attachment naming an unknown chat or an unknown, active or
// no longer retained endTurn, and hands the agent the transcript from the
// referenced chat's first retained turn through that turn. Attachments
// inside the transcript are not expanded.

// checkAttachmentsLocked returns why a message's chat attachments must be
// rejected, or "".
func (h *Host) checkAttachmentsLocked(m *protocol.Message) string {
	for _, att := range m.Attachments {
		if a, ok := att.(*protocol.MessageChatAttachment); ok {
			if _, reason := h.transcriptLocked(a); reason != "" {
				return reason
			}
		}
	}
	return ""
}

// pinAttachmentsLocked sets endTurn on each chat attachment of an accepted
// message that has none, to the referenced chat's latest completed turn:
// the host pins it when accepting the message, so later turns of that chat
// do not change the message's context (MessageChatAttachment). A chat with
// no completed turn has nothing to pin. The message must be the host's own
// (a decoded client action, say): its attachments are changed in place.
func (h *Host) pinAttachmentsLocked(m *protocol.Message) {
	for _, att := range m.Attachments {
		a, ok := att.(*protocol.MessageChatAttachment)
		if !ok || a.EndTurn != nil {
			continue
		}
		if ch := h.channels[a.Resource]; ch != nil && ch.kind == protocol.ChannelChat {
			if turns := ch.state.(*protocol.ChatState).Turns; len(turns) > 0 {
				a.EndTurn = protocol.Ptr(turns[len(turns)-1].ID)
			}
		}
	}
}

// transcriptsLocked resolves the chat attachments of a message, in order.
// An attachment that no longer resolves (its chat was removed since the
// message was queued, say) gives an empty transcript.
func (h *Host) transcriptsLocked(m *protocol.Message) []agent.Transcript {
	var out []agent.Transcript
	for _, att := range m.Attachments {
		if a, ok := att.(*protocol.MessageChatAttachment); ok {
			tr, reason := h.transcriptLocked(a)
			if reason != "" {
				h.log.Debug("a chat attachment did not resolve", "chat", a.Resource, "reason", reason)
				tr = agent.Transcript{Attachment: a}
			}
			out = append(out, tr)
		}
	}
	return out
}

// transcriptLocked resolves one chat attachment, or returns why it does not
// resolve. Turns older than the chat's in-memory window, and chats not in
// memory, come from the store: a step under Host.locked finds the miss
// noted (noteMiss) and reads them before running again. When the
// transcript is resolved again as the turn starts (transcriptsLocked, in
// the same step), what was read is at hand.
func (h *Host) transcriptLocked(a *protocol.MessageChatAttachment) (agent.Transcript, string) {
	tr := agent.Transcript{Attachment: a}
	ch, err := h.channelLocked(a.Resource)
	if h.noteMiss(err) {
		return tr, "the attached chat is still being read"
	}
	if err != nil {
		return tr, "the host could not read the attached chat: " + err.Error()
	}
	if ch == nil || ch.kind != protocol.ChannelChat {
		return tr, fmt.Sprintf("attached chat %s does not exist", a.Resource)
	}
	cs := ch.state.(*protocol.ChatState)
	recent := cs.Turns
	if a.EndTurn != nil {
		if cs.ActiveTurn != nil && cs.ActiveTurn.ID == *a.EndTurn {
			return tr, fmt.Sprintf("endTurn %s of attached chat %s has not completed", *a.EndTurn, a.Resource)
		}
		if i := slices.IndexFunc(recent, func(t protocol.Turn) bool { return t.ID == *a.EndTurn }); i >= 0 {
			recent = recent[:i+1]
		} else {
			recent = nil
		}
	}
	older, err := h.storedTurnsLocked(ch, 0, ch.turnBase)
	if h.noteMiss(err) {
		return tr, "the attached chat's older turns are still being read"
	}
	if err != nil {
		return tr, "the host could not read the attached chat's turns: " + err.Error()
	}
	if a.EndTurn != nil && recent == nil {
		i := slices.IndexFunc(older, func(t protocol.Turn) bool { return t.ID == *a.EndTurn })
		if i < 0 {
			return tr, fmt.Sprintf("endTurn %s is not a retained turn of attached chat %s", *a.EndTurn, a.Resource)
		}
		older = older[:i+1]
	}
	tr.Turns = append(older, recent...)
	return tr, ""
}
