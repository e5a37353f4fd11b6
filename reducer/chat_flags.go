package reducer

import (
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// chatWithFlag returns status with flag set or cleared, keeping the
// activity bits and the other flag (chat/isReadChanged and
// chat/isArchivedChanged change only their own bit).
func chatWithFlag(status, flag protocol.SessionStatus, on bool) protocol.SessionStatus {
	if on {
		return status | flag
	}
	return status &^ flag
}

// backgroundWorkID returns the id every background work variant carries;
// an unknown variant has none and is matched by nothing.
func backgroundWorkID(w protocol.BackgroundWork) (string, bool) {
	switch w := w.(type) {
	case *protocol.BackgroundShellWork:
		return w.ID, true
	case *protocol.BackgroundSubagentWork:
		return w.ID, true
	}
	return "", false
}

// chatBackgroundWorkSet adds an entry, or replaces the one with the same
// id in place (ChatBackgroundWorkSetAction: "adds or replaces ... by id").
// An entry of a kind this package does not know has no id to match by and
// is appended, so it is kept as the schema asks of unknown kinds.
func chatBackgroundWorkSet(s *protocol.ChatState, a *protocol.ChatBackgroundWorkSetAction) *protocol.ChatState {
	if a.Work == nil {
		return s
	}
	ns := s.Clone()
	if id, ok := backgroundWorkID(a.Work); ok {
		i := slices.IndexFunc(s.BackgroundWork, func(w protocol.BackgroundWork) bool {
			other, ok := backgroundWorkID(w)
			return ok && other == id
		})
		if i >= 0 {
			ns.BackgroundWork = slices.Clone(s.BackgroundWork)
			ns.BackgroundWork[i] = a.Work
			return ns
		}
	}
	ns.BackgroundWork = chatAppend(s.BackgroundWork, a.Work)
	return ns
}

// chatBackgroundWorkRemoved removes the entry with the action's id; an
// unknown id is a no-op.
func chatBackgroundWorkRemoved(s *protocol.ChatState, a *protocol.ChatBackgroundWorkRemovedAction) *protocol.ChatState {
	i := slices.IndexFunc(s.BackgroundWork, func(w protocol.BackgroundWork) bool {
		id, ok := backgroundWorkID(w)
		return ok && id == a.ID
	})
	if i < 0 {
		return s
	}
	ns := s.Clone()
	ns.BackgroundWork = slices.Concat(s.BackgroundWork[:i], s.BackgroundWork[i+1:])
	return ns
}
