package reducer

import (
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// sessionActivityBits masks the mutually exclusive activity bits of a
// SessionStatus (Idle, Error, InProgress, InputNeeded: bits 0 to 4). The
// bits above are orthogonal flags such as IsRead and IsArchived.
const sessionActivityBits protocol.SessionStatus = 1<<5 - 1

// sessionInputBit is the bit InputNeeded adds to InProgress.
const sessionInputBit = protocol.SessionStatusInputNeeded &^ protocol.SessionStatusInProgress

// sessionInputNeededSet adds an entry to session.inputNeeded, or replaces
// the entry with the same id, and brings the status in line with the list.
func sessionInputNeededSet(s *protocol.SessionState, a *protocol.SessionInputNeededSetAction) *protocol.SessionState {
	if a.Request == nil {
		return s
	}
	id := InputRequestID(a.Request)
	next := *s
	next.InputNeeded = sessionUpsert(s.InputNeeded, a.Request, func(r protocol.SessionInputRequest) bool {
		return InputRequestID(r) == id
	})
	next.Status = sessionInputNeededStatus(s.Status, next.InputNeeded)
	return &next
}

// sessionInputNeededRemoved removes the entry with the given id from
// session.inputNeeded, dropping the list once it is empty, and brings the
// status in line with what remains.
func sessionInputNeededRemoved(s *protocol.SessionState, a *protocol.SessionInputNeededRemovedAction) *protocol.SessionState {
	i := slices.IndexFunc(s.InputNeeded, func(r protocol.SessionInputRequest) bool { return InputRequestID(r) == a.ID })
	if i < 0 {
		return s
	}
	next := *s
	next.InputNeeded = sessionDelete(s.InputNeeded, i)
	if len(next.InputNeeded) == 0 {
		next.InputNeeded = nil
	}
	next.Status = sessionInputNeededStatus(s.Status, next.InputNeeded)
	return &next
}

// sessionInputNeededStatus returns status adjusted to the inputNeeded list.
// While any entry waits on the user, the activity is InputNeeded. Otherwise
// only the InputNeeded-specific bit is cleared, so a turn that was blocked
// falls back to InProgress and other activities stay as they were. The
// flags (IsRead, IsArchived) are kept either way.
//
// A toolClientExecution entry waits on a client, not on the user: the tool
// call already passed its confirmation and is running elsewhere, so it does
// not raise InputNeeded (reducer fixtures 225, 261 and 262).
func sessionInputNeededStatus(status protocol.SessionStatus, list []protocol.SessionInputRequest) protocol.SessionStatus {
	if slices.ContainsFunc(list, sessionAwaitsUser) {
		return status&^sessionActivityBits | protocol.SessionStatusInputNeeded
	}
	return status &^ sessionInputBit
}

// sessionAwaitsUser reports whether an inputNeeded entry blocks on the
// user. An entry of a kind this package does not know is assumed to.
func sessionAwaitsUser(r protocol.SessionInputRequest) bool {
	_, running := r.(*protocol.SessionToolClientExecutionRequest)
	return !running
}

// InputRequestID returns the id of an inputNeeded entry, whatever its
// kind, including kinds this package does not know.
func InputRequestID(r protocol.SessionInputRequest) string {
	switch r := r.(type) {
	case *protocol.SessionChatInputRequest:
		return r.ID
	case *protocol.SessionToolConfirmationRequest:
		return r.ID
	case *protocol.SessionToolClientExecutionRequest:
		return r.ID
	case *protocol.SessionToolAuthenticationRequest:
		return r.ID
	case *protocol.Unknown:
		return sessionUnknownKeys(r).ID
	}
	return ""
}

// sessionInputChat returns the chat an inputNeeded entry belongs to.
func sessionInputChat(r protocol.SessionInputRequest) protocol.URI {
	switch r := r.(type) {
	case *protocol.SessionChatInputRequest:
		return r.Chat
	case *protocol.SessionToolConfirmationRequest:
		return r.Chat
	case *protocol.SessionToolClientExecutionRequest:
		return r.Chat
	case *protocol.SessionToolAuthenticationRequest:
		return r.Chat
	case *protocol.Unknown:
		return sessionUnknownKeys(r).Chat
	}
	return ""
}

// sessionKeys holds the identifying members of an entry in one of the
// session's lists.
type sessionKeys struct {
	ID   string       `json:"id"`
	Chat protocol.URI `json:"chat"`
}

// sessionUnknownKeys reads the identifying members of a variant this
// package does not know, so that entries from a newer protocol version can
// still be replaced and removed by id. An object whose members do not
// decode yields empty keys.
func sessionUnknownKeys(u *protocol.Unknown) sessionKeys {
	var k sessionKeys
	if err := protocol.Unmarshal(u.Raw, &k); err != nil {
		return sessionKeys{}
	}
	return k
}
