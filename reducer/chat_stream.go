package reducer

import "github.com/ahp-go/ahp/protocol"

// This file holds the streaming hot path: chat/delta and chat/reasoning,
// the actions a long answer is made of by the tens of thousands.
//
// Each streamed action needs a new chat, a new active turn, a new list of
// parts and a new part, since the state it was given must stay as it was.
// Made one by one they cost four allocations, and the allocations, with
// the garbage collection they cause, were most of the time of a delta. A
// stream block holds all four in one allocation instead; its list of parts
// is an array inside the block for turns of up to maxInlineParts parts.
// The new chat and turn share their other fields with the old ones
// (protocol.ChatStateFields, protocol.ActiveTurnFields), so the block is
// small: what a delta costs is mostly writing fresh memory, byte by byte.
//
// The parts in a block are kept alive by whatever still refers to any of
// them, the whole block with them. A completed turn therefore gets copies
// of its streamed parts (chatDetachParts), so the history keeps no blocks.

// streamBlock is the new chat, active turn and part of one streamed action,
// with room for the turn's list of parts (Parts is an array type).
type streamBlock[Part, Parts any] struct {
	chat  protocol.ChatState
	turn  protocol.ActiveTurn
	part  Part
	parts Parts
}

// maxInlineParts is the most parts a stream block holds in its own array;
// a turn with more gets its list of parts in a second allocation.
const maxInlineParts = 16

// newStreamBlock returns the pieces of a new stream block for a turn of n
// parts: zero chat, turn and part, and a list of n nil parts whose capacity
// is n, so that an append never writes into the block.
func newStreamBlock[Part any](n int) (*protocol.ChatState, *protocol.ActiveTurn, *Part, []protocol.ResponsePart) {
	switch {
	case n <= 1:
		b := new(streamBlock[Part, [1]protocol.ResponsePart])
		return &b.chat, &b.turn, &b.part, b.parts[:n:n]
	case n <= 2:
		b := new(streamBlock[Part, [2]protocol.ResponsePart])
		return &b.chat, &b.turn, &b.part, b.parts[:n:n]
	case n <= 4:
		b := new(streamBlock[Part, [4]protocol.ResponsePart])
		return &b.chat, &b.turn, &b.part, b.parts[:n:n]
	case n <= 8:
		b := new(streamBlock[Part, [8]protocol.ResponsePart])
		return &b.chat, &b.turn, &b.part, b.parts[:n:n]
	case n <= maxInlineParts:
		b := new(streamBlock[Part, [maxInlineParts]protocol.ResponsePart])
		return &b.chat, &b.turn, &b.part, b.parts[:n:n]
	}
	b := new(streamBlock[Part, struct{}])
	return &b.chat, &b.turn, &b.part, make([]protocol.ResponsePart, n)
}

// chatDelta appends streamed text to a markdown part of the active turn.
func chatDelta(s *protocol.ChatState, a *protocol.ChatDeltaAction) *protocol.ChatState {
	t, i, p := chatFindPart(s, a.TurnID, a.PartID)
	md, ok := p.(*protocol.MarkdownResponsePart)
	if !ok {
		return s
	}
	ns, nt, np, parts := newStreamBlock[protocol.MarkdownResponsePart](len(t.ResponseParts))
	*np = protocol.MarkdownResponsePart{ID: md.ID, Content: md.Content.Append(a.Content)}
	chatCopyParts(parts, t.ResponseParts, i, np)
	return chatStreamed(s, ns, t, nt, parts)
}

// chatReasoning appends streamed text to a reasoning part of the active
// turn.
func chatReasoning(s *protocol.ChatState, a *protocol.ChatReasoningAction) *protocol.ChatState {
	t, i, p := chatFindPart(s, a.TurnID, a.PartID)
	rp, ok := p.(*protocol.ReasoningResponsePart)
	if !ok {
		return s
	}
	ns, nt, np, parts := newStreamBlock[protocol.ReasoningResponsePart](len(t.ResponseParts))
	*np = protocol.ReasoningResponsePart{ID: rp.ID, Content: rp.Content.Append(a.Content)}
	chatCopyParts(parts, t.ResponseParts, i, np)
	return chatStreamed(s, ns, t, nt, parts)
}

// chatCopyParts fills parts with the parts of from, p at index i. Only
// the others are copied: with the collector running, each copied word
// costs a write barrier.
func chatCopyParts(parts, from []protocol.ResponsePart, i int, p protocol.ResponsePart) {
	copy(parts[:i], from[:i])
	parts[i] = p
	copy(parts[i+1:], from[i+1:])
}

// chatStreamed fills the block's chat ns and turn nt as copies of s and t
// with the new list of parts, and returns ns.
func chatStreamed(s, ns *protocol.ChatState, t, nt *protocol.ActiveTurn, parts []protocol.ResponsePart) *protocol.ChatState {
	nt.ActiveTurnFields = t.ActiveTurnFields
	nt.ResponseParts = parts
	ns.ChatStateFields = s.ChatStateFields
	ns.ActiveTurn = nt
	return ns
}

// chatDetachParts returns the parts of a turn that ends, with every
// streamed part copied out of the stream block it may live in, so that
// the completed turn keeps no block alive. The copies share the text.
func chatDetachParts(parts []protocol.ResponsePart) []protocol.ResponsePart {
	out := make([]protocol.ResponsePart, len(parts))
	for i, p := range parts {
		switch p := p.(type) {
		case *protocol.MarkdownResponsePart:
			c := *p
			out[i] = &c
		case *protocol.ReasoningResponsePart:
			c := *p
			out[i] = &c
		default:
			out[i] = p
		}
	}
	return out
}
