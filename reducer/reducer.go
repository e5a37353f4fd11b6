// Package reducer holds the pure state reducers of every AHP channel.
//
// A reducer takes a channel state and one action and returns the next
// state. Host and clients run the same reducers, so identical actions give
// identical states everywhere.
//
//	next := reducer.Chat(state, action) // wall clock
//	r := reducer.Reducer{Now: fixedClock}
//	next = r.Apply(state, action) // any channel, by the state's type
//
// Reducers are pure: they never modify the state they are given (states
// share unchanged parts with their predecessors, so old states stay valid),
// do no I/O, and read the time only through Reducer.Now. An action a
// reducer does not know, including *protocol.Unknown, returns the state
// unchanged (the same pointer).
//
// Concurrency: reducers keep no state of their own and may be called from
// any number of goroutines, on the same input state too.
package reducer

import (
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// Reducer applies actions to channel states. The zero value is ready to
// use and reads the wall clock.
type Reducer struct {
	// Now returns the current time, used to stamp modifiedAt. Nil means
	// time.Now.
	Now func() time.Time
}

// Apply routes action to the reducer of state's channel, chosen by the
// state's Go type, and returns the next state. A nil or unrecognized state
// is returned unchanged.
func (r Reducer) Apply(state protocol.SnapshotState, action protocol.StateAction) protocol.SnapshotState {
	switch s := state.(type) {
	case *protocol.RootState:
		return r.Root(s, action)
	case *protocol.SessionState:
		return r.Session(s, action)
	case *protocol.ChatState:
		return r.Chat(s, action)
	case *protocol.TerminalState:
		return r.Terminal(s, action)
	case *protocol.ChangesetState:
		return r.Changeset(s, action)
	case *protocol.AnnotationsState:
		return r.Annotations(s, action)
	case *protocol.ResourceWatchState:
		return r.ResourceWatch(s, action)
	case *protocol.CanvasState:
		return r.Canvas(s, action)
	case *protocol.AutomationState:
		return r.Automation(s, action)
	case *protocol.AutomationRunState:
		return r.AutomationRun(s, action)
	}
	return state
}

// Apply applies action to state with the wall clock; see Reducer.Apply.
func Apply(state protocol.SnapshotState, action protocol.StateAction) protocol.SnapshotState {
	return Reducer{}.Apply(state, action)
}

// Root applies a root-channel action with the wall clock.
func Root(s *protocol.RootState, a protocol.StateAction) *protocol.RootState {
	return Reducer{}.Root(s, a)
}

// Session applies a session-channel action with the wall clock.
func Session(s *protocol.SessionState, a protocol.StateAction) *protocol.SessionState {
	return Reducer{}.Session(s, a)
}

// Chat applies a chat-channel action with the wall clock.
func Chat(s *protocol.ChatState, a protocol.StateAction) *protocol.ChatState {
	return Reducer{}.Chat(s, a)
}

// Terminal applies a terminal-channel action with the wall clock.
func Terminal(s *protocol.TerminalState, a protocol.StateAction) *protocol.TerminalState {
	return Reducer{}.Terminal(s, a)
}

// Changeset applies a changeset-channel action with the wall clock.
func Changeset(s *protocol.ChangesetState, a protocol.StateAction) *protocol.ChangesetState {
	return Reducer{}.Changeset(s, a)
}

// Annotations applies an annotations-channel action with the wall clock.
func Annotations(s *protocol.AnnotationsState, a protocol.StateAction) *protocol.AnnotationsState {
	return Reducer{}.Annotations(s, a)
}

// ResourceWatch applies a resource-watch-channel action with the wall clock.
func ResourceWatch(s *protocol.ResourceWatchState, a protocol.StateAction) *protocol.ResourceWatchState {
	return Reducer{}.ResourceWatch(s, a)
}
