package reducer

import (
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// Chat returns the state after applying a to the chat state s.
//
// The result shares every part that a did not change with s, and s itself
// is never modified, so earlier states stay valid. Streaming is cheap: a
// chat/delta makes a new chat and active turn that share their other
// fields with the old ones (protocol.ChatStateFields, ActiveTurnFields), a
// new part and a new list of parts, all in one allocation (112 bytes for
// a turn of one part, one for turns of up to 16 parts), never copies the
// history of completed turns, and appends to the part's text in
// amortized time proportional to the delta. A chat state or turn without
// its fields struct (a zero value) is reduced as one with empty fields.
//
// An action that does not apply (another channel's action, an unknown
// action, or one naming a turn, part, tool call or request that is not
// there) returns s itself. The result may keep references to values held by
// a (messages, parts, maps), so an action must not be modified once it has
// been applied.
func (r Reducer) Chat(s *protocol.ChatState, a protocol.StateAction) *protocol.ChatState {
	if s == nil {
		return s
	}
	s = chatWithFields(s)
	switch a := a.(type) {
	// Turn lifecycle and streaming (chat_turn.go).
	case *protocol.ChatTurnStartedAction:
		return r.chatTurnStarted(s, a)
	case *protocol.ChatDeltaAction:
		return chatDelta(s, a)
	case *protocol.ChatReasoningAction:
		return chatReasoning(s, a)
	case *protocol.ChatResponsePartAction:
		return chatResponsePart(s, a)
	case *protocol.ChatUsageAction:
		return chatUsage(s, a)
	case *protocol.ChatTurnCompleteAction:
		return r.chatEndTurn(s, a.TurnID, a.Duration, protocol.TurnStateComplete, nil)
	case *protocol.ChatTurnCancelledAction:
		return r.chatEndTurn(s, a.TurnID, a.Duration, protocol.TurnStateCancelled, nil)
	case *protocol.ChatErrorAction:
		return r.chatEndTurn(s, a.TurnID, a.Duration, protocol.TurnStateError, chatErrorPart(a))
	case *protocol.ChatTurnResumeAction:
		return chatTurnResume(s, a)
	case *protocol.ChatTruncatedAction:
		return r.chatTruncated(s, a)
	case *protocol.ChatTurnsLoadedAction:
		return chatTurnsLoaded(s, a)

	// Tool calls (chat_toolcall.go).
	case *protocol.ChatToolCallStartAction:
		return chatToolCallStart(s, a)
	case *protocol.ChatToolCallDeltaAction:
		return chatUpdateToolCall(s, a.TurnID, a.ToolCallID, a, toolCallDelta)
	case *protocol.ChatToolCallReadyAction:
		return chatUpdateToolCall(s, a.TurnID, a.ToolCallID, a, toolCallReady)
	case *protocol.ChatToolCallConfirmedAction:
		return chatUpdateToolCall(s, a.TurnID, a.ToolCallID, a, toolCallConfirmed)
	case *protocol.ChatToolCallCompleteAction:
		return chatUpdateToolCall(s, a.TurnID, a.ToolCallID, a, toolCallComplete)
	case *protocol.ChatToolCallResultConfirmedAction:
		return chatUpdateToolCall(s, a.TurnID, a.ToolCallID, a, toolCallResultConfirmed)
	case *protocol.ChatToolCallContentChangedAction:
		return chatUpdateToolCall(s, a.TurnID, a.ToolCallID, a, toolCallContentChanged)
	case *protocol.ChatToolCallAuthRequiredAction:
		return chatUpdateToolCall(s, a.TurnID, a.ToolCallID, a, toolCallAuthRequired)
	case *protocol.ChatToolCallAuthResolvedAction:
		return chatUpdateToolCall(s, a.TurnID, a.ToolCallID, a, toolCallAuthResolved)

	// Input requests (chat_input.go).
	case *protocol.ChatInputRequestedAction:
		return r.chatInputRequested(s, a)
	case *protocol.ChatInputAnswerChangedAction:
		return r.chatInputAnswerChanged(s, a)
	case *protocol.ChatInputCompletedAction:
		return r.chatInputCompleted(s, a)

	// Pending messages (chat_pending.go).
	case *protocol.ChatPendingMessageSetAction:
		return chatPendingMessageSet(s, a)
	case *protocol.ChatPendingMessageRemovedAction:
		return chatPendingMessageRemoved(s, a)
	case *protocol.ChatQueuedMessagesReorderedAction:
		return chatQueuedMessagesReordered(s, a)

	// Plain fields.
	case *protocol.ChatActivityChangedAction:
		ns := s.Clone()
		ns.Activity = a.Activity
		return ns
	case *protocol.ChatDraftChangedAction:
		ns := s.Clone()
		ns.Draft = a.Draft
		return ns
	case *protocol.ChatWorkingDirectorySetAction:
		return chatWorkingDirectorySet(s, a)
	case *protocol.ChatWorkingDirectoryRemovedAction:
		return chatWorkingDirectoryRemoved(s, a)

	// Flags and lists of the 1.x era (chat_flags.go).
	case *protocol.ChatIsReadChangedAction:
		ns := s.Clone()
		ns.Status = chatWithFlag(s.Status, protocol.SessionStatusIsRead, a.IsRead)
		return ns
	case *protocol.ChatIsArchivedChangedAction:
		ns := s.Clone()
		ns.Status = chatWithFlag(s.Status, protocol.SessionStatusIsArchived, a.IsArchived)
		return ns
	case *protocol.ChatMovableChangedAction:
		ns := s.Clone()
		ns.Movable = protocol.Ptr(a.Movable)
		return ns
	case *protocol.ChatChangesetsChangedAction:
		ns := s.Clone()
		ns.Changesets = a.Changesets
		return ns
	case *protocol.ChatCanvasesChangedAction:
		ns := s.Clone()
		ns.Canvases = a.Canvases
		return ns
	case *protocol.ChatBackgroundWorkSetAction:
		return chatBackgroundWorkSet(s, a)
	case *protocol.ChatBackgroundWorkRemovedAction:
		return chatBackgroundWorkRemoved(s, a)
	}
	return s
}

// chatWithFields returns s, or when s or its active turn lacks the struct
// of its other fields (a zero ChatState made by hand), a copy with empty
// ones, so that reducing never dereferences nil.
func chatWithFields(s *protocol.ChatState) *protocol.ChatState {
	if s.ChatStateFields != nil && (s.ActiveTurn == nil || s.ActiveTurn.ActiveTurnFields != nil) {
		return s
	}
	ns := s.Clone()
	if s.ActiveTurn != nil && s.ActiveTurn.ActiveTurnFields == nil {
		ns.ActiveTurn = s.ActiveTurn.Clone()
	}
	return ns
}

// chatErrorPart is the error part a chat/error appends: its part, or one
// built from the error member of an older version's action.
func chatErrorPart(a *protocol.ChatErrorAction) *protocol.ErrorResponsePart {
	if a.Part != nil {
		return a.Part
	}
	return &protocol.ErrorResponsePart{Error: a.Info()}
}

// chatWorkingDirectorySet adds a directory to the chat's subset. An absent
// subset becomes a subset of one.
func chatWorkingDirectorySet(s *protocol.ChatState, a *protocol.ChatWorkingDirectorySetAction) *protocol.ChatState {
	if slices.Contains(s.WorkingDirectories, a.Directory) {
		return s
	}
	ns := s.Clone()
	ns.WorkingDirectories = chatAppend(s.WorkingDirectories, a.Directory)
	return ns
}

// chatWorkingDirectoryRemoved removes a directory from the chat's subset.
// Removing the last one leaves an empty subset rather than an absent one:
// an absent subset would mean the chat inherits every directory of the
// session, the opposite of what removing asked for.
func chatWorkingDirectoryRemoved(s *protocol.ChatState, a *protocol.ChatWorkingDirectoryRemovedAction) *protocol.ChatState {
	i := slices.Index(s.WorkingDirectories, a.Directory)
	if i < 0 {
		return s
	}
	ns := s.Clone()
	ns.WorkingDirectories = slices.Concat(s.WorkingDirectories[:i], s.WorkingDirectories[i+1:])
	if ns.WorkingDirectories == nil {
		ns.WorkingDirectories = []protocol.URI{}
	}
	return ns
}

// Status

// chatActivityBits covers the activity bits of a SessionStatus (Idle,
// Error, InProgress, InputNeeded), of which exactly one value is set; the
// bits above them are flags (IsRead, IsArchived) that activity changes keep.
const chatActivityBits protocol.SessionStatus = 1<<5 - 1

// chatWithActivity returns status with its activity bits replaced by
// activity and its flags kept.
func chatWithActivity(status, activity protocol.SessionStatus) protocol.SessionStatus {
	return status&^chatActivityBits | activity
}

// chatActivity derives the activity of a chat from its contents: input
// needed while the active turn waits on the user (an open input request,
// or a tool call awaiting confirmation, result confirmation or
// authentication), in progress while a turn is otherwise active, idle
// without one.
func chatActivity(s *protocol.ChatState) protocol.SessionStatus {
	switch {
	case s.ActiveTurn == nil:
		return protocol.SessionStatusIdle
	case slices.ContainsFunc(s.ActiveTurn.ResponseParts, chatPartBlocks):
		return protocol.SessionStatusInputNeeded
	default:
		return protocol.SessionStatusInProgress
	}
}

// chatPartBlocks reports whether a response part holds its turn until the
// user acts.
func chatPartBlocks(p protocol.ResponsePart) bool {
	switch p := p.(type) {
	case *protocol.InputRequestResponsePart:
		return p.Response == nil
	case *protocol.ToolCallResponsePart:
		switch p.ToolCall.(type) {
		case *protocol.ToolCallPendingConfirmationState,
			*protocol.ToolCallPendingResultConfirmationState,
			*protocol.ToolCallAuthRequiredState:
			return true
		}
	}
	return false
}

// Active turn

// chatActiveTurn returns the active turn of s if its id is turnID, or nil.
func chatActiveTurn(s *protocol.ChatState, turnID string) *protocol.ActiveTurn {
	if s.ActiveTurn == nil || s.ActiveTurn.ID != turnID {
		return nil
	}
	return s.ActiveTurn
}

// chatWithActiveTurn returns a copy of s whose active turn is t. The copy
// shares the fields of s: set none of them on it (use Clone for that).
func chatWithActiveTurn(s *protocol.ChatState, t *protocol.ActiveTurn) *protocol.ChatState {
	return &protocol.ChatState{ChatStateFields: s.ChatStateFields, ActiveTurn: t}
}

// chatTurnWithParts returns a copy of t whose response parts are parts,
// sharing the fields of t.
func chatTurnWithParts(t *protocol.ActiveTurn, parts []protocol.ResponsePart) *protocol.ActiveTurn {
	return &protocol.ActiveTurn{ActiveTurnFields: t.ActiveTurnFields, ResponseParts: parts}
}

// chatTurnWithPart returns a copy of t whose i-th response part is p. It
// copies the list of parts but none of the parts.
func chatTurnWithPart(t *protocol.ActiveTurn, i int, p protocol.ResponsePart) *protocol.ActiveTurn {
	parts := slices.Clone(t.ResponseParts)
	parts[i] = p
	return chatTurnWithParts(t, parts)
}

// chatTurnWithAddedPart returns a copy of t with p added after its
// response parts.
func chatTurnWithAddedPart(t *protocol.ActiveTurn, p protocol.ResponsePart) *protocol.ActiveTurn {
	return chatTurnWithParts(t, chatAppend(t.ResponseParts, p))
}

// chatAppend returns a new slice holding list followed by v. Appending in
// place could write into an array that another state shares.
func chatAppend[T any](list []T, v T) []T {
	out := make([]T, len(list)+1)
	copy(out, list)
	out[len(list)] = v
	return out
}
