package reducer

import "github.com/ahp-go/ahp/protocol"

// Session returns the state after applying a. Not yet implemented: every action
// leaves the state unchanged.
func (r Reducer) Session(s *protocol.SessionState, a protocol.StateAction) *protocol.SessionState {
	return s
}
