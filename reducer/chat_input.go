package reducer

import (
	"maps"

	"github.com/ahp-go/ahp/protocol"
)

// This file holds the input requests of the chat reducer. A request lives
// as an input-request part of the active turn: open while it has no
// response, and kept as the record of the answers once it has one.

// chatInputRequested adds an open input request at the end of the active
// turn, or replaces the open request with the same id where it stands,
// keeping its synchronized answers unless the action brings its own. The
// chat then needs input and is unread. Without an active turn nothing
// changes.
func (r Reducer) chatInputRequested(s *protocol.ChatState, a *protocol.ChatInputRequestedAction) *protocol.ChatState {
	t := s.ActiveTurn
	if t == nil {
		return s
	}
	part := &protocol.InputRequestResponsePart{Request: a.Request}
	var nt *protocol.ActiveTurn
	if i, open := chatOpenInputRequest(t, a.Request.ID); open != nil {
		if part.Request.Answers == nil {
			part.Request.Answers = open.Request.Answers
		}
		nt = chatTurnWithPart(t, i, part)
	} else {
		nt = chatTurnWithAddedPart(t, part)
	}
	ns := s.Clone()
	ns.ActiveTurn = nt
	ns.Status = chatWithActivity(s.Status, chatActivity(ns)) &^ protocol.SessionStatusIsRead
	return ns
}

// chatInputAnswerChanged sets, or without an answer clears, the answer to
// one question of an open input request.
func (r Reducer) chatInputAnswerChanged(s *protocol.ChatState, a *protocol.ChatInputAnswerChangedAction) *protocol.ChatState {
	t := s.ActiveTurn
	if t == nil {
		return s
	}
	i, open := chatOpenInputRequest(t, a.RequestID)
	if open == nil {
		return s
	}
	answers := maps.Clone(open.Request.Answers)
	if a.Answer == nil {
		delete(answers, a.QuestionID)
	} else {
		if answers == nil {
			answers = make(map[string]protocol.ChatInputAnswer, 1)
		}
		answers[a.QuestionID] = a.Answer
	}
	part := *open
	part.Request.Answers = chatNonEmpty(answers)
	ns := chatWithActiveTurn(s, chatTurnWithPart(t, i, &part))
	return ns
}

// chatInputCompleted records the response to an open input request, with
// the action's answers laid over the synchronized ones. The part stays
// where it is as the record of the exchange; the chat's status no longer
// counts it as waiting.
func (r Reducer) chatInputCompleted(s *protocol.ChatState, a *protocol.ChatInputCompletedAction) *protocol.ChatState {
	t := s.ActiveTurn
	if t == nil {
		return s
	}
	i, open := chatOpenInputRequest(t, a.RequestID)
	if open == nil {
		return s
	}
	answers := open.Request.Answers
	if len(a.Answers) > 0 {
		answers = maps.Clone(answers)
		if answers == nil {
			answers = make(map[string]protocol.ChatInputAnswer, len(a.Answers))
		}
		maps.Copy(answers, a.Answers)
	}
	part := *open
	part.Request.Answers = chatNonEmpty(answers)
	part.Response = protocol.Ptr(a.Response)
	ns := s.Clone()
	ns.ActiveTurn = chatTurnWithPart(t, i, &part)
	ns.Status = chatWithActivity(s.Status, chatActivity(ns))
	return ns
}

// chatOpenInputRequest returns the index and value of the first open input
// request of t whose id is id, or a nil part.
func chatOpenInputRequest(t *protocol.ActiveTurn, id string) (int, *protocol.InputRequestResponsePart) {
	for i, p := range t.ResponseParts {
		if p, ok := p.(*protocol.InputRequestResponsePart); ok && p.Response == nil && p.Request.ID == id {
			return i, p
		}
	}
	return -1, nil
}

// chatNonEmpty returns m, or nil when m is empty: an answer set with no
// answers is absent.
func chatNonEmpty[M ~map[K]V, K comparable, V any](m M) M {
	if len(m) == 0 {
		return nil
	}
	return m
}
