package reducer

import "github.com/ahp-go/ahp/protocol"

// Root returns the state after applying a. Not yet implemented: every action
// leaves the state unchanged.
func (r Reducer) Root(s *protocol.RootState, a protocol.StateAction) *protocol.RootState {
	return s
}
