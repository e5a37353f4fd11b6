package host

import (
	"errors"
	"slices"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/host/internal/check"
	"github.com/ahp-go/ahp/protocol"
)

// Chat attachments ("Pulling a chat into another chat", chat-channel.md):
// a message may attach another chat's transcript, bounded by a completed
// turn (endTurn, or the latest completed turn when it is absent). The host
// rejects an attachment naming an unknown chat or an unknown, active or
// no longer retained endTurn, and hands the agent the transcript from the
// referenced chat's first retained turn through that turn. Attachments
// inside the transcript are not expanded.

// checkAttachmentsLocked returns a *check.Rejection saying why a message's chat
// attachments must be rejected, a *storeMiss while it needs the store, or
// nil.
func (h *Host) checkAttachmentsLocked(rd *storeReads, m *protocol.Message) error {
	for _, att := range m.Attachments {
		if a, ok := att.(*protocol.MessageChatAttachment); ok {
			if _, err := h.transcriptLocked(rd, a); err != nil {
				return err
			}
		}
	}
	return nil
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
// What the running step read is at hand (rd, nil outside a step); an
// attachment whose chat or turns are not is given without its turns.
func (h *Host) transcriptsLocked(rd *storeReads, m *protocol.Message) []agent.Transcript {
	var out []agent.Transcript
	for _, att := range m.Attachments {
		if a, ok := att.(*protocol.MessageChatAttachment); ok {
			tr, err := h.transcriptLocked(rd, a)
			if err != nil {
				h.log.Debug("a chat attachment did not resolve", "chat", a.Resource, "reason", err)
				tr = agent.Transcript{Attachment: a}
			}
			out = append(out, tr)
		}
	}
	return out
}

// transcriptLocked resolves one chat attachment. Its error is a
// *check.Rejection saying why it does not resolve, or a *storeMiss when the
// chat or its turns older than the chat's in-memory window are still in
// the store (see step); the transcript holds the attachment in any case.
func (h *Host) transcriptLocked(rd *storeReads, a *protocol.MessageChatAttachment) (agent.Transcript, error) {
	tr := agent.Transcript{Attachment: a}
	ch, err := h.channelLocked(rd, a.Resource)
	var miss *storeMiss
	if errors.As(err, &miss) {
		return tr, err
	}
	if err != nil {
		return tr, check.Rejectf("the host could not read the attached chat: %v", err)
	}
	if ch == nil || ch.kind != protocol.ChannelChat {
		return tr, check.Rejectf("attached chat %s does not exist", a.Resource)
	}
	cs := ch.state.(*protocol.ChatState)
	recent := cs.Turns
	if a.EndTurn != nil {
		if cs.ActiveTurn != nil && cs.ActiveTurn.ID == *a.EndTurn {
			return tr, check.Rejectf("endTurn %s of attached chat %s has not completed", *a.EndTurn, a.Resource)
		}
		if i := slices.IndexFunc(recent, func(t protocol.Turn) bool { return t.ID == *a.EndTurn }); i >= 0 {
			recent = recent[:i+1]
		} else {
			recent = nil
		}
	}
	older, err := storedTurnsLocked(rd, ch, 0, ch.chat.base)
	if errors.As(err, &miss) {
		return tr, err
	}
	if err != nil {
		return tr, check.Rejectf("the host could not read the attached chat's turns: %v", err)
	}
	if a.EndTurn != nil && recent == nil {
		i := slices.IndexFunc(older, func(t protocol.Turn) bool { return t.ID == *a.EndTurn })
		if i < 0 {
			return tr, check.Rejectf("endTurn %s is not a retained turn of attached chat %s", *a.EndTurn, a.Resource)
		}
		older = older[:i+1]
	}
	tr.Turns = append(older, recent...)
	return tr, nil
}
