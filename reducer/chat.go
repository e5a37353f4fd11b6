package reducer

import "github.com/ahp-go/ahp/protocol"

// Chat returns the state after applying a. Not yet implemented: every action
// leaves the state unchanged.
func (r Reducer) Chat(s *protocol.ChatState, a protocol.StateAction) *protocol.ChatState {
	return s
}
