package reducer

import (
	"slices"
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// This file holds the turn lifecycle of the chat reducer: starting and
// ending turns, streaming into the active turn, and the history of
// completed turns.

// chatTurnStarted makes the action's turn the active turn. The chat is in
// progress and unread from then on. A turn started from a pending message
// (queuedMessageId) removes that message, whether it was queued or the
// steering message.
func (r Reducer) chatTurnStarted(s *protocol.ChatState, a *protocol.ChatTurnStartedAction) *protocol.ChatState {
	ns := s.Clone()
	ns.ActiveTurn = &protocol.ActiveTurn{
		ActiveTurnFields: &protocol.ActiveTurnFields{ID: a.TurnID, StartedAt: a.StartedAt, Message: a.Message},
		ResponseParts:    []protocol.ResponsePart{},
	}
	ns.Status = chatWithActivity(s.Status, chatActivity(ns)) &^ protocol.SessionStatusIsRead
	if a.StartedAt != "" {
		ns.ModifiedAt = a.StartedAt
	}
	if id := a.QueuedMessageID; id != nil {
		if ns.SteeringMessage != nil && ns.SteeringMessage.ID == *id {
			ns.SteeringMessage = nil
		}
		ns.QueuedMessages = chatWithoutQueued(ns.QueuedMessages, *id)
	}
	return ns
}

// chatFindPart returns the active turn when its id is turnID, with the
// index and value of its first response part whose id is partID. A tool
// call part's id is its tool call id; parts without an id never match. The
// part is nil when there is no such turn or part.
func chatFindPart(s *protocol.ChatState, turnID, partID string) (*protocol.ActiveTurn, int, protocol.ResponsePart) {
	t := chatActiveTurn(s, turnID)
	if t == nil {
		return nil, -1, nil
	}
	for i, p := range t.ResponseParts {
		if id, ok := chatPartID(p); ok && id == partID {
			return t, i, p
		}
	}
	return nil, -1, nil
}

// chatPartID returns the id a chat/delta or chat/reasoning action would use
// to address p, and whether p has one.
func chatPartID(p protocol.ResponsePart) (string, bool) {
	switch p := p.(type) {
	case *protocol.MarkdownResponsePart:
		return p.ID, true
	case *protocol.ReasoningResponsePart:
		return p.ID, true
	case *protocol.ToolCallResponsePart:
		if b, ok := toolCallBaseOf(p.ToolCall); ok {
			return b.ToolCallID, true
		}
	}
	return "", false
}

// chatResponsePart adds a part after the active turn's response parts. Like
// the reference reducer it leaves the status alone, even for a part that
// would block the turn: input requests and tool calls have their own
// actions.
func chatResponsePart(s *protocol.ChatState, a *protocol.ChatResponsePartAction) *protocol.ChatState {
	t := chatActiveTurn(s, a.TurnID)
	if t == nil {
		return s
	}
	return chatWithActiveTurn(s, chatTurnWithAddedPart(t, a.Part))
}

// chatUsage replaces the token usage of the active turn.
func chatUsage(s *protocol.ChatState, a *protocol.ChatUsageAction) *protocol.ChatState {
	t := chatActiveTurn(s, a.TurnID)
	if t == nil {
		return s
	}
	nt := t.Clone()
	nt.Usage = protocol.Ptr(a.Usage)
	return chatWithActiveTurn(s, nt)
}

// chatEndTurn moves the active turn into the history with the given final
// state, when turnID names it. Tool calls still in progress are cancelled
// as skipped. The chat becomes idle, or takes the Error activity when the
// turn failed (errPart set), after errPart is appended to the turn's
// response parts: at 1.x an error is a durable response part, not a member
// of the turn (ErrorResponsePart: "the detailed source of truth for the
// error").
func (r Reducer) chatEndTurn(s *protocol.ChatState, turnID string, duration float64, state protocol.TurnState, errPart *protocol.ErrorResponsePart) *protocol.ChatState {
	t := chatActiveTurn(s, turnID)
	if t == nil {
		return s
	}
	// The producer supplies the duration; a negative one (or NaN) means
	// nothing and is recorded as zero.
	if !(duration >= 0) {
		duration = 0
	}
	turn := protocol.Turn{
		ID:            t.ID,
		StartedAt:     protocol.Ptr(t.StartedAt),
		Duration:      protocol.Ptr(duration),
		Message:       t.Message,
		ResponseParts: chatFinalParts(t.ResponseParts),
		Usage:         t.Usage,
		State:         state,
	}
	if errPart != nil {
		turn.ResponseParts = chatAppend(turn.ResponseParts, protocol.ResponsePart(errPart))
	}
	ns := s.Clone()
	ns.Turns = chatAppend(s.Turns, turn)
	ns.ActiveTurn = nil
	ns.ModifiedAt = chatEndedAt(s.ModifiedAt, t.StartedAt, duration)
	activity := chatActivity(ns)
	if errPart != nil {
		activity = protocol.SessionStatusError
	}
	ns.Status = chatWithActivity(s.Status, activity)
	return ns
}

// chatEndedAt is the modification time a turn's end gives a chat: its
// start plus the producer's duration. Since 0.9.0 the chat reducer takes
// modifiedAt from the actions' own data, never from a local clock, so every
// replica computes the same state (changelog 0.9.0, "Chat reducers now
// derive modifiedAt from turn action data instead of local wall clocks").
// A start that does not parse leaves modifiedAt as it was.
func chatEndedAt(modifiedAt, startedAt string, durationMs float64) string {
	start, err := protocol.ParseTime(startedAt)
	if err != nil {
		return modifiedAt
	}
	return protocol.FormatTime(start.Add(time.Duration(durationMs * float64(time.Millisecond))))
}

// chatFinalParts returns the parts of a turn that ends, in a list of its
// own: streamed parts are detached from their stream blocks, and every
// tool call that has not completed or been cancelled is replaced by a
// cancelled one (reason skipped).
func chatFinalParts(parts []protocol.ResponsePart) []protocol.ResponsePart {
	out := chatDetachParts(parts)
	for i, p := range out {
		tp, ok := p.(*protocol.ToolCallResponsePart)
		if !ok {
			continue
		}
		if skipped := toolCallSkipped(tp.ToolCall); skipped != nil {
			out[i] = &protocol.ToolCallResponsePart{ToolCall: skipped}
		}
	}
	return out
}

// chatTruncated drops completed turns after the action's turn, or all of
// them (and the cursor to older ones) without a turn id, and drops the
// active turn with them. An unknown turn id changes nothing.
func (r Reducer) chatTruncated(s *protocol.ChatState, a *protocol.ChatTruncatedAction) *protocol.ChatState {
	ns := s.Clone()
	if a.TurnID == nil {
		ns.Turns = []protocol.Turn{}
		ns.TurnsNextCursor = nil
	} else {
		i := slices.IndexFunc(s.Turns, func(t protocol.Turn) bool { return t.ID == *a.TurnID })
		if i < 0 {
			return s
		}
		// Limit the capacity so that a later append cannot write over
		// the turns this state still shares with s.
		ns.Turns = s.Turns[: i+1 : i+1]
	}
	ns.ActiveTurn = nil
	ns.Status = chatWithActivity(s.Status, chatActivity(ns))
	return ns
}

// chatTurnsLoaded puts a page of older turns before the loaded ones,
// skipping any turn already loaded, and replaces the cursor to the next
// page (clearing it when the action has none).
func chatTurnsLoaded(s *protocol.ChatState, a *protocol.ChatTurnsLoadedAction) *protocol.ChatState {
	loaded := make(map[string]bool, len(s.Turns))
	for _, t := range s.Turns {
		loaded[t.ID] = true
	}
	turns := make([]protocol.Turn, 0, len(a.Turns)+len(s.Turns))
	for _, t := range a.Turns {
		if !loaded[t.ID] {
			turns = append(turns, t)
		}
	}
	ns := s.Clone()
	ns.Turns = append(turns, s.Turns...)
	ns.TurnsNextCursor = a.TurnsNextCursor
	return ns
}

// chatTurnResume reopens the latest turn when it stopped at a resumable
// error (ChatTurnResumeAction: the turn must be the latest, in state error,
// its final part a resumable error). The turn becomes active again with its
// message, parts and usage; the error part stays in the transcript. An
// action that does not meet those conditions changes nothing.
func chatTurnResume(s *protocol.ChatState, a *protocol.ChatTurnResumeAction) *protocol.ChatState {
	n := len(s.Turns)
	if n == 0 || s.ActiveTurn != nil {
		return s
	}
	t := s.Turns[n-1]
	if t.ID != a.TurnID || t.State != protocol.TurnStateError || !chatResumable(t.ResponseParts) {
		return s
	}
	active := &protocol.ActiveTurn{
		ActiveTurnFields: &protocol.ActiveTurnFields{ID: t.ID, Message: t.Message, Usage: t.Usage},
		ResponseParts:    t.ResponseParts[:len(t.ResponseParts):len(t.ResponseParts)],
	}
	if t.StartedAt != nil {
		active.StartedAt = *t.StartedAt
	}
	ns := s.Clone()
	ns.Turns = s.Turns[: n-1 : n-1]
	ns.ActiveTurn = active
	ns.Status = chatWithActivity(s.Status, protocol.SessionStatusInProgress)
	return ns
}

// chatResumable reports whether the last of parts is an error the host can
// resume from.
func chatResumable(parts []protocol.ResponsePart) bool {
	if len(parts) == 0 {
		return false
	}
	e, ok := parts[len(parts)-1].(*protocol.ErrorResponsePart)
	return ok && e.Resumable != nil && *e.Resumable
}
